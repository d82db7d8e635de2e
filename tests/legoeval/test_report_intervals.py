"""LEGO-Eval Table 3: our holistic success rate and micro Avg. carry 95 % intervals resampling
scenes (tasks), recomputed here by hand (numpy default_rng(0), 2000 resamples, 2.5/97.5 %)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.harness import Episode
from buildbench.harness.stats import Estimate
from buildbench.harness.tables import cell_text
from buildbench.suites.legoeval.report import table3_row


def _ep(task: str, pred: float | None, holds: int, fails: int, status: str = "ok") -> Episode:
    # The floor constraints (FL) are these too, but for one fewer holding where there are any.
    metrics = {"partial_holds": float(holds), "partial_fails": float(fails), "FL_holds": float(max(holds - 1, 0)),
               "FL_fails": float(fails)}
    if pred is not None:
        metrics["valid_pred"] = pred
    return Episode(task_id=task, sample=0, suite="legoeval", agent="e", protocol="one-shot", seed=0,
                   status=status, metrics=metrics if status == "ok" else {})  # type: ignore[arg-type]


def test_table3_rates_carry_scene_bootstrap_intervals() -> None:
    scenes = [("s0", 1.0, 3, 1), ("s1", 0.0, 0, 2), ("s2", 1.0, 2, 2), ("s3", None, 1, 0), ("s4", 0.0, 1, 3)]
    episodes = [_ep(*s) for s in scenes] + [_ep("s5", 1.0, 9, 0, status="error")]  # unscored: nowhere
    row = table3_row("e", episodes)
    picks = np.random.default_rng(0).integers(0, 4, size=(2000, 4))
    judged = np.array([100.0, 0.0, 100.0, 0.0])  # s3 gave no verdict: not in the holistic rate
    low, high = np.quantile(judged[picks].mean(axis=1), [0.025, 0.975])
    sr = row["holistic_sr"]
    assert isinstance(sr, Estimate) and sr == 50.0 and (sr.n, sr.tasks) == (4, 4)
    assert (sr.low, sr.high) == (pytest.approx(low), pytest.approx(high))
    holds, fails = np.array([3, 0, 2, 1, 1.0]), np.array([1, 2, 2, 0, 3.0])
    picks = np.random.default_rng(0).integers(0, 5, size=(2000, 5))
    rates = 100 * holds[picks].sum(axis=1) / (holds[picks].sum(axis=1) + fails[picks].sum(axis=1))
    low, high = np.quantile(rates, [0.025, 0.975])
    avg = row["avg"]
    assert avg == pytest.approx(100 * 7 / 15) and (avg.n, avg.tasks) == (15, 5)
    assert (avg.low, avg.high) == (pytest.approx(low), pytest.approx(high))
    assert cell_text(avg) == f"{100 * 7 / 15:.1f} [{low:.1f}, {high:.1f}]"
    fl_holds = holds - np.minimum(holds, 1)
    with np.errstate(invalid="ignore"):
        rates = 100 * fl_holds[picks].sum(axis=1) / (fl_holds[picks].sum(axis=1) + fails[picks].sum(axis=1))
    defined = rates[~np.isnan(rates)]  # a draw of scenes without a floor constraint has no share
    assert len(defined) >= 0.95 * 2000
    low, high = np.quantile(defined, [0.025, 0.975])
    assert row["FL"] == pytest.approx(100 * 3 / 11) and (row["FL"].n, row["FL"].low, row["FL"].high) == (
        11, pytest.approx(low), pytest.approx(high))
    assert row["OP"] is None  # no OP constraint judged: no share, no interval
    lone = table3_row("e", [_ep("s0", 1.0, 1, 1)])
    assert lone["holistic_sr"] == 100.0 and math.isnan(lone["holistic_sr"].low)  # one scene: no interval
    assert table3_row("e", [_ep("s0", None, 0, 0)])["holistic_sr"] is None  # no verdict: no rate
