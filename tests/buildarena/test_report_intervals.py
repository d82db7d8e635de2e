"""BuildArena's paper tables give our means with 95 % intervals: a task level is one task, so its
scored samples are resampled; recomputed here by hand (numpy default_rng(0), 2000 resamples,
percentiles 2.5/97.5)."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.harness import Episode
from buildbench.harness.stats import Estimate
from buildbench.suites.buildarena.report import INTERVALS, summarize


def _span(values: list[float]) -> tuple[float, float]:
    data = np.array(values)
    picks = np.random.default_rng(0).integers(0, len(data), size=(2000, len(data)))
    low, high = np.quantile(data[picks].mean(axis=1), [0.025, 0.975])
    return float(low), float(high)


def _ep(task: str, sample: int, passed: float, parts: float, indicator: float, status: str = "ok") -> Episode:
    return Episode(task_id=task, sample=sample, suite="buildarena", agent="a", protocol="workflow", seed=0,
                   status=status, metrics={"passed": passed, "parts": parts, "indicator": indicator,  # type: ignore[arg-type]
                                           "calls": 4.0, "invalid_calls": 1.0})


def test_table2_and_the_ablations_have_an_interval_row_under_ours() -> None:
    runs = [(1.0, 5.0, 120.0), (0.0, 7.0, 0.0), (1.0, 4.0, 90.0), (0.0, 9.0, 10.0)]
    episodes = [_ep("support-1", s, *r) for s, r in enumerate(runs)]
    episodes += [_ep("support-1", 4, 1.0, 99.0, 999.0, status="api_error"),  # unscored: in no mean or interval
                 _ep("lift-2", 0, 1.0, 3.0, 2.0)]  # one sample: no interval
    tables = summarize(episodes)["tables"]
    table2 = next(rows for title, rows in tables.items() if title.startswith("Table 2"))
    support = [r for r in table2 if r["task"] == "Support"]
    assert support[0]["SR % L1/L2/L3"] == "50.0 / — / —" and support[1]["source"] == INTERVALS
    sr = _span([100.0 * r[0] for r in runs])
    parts = _span([r[1] for r in runs])
    load = _span([r[2] for r in runs])
    assert support[1]["SR % L1/L2/L3"] == f"[{sr[0]:.1f}, {sr[1]:.1f}] / — / —"
    assert support[1]["parts L1/L2/L3"] == f"[{parts[0]:.1f}, {parts[1]:.1f}] / — / —"
    assert support[1]["indicator L1/L2/L3"] == f"[{load[0]:.1f}, {load[1]:.1f}] / — / —"
    lift = [r for r in table2 if r["task"] == "Lift"]
    assert lift[1]["SR % L1/L2/L3"] == "— / — / —"  # a single sample has nothing to resample
    per_task = {r["task"]: r for r in tables["Per task (ours)"]}
    cell = per_task["support-1"]["SR %"]
    assert isinstance(cell, Estimate) and cell == 50.0 and cell.n == 4
    assert (cell.low, cell.high) == (pytest.approx(sr[0]), pytest.approx(sr[1]))
    assert per_task["support-1"]["parts"] == pytest.approx(25 / 4)
    for title in ("Table 4", "Table 5"):
        rows = next(rows for name, rows in tables.items() if name.startswith(title))
        ours = [r for r in rows if r["source"] in ("ours (MuJoCo)", INTERVALS)]
        assert ours[0]["SR %"] == "50.0" and ours[1]["SR %"] == f"[{sr[0]:.1f}, {sr[1]:.1f}]"
        assert ours[1]["max load"] == f"[{load[0]:.1f}, {load[1]:.1f}]" and ours[1]["invalid %"] == "—"
    assert any(INTERVALS in note["note"] for note in tables["Notes"])


def test_table3_interval_row_and_table6_cells() -> None:
    from buildbench.suites.buildarena.outcome import OUTCOME_FORMAT

    def looped(sample: int, passes: list[bool], tokens: int) -> Episode:
        rounds = [{"round": k + 1, "machine": "1", "passed": p, "indicator": 10.0 * (k + 1), "parts": 5 + k,
                   "calls": 4, "invalid_calls": 1} for k, p in enumerate(passes)]
        ep = _ep("support-1", sample, float(passes[-1]), 5.0, 10.0)
        ep.outcome = {"format": OUTCOME_FORMAT, "task_id": "support-1", "rounds": rounds}
        ep.usage = {"input_tokens": tokens, "output_tokens": 100, "requests": 2}
        return ep

    episodes = [looped(0, [False, True], 1000), looped(1, [True], 3000), looped(2, [False, False], 2000)]
    tables = summarize(episodes)["tables"]
    table3 = next(rows for title, rows in tables.items() if title.startswith("Table 3"))
    support = [r for r in table3 if r["task"] == "Support"]
    low, high = _span([1.0, 3.0, 2.0])
    assert support[0]["input k-tokens L1/L2/L3"] == "2.0 / — / —" and support[1]["source"] == INTERVALS
    assert support[1]["input k-tokens L1/L2/L3"] == f"[{low:.1f}, {high:.1f}] / — / —"
    loop = tables["Table 6: closed-loop rounds (paper: Seed-1.6, Support Lv.1)"]
    # Round 2: the one-round episode keeps its pass; one task, so its samples are resampled.
    sr = loop[1]["SR % ours"]
    low, high = _span([100.0, 100.0, 0.0])
    assert isinstance(sr, Estimate) and sr == pytest.approx(200 / 3) and sr.n == 3
    assert (sr.low, sr.high) == (pytest.approx(low), pytest.approx(high))
    low, high = _span([10.0, 10.0, 10.0])
    assert loop[0]["indicator ours"] == 10.0 and (loop[0]["indicator ours"].low, loop[0]["indicator ours"].high) == (
        pytest.approx(low), pytest.approx(high))
