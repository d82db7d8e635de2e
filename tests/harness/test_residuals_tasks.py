"""Task records with type-correct values no task can mean (a height of 0, a block budget of 0, a
BuildArena duration given as an object or disagreeing with its task id) are refused on load with
one ``error:`` line naming file, task and field (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite
from buildbench.harness.task_files import TaskFileError, load_task_files, require_fields


def _record(suite: str, task_id: str | None = None) -> dict[str, Any]:
    tasks = get_suite(suite).load_tasks("demo", 0)
    task = next(t for t in tasks if task_id in (None, t.id))
    return task.to_dict()


def _refused(tmp_path: Path, suite: str, record: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["run", suite, "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"{path}:1: task {record['id']!r}: " in err and not (tmp_path / "run").exists()
    return err


@pytest.mark.parametrize("part, field, value, expected", [
    ("inputs", "target_height_m", -1, "expected number>0, got -1"),
    ("inputs", "target_height_m", 0, "expected number>0, got 0"),
    ("target", "target_height_m", 0.0, "expected number>0, got 0.0"),
    ("inputs", "lot_half_width_m", -0.5, "expected number>0, got -0.5"),
    ("inputs", "max_blocks", 0, "expected integer>=1, got 0"),
    ("inputs", "max_blocks", 2.5, "expected integer>=1, got 2.5"),
])
def test_example_refuses_sizes_no_task_can_have(tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str,
                                                 field: str, value: Any, expected: str) -> None:
    record = _record("example")
    record[part] = {**record[part], field: value}
    assert f"{part}.{field}: {expected}" in _refused(tmp_path, "example", record, capsys)


@pytest.mark.parametrize("part, field, value, expected", [
    ("target", "duration_s", {}, "expected number>0, got dict"),
    ("target", "duration_s", -3, "expected number>0, got -3"),
    ("target", "duration_s", 12.5, "12.5 disagrees with task transport-1, whose value is 30.0"),
    ("inputs", "max_substructures", [], "expected integer>=1, got list"),
    ("inputs", "max_substructures", 0, "expected integer>=1, got 0"),
    ("inputs", "level", 0, "expected integer>=1, got 0"),
    ("inputs", "category", "lift", "'lift' disagrees with task transport-1, whose value is 'transport'"),
])
def test_buildarena_refuses_odd_or_ignored_values(tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str,
                                                  field: str, value: Any, expected: str) -> None:
    record = _record("buildarena", "transport-1")
    record[part] = {**record[part], field: value}
    assert f"{part}.{field}: {expected}" in _refused(tmp_path, "buildarena", record, capsys)


def test_buildarena_refuses_an_unknown_task_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = {**_record("buildarena", "transport-1"), "id": "transport-9"}
    assert "transport-9" in _refused(tmp_path, "buildarena", record, capsys)


@pytest.mark.parametrize("suite, split", [("example", "demo"), ("buildarena", "default"),
                                          ("buildarena", "variants")])
def test_the_suites_own_tasks_pass_their_checks(tmp_path: Path, suite: str, split: str) -> None:
    path = tmp_path / "all.jsonl"
    tasks = get_suite(suite).load_tasks(split, 0)
    path.write_text("".join(json.dumps(t.to_dict()) + "\n" for t in tasks))
    assert [t.id for t in load_task_files(path, suite, get_suite(suite).validate_task)] == [t.id for t in tasks]
    # the optional fields may be left out
    trimmed = tasks[0].to_dict()
    trimmed["target"] = {}
    path.write_text(json.dumps(trimmed) + "\n")
    if suite == "buildarena":
        assert len(load_task_files(path, suite, get_suite(suite).validate_task)) == 1
    else:
        with pytest.raises(TaskFileError, match="target.target_height_m: missing"):
            load_task_files(path, suite, get_suite(suite).validate_task)


def test_require_fields_bounds_and_misspelt_types() -> None:
    with pytest.raises(ValueError, match="unknown type 'string>0'"):
        require_fields(inputs={"s": "string>0"})
    with pytest.raises(ValueError, match="unknown type 'nubmer'"):
        require_fields(optional={"target.x": "nubmer"})
    with pytest.raises(ValueError, match="is not inputs.NAME or target.NAME"):
        require_fields(optional={"metadata.x": "number"})
    check = require_fields(inputs={"n": "integer>=1", "x": "number>0|null"})
    task = get_suite("example").load_tasks("demo", 0)[0]

    def with_inputs(**inputs: Any) -> Any:
        return type(task).from_dict({**task.to_dict(), "inputs": inputs})

    check(with_inputs(n=10 ** 400, x=None))  # a huge int is compared as an int, not overflowed to a float
    for bad in ({"n": 1, "x": float("inf")}, {"n": 1, "x": float("nan")}, {"n": True, "x": 1.0}):
        with pytest.raises(ValueError):
            check(with_inputs(**bad))
