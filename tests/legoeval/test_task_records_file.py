"""LEGO-Eval task records no evaluation can mean (a constraint that is not an {id, text, type}
object, a repeated constraint id, labels of another length than the constraints, a scene the env
cannot read) are refused on load with one ``error:`` line naming file, task and field (exit 2),
before any run folder; every bundled task passes the same check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite
from buildbench.suites.legoeval.legobench import load_legobench
from buildbench.suites.legoeval.task_records import check_task_record


def _record() -> dict[str, Any]:
    return get_suite("legoeval").load_tasks("demo", 0)[0].to_dict()


def _refused(tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["run", "legoeval", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"{path}:1: task {record['id']!r}: " in err and not (tmp_path / "run").exists()
    return err


def test_every_bundled_demo_task_passes_the_check() -> None:
    for task in get_suite("legoeval").load_tasks("demo", 0):
        check_task_record(task)


def test_released_layout_and_external_scenes_pass_the_check() -> None:
    fixtures = Path(__file__).parent / "fixtures"
    for task in [*load_legobench(fixtures / "legobench_tiny"),
                 *load_legobench(fixtures / "legobench_tiny", scenes=fixtures / "generator_scenes")]:
        check_task_record(task)


def _constraint(record: dict[str, Any], i: int, **changes: Any) -> dict[str, Any]:
    constraints = [dict(c) for c in record["inputs"]["constraints"]]
    constraints[i].update(changes)
    constraints[i] = {k: v for k, v in constraints[i].items() if v is not None}
    return {**record, "inputs": {**record["inputs"], "constraints": constraints}}


@pytest.mark.parametrize("changes, expected", [
    ({"id": None}, "inputs.constraints[1].id: expected a non-empty string"),
    ({"id": 7}, "inputs.constraints[1].id: expected a non-empty string"),
    ({"text": ""}, "inputs.constraints[1].text: expected a non-empty string"),
    ({"type": "XX"}, "inputs.constraints[1].type: expected one of FL, MS, OS, OP, got 'XX'"),
    ({"type": None}, "inputs.constraints[1].type: expected one of FL, MS, OS, OP, got None"),
])
def test_constraint_fields_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       changes: dict[str, Any], expected: str) -> None:
    assert expected in _refused(tmp_path, _constraint(_record(), 1, **changes), capsys)


def test_a_repeated_constraint_id_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = _record()
    first = record["inputs"]["constraints"][0]["id"]
    assert f"inputs.constraints[1].id: {first!r} repeats" in _refused(tmp_path, _constraint(record, 1, id=first),
                                                                      capsys)


@pytest.mark.parametrize("constraints, expected", [
    ([], "inputs.constraints: expected a non-empty list"),
    ("c0", "inputs.constraints: expected a non-empty list"),
    (["c0 text"], "inputs.constraints[0]: expected an {id, text, type} object, got str"),
])
def test_constraints_must_be_a_list_of_objects(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               constraints: Any, expected: str) -> None:
    record = _record()
    record["inputs"] = {**record["inputs"], "constraints": constraints}
    assert expected in _refused(tmp_path, record, capsys)


@pytest.mark.parametrize("field, value, expected", [
    ("instruction", "  ", "inputs.instruction: expected a non-empty string"),
    ("scene", [], "inputs.scene: expected a house JSON object, got list"),
    ("scene", {"rooms": "none"}, "inputs.scene: not a house the env can read"),
])
def test_instruction_and_scene(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: Any,
                               expected: str) -> None:
    record = _record()
    record["inputs"] = {**record["inputs"], field: value}
    assert expected in _refused(tmp_path, record, capsys)


def _labels(record: dict[str, Any]) -> list[bool]:
    return list(record["target"]["labels"])


@pytest.mark.parametrize("change, expected", [
    (lambda r: {"labels": _labels(r)[:-1]}, "target.labels: expected one true/false per constraint"),
    (lambda r: {"labels": [1] * len(_labels(r))}, "target.labels: expected one true/false per constraint"),
    (lambda r: {"labels": "yes"}, "target.labels: expected one true/false per constraint"),
    (lambda r: {"valid": "true"}, "target.valid: expected true, false or null, got 'true'"),
    (lambda r: {"valid": None}, "target.valid: a labelled task gives both valid and labels"),
    (lambda r: {"valid": not all(_labels(r))}, "target.valid: is "),
    (lambda r: {"programs": [{"op": "nonsense"}]}, "target.programs[0]: "),
    (lambda r: {"programs": {"op": "x"}}, "target.programs: expected a list of objects or nulls"),
    (lambda r: {"plans": [None] * (len(_labels(r)) + 1)}, "target.plans: expected a list of objects or nulls"),
    (lambda r: {"plans": [{"nodes": [{"tool": "t"}], "edges": []}]}, "target.plans[0]: expected {\"nodes\""),
    (lambda r: {"plans": [{"nodes": [], "edges": [["a", "b"]]}]}, "target.plans[0]: expected {\"nodes\""),
])
def test_target_agrees_with_the_constraints(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any,
                                            expected: str) -> None:
    record = _record()
    record["target"] = {**record["target"], **change(record)}
    assert expected in _refused(tmp_path, record, capsys)


def test_an_unlabelled_record_still_loads(tmp_path: Path) -> None:
    """A generator's scene (released LEGO-Bench without labels) has valid and labels null."""
    record = _record()
    record["target"] = {**record["target"], "valid": None, "labels": None}
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    from buildbench.harness.task_files import load_task_files

    assert [t.id for t in load_task_files(path, "legoeval", check_task_record)] == [record["id"]]
