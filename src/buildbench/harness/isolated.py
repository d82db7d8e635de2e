"""One function run in a child process with wall, CPU and memory limits: scoring what an agent made.

A scorer reads agent output (an IFC model, a frame of members, a machine, a scene) with native
code (IfcOpenShell, MuJoCo, FCL, a GL context). Run in the harness process, output crafted to be
slow or large would hold the run for minutes and gigabytes, and a native crash would end the run.
`call_isolated` runs ``fn(*args)`` in a fresh process started from the ``forkserver`` (the suite is
preloaded there, so a call costs a fork, not an import) and reports how it ended:

- ``ok``: ``value`` is what ``fn`` returned;
- ``error``: ``fn`` raised; ``exception`` is that exception, as itself (`AgentFailure` included);
- ``limit``: the wall clock (the parent kills it), the CPU time (RLIMIT_CPU) or the memory budget
  (the sandbox's `MemoryBudget`: a cgroup of its own, else a supervisor that sums its tree) ran
  out; ``error`` is one line naming the limit;
- ``crash``: the process died by itself (segfault, abort) without an answer;
- ``stopped``: the caller's ``stop`` event was set (the run failed or was interrupted); the
  process was killed at once, not when its wall clock ran out.

The child sees the parent's environment variables as they are at the call (a forkserver child
would otherwise see them as they were when the server started). With ``serve``, ``fn`` gets a
`Channel` as its first argument, through which it asks the parent for things while it runs (an
episode played apart asks for model answers and for its score: `buildbench.harness.apart`).

Inside `kept_ready` (the runner scores in one) the process of a call may have been started before
it, with its memory group (`buildbench.harness.isolated_ready`); it still serves that call alone.

What a scorer of agent output must check before it starts (documented caps per suite, e.g.
`buildbench.suites.bimedit.check.caps`) keeps an output past them from costing anything; these
limits bound the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import pickle
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

from buildbench.sandbox._memory import MemoryBudget
from buildbench.sandbox._prctl import die_with_parent

from .forkserver_preload import main_script_rerun, refers_to_main
from .isolated_ready import Key, release, start_child, take_ready
from .isolated_ready import kept_ready as _kept_ready

IsolatedStatus = Literal["ok", "error", "limit", "crash", "stopped"]
#: What the forkserver imports once, so that each child does not: the harness, the model clients
#: (an episode played apart uses them), the CLI (a child runs the main script again as
#: ``__mp_main__``, and the ``buildbench`` console script imports the CLI), and ``numpy.ma``, which
#: numpy 2 imports on the first ``np.unique`` of a process (55 ms: the example suite's scoring took
#: 60 ms in each isolated child, 1.2 ms with it loaded), and the suite registry, read
#: (`buildbench.harness.forkserver_warm`: 28 ms per child when each read it).
FORKSERVER_PRELOAD = ("buildbench.harness.runner", "buildbench.llm", "buildbench.cli", "numpy.ma",
                      "buildbench.harness.forkserver_warm")
#: Imported after a call's own modules (the suite): makes the record classes' adapters and schemas
#: once in the server and freezes its objects (`buildbench.harness.forkserver_final`).
FORKSERVER_LAST = ("buildbench.harness.forkserver_final",)


@dataclass(frozen=True)
class IsolationLimits:
    """Limits of one isolated call.

    Attributes:
        wall_s: Wall-clock seconds before the process is killed.
        cpu_s: CPU seconds (RLIMIT_CPU; the kernel stops it with SIGXCPU).
        memory_mb: Memory of the process and anything it starts, MiB (see `MemoryBudget`); None: no
            budget of its own (it stays in its parent's memory group, so the sandboxes it starts
            get theirs as they would in the parent).
    """

    wall_s: float = 900.0
    cpu_s: int = 600
    memory_mb: int | None = 8192


@dataclass(frozen=True)
class Isolated:
    """How an isolated call ended (see the module docstring)."""

    status: IsolatedStatus
    value: Any = None
    error: str | None = None
    exception: BaseException | None = None


#: What the parent does with a request of its child: ``serve(request_id, payload, reply)``, where
#: ``reply(request_id, ok, value)`` answers it (``ok`` False: ``value`` is raised in the child).
#: Called in the thread that waits for the child; it must not block (hand the work elsewhere).
Serve = Callable[[int, Any, Callable[[int, bool, Any], None]], None]


class Channel:
    """The isolated process's end of ``serve``: requests to the parent, answered in any order.

    `ask` is a coroutine, so an episode's concurrent model calls stay concurrent; a thread of this
    process reads the answers.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[tuple[bool, Any]]]] = {}
        self._reader: threading.Thread | None = None

    async def ask(self, payload: Any) -> Any:
        """What the parent answers to ``payload``; raises what it raised."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        request_id = next(self._ids)
        self._waiting[request_id] = (loop, future)
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="buildbench-channel", daemon=True)
            self._reader.start()
        with self._lock:
            self._conn.send(("call", request_id, payload))
        ok, value = await future
        if ok:
            return value
        raise value

    def _read(self) -> None:
        while True:
            try:
                _, request_id, ok, value = self._conn.recv()
            except Exception as exc:  # no ask may wait forever
                # EOF: the parent is gone. die_with_parent does not end this process then: its
                # parent is the forkserver, which a harness killed with SIGKILL leaves behind.
                gone = isinstance(exc, EOFError | OSError)
                why = ("the harness is gone" if gone else
                       f"an answer of the parent could not be read: {type(exc).__name__}: {exc}")
                for loop, future in self._waiting.values():
                    with contextlib.suppress(RuntimeError):
                        loop.call_soon_threadsafe(_settle, future, (False, RuntimeError(why)))
                return
            loop, future = self._waiting.pop(request_id)
            try:
                loop.call_soon_threadsafe(_settle, future, (ok, value))
            except RuntimeError:  # the loop is closed: nobody waits any more
                return


def portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling both ways, else a RuntimeError with its text: one whose
    ``__init__`` takes other arguments than its ``args`` pickles but fails to load on the other
    side, where nobody could catch it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _settle(future: asyncio.Future[tuple[bool, Any]], answer: tuple[bool, Any]) -> None:
    if not future.done():
        future.set_result(answer)


class _Replies:
    """The parent's end of ``serve``: answers sent from any thread, and a close that no send races."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.closed = False

    def reply(self, request_id: int, ok: bool, value: Any) -> None:
        with self.lock:
            if self.closed:
                return
            try:
                self.conn.send(("reply", request_id, ok, value if ok else portable(value)))
            except (OSError, ValueError):
                return  # the child is gone; its episode ends as its process did
            except Exception as exc:  # an answer that does not pickle: the child gets why
                self.conn.send(("reply", request_id, False, RuntimeError(f"unpicklable answer: {exc}")))

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.conn.close()


