"""Tests whose subject is what agent code does under a short wall limit, not how fast a sandbox
worker starts: `roomy_starts` gives a worker's starts a roomy wall limit of their own.

A start (a sandbox process plus its setup hook: for BIM-Edit, IfcOpenShell's import and the
model's open) is no agent code, but `Worker.call` runs it as a request of its own under the
call's wall limit, on the first call and on the next one after a process ended (a timeout, a
crash, the memory limit). On a loaded 2-core machine a BIM-Edit start took 1.6-2.1 s at load ~12
(0.7 s quiet) and passed 4 s in CI: the call then ended as a timeout before its code ran.
"""

from __future__ import annotations

from dataclasses import replace

from buildbench.sandbox import Envelope, Worker

#: Wall seconds a start may take: a hang check, far above a start at load ~20.
START_WALL_S = 60.0


def roomy_starts(worker: Worker, wall_s: float = START_WALL_S) -> Worker:
    """Start ``worker``'s processes under ``wall_s``; its calls keep the worker's own limits.

    The start is wrapped (it happens inside ``Worker.call``): the process is started with the
    roomy wall limit, then given the worker's own, which times each call's code.
    """
    limits = worker.limits
    start = worker._start

    def start_roomy() -> Envelope | None:
        worker.limits = replace(limits, wall_s=wall_s)
        try:
            failed = start()
        finally:
            worker.limits = limits
        if worker._process is not None:
            worker._process.limits = limits  # what each call's request is timed by
        return failed

    worker._start = start_roomy  # type: ignore[method-assign]
    return worker
