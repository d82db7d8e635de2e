"""LEGO-Eval Tables 3, 4, 5 and 7 and the complexity buckets: our rates and means carry 95 %
intervals resampling scenes (tasks), recomputed here by hand (numpy default_rng(0), 2000
resamples, 2.5/97.5 %); unscored episodes are in none; ``--json`` exports them."""

from __future__ import annotations

import json
import math
from pathlib import Path

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


def _boot(values: list[float], tasks: int) -> tuple[float, float]:
    picks = np.random.default_rng(0).integers(0, tasks, size=(2000, tasks))
    low, high = np.quantile(np.asarray(values)[picks].mean(axis=1), [0.025, 0.975])
    return float(low), float(high)


def _ratio_boot(num: list[float], den: list[float]) -> tuple[float, float]:
    picks = np.random.default_rng(0).integers(0, len(num), size=(2000, len(num)))
    ratios = np.asarray(num)[picks].sum(axis=1) / np.asarray(den)[picks].sum(axis=1)
    low, high = np.quantile(ratios, [0.025, 0.975])
    return float(low), float(high)


def test_complexity_bucket_rates_carry_intervals() -> None:
    # (scene, verdict, constraints): three scenes of 2-7 constraints, two of 8-12, none above 12
    scenes = [("a", 1.0, 3), ("b", 0.0, 5), ("c", 1.0, 7), ("d", 1.0, 9), ("e", None, 10)]
    episodes = []
    for task, pred, n in scenes:
        ep = _ep(task, pred, 1, 1)
        ep.metrics["n_constraints"] = float(n)
        episodes.append(ep)
    episodes.append(_ep("f", 1.0, 0, 0, status="api_error"))  # unscored: in no rate, counted
    row = table3_row("e", episodes)
    low, high = _boot([1.0, 0.0, 1.0], 3)
    small = row["sr_2-7"]
    assert isinstance(small, Estimate) and small == pytest.approx(200 / 3) and (small.n, small.tasks) == (3, 3)
    assert (small.low, small.high) == (pytest.approx(100 * low), pytest.approx(100 * high))
    assert cell_text(small) == f"{200 / 3:.1f} [{100 * low:.1f}, {100 * high:.1f}]"
    mid = row["sr_8-12"]  # one judged scene ("e" gave no verdict): the rate without an interval
    assert mid == 100.0 and (mid.n, mid.tasks) == (1, 1) and math.isnan(mid.low) and math.isnan(mid.high)
    assert row["sr_>12"] is None and row["unknown_scenes"] == 2  # "e" (no verdict) and "f" (unscored)


def _plan_ep(task: str, tool: float, ged: float, n: float, arg: float, calls: float, status: str = "ok") -> Episode:
    metrics = {"plan_constraints": n, "tool_f1_sum": tool, "plan_ged_sum": ged, "arg_f1_sum": arg,
               "arg_calls": calls, "plan_skipped": 0.0, "valid_label": 1.0, "valid_pred": 1.0}
    return Episode(task_id=task, sample=0, suite="legoeval", agent="e", protocol="one-shot", seed=0,
                   status=status, metrics=metrics if status == "ok" else {})  # type: ignore[arg-type]


def test_table5_means_carry_ratio_intervals() -> None:
    from buildbench.suites.legoeval.report import table5_row, table7_row

    plans = [("a", 2.0, 3.0, 3.0, 1.0, 2.0), ("b", 0.5, 4.0, 1.0, 0.0, 1.0), ("c", 1.5, 1.0, 2.0, 2.5, 4.0)]
    episodes = [_plan_ep(*p) for p in plans] + [_plan_ep("d", 9.0, 9.0, 9.0, 9.0, 9.0, status="timeout")]
    row = table5_row("e", episodes)
    n, calls = [3.0, 1.0, 2.0], [2.0, 1.0, 4.0]
    for key, num, den in (("tool_f1", [2.0, 0.5, 1.5], n), ("ged", [3.0, 4.0, 1.0], n),
                          ("argument_f1", [1.0, 0.0, 2.5], calls)):
        cell = row[key]
        low, high = _ratio_boot(num, den)
        assert isinstance(cell, Estimate) and cell == pytest.approx(sum(num) / sum(den)), key
        assert (cell.low, cell.high, cell.n, cell.tasks) == (pytest.approx(low), pytest.approx(high), sum(den), 3)
    assert row["constraints"] == 6 and row["calls"] == 7  # the unscored "d" is in no sum
    assert table7_row("e", episodes)["argument_f1"] == row["argument_f1"]
    assert table5_row("e", [_plan_ep("a", 0.0, 0.0, 0.0, 0.0, 0.0)])["tool_f1"] is None  # no constraint: no mean


