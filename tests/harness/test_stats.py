"""Bootstrap intervals and paired tests (issue 23), checked against scipy.stats on fixed data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from buildbench.harness.stats import bootstrap_interval, mcnemar_exact, paired_difference, sign_flip_p_value


def test_unclustered_interval_matches_scipy_percentile_bootstrap() -> None:
    data = np.random.default_rng(3).normal(0.6, 0.2, size=80)
    ours = bootstrap_interval(data.tolist(), seed=1, resamples=20_000)
    ref = sps.bootstrap((data,), np.mean, method="percentile", n_resamples=20_000,
                        random_state=np.random.default_rng(1)).confidence_interval
    assert ours.n == 80 and ours.mean == pytest.approx(float(data.mean()))
    se = float(data.std(ddof=1) / math.sqrt(len(data)))
    # Two Monte Carlo estimates of the same percentiles: within a tenth of a standard error.
    assert ours.low == pytest.approx(ref.low, abs=0.1 * se)
    assert ours.high == pytest.approx(ref.high, abs=0.1 * se)


def test_interval_is_deterministic_by_seed_and_nan_free_on_no_data() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0]
    assert bootstrap_interval(values, seed=4) == bootstrap_interval(values, seed=4)
    empty = bootstrap_interval([])
    assert empty.n == 0 and math.isnan(empty.mean) and math.isnan(empty.low)
    assert bootstrap_interval([math.nan, math.nan]).n == 0
    single = bootstrap_interval([0.5, 0.7], ["t", "t"])
    assert (single.clusters, single.low, single.high) == (1, 0.6, 0.6)


def test_clustering_by_task_widens_the_interval_of_correlated_samples() -> None:
    # 8 tasks, each solved or failed in all 8 samples: 64 episodes, but only 8 independent tasks.
    tasks = [f"t{i}" for i in range(8) for _ in range(8)]
    values = [float(i % 2) for i in range(8) for _ in range(8)]
    naive = bootstrap_interval(values, seed=0)
    clustered = bootstrap_interval(values, tasks, seed=0)
    assert clustered.n == 64 and clustered.clusters == 8
    assert clustered.high - clustered.low > 1.8 * (naive.high - naive.low)


def test_mcnemar_matches_scipy_binomtest() -> None:
    a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    b = [0, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    ref = sps.binomtest(only_a, only_a + only_b, 0.5).pvalue
    assert mcnemar_exact(a, b) == pytest.approx(ref)
    assert mcnemar_exact([1, 0], [1, 0]) == 1.0


def test_exact_sign_flip_matches_scipy_permutation_test() -> None:
    diffs = np.array([0.3, -0.1, 0.25, 0.4, 0.05, -0.2, 0.35, 0.15, 0.1, 0.3])
    ref = sps.permutation_test((diffs,), lambda d, axis: np.mean(d, axis=axis), permutation_type="samples",
                               n_resamples=math.inf, alternative="two-sided").pvalue
    assert sign_flip_p_value(diffs.tolist()) == pytest.approx(ref)


def test_paired_difference_on_shared_tasks() -> None:
    a = {"t1": [1.0], "t2": [0.0], "t3": [1.0], "only_a": [1.0]}
    b = {"t1": [1.0], "t2": [1.0], "t3": [0.0], "only_b": [0.0]}
    result = paired_difference(a, b)
    assert result.n_tasks == 3 and result.test == "mcnemar" and result.diff == pytest.approx(0.0)
    assert result.p_value == 1.0
    many = paired_difference({"t1": [0.2, 0.4], "t2": [0.5]}, {"t1": [0.6, 0.8], "t2": [0.9]})
    assert many.test == "permutation" and many.diff == pytest.approx(0.4)
    none = paired_difference({"x": [1.0]}, {"y": [1.0]})
    assert none.n_tasks == 0 and math.isnan(none.diff)