def _child(conn: Connection) -> None:
    die_with_parent()
    try:
        conn.recv()  # the parent has put this process into its memory group: what it forks is in it too
    except (EOFError, OSError):
        os._exit(1)  # the parent went away before the start: nothing to do, nothing to print
    # The work runs in a process of this one's own, which waits for it: how it ended is then known
    # here, first hand, and told to the parent. A forkserver child's end reaches the parent only
    # through the server, which under load has answered "exit code 255" for a child that aborted.
    # It is forked before the call comes (a process kept ready, `kept_ready`, waits for its call).
    worker = os.fork()
    if worker == 0:
        die_with_parent()
        _work(conn)
    _, status = os.waitpid(worker, 0)
    with contextlib.suppress(OSError, ValueError):
        conn.send(("ended", os.waitstatus_to_exitcode(status)))


def _work(conn: Connection) -> None:
    """The worker process: receives its one call, runs it, answers, and exits (never returns)."""
    try:
        try:
            _, fn, args, cpu_s, environ, served = conn.recv()
        except (EOFError, OSError):
            os._exit(1)
        if os.environ != environ:  # usually as the server had them (clearing and setting ~100: 0.6 ms)
            os.environ.clear()
            os.environ.update(environ)
        # RLIMIT_CPU counts from the fork; what the wait for the call took (a few ms) is not the call's
        used = resource.getrusage(resource.RUSAGE_SELF)
        limit = cpu_s + round(used.ru_utime + used.ru_stime)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))
        value = fn(Channel(conn), *args) if served else fn(*args)
        conn.send(("ok", value))
    except BaseException as exc:  # handed to the parent as itself
        with contextlib.suppress(BaseException):
            conn.send(("error", portable(exc)))
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(0)


