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
- ``crash``: the process died by itself (segfault, abort) without an answer.

What a scorer of agent output must check before it starts (documented caps per suite, e.g.
`buildbench.suites.bimedit.check.caps`) keeps an output past them from costing anything; these
limits bound the rest.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

from buildbench.sandbox._memory import MemoryBudget
from buildbench.sandbox._prctl import die_with_parent

IsolatedStatus = Literal["ok", "error", "limit", "crash"]


@dataclass(frozen=True)
class IsolationLimits:
    """Limits of one isolated call.

    Attributes:
        wall_s: Wall-clock seconds before the process is killed.
        cpu_s: CPU seconds (RLIMIT_CPU; the kernel stops it with SIGXCPU).
        memory_mb: Memory of the process and anything it starts, MiB (see `MemoryBudget`).
    """

    wall_s: float = 900.0
    cpu_s: int = 600
    memory_mb: int = 8192


@dataclass(frozen=True)
class Isolated:
    """How an isolated call ended (see the module docstring)."""

    status: IsolatedStatus
    value: Any = None
    error: str | None = None
    exception: BaseException | None = None


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...], cpu_s: int) -> None:
    die_with_parent()
    try:
        conn.recv()  # the parent has put this process into its memory group: start
    except (EOFError, OSError):
        os._exit(1)  # the parent went away before the start: nothing to do, nothing to print
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    try:
        value = fn(*args)
    except BaseException as exc:  # handed to the parent as itself
        try:
            conn.send(("error", exc))
        except Exception:  # an exception that does not pickle: its text
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        return
    conn.send(("ok", value))


def call_isolated(fn: Callable[..., Any], args: tuple[Any, ...], limits: IsolationLimits = IsolationLimits(),
                  *, preload: tuple[str, ...] = ()) -> Isolated:
    """Run ``fn(*args)`` (a module-level function; picklable arguments) in a child process.

    Args:
        fn: The function.
        args: Its arguments.
        limits: Wall, CPU and memory limits.
        preload: Modules the forkserver imports once (where it is not started yet), e.g. a suite.
    """
    context = multiprocessing.get_context("forkserver")
    if preload:
        context.set_forkserver_preload(["buildbench.harness", *preload])
    ours, theirs = context.Pipe()
    process = context.Process(target=_child, args=(theirs, fn, args, limits.cpu_s), name="buildbench-isolated")
    budget = MemoryBudget(limits.memory_mb * 1024 * 1024, what="the isolated process (with all it starts")
    started = time.monotonic()
    try:
        process.start()
        theirs.close()
        budget.enter(process.pid)  # type: ignore[arg-type]
        budget.begin_call()
        ours.send("go")
        return _wait(process, ours, budget, limits, started)
    finally:
        if process.pid is not None:
            if process.is_alive():
                process.kill()
            process.join(5)
        ours.close()
        budget.close()


def _wait(process: Any, conn: Connection, budget: MemoryBudget, limits: IsolationLimits, started: float) -> Isolated:
    while True:
        if conn.poll(0.1):
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                return _died(process, budget, limits)
            if kind == "ok":
                return Isolated("ok", value=payload)
            if isinstance(payload, MemoryError):
                return Isolated("limit", error=f"memory limit: {limits.memory_mb} MiB exceeded (MemoryError)")
            return Isolated("error", error=f"{type(payload).__name__}: {payload}", exception=payload)
        over = budget.over()
        if over is not None:
            process.kill()
            return Isolated("limit", error=over)
        if time.monotonic() - started > limits.wall_s:
            process.kill()
            return Isolated("limit", error=f"wall-clock limit: {limits.wall_s:g} s exceeded; the process was killed")
        if not process.is_alive() and not conn.poll(0):
            return _died(process, budget, limits)


def _died(process: Any, budget: MemoryBudget, limits: IsolationLimits) -> Isolated:
    process.join(5)
    code = process.exitcode
    if code == -signal.SIGXCPU:
        return Isolated("limit", error=f"CPU time limit: {limits.cpu_s} s exceeded")
    over = budget.over()
    if over is not None:
        return Isolated("limit", error=over)
    how = signal.Signals(-code).name if code is not None and code < 0 else f"exit code {code}"
    return Isolated("crash", error=f"the isolated process died ({how}) without an answer (pid {process.pid}, "
                                   f"from {os.getpid()})")
