"""A run folder may not be, or lie in, a folder the same command reads (``run --tasks FOLDER``,
``scenes evaluate FOLDERS``): the task listing walks every ``.json``/``.jsonl`` under the folder,
and a run stored there adds its own (``export``'s ``RUN/episodes.jsonl``, ``RUN/sft``) to the
next run's or resume's tasks. One ``error:`` line naming both parameters, exit 2, nothing written;
a file the command reads may lie in the run folder (``--config RUN/run.yaml`` on a resume)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from buildbench.cli.main import main

TASK = {"id": "t1", "suite": "example", "inputs": {"target_height_m": 1.25, "lot_half_width_m": 1.5, "max_blocks": 9},
        "target": {"target_height_m": 1.25}}


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "t.jsonl").write_text(json.dumps(TASK) + "\n")
    return folder


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("where, order", [("inside", "tasks first"), ("inside", "run folder first"),
                                          ("deeper", "tasks first"), ("the same", "tasks first"),
                                          ("through a link", "run folder first")])
def test_a_run_folder_in_the_task_folder_is_refused_naming_both(
        where: str, order: str, tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.symlink(tasks, tmp_path / "link")
    run_dir = {"inside": tasks / "run", "deeper": tasks / "a" / "b" / "run", "the same": tasks,
               "through a link": tmp_path / "link" / "run"}[where]
    pairs = [["--tasks", str(tasks)], ["--run-dir", str(run_dir)]]
    first, second = pairs if order == "tasks first" else pairs[::-1]
    err = _refused(["run", "example", "-q", "--workers", "0", *first, *second], capsys)
    placed = "is the folder given as option --tasks" if where == "the same" else \
        f"lies in {tasks}, the folder given as option --tasks"
    assert f"Invalid value for '--run-dir': {run_dir}: {placed}, which this command reads" in err, err
    assert sorted(p.name for p in tasks.iterdir()) == ["t.jsonl"]


def test_the_default_run_folder_and_a_run_files_tasks_are_checked_too(
        tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tasks)
    err = _refused(["run", "example", "--tasks", ".", "-q", "--workers", "0"], capsys)
    assert f"error: --run-dir (its default) runs/example-reference-refine-s0: lies in {tasks}, the folder given " \
           "as --tasks" in err
    run_file = tmp_path / "run.yaml"
    run_file.write_text(f"suite: example\ntasks: {tasks}\n")
    err = _refused(["run", "--config", str(run_file), "--run-dir", str(tasks / "r"), "-q"], capsys)
    assert f"error: --run-dir {tasks / 'r'}: lies in {tasks}, the folder given as 'tasks' in the run file " \
           f"{run_file}" in err
    assert sorted(p.name for p in tasks.iterdir()) == ["t.jsonl"]


def test_scenes_evaluate_refuses_its_run_folder_in_a_folder_it_evaluates(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scenes").mkdir()
    err = _refused(["scenes", "evaluate", str(tmp_path / "scenes"), "--format", "thor", "--run-dir",
                    str(tmp_path / "scenes" / "runs")], capsys)
    assert "Invalid value for '--run-dir'" in err and "the folder given as argument" in err
    assert not os.listdir(tmp_path / "scenes")


def test_a_run_beside_the_tasks_and_its_run_file_on_a_resume_are_fine(
        tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", "example", "--tasks", str(tasks / "t.jsonl"), "--run-dir", str(run_dir), "-q",
                 "--workers", "0"]) == 0
    # A resume from the run's own run file: a file the command reads in the run folder.
    assert main(["run", "--config", str(run_dir / "run.yaml"), "--run-dir", str(run_dir), "--resume", "-q"]) == 0
