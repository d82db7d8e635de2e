"""Every figure ``buildbench report`` and ``compare`` print, recomputed here from hand-made run
folders with odd mixes of episodes: the means, their n, the status counts and the task-clustered
bootstrap intervals (seed 0, 2000 resamples, percentiles 2.5/97.5), in the JSON and in the text."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.cli.main import main
from buildbench.harness.episode import Episode
from buildbench.harness.store import Store

SCORED = ("ok", "budget", "failed")
#: (task id, sample, status, metrics); the example suite's headline is passed, height_ratio, blocks.
Row = tuple[str, int, str, dict[str, Any]]


def _run(root: Path, name: str, rows: list[Row], *, samples: int = 1, suite: str = "example") -> Path:
    run_dir = root / name
    with Store(run_dir) as store:
        store.write_manifest({"tasks": len({r[0] for r in rows}),
                              "config": {"suite": suite, "agent": "reference", "protocol": "one-shot",
                                         "split": "demo", "seed": 0, "samples": samples, "options": {}}})
        for task_id, sample, status, metrics in rows:
            store.add_episode(Episode(task_id=task_id, sample=sample, suite=suite, agent="reference",
                                      protocol="one-shot", seed=0, status=status,  # type: ignore[arg-type]
                                      error=None if status == "ok" else f"{status} here", metrics=metrics))
    return run_dir


def _report(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[dict[str, Any], str]:
    """The run's report as JSON and as text (wide terminal, so each table is one piece)."""
    assert main(["report", *map(str, args), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert main(["report", *map(str, args), "--all"]) == 0
    return data, capsys.readouterr().out


def _expected_interval(values: list[float], tasks: list[str]) -> dict[str, Any]:
    """The documented method, written out: resample tasks with replacement (first-seen order,
    numpy default_rng(0), 2000 draws), each draw's mean over its episodes, 2.5/97.5 percentiles."""
    order = list(dict.fromkeys(tasks))
    sums = np.array([sum(v for v, t in zip(values, tasks, strict=True) if t == task) for task in order])
    counts = np.array([tasks.count(task) for task in order], dtype=float)
    mean = sum(values) / len(values)
    if len(order) == 1:
        return {"n": len(values), "tasks": 1, "mean": mean, "low": mean, "high": mean}
    picks = np.random.default_rng(0).integers(0, len(order), size=(2000, len(order)))
    low, high = np.quantile(sums[picks].sum(axis=1) / counts[picks].sum(axis=1), [0.025, 0.975])
    return {"n": len(values), "tasks": len(order), "mean": mean, "low": float(low), "high": float(high)}


def _recompute(rows: list[Row]) -> dict[str, Any]:
    values: dict[str, list[float]] = {}
    tasks: dict[str, list[str]] = {}
    for task_id, _, status, metrics in rows:
        if status not in SCORED:
            continue
        for key, value in metrics.items():
            values.setdefault(key, []).append(float(value))
            tasks.setdefault(key, []).append(task_id)
    return {"episodes": len(rows), "unscored": sum(1 for r in rows if r[2] not in SCORED),
            "status": dict(Counter(r[2] for r in rows)),
            "metrics": {k: sum(v) / len(v) for k, v in values.items()},
            "intervals": {k: _expected_interval(values[k], tasks[k]) for k in values}}


def _text_row(text: str, metric: str) -> list[str]:
    """The cells of ``metric``'s row in the report's metric tables."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] == metric:
            return cells
    raise AssertionError(f"no row for {metric} in\n{text}")


def _check(data: dict[str, Any], text: str, rows: list[Row]) -> None:
    want = _recompute(rows)
    assert (data["episodes"], data["unscored"], data["status"]) == (want["episodes"], want["unscored"],
                                                                    want["status"])
    assert data["metrics"].keys() == want["metrics"].keys()
    for key, mean in want["metrics"].items():
        assert data["metrics"][key] == pytest.approx(mean, rel=1e-12)
        got, expected = data["intervals"][key], want["intervals"][key]
        assert got["mean"] == data["metrics"][key]  # one mean, to the last bit, in both places
        assert (got["n"], got["tasks"]) == (expected["n"], expected["tasks"])
        for end in ("mean", "low", "high"):
            assert got[end] == pytest.approx(expected[end], rel=1e-12), (key, end)
        cells = _text_row(text, key)  # metric, mean, interval, n: the text says what the JSON says
        assert cells[1] == f"{mean:.4f}" and cells[3] == str(expected["n"])
        span = "none (1 task)" if expected["tasks"] == 1 else f"[{expected['low']:.4f}, {expected['high']:.4f}]"
        assert cells[2] == span
    status = ", ".join(f"{k}: {v}" for k, v in sorted(want["status"].items()))
    assert _text_row(text, "status")[1] == status and _text_row(text, "unscored")[1] == str(want["unscored"])


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def test_a_mix_of_statuses_samples_and_missing_values_is_recomputed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = []
    for t in range(5):
        for s in range(3):  # three samples a task, unequal once errors drop out
            status = ["ok", "failed", "budget", "error", "api_error"][(t + s) % 5]
            metrics = {"passed": float((t * s) % 2), "height_ratio": 0.1 * t + 0.01 * s} if status in SCORED else {}
            if status == "failed":
                metrics.pop("height_ratio")  # a metric an episode lacks is left out of that mean only
            rows.append((f"t{t}", s, status, metrics))
    data, text = _report(capsys, _run(tmp_path, "mix", rows, samples=3))
    _check(data, text, rows)
    assert data["expected_episodes"] == 15


def test_one_episode_has_no_interval_to_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = [("t0", 0, "ok", {"passed": 1.0, "height_ratio": 0.5})]
    data, text = _report(capsys, _run(tmp_path, "one", rows))
    _check(data, text, rows)
    assert "[1.0000, 1.0000]" not in text  # a resample of one task is the mean itself: no certainty


def test_all_failures_count_and_all_unscored_are_listed_not_averaged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed: list[Row] = [(f"t{i}", 0, "failed", {"passed": 0.0}) for i in range(3)]
    data, text = _report(capsys, _run(tmp_path, "failed", failed))
    _check(data, text, failed)
    unscored: list[Row] = [(f"t{i}", 0, "api_error", {}) for i in range(3)]
    data, text = _report(capsys, _run(tmp_path, "unscored", unscored))
    _check(data, text, unscored)
    assert data["metrics"] == {} and data["intervals"] == {} and "headline metrics" not in text
    assert main(["report", str(tmp_path / "unscored"), "--json", "--errors-as-failures"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert counted["metrics"]["passed"] == 0.0 and counted["intervals"]["passed"]["n"] == 3
    assert counted["status"] == {"api_error (counted as failed)": 3} and counted["unscored"] == 3


def test_one_scored_among_99_unscored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = [("t00", 0, "ok", {"passed": 1.0})]
    rows += [(f"t{i:02d}", 0, "error", {}) for i in range(1, 100)]
    data, text = _report(capsys, _run(tmp_path, "sparse", rows))
    _check(data, text, rows)
    assert data["intervals"]["passed"]["n"] == 1


def test_flags_stored_as_booleans_get_the_same_mean_and_an_interval(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = [(f"t{i}", 0, "ok", {"passed": i % 2 == 0}) for i in range(4)]
    data, text = _report(capsys, _run(tmp_path, "flags", rows))
    _check(data, text, rows)  # was: a mean of 0.5 with no interval and no n
    other = _run(tmp_path, "zeros", [(f"t{i}", 0, "ok", {"passed": 0.0}) for i in range(4)])
    assert main(["compare", str(other), str(tmp_path / "flags"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["passed"]["diff"] == 0.5  # compared, not dropped


def test_extreme_finite_values_give_finite_figures_printed_short(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = [("t0", 0, "ok", {"blocks": 1e308}), ("t1", 0, "ok", {"blocks": 1e308}),
                       ("t2", 0, "ok", {"blocks": -1e-300})]
    data, text = _report(capsys, _run(tmp_path, "huge", rows))
    blocks = data["intervals"]["blocks"]  # was: a mean of inf and an interval of [-0, NaN]
    assert data["metrics"]["blocks"] == pytest.approx(1e308 / 3 * 2) == blocks["mean"]
    assert -1e-300 <= blocks["low"] <= blocks["high"] <= 1e308 and math.isfinite(blocks["high"])
    cells = _text_row(text, "blocks")
    assert cells[1] == f"{1e308 / 3 * 2:.4e}" and re.fullmatch(r"\[\S+, 1\.0000e\+308\]", cells[2])
    assert max(map(len, text.splitlines())) <= 200  # no row of 309 digits


def test_a_copied_run_folder_is_refused_and_reruns_of_one_configuration_are_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows: list[Row] = [(f"t{i}", s, "ok", {"passed": float(s)}) for i in range(2) for s in range(2)]
    run = _run(tmp_path, "run", rows, samples=2)
    shutil.copytree(run, tmp_path / "copy")
    assert main(["report", str(run), str(tmp_path / "copy"), "--json"]) == 2  # was: n=8 for 4 episodes
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert captured.out == "" and line.startswith("error: report: ") and "copy" in line and "twice" in line
    again = [(t, s, status, {"passed": 1.0 - m["passed"]}) for t, s, status, m in rows]  # a rerun that differs
    assert main(["report", str(run), str(_run(tmp_path, "again", again, samples=2)), "--json"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    (row,) = pooled["rows"]
    assert row["episodes"] == 8 and row["intervals"]["passed"]["n"] == 8
    assert any("2 runs of one configuration" in note and "4 of their episodes" in note for note in pooled["notes"])


def test_figures_draw_no_bar_for_a_run_without_a_value_and_name_n() -> None:
    from buildbench.harness.figures import metrics_figure, task_type_figure

    def ep(task: str, status: str, passed: float | None, kind: str = "a") -> Episode:
        return Episode(task_id=task, sample=0, suite="example", agent="x", protocol="p", seed=0,
                       status=status, metrics={} if passed is None else {"passed": passed},  # type: ignore[arg-type]
                       metadata={"kind": kind})

    groups = {"crashed": [ep("t0", "api_error", None), ep("t1", "error", None)],
              "one task": [ep("t0", "ok", 1.0)],
              "two tasks": [ep("t0", "ok", 1.0), ep("t1", "failed", 0.0, kind="b")]}
    fig = metrics_figure(groups, ["passed"])
    ax = fig.axes[0]
    heights = [patch.get_height() for patch in ax.patches]
    assert math.isnan(heights[0]) and heights[1:] == [1.0, 0.5]  # was a bar of 0 for the crashed run
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["crashed\nn/a", "one task\nn=1, 1 task", "two tasks\nn=2"]
    fig = task_type_figure(groups, "passed", "kind")
    heights = [patch.get_height() for patch in fig.axes[0].patches]  # per run: types a, b
    assert math.isnan(heights[0]) and math.isnan(heights[1]) and heights[2] == 1.0 and math.isnan(heights[3])
    assert heights[4:] == [1.0, 0.0]


def test_every_headline_metric_is_printed_with_its_unit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.harness import get_suite, suite_names

    for name in suite_names():
        suite = get_suite(name)
        assert set(suite.headline) <= set(suite.units), f"{name}: a headline metric without a unit"
    assert get_suite("scenerevis").units["valid_placement"] == "%"  # 100.0 is perfect there, 1.0 elsewhere
    rows: list[Row] = [(f"t{i}", 0, "ok", {"passed": 1.0, "blocks": 3.0}) for i in range(2)]
    data, text = _report(capsys, _run(tmp_path, "units", rows))
    assert data["units"]["passed"] == "0/1" and _text_row(text, "passed")[4] == "0/1"
    assert _text_row(text, "blocks")[4] == "count"
    assert main(["report", str(tmp_path / "units"), str(_run(tmp_path, "other", rows[:1]))]) == 0
    assert "passed (0/1)" in capsys.readouterr().out


def test_solved_tasks_come_from_a_declared_flag_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # SceneReVis leads with valid placement in %: values of 0 only are no 0/1 flag (they were read as one).
    rows: list[Row] = [(f"t{i}", 0, "ok", {"valid_placement": 0.0}) for i in range(2)]
    data, text = _report(capsys, _run(tmp_path, "sr", rows, suite="scenerevis"))
    assert data["cost"]["solved_metric"] is None and "per solved task" not in text
    assert "no per-solved figures: the suite has no 0/1 solved flag" in " ".join(text.split())  # a wrapped title
    flags: list[Row] = [("t0", 0, "ok", {"passed": 0.0}), ("t1", 0, "ok", {"passed": 1.0})]
    data, text = _report(capsys, _run(tmp_path, "ex", flags))
    assert data["cost"]["solved_metric"] == "passed" and data["cost"]["solved_tasks"] == 1
    assert "per solved" in text and "task (1)" in text  # a header wrapped over two lines
