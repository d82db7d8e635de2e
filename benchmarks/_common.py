"""Shared shape of a benchmark figure: our time beside a baseline timed in the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Figure:
    """One benchmark figure.

    ``seconds`` is our median wall time; ``baseline_seconds`` the median of the baseline
    (a naive implementation or the original tool) timed in the same run, so the ratio is
    meaningful on a noisy machine. ``target_seconds`` is the goal from the issue, if any.
    """

    name: str
    seconds: float
    baseline: str | None = None
    baseline_seconds: float | None = None
    target_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def speedup(self) -> float | None:
        if self.baseline_seconds is None or self.seconds <= 0:
            return None
        return self.baseline_seconds / self.seconds

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["speedup"] = self.speedup
        d["meets_target"] = None if self.target_seconds is None else self.seconds <= self.target_seconds
        return d


def median_time(fn: Callable[[], Any], repeat: int = 5, warmup: int = 1) -> float:
    """Median wall seconds of ``fn()`` over ``repeat`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
