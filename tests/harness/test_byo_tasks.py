"""``--tasks FILE_OR_DIR``: task files checked on load with one-line errors (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.harness import ConfigError, RunConfig, Runner, get_suite, run_report
from buildbench.harness.task_files import TaskFileError, load_task_files, require_fields

SUITE = get_suite("example")


def _tasks(n: int = 3) -> list[dict]:
    return [t.to_dict() for t in SUITE.load_tasks("demo", 0)[:n]]


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _load(path: Path) -> list:
    return load_task_files(path, "example", SUITE.validate_task)


def test_jsonl_json_and_folder_round_trip(tmp_path: Path) -> None:
    records = _tasks()
    assert [t.to_dict() for t in _load(_jsonl(tmp_path / "a.jsonl", records))] == records
    (tmp_path / "b.json").write_text(json.dumps({"tasks": records[:1]}))
    assert [t.to_dict() for t in _load(tmp_path / "b.json")] == records[:1]
    folder = tmp_path / "dir"
    (folder / "sub").mkdir(parents=True)
    _jsonl(folder / "1.jsonl", records[:2])
    (folder / "sub" / "2.json").write_text(json.dumps(records[2]))
    assert [t.id for t in _load(folder)] == [r["id"] for r in records]


def test_suite_may_be_left_out(tmp_path: Path) -> None:
    record = {k: v for k, v in _tasks(1)[0].items() if k != "suite"}
    assert _load(_jsonl(tmp_path / "t.jsonl", [record]))[0].suite == "example"


def _error(tmp_path: Path, records: list | str, name: str = "t.jsonl") -> str:
    path = tmp_path / name
    if isinstance(records, str):
        path.write_text(records)
    else:
        _jsonl(path, records)
    with pytest.raises(TaskFileError) as info:
        _load(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_errors_name_file_line_task_and_field(tmp_path: Path) -> None:
    good = _tasks(2)
    where = f"{tmp_path}/t.jsonl"
    assert _error(tmp_path, [good[0], good[0]]) == (
        f"{where}:2: task id {good[0]['id']!r} repeats the one at {where}:1")
    assert _error(tmp_path, [{**good[0], "suite": "bimedit"}]).startswith(
        f"{where}:1: task {good[0]['id']!r} field 'suite' is 'bimedit', but this run is suite 'example'")
    missing = {**good[0], "inputs": {k: v for k, v in good[0]["inputs"].items() if k != "max_blocks"}}
    assert _error(tmp_path, [good[1], missing]) == (
        f"{where}:2: task {good[0]['id']!r}: inputs.max_blocks: missing (integer>=1 required)")
    wrong = {**good[0], "target": {"target_height_m": "tall"}}
    assert _error(tmp_path, [wrong]).endswith("target.target_height_m: expected number>0, got str")
    assert _error(tmp_path, [{**good[0], "input": {}}]) == (
        f"{where}:1: unknown field 'input'; a task has id, suite, inputs, target, metadata")
    assert _error(tmp_path, [{**good[0], "id": ""}]).startswith(f"{where}:1: field 'id' must be a non-empty string")
    assert _error(tmp_path, [{**good[0], "inputs": [1]}]).endswith("field 'inputs' must be an object, got list")
    assert _error(tmp_path, json.dumps(good[0]) + "\n{oops\n") .startswith(f"{where}:2: not a JSON object")
    assert _error(tmp_path, "[1]\n").startswith(f"{where}:1: expected a task object, got list")
    assert _error(tmp_path, "\n\n") == f"{where}: holds no task"
    assert _error(tmp_path, '{"id": "x", "inputs": {"target_height_m": NaN}}\n').startswith(f"{where}:1: not a JSON")


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="no such task file or folder"):
        _load(tmp_path / "missing.jsonl")
    (tmp_path / "t.csv").write_text("id\n")
    with pytest.raises(TaskFileError, match=r"end in \.jsonl"):
        _load(tmp_path / "t.csv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TaskFileError, match="holds no .jsonl or .json task file"):
        _load(tmp_path / "empty")


def test_require_fields_types() -> None:
    check = require_fields(inputs={"n": "integer", "maybe": "string|null", "flag": "boolean"})
    task = SUITE.load_tasks("demo", 0)[0]
    bad = type(task).from_dict({**task.to_dict(), "inputs": {"n": True, "maybe": None, "flag": True}})
    with pytest.raises(ValueError, match="inputs.n: expected integer, got bool"):
        check(bad)
    check(type(task).from_dict({**task.to_dict(), "inputs": {"n": 3, "maybe": None, "flag": False}}))


def test_runner_runs_task_files_and_refuses_bad_ones(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "mine.jsonl", _tasks(2))
    config = RunConfig(suite="example", agent="reference", protocol="one-shot", tasks=str(path), workers=0)
    Runner(config, tmp_path / "run").run()
    rep = run_report(tmp_path / "run")
    assert rep["episodes"] == 2 and rep["metrics"]["passed"] == 1.0
    bad = _jsonl(tmp_path / "bad.jsonl", [{"id": "x", "inputs": {}}])
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: task 'x': inputs.target_height_m: missing"):
        Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", tasks=str(bad)),
               tmp_path / "run2").run()
    assert not (tmp_path / "run2").exists()  # refused before the store was created
