"""Processes for `buildbench.harness.isolated.call_isolated`: started one per call, or kept ready.

An isolated call's process costs more to make than most scorings cost to run: a fork from the
forkserver (the parent pickles the preparation data, the server forks, the child unpickles it:
~6 ms) and, with a memory budget, a memory cgroup of its own that the process is moved into.
Moving a process between cgroup v1 groups waits for an RCU grace period (8-12 ms of wall time, no
CPU), unless another move came just before. Started on demand, these ~20 ms lie on each call's
path: in a run of model-backed episodes the scorings (at most ``workers`` at once) then queue up
behind them once the agents' answers arrive.

`kept_ready` starts such processes ahead of time, in a thread of its own, while the run waits for
its agents: each is started, given a fresh memory group and moved into it exactly as on demand,
and then waits for its call. A call takes one (`take_ready`) instead of starting one; the process
serves that one call and ends, and its group is removed with it, so each call still runs in a
fresh process with a fresh group and a clean charge. The same holds for what a call sees: the
call's function, arguments, environment variables and CPU limit reach the process with the call
(the worker it forked once in its group waits for them, `isolated._child`; its CPU limit counts
what it used while waiting as not the call's). What is saved is only waiting: the start before a
call and the clean-up after it (`finish`, in that thread too). A kept process found dead at its
call is replaced by one started for the call.

Outside a `kept_ready` block (and for calls it was not made for: another memory budget, other
modules, a call that needs the main script) every call starts its own process, as before.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from buildbench.sandbox._memory import MemoryBudget

from .forkserver_preload import forkserver_context, without_main_script

#: What a process is for: its memory budget (MiB or None), the modules its server holds, and
#: whether it was started without the parent's main script.
Key = tuple[int | None, tuple[str, ...], bool]


@dataclass
class Child:
    """A started isolated process, its end of the pipe, and its memory group."""

    process: Any
    conn: Connection
    budget: MemoryBudget | None
    #: Called with the process's pipe end once it has finished (`_Replies.close` in isolated).
    closers: list[Callable[[], None]] = field(default_factory=list)


def start_child(target: Callable[[Connection], None], memory_mb: int | None, preload: Sequence[str],
                spare: bool) -> Child:
    """Start ``target(conn)`` in a process from the forkserver holding ``preload``, in a memory group
    of ``memory_mb`` MiB of its own (None: none), without the main script when ``spare``."""
    global _calls_starting
    with _lock:
        _calls_starting += 1
    try:
        return _start(target, memory_mb, preload, spare)
    finally:
        with _lock:
            _calls_starting -= 1
            _no_call_starting.notify_all()


def _start(target: Callable[[Connection], None], memory_mb: int | None, preload: Sequence[str],
           spare: bool) -> Child:
    context = forkserver_context(list(preload))
    ours, theirs = context.Pipe()
    process = context.Process(target=target, args=(theirs,), name="buildbench-isolated")
    budget = (None if memory_mb is None else
              MemoryBudget(memory_mb * 1024 * 1024, what="the isolated process (with all it starts"))
    child = Child(process, ours, budget)
    try:
        with without_main_script() if spare else contextlib.nullcontext():
            process.start()
        theirs.close()
        if budget is not None:
            budget.enter(process.pid)  # type: ignore[arg-type]  # before it forks its worker: it waits for this
        ours.send("placed")
    except BaseException:
        finish(child)
        raise
    return child


def finish(child: Child) -> None:
    """End ``child`` (its call answered or abandoned) and remove its memory group."""
    if child.process.pid is not None:
        if child.process.is_alive():
            child.process.kill()
        child.process.join(5)
    for close in child.closers:
        close()
    with contextlib.suppress(OSError):
        child.conn.close()
    if child.budget is not None:
        child.budget.close()


class _Keeper:
    """Keeps ``count`` processes of one `Key` ready (never more than the ``calls`` still to come), and
    finishes the used ones, in one thread."""

    def __init__(self, target: Callable[[Connection], None], key: Key, count: int, calls: int | None) -> None:
        self.target = target
        self.key = key
        self.count = count
        self.to_come = calls  # None: not known
        self.pid = os.getpid()
        self.ready: queue.SimpleQueue[Child] = queue.SimpleQueue()
        self.used: queue.SimpleQueue[Child] = queue.SimpleQueue()
        self.wake = threading.Event()
        self.closing = False
        self.failed: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="buildbench-kept-ready", daemon=True)

    def _run(self) -> None:
        while not self.closing:
            self.finish_used()
            if self.failed is None and self.ready.qsize() < self._wanted():
                # a call waiting for its process comes first: the server forks one at a time
                with _lock:
                    if _calls_starting and _no_call_starting.wait_for(lambda: not _calls_starting, 0.5) is False:
                        continue
                try:
                    self.ready.put(_start(self.target, *self.key))
                except Exception as exc:  # calls start their own, as without this keeper
                    self.failed = exc
                continue
            self.wake.wait(0.5)
            self.wake.clear()
        self.finish_used()

    def finish_used(self) -> None:
        while True:
            try:
                child = self.used.get_nowait()
            except queue.Empty:
                return
            finish(child)

    def _wanted(self) -> int:
        return self.count if self.to_come is None else min(self.count, self.to_come)

    def take(self) -> Child | None:
        with _lock:
            if self.to_come is not None:
                self.to_come -= 1  # this call, served by a kept process or not
        try:
            child = self.ready.get_nowait()
        except queue.Empty:
            return None
        self.wake.set()
        return child

    def close(self) -> None:
        self.closing = True
        self.wake.set()
        self.thread.join()
        self.finish_used()
        while True:
            try:
                finish(self.ready.get_nowait())
            except queue.Empty:
                return


_lock = threading.Lock()
_keepers: dict[int, _Keeper] = {}
#: Processes being started for calls (not for keepers), and its change.
_calls_starting = 0
_no_call_starting = threading.Condition(_lock)
_ids = itertools.count()


@contextlib.contextmanager
def kept_ready(target: Callable[[Connection], None], key: Key, count: int, calls: int | None = None) -> Iterator[None]:
    """While in this block, ``count`` processes for calls of ``key`` are kept started (module
    docstring), at most as many as the ``calls`` still to come where that number is given (none is
    started for nothing at the end of a run); on leaving it the unused ones are ended and every used
    one is finished."""
    keeper = _Keeper(target, key, count, calls)
    number = next(_ids)
    with _lock:
        _keepers[number] = keeper
    keeper.thread.start()
    try:
        yield
    finally:
        with _lock:
            del _keepers[number]
        keeper.close()


def _keeper_of(key: Key) -> _Keeper | None:
    with _lock:
        for keeper in _keepers.values():
            # a forked child inherits the table but not the keeper's thread
            if keeper.key == key and keeper.pid == os.getpid() and not keeper.closing:
                return keeper
    return None


def take_ready(key: Key) -> Child | None:
    """A process kept ready for ``key`` (its call is then sent to it), or None."""
    keeper = _keeper_of(key)
    return None if keeper is None else keeper.take()


def release(child: Child) -> None:
    """``child``'s call has ended: kill its process now, and finish it here or, where a keeper of its
    kind runs, in the keeper's thread (its group's removal waits for the kill to land)."""
    if child.process.is_alive():
        child.process.kill()
    keeper = None
    with _lock:
        for candidate in _keepers.values():
            if candidate.pid == os.getpid() and not candidate.closing:
                keeper = candidate
                break
    if keeper is None:
        finish(child)
        return
    keeper.used.put(child)
    keeper.wake.set()
    if not keeper.thread.is_alive():  # it closed meanwhile (its close finishes what came before)
        keeper.finish_used()

