"""Uncertainty for run aggregates: clustered bootstrap intervals and paired tests.

Benchmarks differ between models by a few points, often within noise; the papers draw 64
samples per task for that reason. Every aggregate a report shows therefore carries ``n`` and a
seeded 95 % interval, and two runs are compared task by task on the tasks they share.

* Intervals are percentile bootstraps that resample *tasks* (clusters), not episodes: the
  samples of one task are correlated, and resampling them independently would give intervals
  that are too narrow. With one sample per task this is the ordinary bootstrap of the mean.
* Paired differences average each task's samples first, then bootstrap the mean of the
  per-task differences; the p-value comes from an exact McNemar test when the metric is
  pass/fail with one sample per task, otherwise from a sign-flip permutation test (exact up
  to 2^16 sign patterns, seeded Monte Carlo beyond).

Everything is deterministic by ``seed``: the same data gives the same interval, byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .episode import Episode, is_scored

#: Bootstrap resamples per interval: a percentile interval's end points then move by well
#: under a tenth of a standard error between seeds.
RESAMPLES = 2000
LEVEL = 0.95
#: Exact sign-flip enumeration up to this many non-zero differences (2^16 patterns).
EXACT_PERMUTATION_MAX = 16
#: Metric values above this magnitude are summed scaled down by a power of two (exact), so a
#: mean of finite values is finite: 1e308 + 1e308 overflows to inf otherwise.
_OVERFLOW_RISK = 2.0**960


def metric_number(value: object) -> float | None:
    """A stored metric value as the number the means use, or None for one they leave out (NaN,
    text, a list). A flag stored as JSON ``true``/``false`` counts as 1/0, in the means, their
    intervals and paired comparisons alike: one reading for every figure a report prints."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value == value:
        return float(value)
    return None


def _scale(values: Sequence[float]) -> float:
    # Divided by 2^64, no value is above 2^960: more than 2^63 of them would be needed to overflow.
    largest = max((abs(v) for v in values if math.isfinite(v)), default=0.0)
    return 2.0**64 if largest > _OVERFLOW_RISK else 1.0


