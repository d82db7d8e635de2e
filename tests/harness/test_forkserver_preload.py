"""The forkserver holds the modules of the isolated call at hand, not only the first call's: a
process that plays several suites in turn forks each child with its suite imported (see
`buildbench.harness.forkserver_preload`), and a server with a live child is never stopped."""

from __future__ import annotations

import multiprocessing.forkserver
import threading
import time
from pathlib import Path

from buildbench.harness.isolated import Isolated, IsolationLimits, call_isolated

LIMITS = IsolationLimits(wall_s=120.0, cpu_s=60, memory_mb=None)


def loaded(module: str, preload: tuple[str, ...] = ()) -> bool:
    """Whether a child forked for a call with ``preload`` starts with ``module`` imported (the
    child evaluates the check first thing; ``eval`` pickles by name)."""
    done = call_isolated(eval, (f"{module!r} in __import__('sys').modules",), LIMITS, preload=preload)
    assert done.status == "ok", done
    return bool(done.value)


def test_a_later_calls_modules_are_preloaded() -> None:
    # modules nothing of buildbench imports: only a preload puts them into the server
    assert loaded("colorsys", ("colorsys",))
    assert not loaded("tabnanny")
    assert loaded("tabnanny", ("tabnanny",))
    assert loaded("colorsys", ("colorsys",))  # and back: a call's modules, never an old call's only
    pid = _server_pid()
    assert loaded("colorsys", ("colorsys",)) and _server_pid() == pid  # held already: no restart


def test_a_server_with_a_live_child_is_not_stopped() -> None:
    loaded("colorsys", ("colorsys",))  # the server runs, started or restarted here
    started = threading.Event()
    slow: list[Isolated] = []

    def hold() -> None:
        started.set()
        slow.append(call_isolated(eval, ("__import__('time').sleep(3) or 'done'",), LIMITS))

    thread = threading.Thread(target=hold)
    thread.start()
    started.wait()
    deadline = time.monotonic() + 30
    while not _server_has_child() and time.monotonic() < deadline:
        time.sleep(0.05)
    # the sleeping child lives: this call forks from the same server, which lacks the module
    assert not loaded("wave", ("wave",))
    thread.join()
    assert slow[0].status == "ok" and slow[0].value == "done", slow[0]
    assert loaded("wave", ("wave",))  # idle again: restarted with it


def _server_pid() -> int | None:
    return multiprocessing.forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined,no-any-return]


def _server_has_child() -> bool:
    pid = _server_pid()
    return pid is not None and bool(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())


def test_children_start_with_numpy_ma() -> None:
    # numpy 2 imports numpy.ma on a process's first np.unique (55 ms): every isolated scoring paid it.
    assert loaded("numpy.ma")