def test_table4_rates_carry_intervals_and_the_json_exports_them(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.harness import Store
    from buildbench.suites.legoeval.report_runs import T4_TITLE, StoredRun, identify_rows, print_run_report

    def ident(task: str, pred: float, holds: float, fails: float) -> Episode:
        ep = _ep(task, pred, 1, 1)
        ep.metrics.update({"identified_holds": holds, "identified_fails": fails})
        return ep

    identified = [ident("a", 1.0, 2.0, 1.0), ident("b", 0.0, 0.0, 3.0), ident("c", 1.0, 4.0, 0.0),
                  _ep("d", 1.0, 1, 1, status="error")]
    given = [_ep("a", 1.0, 3, 0), _ep("b", 1.0, 1, 2), _ep("c", 0.0, 2, 2)]
    runs = [StoredRun(tmp_path / "i", {"options": {"constraints": "identify"}}, "e", identified, "ident"),
            StoredRun(tmp_path / "g", {}, "e", given, "given")]
    oracle, mine, diff = [r for r in identify_rows(runs) if r["source"] == "ours"]
    for row, verdicts, holds, fails in ((mine, [1.0, 0.0, 1.0], [2.0, 0.0, 4.0], [1.0, 3.0, 0.0]),
                                        (oracle, [1.0, 1.0, 0.0], [3.0, 1.0, 2.0], [0.0, 2.0, 2.0])):
        low, high = _boot(verdicts, 3)
        assert row["hol_sr"] == pytest.approx(2 / 3) and (row["hol_sr"].low, row["hol_sr"].high) == (
            pytest.approx(low), pytest.approx(high))
        low, high = _ratio_boot(holds, [h + f for h, f in zip(holds, fails, strict=True)])
        assert row["part_sr"] == pytest.approx(sum(holds) / (sum(holds) + sum(fails)))
        assert (row["part_sr"].low, row["part_sr"].high, row["part_sr"].n) == (
            pytest.approx(low), pytest.approx(high), sum(holds) + sum(fails))
    # The differences resample the scenes of both runs together (a, b, c: one draw for both runs).
    picks = np.random.default_rng(0).integers(0, 3, size=(2000, 3))
    ih, idn = np.array([2.0, 0.0, 4.0]), np.array([3.0, 3.0, 4.0])
    gh, gdn = np.array([3.0, 1.0, 2.0]), np.array([3.0, 3.0, 4.0])
    iv, gv = np.array([1.0, 0.0, 1.0]), np.array([1.0, 1.0, 0.0])
    for key, (num_i, den_i, num_g, den_g) in (("part_sr", (ih, idn, gh, gdn)),
                                               ("hol_sr", (iv, np.ones(3), gv, np.ones(3)))):
        diffs = (num_i[picks].sum(axis=1) / den_i[picks].sum(axis=1)
                 - num_g[picks].sum(axis=1) / den_g[picks].sum(axis=1))
        low, high = np.quantile(diffs, [0.025, 0.975])
        cell = diff[key]
        assert isinstance(cell, Estimate) and cell == pytest.approx(mine[key] - oracle[key]) == 0.0, key
        assert (cell.low, cell.high, cell.tasks) == (pytest.approx(low), pytest.approx(high), 3), key
        assert cell.low < 0 < cell.high

    with Store(tmp_path / "run") as store:
        for ep in given:
            store.add_episode(ep)
    print_run_report(tmp_path / "run", as_json=True)
    out = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    t3 = out["tables"]["Table 3: success rates (%)"]
    (ours,) = [i for i, r in enumerate(t3) if r["source"] == "ours"]
    cell = table3_row("e", given)["holistic_sr"]
    exported = out["table_intervals"]["Table 3: success rates (%)"][ours]["holistic_sr"]
    assert exported == {"value": float(cell), "low": cell.low, "high": cell.high, "n": 3, "tasks": 3}
    assert t3[ours]["holistic_sr"] == float(cell) and T4_TITLE not in out["tables"]
