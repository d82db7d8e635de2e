"""Aggregation of BuildArena episodes and simulation results for the report (paper §2.4, spec 3.6).

One episode's metrics are :mod:`.score` (``score_episode``). ``aggregate``
averages the simulation results of one task level; ``level_rows``, ``failure_counts`` and
``role_costs`` aggregate stored episodes. Tokens and requests are not in the outcome:
``level_rows`` takes them from each episode's usage (the paper's per-sample sums over all
stages, spec 4.2).

A sample that produced no machine counts as 0 parts, failed, indicator 0 (the paper's Lift
Lv.3 Seed-1.6 row reports 0.0 parts, which suggests this convention; the paper does not state it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from buildbench.harness import Episode, is_scored

from .check import SimResult
from .score import FAILURE_CATEGORIES

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


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def invalid_pct(invalid: float, calls: float) -> float:
    """Failed calls as a percentage of calls; NaN (n/a: tables print it so) when there was no call,
    since 0 % would reward an agent that never acted (issue 23)."""
    return 100.0 * invalid / calls if calls else math.nan


def level_rows(episodes: Sequence[Episode]) -> dict[str, dict[str, float]]:
    """Per task id: episodes, parts, success rate (%), indicator, tokens (×10³), requests, invalid rate (%;
    NaN when the task's episodes made no call).

    Means are over every scored episode of the task (`is_scored`: refused output and a spent
    budget are failures), failed constructions counting 0 parts and 0 indicator (spec 3.6), as the
    headline means. Unscored episodes are left out: a crash has no metrics, and the metrics of
    what an episode the model endpoint cut short left must not enter a success rate either.
    """
    by_task: dict[str, list[Episode]] = {}
    for ep in episodes:
        if is_scored(ep):
            by_task.setdefault(ep.task_id, []).append(ep)
    rows = {}
    for task_id, eps in sorted(by_task.items()):
        calls = math.fsum(e.metrics.get("calls", 0.0) for e in eps)
        invalid = math.fsum(e.metrics.get("invalid_calls", 0.0) for e in eps)
        rows[task_id] = {
            "episodes": float(len(eps)),
            "parts": _mean([e.metrics.get("parts", 0.0) for e in eps]),
            "success_rate": 100.0 * _mean([e.metrics.get("passed", 0.0) for e in eps]),
            "indicator": _mean([e.metrics.get("indicator", 0.0) for e in eps]),
            "input_ktokens": _mean([e.usage.get("input_tokens", 0) / 1000.0 for e in eps]),
            "output_ktokens": _mean([e.usage.get("output_tokens", 0) / 1000.0 for e in eps]),
            "requests": _mean([float(e.usage.get("requests", 0)) for e in eps]),
            "invalid_action_rate": invalid_pct(invalid, calls),
        }
    return rows


def failure_counts(episodes: Sequence[Episode]) -> dict[str, float]:
    """Failed calls by category, summed over episodes (Fig. 6)."""
    return {name: math.fsum(e.metrics.get(f"fail_{name}", 0.0) for e in episodes) for name in FAILURE_CATEGORIES}


def role_costs(episodes: Sequence[Episode]) -> dict[str, dict[str, float]]:
    """Per role: mean turns, input/output tokens (×10³) and requests per episode (spec 4.2 stage accounting).

    Only roles that spent model calls appear (scripted agents spend none).
    """
    totals: dict[str, dict[str, float]] = {}
    for ep in episodes:
        for step in ep.steps:
            if not step.usage:
                continue
            row = totals.setdefault(step.role, {"turns": 0.0, "input_ktokens": 0.0, "output_ktokens": 0.0,
                                                "requests": 0.0})
            row["turns"] += 1
            row["input_ktokens"] += step.usage.get("input_tokens", 0) / 1000.0
            row["output_ktokens"] += step.usage.get("output_tokens", 0) / 1000.0
            row["requests"] += step.usage.get("requests", 0)
    n = max(len(episodes), 1)
    return {role: {k: v / n for k, v in row.items()} for role, row in totals.items()}
