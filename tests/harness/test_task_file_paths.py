"""Task-file fields a suite names as paths (``Suite.task_paths``) are read against the folder of
the file that holds the record, in JSON Lines and JSON files and in the sub-folders of a task
folder, whatever the current directory; absolute paths and values that are no path are left as
they are for the suite's check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.harness import Task
from buildbench.harness.task_files import load_task_files, resolve_paths

PATHS = ("inputs.model", "target.reference")


def _record(task_id: str, model: object, reference: object = "ref.txt") -> dict[str, object]:
    return {"id": task_id, "inputs": {"model": model, "other": "left/alone.txt"}, "target": {"reference": reference}}


def test_relative_paths_resolve_against_each_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "set" / "sub").mkdir(parents=True)
    (tmp_path / "set" / "a.jsonl").write_text(json.dumps(_record("a", "m.ifc")) + "\n")
    (tmp_path / "set" / "sub" / "b.json").write_text(json.dumps([_record("b", "../m.ifc", "/abs/ref.txt")]))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    a, b = load_task_files(Path("..") / "set", "example", paths=PATHS)
    folder = (tmp_path / "set").resolve()
    assert Path(a.inputs["model"]).resolve() == folder / "m.ifc"
    assert Path(a.target["reference"]).resolve() == folder / "ref.txt"
    assert Path(b.inputs["model"]).resolve() == folder / "m.ifc"
    assert b.target["reference"] == "/abs/ref.txt"
    assert a.inputs["other"] == "left/alone.txt"  # not a path field


def test_the_check_sees_resolved_paths(tmp_path: Path) -> None:
    seen: list[str] = []
    (tmp_path / "t.jsonl").write_text(json.dumps(_record("a", "m.ifc")) + "\n")
    load_task_files(tmp_path / "t.jsonl", "example", lambda task: seen.append(task.inputs["model"]), paths=PATHS)
    assert seen == [str(tmp_path.resolve() / "m.ifc")]


@pytest.mark.parametrize("value", [["m.ifc"], 3, "", "  ", None])
def test_values_that_are_no_path_are_left_for_the_check(value: object) -> None:
    task = Task("a", "example", inputs={"model": value})
    assert resolve_paths(task, Path("/somewhere"), PATHS) == task


def test_a_path_field_outside_the_record_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="is not inputs.NAME"):
        resolve_paths(Task("a", "example"), Path("/x"), ("model",))
