"""BIM-Edit task records no edit can be scored against (an id that is no ELEM-OP-INSTR-SCENE-NNN,
a model that does not exist, an update naming no element, a string of GlobalIds, values that
disagree with the id) are refused on load with one ``error:`` line naming file, task and field
(exit 2), before any run folder, in the harness's record format and in BIM-Edit's own; every
generated demo task passes the same check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.suites.bimedit.generate.tasks import generate_demo
from buildbench.suites.bimedit.tasks import BimTask, check_task_record, load_task_file, write_tasks

# The module-scoped fixtures (the generated demo split) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-task-records-file")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[BimTask]:
    return generate_demo(0, tmp_path_factory.mktemp("bimedit_demo"))


def _record(demo: list[BimTask], operation: str = "update") -> dict[str, Any]:
    return next(t for t in demo if t.operation == operation).to_harness().to_dict()


def _refused(tmp_path: Path, path: Path, task_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["run", "bimedit", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"task {task_id!r}: " in err and not (tmp_path / "run").exists()
    return err


def _refused_record(tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    err = _refused(tmp_path, path, record["id"], capsys)
    assert f"{path}:1: " in err
    return err


def test_every_generated_demo_task_passes_the_check(demo: list[BimTask]) -> None:
    for task in demo:
        check_task_record(task.to_harness())


def test_an_id_that_names_no_edit_is_refused(demo: list[BimTask], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    record = {**_record(demo), "id": "my-task-1"}
    assert "id: malformed BIM-Edit task id 'my-task-1'" in _refused_record(tmp_path, record, capsys)


@pytest.mark.parametrize("part, field, value, expected", [
    ("inputs", "instruction", "", "inputs.instruction: expected a non-empty string"),
    # a relative path is the task file's own: the error names where it was looked for
    ("inputs", "ifc_path", "nowhere/m0.ifc", "inputs.ifc_path: no such model file /"),
    ("inputs", "ifc_path", ["a.ifc"], "inputs.ifc_path: expected the path of an IFC model"),
    ("target", "ground_truth_ifc", "", "target.ground_truth_ifc: expected the path of an IFC model"),
    ("inputs", "unit", "km", "inputs.unit: expected one of m, mm, cm, dm, ft, in, us-ft, yd, got 'km'"),
    ("target", "input_ifc", "other.ifc", "/other.ifc' is not inputs.ifc_path"),
    ("target", "operation", "delete", "target.operation: 'delete' disagrees with the id"),
    ("target", "target_guids", [], "target.target_guids: is empty, but update tasks name"),
    ("target", "target_guids", "0AFkkmhMGdt$yblQLCi$NX", "target.target_guids: expected a list of GlobalId"),
    ("target", "target_guids", [7], "target.target_guids: expected a list of GlobalId"),
    ("target", "relevant_properties", "Name", "target.relevant_properties: expected a list of property names"),
    ("target", "oracle_code", ["commit()"], "target.oracle_code: expected a string"),
])
def test_harness_record_fields(demo: list[BimTask], tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str,
                               field: str, value: Any, expected: str) -> None:
    record = _record(demo)
    record[part] = {**record[part], field: value}
    assert expected in _refused_record(tmp_path, record, capsys)


def test_a_create_needs_no_target_element(demo: list[BimTask]) -> None:
    record = _record(demo, "create")
    assert record["target"]["target_guids"] == []
    check_task_record(next(t for t in demo if t.operation == "create").to_harness())


@pytest.mark.parametrize("field, value, expected", [
    ("target_guids", "0AFkkmhMGdt$yblQLCi$NX", "field 'target_guids' must be list, got str"),
    ("target_guids", [None], "field 'target_guids' must list non-empty strings"),
    ("relevant_properties", "Name", "field 'relevant_properties' must be list or NoneType, got str"),
    ("instruction", " ", "field 'instruction' is empty"),
    ("facts", [], "field 'facts' must be dict, got list"),
    ("seed", True, "field 'seed' must be int, got bool"),
])
def test_native_record_types(demo: list[BimTask], tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
                             value: Any, expected: str) -> None:
    task = next(t for t in demo if t.operation == "update")
    path = write_tasks([task], tmp_path / "native" / "tasks.jsonl")
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, field: value}) + "\n")
    assert main(["run", "bimedit", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:1: ") and expected in err and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()


def test_native_update_naming_no_element(demo: list[BimTask], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    task = next(t for t in demo if t.operation == "delete")
    path = write_tasks([task], tmp_path / "native" / "tasks.jsonl")
    path.write_text(json.dumps({**json.loads(path.read_text()), "target_guids": []}) + "\n")
    err = _refused(tmp_path, path, task.task_id, capsys)
    assert "target.target_guids: is empty, but delete tasks name" in err
    assert len(load_task_file(write_tasks(demo, tmp_path / "all" / "tasks.jsonl"))) == len(demo)
