"""A BIM-Edit task file means the same wherever it is run from: the models it names by relative
path are the task file's own (its folder), in the harness's record format as in BIM-Edit's own;
a model that only the current directory holds is refused, naming where it was looked for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite
from buildbench.harness.runner import RunConfig, select_tasks
from buildbench.suites.bimedit.generate.tasks import generate_demo
from buildbench.suites.bimedit.tasks import BimTask, write_tasks

# The module-scoped fixtures (the generated demo split) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("bimedit-task-paths")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[BimTask]:
    return generate_demo(0, tmp_path_factory.mktemp("bimedit_demo"))


def _task(demo: list[BimTask]) -> BimTask:
    return next(t for t in demo if t.operation == "update")


def _models_beside(task: BimTask, folder: Path) -> tuple[str, str]:
    """Copies of the task's models under ``folder/models``, as paths relative to ``folder``."""
    (folder / "models").mkdir(parents=True)
    shutil.copy(task.input_ifc, folder / "models" / "m0.ifc")
    shutil.copy(task.ground_truth_ifc, folder / "models" / "gt.ifc")
    return "models/m0.ifc", "models/gt.ifc"


def _harness_record(task: BimTask, m0: str, gt: str) -> dict[str, Any]:
    record = task.to_harness().to_dict()
    record["inputs"]["ifc_path"] = m0
    record["target"].update(ground_truth_ifc=gt, input_ifc=m0)
    return record


def _loaded(source: Path) -> list[Any]:
    return select_tasks(get_suite("bimedit"), RunConfig(suite="bimedit", agent="oracle", protocol="tool-loop",
                                                       tasks=str(source)))


def test_harness_record_paths_are_the_task_files_own(demo: list[BimTask], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "mine"
    record = _harness_record(_task(demo), *_models_beside(_task(demo), folder))
    (folder / "tasks.jsonl").write_text(json.dumps(record) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    [task] = _loaded(Path("..") / "mine" / "tasks.jsonl")
    m0, gt = (folder / "models" / "m0.ifc").resolve(), (folder / "models" / "gt.ifc").resolve()
    assert Path(task.inputs["ifc_path"]).is_absolute() and Path(task.inputs["ifc_path"]).resolve() == m0
    assert Path(task.target["input_ifc"]).resolve() == m0 and Path(task.target["ground_truth_ifc"]).resolve() == gt


def test_native_record_paths_are_the_task_files_own(demo: list[BimTask], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "split"
    write_tasks([_task(demo)], folder / "tasks.jsonl")
    _models_beside(_task(demo), folder)
    line = json.loads((folder / "tasks.jsonl").read_text())
    line.update(input_ifc="models/m0.ifc", ground_truth_ifc="models/gt.ifc")
    (folder / "tasks.jsonl").write_text(json.dumps(line) + "\n")
    monkeypatch.chdir(tmp_path)
    [task] = _loaded(Path("split"))
    assert Path(task.inputs["ifc_path"]).is_absolute()
    assert Path(task.inputs["ifc_path"]).resolve() == (folder / "models" / "m0.ifc").resolve()


def test_a_model_only_the_current_directory_holds_is_refused(demo: list[BimTask], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    cwd = tmp_path / "cwd"
    record = _harness_record(_task(demo), *_models_beside(_task(demo), cwd))
    tasks = tmp_path / "tasks" / "mine.jsonl"
    tasks.parent.mkdir()
    tasks.write_text(json.dumps(record) + "\n")
    monkeypatch.chdir(cwd)  # models/m0.ifc exists here, but not beside the task file
    assert main(["run", "bimedit", "--tasks", str(tasks), "--run-dir", str(tmp_path / "run"), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tasks}:1: task ") and err.count("\n") == 1, err
    assert f"inputs.ifc_path: no such model file {tasks.parent.resolve() / 'models' / 'm0.ifc'}" in err
    assert not (tmp_path / "run").exists()
