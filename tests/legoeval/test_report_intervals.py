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
    metrics = {"partial_holds": float(holds), "partial_fails": float(fails)}
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
    lone = table3_row("e", [_ep("s0", 1.0, 1, 1)])
    assert lone["holistic_sr"] == 100.0 and math.isnan(lone["holistic_sr"].low)  # one scene: no interval
    assert table3_row("e", [_ep("s0", None, 0, 0)])["holistic_sr"] is None  # no verdict: no rate
