"""Run a batch of IFC work in a short-lived child process, so its memory goes back when the batch ends.

IfcOpenShell 0.9 keeps about 7 MB of native memory per opened-and-dropped model of the Duplex
building's size that neither ``gc`` nor ``malloc_trim`` returns; a generator or batch scorer
that opens models per task grows by that much per task (2.8 GB for 324 Duplex tasks). A
forked child starts from the parent's memory as it is (an opened source model comes along
without being read again, and arguments are not pickled), does a batch, sends back its
(small, picklable) result and exits, taking what IfcOpenShell kept with it.

Where ``fork`` is not available (Windows, and macOS's spawn default is not used: spawn would
re-import and re-open everything per batch) the batch runs in this process, as before.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

R = TypeVar("R")


def forking() -> bool:
    """Whether batches run in forked children here."""
    return "fork" in multiprocessing.get_all_start_methods()


def in_child(fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)`` run in a forked child; its result, or its exception raised here as itself.

    Raises:
        RuntimeError: the child died without an answer (killed, or a crash of native code).
    """
    if not forking():
        return fn(*args)
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_run, args=(writer, fn, args))
    child.start()
    writer.close()  # so that the reader sees the end of the pipe when the child dies
    try:
        ok, value = reader.recv()
    except EOFError:
        child.join()
        raise RuntimeError(f"a child process working on IFC models died without an answer "
                           f"(exit status {child.exitcode})") from None
    finally:
        reader.close()
    child.join()
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _run(writer: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        answer: tuple[bool, Any] = (True, fn(*args))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        answer = (False, exc)
    try:
        writer.send(answer)
    except OSError:
        pass  # the parent is gone (interrupted): nobody to tell
    except Exception as exc:  # noqa: BLE001 - an answer that does not pickle is told by its text
        writer.send((False, RuntimeError(f"{type(exc).__name__} sending a child's answer back: {exc}; "
                                         f"the answer was {type(answer[1]).__name__}: {str(answer[1])[:300]}")))
    writer.close()
