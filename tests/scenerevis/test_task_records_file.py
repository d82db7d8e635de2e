"""SceneReVis task records no episode can start from (an empty instruction, an initial scene or
chain room the env cannot read, a chain turn that is not a list of tool calls) are refused on load
with one ``error:`` line naming file, task and field (exit 2), before any run folder; every task of
every split passes the same check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.suites.scenerevis.tasks import SPLITS, check_task_record, load_tasks


def _refused(tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["run", "scenerevis", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"{path}:1: task {record['id']!r}: " in err and not (tmp_path / "run").exists()
    return err


@pytest.mark.parametrize("split", SPLITS)
def test_every_bundled_task_passes_the_check(split: str) -> None:
    for task in load_tasks(split, 0):
        check_task_record(task)


def _goal() -> dict[str, Any]:
    return load_tasks("goal", 0)[0].to_dict()


def _chain() -> dict[str, Any]:
    return load_tasks("chains", 0)[0].to_dict()


@pytest.mark.parametrize("instruction", ["", "   ", None])
def test_an_empty_instruction_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         instruction: Any) -> None:
    record = load_tasks("demo", 0)[0].to_dict()
    record["inputs"] = {**record["inputs"], "instruction": instruction}
    assert "inputs.instruction: expected a non-empty string" in _refused(tmp_path, record, capsys)


@pytest.mark.parametrize("part, field, expected", [("target", "room_type", "target.room_type: expected a string"),
                                                   ("metadata", "room_type", "metadata.room_type: expected a string")])
def test_room_type_is_text(tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str, field: str,
                           expected: str) -> None:
    record = load_tasks("demo", 0)[0].to_dict()
    record[part] = {**record[part], field: ["bedroom"]}
    assert expected in _refused(tmp_path, record, capsys)


@pytest.mark.parametrize("change, expected", [
    (lambda s: [s], "inputs.initial_scene: expected a scene object, got list"),
    (lambda s: {**s, "bounds_top": s["bounds_top"][:2]}, "inputs.initial_scene: not a scene the env can read"),
    (lambda s: {**s, "objects": "chair"}, "inputs.initial_scene: not a scene the env can read"),
])
def test_initial_scene_must_be_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any,
                                        expected: str) -> None:
    record = _goal()
    record["inputs"] = {**record["inputs"], "initial_scene": change(record["inputs"]["initial_scene"])}
    assert expected in _refused(tmp_path, record, capsys)


def test_reference_scene_must_be_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = _goal()
    record["target"] = {**record["target"], "reference_scene": {"objects": []}}
    assert "target.reference_scene: not a scene the env can read" in _refused(tmp_path, record, capsys)


@pytest.mark.parametrize("change, expected", [
    (lambda c: [c], "target.chain: expected {\"room\""),
    (lambda c: {**c, "room": None}, "target.chain: expected {\"room\""),
    (lambda c: {**c, "room": {"bounds_bottom": []}}, "target.chain.room: not a scene the env can read"),
    (lambda c: {**c, "turns": {}}, "target.chain.turns: expected a list of turns"),
    (lambda c: {**c, "turns": [c["turns"][0][0]]}, "target.chain.turns[0]: expected a list of at most"),
    (lambda c: {**c, "turns": [[{"name": "fly", "arguments": {}}]]}, "target.chain.turns[0][0]: expected"),
    (lambda c: {**c, "turns": [[{"name": "terminate"}]]}, "target.chain.turns[0][0]: expected"),
])
def test_chain_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, expected: str) -> None:
    record = _chain()
    record["target"] = {**record["target"], "chain": change(record["target"]["chain"])}
    assert expected in _refused(tmp_path, record, capsys)
