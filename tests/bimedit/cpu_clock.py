"""The clock of the "refused in seconds" checks: CPU seconds of this test process and of the
children it has reaped (the bounded tessellations fork and reap theirs, see ``check/bounded.py``).
A kernel run or a pass over a file that is not cut short burns CPU, here or in such a child, so it
still shows; the load of a shared test machine does not move it, where wall time grew ~12x at
load ~25 on 2 cores. Imported relatively (``from .cpu_clock import cpu_seconds``): pytest runs
with ``--import-mode=importlib``.
"""

from __future__ import annotations

import os


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its reaped children, so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
