"""Shared shape of a benchmark figure: our time beside a baseline timed in the same run,
and the machine's current slowness, which baselines with a time limit scale it by."""

from __future__ import annotations

import functools
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

#: CPU seconds of :func:`_probe` on the reference machine (2 cores, unloaded), so that
#: :func:`slowdown` is 1 there and grows with a slower or busier machine.
PROBE_REFERENCE_S = 0.05
#: Environment variable that fixes :func:`slowdown` (a positive number), e.g. for a test.
SLOWDOWN_ENV = "BUILDBENCH_BENCH_SLOWDOWN"


@dataclass(frozen=True)
class Figure:
    """One benchmark figure.

    ``seconds`` is our median wall time; ``baseline_seconds`` the median of the baseline
    (a naive implementation or the original tool) timed in the same run, so the ratio is
    meaningful on a noisy machine. ``target_seconds`` is the goal from the issue, if any.
    ``unit`` is what ``seconds`` and ``target_seconds`` measure when a figure is not a time
    (a log-log slope, a ratio); lower is still better. ``baseline_skipped`` says why a
    baseline was not timed (not installed, or past its time limit on a loaded machine): a
    skipped baseline is reported, never a failed run.
    """

    name: str
    seconds: float
    baseline: str | None = None
    baseline_seconds: float | None = None
    target_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    unit: str = "s"
    baseline_skipped: str | None = None

    @property
    def speedup(self) -> float | None:
        if self.baseline_seconds is None or self.seconds <= 0 or self.unit != "s":
            return None
        return self.baseline_seconds / self.seconds

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["speedup"] = self.speedup
        d["meets_target"] = None if self.target_seconds is None else self.seconds <= self.target_seconds
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Figure:
        """The figure :meth:`to_dict` wrote (what a benchmark's own process sends back)."""
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


def check_run(result: Any, episodes: int) -> None:
    """Raise unless a harness run (its ``RunResult``) played ``episodes`` episodes, every one
    to its end: the time of a run whose episodes crashed (e.g. a worker that could not import
    the package) measures no work, so it is the benchmark's failure, never a figure."""
    status = result.summary.get("status", {})
    if result.ran != episodes or status != {"ok": episodes}:
        raise RuntimeError(f"expected {episodes} episodes, each ok; ran {result.ran}, status {status}")


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


def _probe() -> int:
    # Pure Python on one core (no BLAS threads): what a loaded core does to every benchmark.
    total = 0
    for i in range(1_000_000):
        total += i * i % 7
    return total


@functools.cache
def slowdown() -> float:
    """How many times slower than the reference machine this process runs now (>= 1).

    The larger of: the median wall time of a fixed pure-Python workload over its reference
    CPU time (a slower CPU, or a core shared with other work), and the 1-minute load
    average per core (load that the short probe may have missed). Baselines with a time
    limit multiply it by this (:func:`scaled_limit`) instead of failing on a busy machine.
    """
    fixed = os.environ.get(SLOWDOWN_ENV)
    if fixed:
        return max(1.0, float(fixed))
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        _probe()
        walls.append(time.perf_counter() - t0)
    per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    return max(1.0, statistics.median(walls) / PROBE_REFERENCE_S, per_core)


def scaled_limit(seconds: float) -> float:
    """A time limit set for the reference machine, stretched by :func:`slowdown`."""
    return seconds * slowdown()
