"""Paper tables computed the way the papers compute them, every cell with its n and interval, and
pass@k: each figure recomputed here by hand from small hand-made runs (the method written out:
numpy default_rng(0), 2000 resamples of tasks, percentiles 2.5/97.5)."""

from __future__ import annotations

import json
import math
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.cli.main import main
from buildbench.harness.episode import Episode
from buildbench.harness.report import run_report
from buildbench.harness.stats import Estimate, pass_at_k
from buildbench.harness.store import Store
from buildbench.harness.tables import cell_intervals, cell_text, tables_json


def _interval(values: list[float], tasks: list[str]) -> tuple[float, float]:
    """The task-clustered percentile bootstrap, written out (a ratio of resampled sums and counts)."""
    order = list(dict.fromkeys(tasks))
    sums = np.array([sum(v for v, t in zip(values, tasks, strict=True) if t == task) for task in order])
    counts = np.array([tasks.count(task) for task in order], dtype=float)
    picks = np.random.default_rng(0).integers(0, len(order), size=(2000, len(order)))
    low, high = np.quantile(sums[picks].sum(axis=1) / counts[picks].sum(axis=1), [0.025, 0.975])
    return float(low), float(high)


def _store(folder: Path, suite: str, episodes: list[Episode], samples: int, seed: int = 0) -> Path:
    with Store(folder) as store:
        store.write_manifest({"tasks": len({e.task_id for e in episodes}),
                              "config": {"suite": suite, "agent": "hand", "protocol": "one-shot", "split": "demo",
                                         "seed": seed, "samples": samples, "options": {}}})
        for ep in episodes:
            store.add_episode(ep)
    return folder


def _ep(suite: str, task: str, sample: int, metrics: dict[str, Any], status: str = "ok", **meta: Any) -> Episode:
    return Episode(task_id=task, sample=sample, suite=suite, agent="hand", protocol="one-shot", seed=0,
                   status=status, error=None if status == "ok" else f"{status} here",  # type: ignore[arg-type]
                   metrics=metrics, metadata=meta)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 1, 3) == 1 - 1 / 4  # 1 - C(3,3)/C(4,3)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - comb(3, 2) / comb(5, 2)) and pass_at_k(3, 2, 2) == 1.0
    assert pass_at_k(3, 0, 3) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "220")


def test_pass_at_k_averages_tasks_and_leaves_unscored_samples_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = {"t1": [1, 0, 0, 0], "t2": [1, 1, 0], "t3": [0, 0, 0]}
    episodes = [_ep("example", t, s, {"passed": float(v)}) for t, vs in flags.items() for s, v in enumerate(vs)]
    episodes.append(_ep("example", "t2", 3, {"passed": 1.0}, status="api_error"))  # no result: not a sample
    run = _store(tmp_path / "run", "example", episodes, samples=4)
    assert main(["report", str(run), "--json"]) == 0
    passes = json.loads(capsys.readouterr().out)["pass_at_k"]
    assert (passes["metric"], passes["tasks"], passes["samples"], passes["unscored"]) == ("passed", 3, 10, 1)
    assert passes["samples_per_task"] == {"min": 3, "max": 4}
    per_task = {1: [1 / 4, 2 / 3, 0.0], 3: [1 - comb(3, 3) / comb(4, 3), 1.0, 0.0]}  # k = 1 and the largest, 3
    assert [row["k"] for row in passes["k"]] == [1, 3]
    for row in passes["k"]:
        values = per_task[row["k"]]
        low, high = _interval(values, ["t1", "t2", "t3"])
        assert row["mean"] == pytest.approx(sum(values) / 3, rel=1e-12) and (row["n"], row["tasks"]) == (3, 3)
        assert (row["low"], row["high"]) == (pytest.approx(low, rel=1e-12), pytest.approx(high, rel=1e-12))
    assert main(["report", str(run)]) == 0
    text = capsys.readouterr().out
    assert "pass@k of passed" in text
    rows = [[c.strip() for c in line.strip("│ ").split("│")] for line in text.splitlines() if line.startswith("│")]
    k_rows = {cells[0]: cells for cells in rows if len(cells) == 7}  # k, pass@k, interval, tasks, samples, ...
    low, high = _interval(per_task[3], ["t1", "t2", "t3"])
    assert k_rows["3"] == ["3", f"{1.75 / 3:.4f}", f"[{low:.4f}, {high:.4f}]", "3", "10", "3-4", "1"]
    assert k_rows["1"][1] == f"{(1 / 4 + 2 / 3) / 3:.4f}"
    lost = [*episodes, _ep("example", "t4", 0, {}, status="error")]  # a task with no scored sample: counted
    passes = run_report(_store(tmp_path / "lost", "example", lost, samples=4))["pass_at_k"]
    assert (passes["tasks"], passes["tasks_without_samples"], passes["unscored"]) == (3, 1, 2)
    # Counted as failures, the api_error becomes t2's fourth sample, with the pass its leftover
    # was scored with (`as_failure` keeps computed metrics): 3 of 4.
    passes = run_report(run, errors_as_failures=True)["pass_at_k"]
    assert passes["unscored"] == 0 and passes["samples_per_task"] == {"min": 3, "max": 4}
    assert passes["k"][0]["mean"] == pytest.approx((1 / 4 + 3 / 4 + 0) / 3, rel=1e-12)


