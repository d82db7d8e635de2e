"""The geometry kernel run in a forked child with a CPU budget, so one model cannot hold scoring
for minutes.

Caps (:mod:`.caps`) refuse what is big or deep before anything is read, but not what is small
and slow: the kernel's time grows faster than linearly in faces that meet at one point or repeat,
and a model within every cap made it run for minutes (20,000 repeated triangles in one face set:
over 100 s; 600 overlapping triangles sharing a corner: 15 s, growing with the cube of their
number), in C, where Python cannot interrupt it. Faces like these cannot be told from a
real element's without the kernel's own geometry, so the bound is on the kernel's work instead:
the CPU seconds of all of one agent model's tessellations are capped by
``ifc_tessellation_seconds`` (a task's own models are trusted: ``ShapeCache(bounded=False)``).
An element with a large kernel input is tessellated in a child forked from the scorer (the parsed
model is inherited, nothing is read twice) under ``RLIMIT_CPU``; a small one in the scorer
itself, charged all the same (a fork costs ~40 ms beside three parsed real models: more than most
real elements' tessellation; see ``shapes.FORK_FROM_PARENTHESES``), so the budget can be overrun
by at most one small element's time (seconds: the slowest small input found, a swept disk along
1,000 points, takes 8 s). The budget is
CPU time, not wall time, so a loaded machine does not spend it; the slowest element of the real
models of ../shared/data/ifc takes 0.8 s, all elements of the largest 4.4 s. A child that runs
past a wall bound without spending its CPU (it cannot, on a sane machine) is the machine's fault
and raised as such.
"""

from __future__ import annotations

import math
import os
import resource
import select
import signal
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

#: Wall seconds a child may take per CPU second of its budget before it is the machine's fault.
WALL_PER_CPU = 10.0
T = TypeVar("T")
_HEAD = struct.Struct("<qqq")  # vertex floats, face ints, error bytes


class TessellationOverrun(ValueError):  # noqa: N818 (not an error of the code: a budget spent)
    """A model's tessellations went past their budget (a ``ValueError``: the model is the input
    that cannot be scored, as an unreadable one).

    Attributes:
        path: the model's file.
        element: the ``#id`` and class of the element being tessellated when it ran out.
        seconds: the budget (CPU seconds), ``ifc_tessellation_seconds``.
        machine: True when the child outlived its wall bound without spending its CPU (a machine
            fault, not the model's cost).
    """

    def __init__(self, path: Path, element: str, seconds: int, *, machine: bool = False) -> None:
        self.path, self.element, self.seconds, self.machine = path, element, seconds, machine
        what = ("ran past its wall bound without using its CPU budget" if machine else
                f"took the geometry kernel past {seconds:,} CPU seconds to tessellate")
        super().__init__(f"{path.name}: element {element} {what} (the model's tessellations together; "
                         "BUILDBENCH_LIMIT_IFC_TESSELLATION_SECONDS)")


class KernelCrash(RuntimeError):
    """The child tessellating an element died by itself (a native crash of the kernel): an error,
    never a score; the message names the file, the element and the signal."""


@dataclass
class Budget:
    """CPU seconds left to one model's tessellations."""

    path: Path
    seconds: int
    spent: float = 0.0

    def left(self) -> float:
        return self.seconds - self.spent

    def run_here(self, work: Callable[[], T], element: str) -> T:
        """``work()`` in this process (for inputs too small to be slow), charged to the budget.

        Raises:
            TessellationOverrun: The budget was already spent.
        """
        if self.left() <= 0:
            raise TessellationOverrun(self.path, element, self.seconds)
        started = time.process_time()
        try:
            return work()
        finally:
            self.spent += time.process_time() - started


Arrays = tuple[np.ndarray, np.ndarray] | None
"""Vertices ``(n, 3)`` float64 and faces ``(m, 3)`` int64, or None without triangles."""


def run_bounded(work: Callable[[], tuple[Arrays, str | None]], budget: Budget, element: str) -> tuple[Arrays, str | None]:
    """``work()`` in a forked child within ``budget`` (charged with the child's CPU time).

    Raises:
        TessellationOverrun: The budget was spent (or the child outlived its wall bound).
        KernelCrash: The child died by itself (a crash of the kernel) or sent no reply.
    """
    left = budget.left()
    if left <= 0:
        raise TessellationOverrun(budget.path, element, budget.seconds)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(work, read_end, write_end, left)
    os.close(write_end)
    started = time.monotonic()
    deadline = started + WALL_PER_CPU * left + 5.0
    chunks: list[bytes] = []
    killed = False
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            ready, _, _ = select.select([read_end], [], [], wait)
            if ready:
                chunk = os.read(read_end, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except BaseException:  # interrupted: the child must not run on to its budget
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(read_end)
        _, status, usage = os.wait4(pid, 0)
    budget.spent += usage.ru_utime + usage.ru_stime
    if killed:
        raise TessellationOverrun(budget.path, element, budget.seconds, machine=budget.left() > 0)
    if os.WIFSIGNALED(status):
        # SIGXCPU is the soft CPU limit set in the child and SIGKILL its hard one a second later (a
        # SIGKILL well before the child used its CPU, e.g. the kernel's memory killer, is a crash);
        # the child's rusage read ~10% below what the limit counted, so SIGXCPU is not checked on it
        cpu = usage.ru_utime + usage.ru_stime
        if os.WTERMSIG(status) == signal.SIGXCPU or (os.WTERMSIG(status) == signal.SIGKILL
                                                      and cpu >= 0.8 * left):
            budget.spent = max(budget.spent, budget.seconds)
            raise TessellationOverrun(budget.path, element, budget.seconds)
        raise KernelCrash(f"{budget.path.name}: the geometry kernel crashed tessellating element {element} "
                          f"(signal {os.WTERMSIG(status)})")
    reply = _decode(b"".join(chunks))
    if reply is None:
        raise KernelCrash(f"{budget.path.name}: the child tessellating element {element} ended without a reply")
    return reply


def _child(work: Callable[[], tuple[Arrays, str | None]], read_end: int, write_end: int, left: float) -> None:
    code = 0
    try:
        os.close(read_end)
        soft = max(1, math.ceil(left))
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard != resource.RLIM_INFINITY:  # a limit set around the scorer (the harness's) stays
            soft = min(soft, max(1, hard - 1))
            hard = min(hard, soft + 1)
        else:
            hard = soft + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        arrays, error = work()
        _write_all(write_end, _encode(arrays, error))
    except BaseException:  # noqa: BLE001 (the parent reads the missing reply as a crash)
        code = 1
    finally:
        os._exit(code)


def _encode(arrays: Arrays, error: str | None) -> bytes:
    verts, faces = arrays if arrays is not None else (np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64))
    v = np.ascontiguousarray(verts, dtype=np.float64).tobytes()
    f = np.ascontiguousarray(faces, dtype=np.int64).tobytes()
    e = (error or "").encode("utf-8", "replace")
    return _HEAD.pack(len(v) // 8, len(f) // 8, len(e)) + v + f + e


def _decode(data: bytes) -> tuple[Arrays, str | None] | None:
    if len(data) < _HEAD.size:
        return None
    nv, nf, ne = _HEAD.unpack_from(data)
    at = _HEAD.size
    verts = np.frombuffer(data, np.float64, nv, at).reshape(-1, 3).copy()  # writable, as the kernel's
    at += 8 * nv
    faces = np.frombuffer(data, np.int64, nf, at).reshape(-1, 3).copy()
    at += 8 * nf
    error = data[at:at + ne].decode("utf-8", "replace") or None
    return ((verts, faces) if len(faces) else None), error


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
