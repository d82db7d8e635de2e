"""The ``bimedit`` CLI: generate, score, diff, and one-line errors for bad files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from buildbench.suites.bimedit.cli import cli
from buildbench.suites.bimedit.generate.tasks import generate_tasks


def test_generate_score_and_diff(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["generate", "--n", "3", "--seed", "1", "--out", str(tmp_path / "gen")])
    assert res.exit_code == 0, res.output
    lines = (tmp_path / "gen" / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == 3
    task_file = tmp_path / "gen" / "one.json"
    task_file.write_text(lines[0])
    record = json.loads(lines[0])
    truth = tmp_path / "gen" / record["ground_truth_ifc"]
    res = runner.invoke(cli, ["score", "--task", str(task_file), "--pred", str(truth), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["final"] == 1.0 and out["solved"] and out["edit_sets"]["reference"]
    res = runner.invoke(cli, ["score", "--task", str(task_file), "--pred", str(tmp_path / "gen" /
                                                                            record["input_ifc"])])
    assert res.exit_code == 1 and "solved False" in res.output  # the verdict: not solved
    res = runner.invoke(cli, ["diff", str(tmp_path / "gen" / record["input_ifc"]), str(truth), "--json"])
    assert res.exit_code == 0
    assert json.loads(res.output)["added"]


def test_bad_files_give_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    junk = tmp_path / "junk.ifc"
    junk.write_text("hello")
    res = runner.invoke(cli, ["diff", str(junk), str(junk)])
    assert res.exit_code != 0 and "cannot read model" in res.output and "Traceback" not in res.output
    res = runner.invoke(cli, ["score", "--task", str(junk), "--pred", str(junk)])
    assert res.exit_code != 0 and "not valid JSON" in res.output
    res = runner.invoke(cli, ["generate", "--n", "0", "--out", str(tmp_path)])
    assert res.exit_code != 0 and "'--n'" in res.output and "1<=x<=100000" in res.output


def test_unreadable_prediction_is_refused_not_scored(tmp_path: Path) -> None:
    generate_tasks(1, 2, tmp_path / "one")
    single = tmp_path / "one" / "tasks.jsonl"
    junk = tmp_path / "junk.ifc"
    junk.write_text("not ifc")
    res = CliRunner().invoke(cli, ["score", "--task", str(single), "--pred", str(junk)])
    assert res.exit_code != 0 and "final" not in res.output and "not a readable IFC model" in res.output
    assert str(junk) in res.output


def test_generate_n_is_stratified_across_cells(tmp_path: Path) -> None:
    # Issue 23: --n 6 gave six wall-create tasks.
    from buildbench.suites.bimedit.generate.tasks.split import stratified_edits

    tasks = generate_tasks(6, 0, tmp_path / "six")
    cells = [(t.element, t.operation) for t in tasks]
    assert len(set(cells)) == 6 and {op for _, op in cells} == {"create", "update", "delete"}
    edits, picks = stratified_edits(0, 54)
    assert len({(e.element, e.operation) for e in edits[:18]}) == 18
    assert {picks.count(c) for c in ("direct", "spatial", "topological")} == {18}
    assert len({(e.element, e.operation, e.scene, e.index) for e in edits}) == 54
