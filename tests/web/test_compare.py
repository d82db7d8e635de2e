"""The "Compare runs" data (``/api/compare`` and its static file): columns are run identities
labelled by what differs, each metric carries n and a bootstrap interval, cost beside it, and a
per-task grid of verdicts that names every episode behind a cell."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness.compare import compare_runs

# The session's stored runs (conftest) are built once: every test viewing them shares a worker.
pytestmark = pytest.mark.xdist_group("web-runs")


def get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=120) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _suite(url: str, suite: str) -> dict[str, Any]:
    status, body = get(url + "api/compare")
    assert status == 200, body
    return body["suites"][suite]


def test_runs_that_differ_in_one_option_are_two_columns_labelled_by_it(sweep_viewer: str,
                                                                        sweep_runs: list[Path]) -> None:
    view = _suite(sweep_viewer, "example")
    assert view["differs_in"] == ["-o max_steps"]
    assert [c["label"] for c in view["columns"]] == ["repairing / max_steps=1", "repairing / max_steps=3"]
    # The third folder has the second run's identity (a resumed run): it joins that column.
    assert [[r["id"] for r in c["runs"]] for c in view["columns"]] == [[0], [1, 2]]
    assert [c["episodes"] for c in view["columns"]] == [4, 6] and view["columns"][1]["unscored"] == 2
    assert view["columns"][1]["status"] == {"ok": 4, "error": 2}
    assert view["notes"] == []
    # The labels are the report's: both read the same runs the same way.
    report = compare_runs(sweep_runs)
    assert [r["label"] for r in report["rows"]] == [c["label"] for c in view["columns"]]


def test_every_metric_has_n_and_an_interval_and_cost_is_beside_it(sweep_viewer: str) -> None:
    view = _suite(sweep_viewer, "example")
    assert view["headline"] == ["passed", "height_ratio", "blocks"]
    failing, repairing = view["columns"]
    assert failing["intervals"]["passed"] == {"n": 4, "tasks": 2, "mean": 0.0, "low": 0.0, "high": 0.0}
    passed = repairing["intervals"]["passed"]
    assert passed["n"] == 4 and passed["tasks"] == 2 and passed["mean"] == 1.0  # errors stay out of the means
    blocks = repairing["intervals"]["blocks"]
    assert blocks["low"] <= blocks["mean"] <= blocks["high"]
    assert set(view["metrics"]) >= {"passed", "height_ratio", "blocks"}
    cost = repairing["cost"]
    assert cost["episodes"] == 6 and cost["solved_metric"] == "passed" and cost["solved_tasks"] == 2
    assert cost["per_episode"]["wall_s"] > 0 and failing["cost"]["per_solved_task"]["wall_s"] is None


def test_grid_gives_each_tasks_verdict_per_column_with_its_episodes(sweep_viewer: str) -> None:
    grid = _suite(sweep_viewer, "example")["grid"]
    assert grid["metric"] == "passed" and grid["binary"] is True and grid["range"] == [0.0, 1.0]
    assert len(grid["rows"]) == 2 and grid["rows"] == sorted(grid["rows"], key=lambda r: r["task"])
    for row in grid["rows"]:
        failed, solved = row["cells"]
        assert failed["verdict"] == "failed" and (failed["n"], failed["solved"], failed["failed"]) == (2, 0, 2)
        assert [(e["run"], e["sample"]) for e in failed["episodes"]] == [(0, 0), (0, 1)]
        assert solved["verdict"] == "solved" and (solved["solved"], solved["failed"], solved["unscored"]) == (2, 0, 1)
        assert [(e["run"], e["sample"], e["status"]) for e in solved["episodes"]] == \
            [(1, 0, "ok"), (1, 1, "ok"), (2, 2, "error")]
        # Each episode a cell names opens through the per-run episode endpoint.
        for ep in solved["episodes"]:
            status, body = get(sweep_viewer + f"api/runs/{ep['run']}/episode?task={row['task']}&sample={ep['sample']}")
            assert status == 200 and body["status"] == ep["status"]


def test_columns_of_every_suite_and_task_sets_that_differ(viewer: str, suite_of: dict[str, str]) -> None:
    status, body = get(viewer + "api/compare")
    assert status == 200 and list(body["suites"]) == list(dict.fromkeys(suite_of.values()))
    example = body["suites"]["example"]  # the reference run, the hostile one and the 1,200-episode one
    assert [c["label"].split(" / ")[0] for c in example["columns"]] == ["reference", "evil", "synthetic"]
    assert "agent" in example["differs_in"] and "task set" in example["differs_in"]
    assert example["notes"] and "different task sets" in example["notes"][0]
    rows = {r["task"]: r["cells"] for r in example["grid"]["rows"]}
    assert len(rows) == 2 + 1 + 1200
    assert rows["tower_00010"][2]["verdict"] == "unscored" and rows["tower_00010"][0] is None
    assert rows["tower_00001"][2]["verdict"] == "solved" and rows["tower_00002"][2]["verdict"] == "failed"
    big = example["columns"][2]
    assert big["unscored"] == 120 and big["intervals"]["passed"]["n"] == 1080
    for suite, view in body["suites"].items():
        assert view["headline"], f"{suite}: no headline metric to chart"
        assert view["columns"][0]["intervals"][view["headline"][0]]["n"] > 0, suite


def test_samples_that_disagree_are_mixed_and_a_metric_that_is_no_flag_is_shaded(
        tmp_path: Path, synthetic_run: Callable[..., Path]) -> None:
    from buildbench.web.compare import compare_view
    from buildbench.web.runs import open_runs

    flags = open_runs([synthetic_run(tmp_path / "a", 0, {"t1": [1.0, 0.0], "t2": [1.0, 1.0]}),
                       synthetic_run(tmp_path / "b", 1, {"t1": [0.0, 0.0], "t3": [1.0, 0.0]})])
    view = compare_view(flags)["suites"]["example"]
    assert view["differs_in"] == ["seed", "task set"] and view["notes"]
    assert [c["label"].split(" / ")[:2] for c in view["columns"]] == [["synthetic", "seed=0"], ["synthetic", "seed=1"]]
    cells = {r["task"]: r["cells"] for r in view["grid"]["rows"]}
    assert cells["t1"][0]["verdict"] == "mixed" and (cells["t1"][0]["solved"], cells["t1"][0]["failed"]) == (1, 1)
    assert cells["t1"][1]["verdict"] == "failed" and cells["t2"][1] is None and cells["t3"][0] is None
    # The suite's units decide whether the first headline metric is a flag, not its values: the
    # example suite declares ``passed`` 0/1, so odd values stay counted against the flag's 0.5.
    odd = open_runs([synthetic_run(tmp_path / "c", 0, {"t1": [0.25, 0.75], "t2": [1.0, 1.0]})])
    view = compare_view(odd)["suites"]["example"]
    grid = view["grid"]
    assert grid["metric"] == "passed" and grid["binary"] is True and grid["range"] == [0.25, 1.0]
    first = grid["rows"][0]["cells"][0]
    assert (first["verdict"], first["mean"], first["solved"], first["failed"]) == ("mixed", 0.5, 1, 1)
    assert view["columns"][0]["cost"]["solved_metric"] == "passed"


def test_static_export_carries_the_compare_data(sweep_runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert main(["view", *map(str, sweep_runs), "--static", str(out)]) == 0
    text = (out / "data" / "compare.js").read_text()
    assert text.startswith('window.__bbData("compare",') and text.endswith(");\n")
    view = json.loads(text[len('window.__bbData("compare",'):-3])["suites"]["example"]
    assert [c["label"] for c in view["columns"]] == ["repairing / max_steps=1", "repairing / max_steps=3"]
    # Every episode a grid cell names has its data file (the side-by-side view reads them).
    rows = {int(p.parent.name.split("-")[1]): p for p in (out / "data").glob("run-*/rows.js")}
    for row in view["grid"]["rows"]:
        for cell in row["cells"]:
            for ep in cell["episodes"]:
                listed = rows[ep["run"]].read_text()
                assert f'"task_id":"{row["task"]}","sample":{ep["sample"]}' in listed


def test_a_copy_of_a_run_folder_is_left_out_with_a_note(tmp_path: Path,
                                                         synthetic_run: Callable[..., Path]) -> None:
    import shutil

    from buildbench.web.compare import compare_view
    from buildbench.web.runs import open_runs

    first = synthetic_run(tmp_path / "a", 0, {"t1": [1.0, 0.0], "t2": [1.0, 1.0]})
    copy = shutil.copytree(first, tmp_path / "a-copy")
    view = compare_view(open_runs([first, copy]))["suites"]["example"]
    # One column of the first run alone: pooled, every n would double (4 episodes read as 8).
    assert [[r["id"] for r in c["runs"]] for c in view["columns"]] == [[0]]
    assert view["columns"][0]["episodes"] == 4 and view["columns"][0]["intervals"]["passed"]["n"] == 4
    assert len(view["notes"]) == 1 and "run 1 (" in view["notes"][0] and "copy" in view["notes"][0]
    assert all(e["run"] == 0 for row in view["grid"]["rows"] for cell in row["cells"] for e in cell["episodes"])
    # The same decision as `buildbench report`, which refuses the pair.
    assert main(["report", str(first), str(copy)]) == 2


def test_a_share_whose_values_are_all_zero_is_no_pass_flag_and_is_shaded(tmp_path: Path) -> None:
    from buildbench.harness.episode import Episode
    from buildbench.harness.store import Store
    from buildbench.web.compare import compare_view
    from buildbench.web.runs import open_runs

    # SceneReVis' first headline metric is a valid-placement share in % (its units say so): all 0
    # it is a 0 % share, not a column of failed 0/1 flags.
    with Store(tmp_path / "s") as store:
        store.write_manifest({"config": {"suite": "scenerevis", "agent": "synthetic", "protocol": "one-shot",
                                         "split": "default", "seed": 0, "samples": 1}, "tasks": 2})
        for task in ("r1", "r2"):
            store.add_episode(Episode(task_id=task, sample=0, suite="scenerevis", agent="synthetic",
                                      protocol="one-shot", seed=0, metrics={"valid_placement": 0.0}))
    view = compare_view(open_runs([tmp_path / "s"]))["suites"]["scenerevis"]
    grid = view["grid"]
    assert grid["binary"] is False and grid["metric"] == "valid_placement" and grid["range"] == [0.0, 0.0]
    first = grid["rows"][0]["cells"][0]
    assert (first["verdict"], first["mean"], first["solved"], first["failed"]) == ("scored", 0.0, 0, 0)
    assert view["columns"][0]["cost"]["solved_metric"] is None