def call_isolated(fn: Callable[..., Any], args: tuple[Any, ...], limits: IsolationLimits = IsolationLimits(),
                  *, preload: tuple[str, ...] = (), serve: Serve | None = None,
                  stop: threading.Event | None = None, script_free: bool = False) -> Isolated:
    """Run ``fn(*args)`` (a module-level function; picklable arguments) in a child process.

    Args:
        fn: The function.
        args: Its arguments.
        limits: Wall, CPU and memory limits.
        preload: Modules the forkserver imports once (where it is not started yet), e.g. a suite.
        serve: Answers the child's requests; ``fn`` is then called as ``fn(channel, *args)``.
        stop: Set by the caller when the call's answer is no longer wanted (a run that failed): the
            process is killed within a poll (0.1 s). Without it, a child waiting for answers that
            will never come would hold its waiting thread, and the exit, until ``limits.wall_s``.
        script_free: ``fn`` depends on nothing the parent's main script does at its top level (a
            scoring: the suite and the outcome decide it): the child does not run that script
            again, as multiprocessing's children do, unless ``(fn, args)`` refers to the main
            module (`buildbench.harness.forkserver_preload.without_main_script`). A Python-API
            user's top-level imports (torch, Ray) then cost nothing per call.
    """
    spare = script_free and main_script_rerun() and not refers_to_main((fn, args))
    key = _key(limits.memory_mb, preload, spare)
    child = take_ready(key)
    if child is not None and not child.process.is_alive():  # killed while it waited (never by us)
        release(child)
        child = None
    if child is None:
        child = start_child(_child, *key)
    replies = _Replies(child.conn)
    child.closers.append(replies.close)
    started = time.monotonic()
    try:
        if child.budget is not None:
            child.budget.begin_call()
        child.conn.send(("call", fn, args, limits.cpu_s, dict(os.environ), serve is not None))
        return _wait(child.process, child.conn, child.budget, limits, started, serve, replies.reply, stop)
    finally:
        release(child)  # killed now; its clean-up waits in a keeper's thread where one runs


def _key(memory_mb: int | None, preload: tuple[str, ...], spare: bool) -> Key:
    return memory_mb, tuple(dict.fromkeys([*FORKSERVER_PRELOAD, *preload, *FORKSERVER_LAST])), spare


def kept_ready(limits: IsolationLimits, *, preload: tuple[str, ...] = (), script_free: bool = False,
               count: int = 2, calls: int | None = None) -> contextlib.AbstractContextManager[None]:
    """A block in which ``count`` processes for `call_isolated` calls with ``limits``' memory budget,
    ``preload`` and ``script_free`` are started ahead of the calls, each with its memory group
    (`buildbench.harness.isolated_ready`: each call still gets a fresh process and a fresh group;
    what it saves is the wait for them). Calls of other kinds start their own, as outside it.
    ``calls``: how many such calls will come at most (no process is kept for more)."""
    return _kept_ready(_child, _key(limits.memory_mb, preload, script_free and main_script_rerun()), count, calls)


def _wait(process: Any, conn: Connection, budget: MemoryBudget | None, limits: IsolationLimits, started: float,
          serve: Serve | None, reply: Callable[[int, bool, Any], None], stop: threading.Event | None) -> Isolated:
    while True:
        if stop is not None and stop.is_set():
            process.kill()
            return Isolated("stopped", error="the run stopped; the process was killed")
        # The supervisor (no cgroup) sees growth only when it looks: look at its own cadence.
        interval = None if budget is None else budget.interval_s
        if conn.poll(0.1 if interval is None else min(0.1, interval)):
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return _died(process, budget, limits)
            kind, payload = message[0], message[-1]
            if kind == "call" and serve is not None:
                serve(message[1], payload, reply)
                continue
            if kind == "ok":
                return Isolated("ok", value=payload)
            if kind == "ended":  # the work's process ended without an answer; its exit status
                return _died(process, budget, limits, payload)
            if isinstance(payload, MemoryError):
                budget_text = "its address space" if limits.memory_mb is None else f"{limits.memory_mb} MiB"
                return Isolated("limit", error=f"memory limit: {budget_text} exceeded (MemoryError)")
            return Isolated("error", error=f"{type(payload).__name__}: {payload}", exception=payload)
        over = None if budget is None else budget.over()
        if over is not None:
            process.kill()
            return Isolated("limit", error=over)
        if time.monotonic() - started > limits.wall_s:
            process.kill()
            return Isolated("limit", error=f"wall-clock limit: {limits.wall_s:g} s exceeded; the process was killed")
        if not process.is_alive() and not conn.poll(0):
            return _died(process, budget, limits)


def _died(process: Any, budget: MemoryBudget | None, limits: IsolationLimits, code: int | None = None) -> Isolated:
    process.join(5)
    if code is None:
        code = process.exitcode
    if code == -signal.SIGXCPU:
        return Isolated("limit", error=f"CPU time limit: {limits.cpu_s} s exceeded")
    over = None if budget is None else budget.over()
    if over is not None:
        return Isolated("limit", error=over)
    how = signal.Signals(-code).name if code is not None and code < 0 else f"exit code {code}"
    return Isolated("crash", error=f"the isolated process died ({how}) without an answer (pid {process.pid}, "
                                   f"from {os.getpid()})")