def mean_of(values: Sequence[float]) -> float:
    """The mean every report prints (NaN for no values): summed in order, scaled by a power of two
    when the values are huge so that finite values never give an infinite mean."""
    if not values:
        return math.nan
    scale = _scale(values)
    return sum(v / scale for v in values) / len(values) * scale


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap interval; ``n`` episodes in ``clusters`` tasks.

    ``low``/``high`` are NaN when there is nothing to resample (no data), and equal the mean
    when there is a single task.
    """

    n: int
    clusters: int
    mean: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "tasks": self.clusters, "mean": self.mean, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class PairedDifference:
    """``b - a`` over the tasks both runs have: mean difference, its interval and a p-value."""

    n_tasks: int
    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    p_value: float
    test: str

    def to_dict(self) -> dict[str, float | int | str]:
        return {"tasks": self.n_tasks, "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
                "low": self.low, "high": self.high, "p_value": self.p_value, "test": self.test}


def _cluster_sums(values: Sequence[float], clusters: Sequence[str] | None) -> tuple[NDArray[np.float64],
                                                                                    NDArray[np.float64]]:
    """Per-cluster sums and counts, clusters in first-seen order (deterministic)."""
    vals = np.asarray(values, dtype=float)
    if clusters is None:
        return vals, np.ones_like(vals)
    if len(clusters) != len(vals):
        raise ValueError(f"{len(vals)} values but {len(clusters)} cluster labels")
    index: dict[str, int] = {}
    ids = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=len(vals))
    sums = np.bincount(ids, weights=vals, minlength=len(index)).astype(np.float64)
    counts = np.bincount(ids, minlength=len(index)).astype(np.float64)
    return sums, counts


def bootstrap_interval(values: Sequence[float], clusters: Sequence[str] | None = None, *, seed: int = 0,
                       resamples: int = RESAMPLES, level: float = LEVEL) -> Interval:
    """The mean of ``values`` with a percentile bootstrap interval, resampling ``clusters``.

    Args:
        values: One number per episode (NaN values are left out, as the means do).
        clusters: The task id of each value; None treats every value as its own task.
        seed: Seed of the resampling; the same inputs and seed give the same interval.
    """
    vals = np.asarray(values, dtype=float)
    keep = ~np.isnan(vals)
    labels = None if clusters is None else [c for c, k in zip(clusters, keep, strict=True) if k]
    kept = vals[keep]
    mean = mean_of(kept.tolist())
    scale = _scale(kept.tolist())
    sums, counts = _cluster_sums(kept / scale, labels)
    k = len(sums)
    if k == 0:
        return Interval(0, 0, math.nan, math.nan, math.nan)
    if k == 1:
        return Interval(int(counts.sum()), 1, mean, mean, mean)
    if not np.all(np.isfinite(kept)):  # an infinite value: every resample's mean is inf or undefined
        return Interval(int(counts.sum()), k, mean, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, k, size=(resamples, k))
    # A ratio estimator: resampled clusters keep their sizes, so unequal sample counts per
    # task weigh as they do in the plain mean.
    stats = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha]) * scale
    return Interval(int(counts.sum()), k, mean, float(low), float(high))


def mean_of_groups_interval(groups: Sequence[tuple[Sequence[float], Sequence[str]]], *, seed: int = 0,
                            resamples: int = RESAMPLES, level: float = LEVEL) -> Interval:
    """The plain mean of group means (a paper's mean column over rooms or conditions, each group
    weighing the same whatever its size) with a percentile bootstrap that resamples tasks within
    each group (stratified), so every resample keeps every group.

    Args:
        groups: Per group, its values (none NaN, at least one) and their task ids.

    Returns:
        ``n`` values in ``clusters`` tasks over all groups; no interval (NaN ends) when every group
        has a single task (nothing varies) or a value is infinite.
    """
    means = [sum(values) / len(values) for values, _ in groups]
    mean = sum(means) / len(means) if means else math.nan
    n = sum(len(values) for values, _ in groups)
    rng = np.random.default_rng(seed)
    stats = np.zeros(resamples)
    clusters = varied = 0
    for values, tasks in groups:
        sums, counts = _cluster_sums(values, tasks)
        clusters += len(sums)
        varied += len(sums) > 1
        picks = rng.integers(0, len(sums), size=(resamples, len(sums)))
        stats += sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    finite = all(math.isfinite(v) for values, _ in groups for v in values)
    if not varied or not finite:
        return Interval(n, clusters, mean, math.nan, math.nan)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(stats / len(groups), [alpha, 1.0 - alpha])
    return Interval(n, clusters, mean, float(low), float(high))


def bootstrap_of_counts(counts: Sequence[Sequence[float]], clusters: Sequence[str],
                        statistic: Callable[[Sequence[float]], float | None], *, seed: int = 0,
                        resamples: int = RESAMPLES, level: float = LEVEL) -> tuple[float, float] | None:
    """A percentile interval of a statistic of summed counts (an F1 or a kappa from a confusion
    matrix), resampling ``clusters`` (tasks) as `bootstrap_interval` does.

    Args:
        counts: One row of counts per episode (e.g. tt, tf, ft, ff).
        clusters: The task id of each row.
        statistic: The statistic of the summed counts; None where undefined.

    Returns:
        (low, high), or None with fewer than two tasks or where the statistic is undefined in
        more than 1 resample in 20 (a one-class draw): an interval over the rest would be biased.
    """
    sums = _cluster_row_sums(np.asarray(counts, dtype=float), clusters)
    k = len(sums)
    if k < 2:
        return None
    picks = np.random.default_rng(seed).integers(0, k, size=(resamples, k))
    totals = sums[picks].sum(axis=1)
    stats = [statistic(row.tolist()) for row in totals]
    defined = np.array([v for v in stats if v is not None and v == v], dtype=float)
    if len(defined) < 0.95 * resamples:
        return None
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _cluster_row_sums(rows: NDArray[np.float64], clusters: Sequence[str]) -> NDArray[np.float64]:
    """Per-cluster sums of count rows, clusters in first-seen order."""
    index: dict[str, int] = {}
    ids = [index.setdefault(c, len(index)) for c in clusters]
    sums = np.zeros((len(index), rows.shape[1] if rows.ndim == 2 else 0), dtype=float)
    if ids:
        np.add.at(sums, np.asarray(ids), rows)
    return sums


def per_task_means(values: Sequence[float], tasks: Sequence[str]) -> dict[str, float]:
    """Each task's mean over its (non-NaN) samples."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for value, task in zip(values, tasks, strict=True):
        if value == value:
            sums[task] = sums.get(task, 0.0) + float(value)
            counts[task] = counts.get(task, 0) + 1
    return {task: sums[task] / counts[task] for task in sums}


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided exact McNemar p-value for paired pass/fail outcomes (1 pass, 0 fail).

    The discordant pairs are binomial(n, 1/2) under the null; the p-value doubles the smaller
    tail, capped at 1 (the same as ``scipy.stats.binomtest(k, n, 0.5)`` for this symmetric case).
    """
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x >= 0.5 > y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y >= 0.5 > x)
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def sign_flip_p_value(diffs: Sequence[float], *, seed: int = 0, resamples: int = 20_000) -> float:
    """Two-sided paired permutation test of mean(diffs) == 0 by flipping signs.

    Exact (every sign pattern) for up to ``EXACT_PERMUTATION_MAX`` non-zero differences, a
    seeded Monte Carlo estimate beyond (counting the observed pattern, so p > 0).
    """
    d = np.asarray([x for x in diffs if x != 0.0], dtype=float)
    if len(d) == 0:
        return 1.0
    observed = abs(d.sum())
    # Sums equal up to rounding must count as "as extreme", or an exact tie reads as p < 1.
    tol = 1e-12 * max(1.0, float(np.abs(d).sum()))
    if len(d) <= EXACT_PERMUTATION_MAX:
        patterns = ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1) * 2 - 1
        sums = np.abs(patterns @ d)
        return float(np.mean(sums >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, len(d)))
    sums = np.abs(signs @ d)
    return float((1 + np.sum(sums >= observed - tol)) / (resamples + 1))


def paired_difference(a: Mapping[str, Sequence[float]], b: Mapping[str, Sequence[float]], *, seed: int = 0,
                      resamples: int = RESAMPLES, level: float = LEVEL) -> PairedDifference:
    """``b - a`` on the tasks both have, each task's samples averaged first.

    Args:
        a, b: Per task id, that run's values of one metric (NaN values are left out).
    """
    def means(runs: Mapping[str, Sequence[float]]) -> dict[str, float]:
        out = {}
        for task, vals in runs.items():
            kept = [float(v) for v in vals if v == v]
            if kept:
                out[task] = mean_of(kept)
        return out

    ma, mb = means(a), means(b)
    shared = [t for t in ma if t in mb]
    if not shared:
        nan = math.nan
        return PairedDifference(0, nan, nan, nan, nan, nan, nan, "none")
    xa = np.array([ma[t] for t in shared])
    xb = np.array([mb[t] for t in shared])
    diffs = xb - xa
    interval = bootstrap_interval(diffs.tolist(), seed=seed, resamples=resamples, level=level)
    single = all(len(a[t]) == 1 and len(b[t]) == 1 for t in shared)
    binary = single and bool(np.all(np.isin(np.concatenate([xa, xb]), (0.0, 1.0))))
    if binary:
        p, test = mcnemar_exact(xa.tolist(), xb.tolist()), "mcnemar"
    else:
        p, test = sign_flip_p_value(diffs.tolist(), seed=seed), "permutation"
    return PairedDifference(len(shared), float(xa.mean()), float(xb.mean()), float(diffs.mean()),
                            interval.low, interval.high, p, test)


def metric_intervals(episodes: Sequence[Episode], *, seed: int = 0) -> dict[str, dict[str, float | int]]:
    """For every metric of the scored episodes: n, tasks, mean and a 95 % bootstrap interval,
    clustered by task."""
    values: dict[str, list[float]] = {}
    tasks: dict[str, list[str]] = {}
    for ep in episodes:
        if not is_scored(ep):
            continue
        for key, value in ep.metrics.items():
            number = metric_number(value)
            if number is not None:
                values.setdefault(key, []).append(number)
                tasks.setdefault(key, []).append(ep.task_id)
    return {key: bootstrap_interval(values[key], tasks[key], seed=seed).to_dict() for key in sorted(values)}


class Estimate(float):
    """A table cell that is a mean and carries its 95 % interval: it reads, compares and sums as
    the number itself (so a paper table's layout and its readers stay as they are), prints as
    ``value [low, high]`` (`buildbench.harness.tables.cell_text`) and is exported with its
    ``low``/``high``/``n`` (`buildbench.harness.tables.cell_intervals`).

    ``n`` counts the values the mean is over, ``tasks`` the clusters resampled; ``low``/``high``
    are NaN where there is no interval (no value, one task only, an infinite value). A table that
    gives a spread as the paper does (mean ± std) gives it as ``std``: ``value ± std [low, high]``."""

    low: float
    high: float
    n: int
    tasks: int
    digits: int
    std: float

    def __new__(cls, value: float, low: float, high: float, n: int, tasks: int, digits: int = 2,
                std: float = math.nan) -> Estimate:
        cell = super().__new__(cls, value)
        cell.low, cell.high, cell.n, cell.tasks, cell.digits, cell.std = low, high, n, tasks, digits, std
        return cell

    @classmethod
    def of(cls, interval: Interval, *, scale: float = 1.0, digits: int = 2, rounded: bool = True) -> Estimate:
        """``interval``'s mean and ends times ``scale`` (a share as %), the mean rounded to
        ``digits`` as the paper prints it (unless not ``rounded``); a single task has no interval
        (NaN ends)."""
        low, high = (interval.low, interval.high) if interval.clusters > 1 else (math.nan, math.nan)
        mean = interval.mean * scale
        return cls(round(mean, digits) if rounded else mean, low * scale, high * scale, interval.n,
                   interval.clusters, digits)

    def __reduce__(self) -> tuple[type, tuple[float, float, float, int, int, int, float]]:
        return (Estimate, (float(self), self.low, self.high, self.n, self.tasks, self.digits, self.std))

    def to_dict(self) -> dict[str, float | int]:
        out = {"value": float(self), "low": self.low, "high": self.high, "n": self.n, "tasks": self.tasks}
        return out if math.isnan(self.std) else {**out, "std": self.std}


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task from ``n`` samples of which ``c`` passed:
    1 - C(n-c, k) / C(n, k), the chance that k samples drawn without replacement hold a pass."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@{k} needs 0 < k <= n and 0 <= c <= n (n={n}, c={c})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_summary(episodes: Sequence[Episode], flag: str, *, seed: int = 0) -> dict[str, object]:
    """pass@1 and pass@k for the largest k every task supports, from the 0/1 ``flag`` metric:
    each task's unbiased estimate from its scored samples, averaged over tasks, with a 95 %
    bootstrap interval resampling tasks. Unscored episodes (and scored ones without the flag)
    are not samples: they stay out of every n and are counted, and so are the tasks left without
    a sample (``tasks_without_samples``)."""
    passed: dict[str, list[bool]] = {}
    unscored = no_value = 0
    seen = {ep.task_id for ep in episodes}
    for ep in episodes:
        if not is_scored(ep):
            unscored += 1
            continue
        number = metric_number(ep.metrics.get(flag))
        if number is None:
            no_value += 1
            continue
        passed.setdefault(ep.task_id, []).append(number >= 0.5)
    largest = min((len(v) for v in passed.values()), default=0)
    rows = []
    for k in sorted({1, largest}) if largest else []:
        per_task = [pass_at_k(len(v), sum(v), k) for v in passed.values()]
        interval = bootstrap_interval(per_task, seed=seed)
        rows.append({"k": k, "mean": interval.mean, "low": interval.low, "high": interval.high,
                     "n": interval.n, "tasks": interval.clusters})
    return {"metric": flag, "tasks": len(passed), "samples": sum(len(v) for v in passed.values()),
            "samples_per_task": {"min": largest, "max": max((len(v) for v in passed.values()), default=0)},
            "unscored": unscored, "no_value": no_value, "tasks_without_samples": len(seen - passed.keys()),
            "k": rows}