def test_a_suite_without_a_flag_has_no_pass_at_k(tmp_path: Path) -> None:
    episodes = [_ep("scenerevis", "a", s, {"valid_placement": 50.0}) for s in range(2)]
    assert run_report(_store(tmp_path / "run", "scenerevis", episodes, samples=2))["pass_at_k"] is None


def _bim(task: str, sample: int, solved: float, geometry: float, status: str = "ok") -> Episode:
    metrics = {"solved": solved, "final": 0.5, "geometry": geometry, "semantics": 1.0, "topology": solved}
    ep = _ep("bimedit", task, sample, metrics if status == "ok" else {}, status=status)
    if status == "ok":
        ep.outcome = {"failure": "executed", "tool_calls": 1}
    return ep


def test_bimedit_table2_and_figure3_are_over_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # direct: half its samples solved; spatial: one sample, solved; topological: none of three.
    episodes = [_bim("WAL-UPD-DIR-A-001", 0, 1.0, 1.0), _bim("WAL-UPD-DIR-A-001", 1, 0.0, 0.5),
                _bim("DOR-CRE-SPA-A-002", 0, 1.0, 0.99),
                *(_bim("SLB-DEL-TOP-R-003", s, 0.0, 0.0) for s in range(3)),
                _bim("DOR-CRE-SPA-A-002", 1, 0.0, 0.0, status="error")]  # unscored: in no cell
    run = _store(tmp_path / "run", "bimedit", episodes, samples=3)
    report = run_report(run)
    table2 = report["tables"]["Table 2: strict solve rates and per-axis pass rates (%)"][0]
    tasks = ["d", "s", "t"]
    solved = [0.5, 1.0, 0.0]  # per task; over the 6 scored episodes it would be 2/6
    assert table2["all"] == 50.0 and isinstance(table2["all"], Estimate)
    low, high = _interval(solved, tasks)
    assert (table2["all"].low, table2["all"].high) == (pytest.approx(100 * low), pytest.approx(100 * high))
    assert (table2["all"].n, table2["all"].tasks) == (3, 3)  # three task means
    assert (table2["direct"], table2["spatial"], table2["topological"]) == (50.0, 100.0, 0.0)
    assert math.isnan(table2["direct"].low)  # one task: no interval, and none printed
    assert table2["geometry pass"] == round(100 * (0.5 + 1.0 + 0.0) / 3, 2)
    exported = report["table_intervals"]["Table 2: strict solve rates and per-axis pass rates (%)"][0]["all"]
    assert exported == {"value": 50.0, "low": pytest.approx(100 * low), "high": pytest.approx(100 * high),
                        "n": 3, "tasks": 3}
    by_type = {r["category"]: r for r in report["tables"]["Figure 3: by instruction type"]}
    assert (by_type["direct"]["n"], by_type["direct"]["tasks"], by_type["direct"]["solved %"]) == (2, 1, 50.0)
    assert by_type["spatial"]["n"] == 1 and by_type["topological"]["n"] == 3
    by_scene = {r["scene"]: r for r in report["tables"]["Figure 3: by scene"]}
    assert by_scene["simple"]["solved %"] == 75.0 and by_scene["simple"]["tasks"] == 2  # (0.5 + 1) / 2, not 2/3
    assert by_scene["simple"]["geometry"] == round(100 * ((1.0 + 0.5) / 2 + 0.99) / 2, 2)  # 0-100
    assert "over tasks" in report["tables"]["How Table 2 and Figure 3 are computed"][0]["note"]
    table1 = report["tables"]["Table 1: scores, 0-100, mean ± std"][0]
    geometry = [75.0, 99.0, 0.0]  # per task, 0-100
    g_low, g_high = _interval(geometry, tasks)
    assert table1["geometry"] == round(sum(geometry) / 3, 2) and table1["geometry"].std == pytest.approx(
        float(np.std(geometry)))
    assert (table1["geometry"].low, table1["geometry"].high) == (pytest.approx(g_low), pytest.approx(g_high))
    assert cell_text(table1["geometry"]).startswith(f"{sum(geometry) / 3:.2f} ± {np.std(geometry):.2f} [")
    # Table 3 is over episodes as the paper's (one sample a task there): the error is 1 of 7,
    # its interval resampling tasks with all their episodes, the unscored one included.
    table3 = report["tables"]["Table 3: runtime failure rates (%)"][0]
    flags = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0]
    f_low, f_high = _interval(flags, ["d", "d", "s", "t", "t", "t", "s"])
    assert table3["n"] == 7 and table3["overall"] == round(100 / 7, 2) and table3["other"] == round(100 / 7, 2)
    assert (table3["overall"].low, table3["overall"].high) == (pytest.approx(f_low), pytest.approx(f_high))
    assert main(["report", str(run)]) == 0
    text = capsys.readouterr().out
    assert f"50.00 [{100 * low:.2f}, {100 * high:.2f}]" in text
    assert main(["report", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tables"]["Table 2: strict solve rates and per-axis pass rates (%)"][0]["all"] == 50.0


def test_scenerevis_table4_says_what_each_column_is_over(tmp_path: Path) -> None:
    def room(task: str, sample: int, oob: float, col: float, voxel: float | None = None,
             judge: tuple[float, float, float] | None = None) -> Episode:
        metrics: dict[str, Any] = {"oob_rate": oob, "collision_rate": col}
        if voxel is not None:
            metrics["voxel_loss_m3"] = voxel
        if judge is not None:
            metrics.update(Ra=judge[0], Spa=judge[1], Ac=judge[2], Avg=sum(judge) / 3, judge_comparable=0.0)
        return _ep("scenerevis", task, sample, metrics, room="bedroom")

    episodes = [room("a", 0, 10.0, 20.0, 0.002, (9.0, 8.0, 7.0)), room("a", 1, 0.0, 0.0),
                room("b", 0, 5.0, 5.0, 0.004), room("c", 0, 1.0, 1.0, 0.001, (3.0, 3.0, 3.0)),
                _ep("scenerevis", "c", 1, {}, status="error", room="bedroom")]
    report = run_report(_store(tmp_path / "run", "scenerevis", episodes, samples=2))
    t4 = next(rows for title, rows in report["tables"].items() if title.startswith("Table 4"))
    ours = t4[0]
    assert (ours["n"], ours["n VBL"], ours["n Phy"], ours["n judged"]) == (4, 3, 4, 2)
    assert ours["VBL"] == round((2 + 4 + 1) / 3, 2)
    low, high = _interval([2.0, 4.0, 1.0], ["a", "b", "c"])
    assert (ours["VBL"].low, ours["VBL"].high) == (pytest.approx(low), pytest.approx(high))
    phy = [15.0, 0.0, 5.0, 1.0]
    low, high = _interval(phy, ["a", "a", "b", "c"])  # two samples of a: clustered
    assert ours["Phy"] == round(sum(phy) / 4, 2) and (ours["Phy"].low, ours["Phy"].high) == (
        pytest.approx(low), pytest.approx(high))
    assert ours["Ra"] == 6.0 and (ours["Ra"].n, ours["Ra"].tasks) == (2, 2)
    assert all(r["n VBL"] == "–" for r in t4[1:])
    t1 = next(rows for title, rows in report["tables"].items() if title.startswith("Table 1"))
    bedroom = next(r for r in t1 if r["group"] == "bedroom")
    assert bedroom["OBR"] == 4.0 and bedroom["OBR"].n == 4  # the error episode is in no mean


def test_scenerevis_mean_of_rooms_resamples_tasks_within_each_room() -> None:
    from buildbench.suites.scenerevis.report import summarize

    def room(task: str, sample: int, kind: str, oob: float) -> Episode:
        return _ep("scenerevis", task, sample, {"oob_rate": oob, "collision_rate": 0.0}, room=kind)

    bedrooms = [("b1", 0, 10.0), ("b1", 1, 30.0), ("b2", 0, 0.0), ("b3", 0, 5.0)]
    living = [("l1", 0, 40.0), ("l2", 0, 60.0)]
    episodes = [room(t, s, "bedroom", v) for t, s, v in bedrooms] + [room(t, s, "living_room", v) for t, s, v in living]
    t1 = next(rows for title, rows in summarize(episodes)["tables"].items() if title.startswith("Table 1"))
    mean = next(r for r in t1 if r["group"] == "mean of rooms")["OBR"]
    assert mean == round((45 / 4 + 50) / 2, 2) and (mean.n, mean.tasks) == (6, 5)  # each room weighs the same
    rng = np.random.default_rng(0)  # one generator, the rooms drawn in turn: bedroom tasks b1 b2 b3, then l1 l2
    sums, counts = np.array([40.0, 0.0, 5.0]), np.array([2.0, 1.0, 1.0])
    picks = rng.integers(0, 3, size=(2000, 3))
    draws = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    picks = rng.integers(0, 2, size=(2000, 2))
    draws += np.array([40.0, 60.0])[picks].mean(axis=1)
    low, high = np.quantile(draws / 2, [0.025, 0.975])
    assert (mean.low, mean.high) == (pytest.approx(low), pytest.approx(high))
    # One task a room: nothing varies, so no interval (not a certainty).
    lone = [room("b1", 0, "bedroom", 1.0), room("l1", 0, "living_room", 3.0)]
    t1 = next(rows for title, rows in summarize(lone)["tables"].items() if title.startswith("Table 1"))
    assert math.isnan(next(r for r in t1 if r["group"] == "mean of rooms")["OBR"].low)


def test_estimate_cells_print_and_export_their_interval() -> None:
    cell = Estimate(33.333, 10.0, 60.5, 5, 3, digits=2)
    assert cell_text(cell) == "33.33 [10.00, 60.50]" and cell == 33.333 and json.dumps(cell) == "33.333"
    assert cell_text(Estimate(1.0, math.nan, math.nan, 2, 1)) == "1.00"  # one task: the value alone
    assert cell_intervals({"t": [{"a": cell, "b": 2.0}, {"b": 1.0}], "u": [{"b": 1.0}]}) == {
        "t": [{"a": {"value": 33.333, "low": 10.0, "high": 60.5, "n": 5, "tasks": 3}}, {}]}
    import copy
    import pickle

    for clone in (copy.deepcopy(cell), pickle.loads(pickle.dumps(cell))):
        assert isinstance(clone, Estimate) and clone.to_dict() == cell.to_dict()


def test_runs_side_by_side_export_their_cells_intervals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for seed, values in ((0, [10.0, 20.0]), (1, [30.0, 50.0])):
        episodes = [_ep("scenerevis", f"t{i}", 0, {"oob_rate": v, "collision_rate": v}, room="bedroom")
                    for i, v in enumerate(values)]
        runs.append(_store(tmp_path / f"run{seed}", "scenerevis", episodes, samples=1, seed=seed))
    assert main(["report", *map(str, runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    title = next(t for t in data["tables"] if t.startswith("Table 1"))
    rows, spans = data["tables"][title], data["table_intervals"][title]
    assert len(rows) == len(spans)
    second = next(i for i, r in enumerate(rows) if r["group"] == "bedroom" and r["run"].endswith("seed=1"))
    low, high = _interval([30.0, 50.0], ["t0", "t1"])
    assert spans[second]["OBR"] == {"value": 40.0, "low": pytest.approx(low), "high": pytest.approx(high), "n": 2,
                                    "tasks": 2}


def test_runs_side_by_side_give_each_its_pass_at_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for seed, flags in ((0, {"t1": [1, 0], "t2": [0, 0]}), (1, {"t1": [1, 1], "t2": [1, 0]})):
        episodes = [_ep("example", t, s, {"passed": float(v)}) for t, vs in flags.items() for s, v in enumerate(vs)]
        runs.append(_store(tmp_path / f"run{seed}", "example", episodes, samples=2, seed=seed))
    assert main(["report", *map(str, runs), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    by_seed = {row["label"][-1]: {k["k"]: k["mean"] for k in row["pass_at_k"]["k"]} for row in rows}
    assert by_seed == {"0": {1: 0.25, 2: 0.5}, "1": {1: 0.75, 2: 1.0}}  # pass@2: 1 - C(n-c,2)/C(2,2) per task
    assert main(["report", *map(str, runs)]) == 0
    assert "pass@k of passed" in capsys.readouterr().out


def test_a_suite_report_s_json_gives_tables_and_intervals_without_nan() -> None:
    """`tables_json` (a suite's own ``report --json``): the tables and ``table_intervals`` as
    ``buildbench report --json`` has them; a cell without an interval exports null ends, since
    NaN is not JSON."""
    lone, spread = Estimate(0.5, math.nan, math.nan, 2, 1), Estimate(0.25, 0.1, 0.4, 8, 4)
    tables = {"T": [{"name": "paper", "x": 0.3}, {"name": "ours", "x": spread, "y": lone, "z": math.nan}]}
    out = json.loads(tables_json(tables), parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    assert out["tables"] == {"T": [{"name": "paper", "x": 0.3}, {"name": "ours", "x": 0.25, "y": 0.5, "z": None}]}
    assert out["table_intervals"] == {"T": [{}, {
        "x": {"value": 0.25, "low": 0.1, "high": 0.4, "n": 8, "tasks": 4},
        "y": {"value": 0.5, "low": None, "high": None, "n": 2, "tasks": 1}}]}
