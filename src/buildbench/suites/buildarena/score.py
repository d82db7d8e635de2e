"""Benchmark metrics over samples of one task level (paper §2.4, spec 3.6).

A sample that produced no machine counts as 0 parts, failed, indicator 0
(the paper's Lift Lv.3 Seed-1.6 row reports 0.0 parts, which suggests this
convention; the paper does not state it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .check import SimResult

DEFAULT_SAMPLES = 64
"""Samples per task–model pair in the paper."""


@dataclass(frozen=True)
class LevelScore:
    """Table 2 numbers for one task level.

    Attributes:
        samples: Samples scored (including those without a machine).
        success_rate: Share of samples that passed.
        mean_indicator: Mean indicator (failed Support samples carry 0 load, as released).
        mean_parts: Mean number of parts (blocks incl. starting block and connectors).
        failure_reasons: How often each failure reason occurred.
    """

    samples: int
    success_rate: float
    mean_indicator: float
    mean_parts: float
    failure_reasons: dict[str, int]


def aggregate(results: Sequence[SimResult | None]) -> LevelScore:
    """Average ``results`` (None = the sample produced no machine).

    Raises:
        ValueError: When there are no samples.
    """
    if not results:
        raise ValueError("no samples to aggregate")
    n = len(results)
    reasons: dict[str, int] = {}
    for r in results:
        if r is None:
            reasons["no machine"] = reasons.get("no machine", 0) + 1
        elif not r.passed:
            key = r.reason.split(" (")[0]
            reasons[key] = reasons.get(key, 0) + 1
    return LevelScore(
        samples=n,
        success_rate=sum(1 for r in results if r is not None and r.passed) / n,
        mean_indicator=sum(r.indicator for r in results if r is not None) / n,
        mean_parts=sum(int(r.metrics["parts"]) for r in results if r is not None) / n,
        failure_reasons=reasons,
    )
