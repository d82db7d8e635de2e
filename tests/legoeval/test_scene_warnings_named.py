"""A LEGO-Eval task's scene warnings name the task file, line, task and field, and are given
once when the file is read: the env and the agents, which read the scene again at every episode
reset, do not repeat them unnamed (`buildbench.scenes.scene_warnings`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from buildbench.cli import main
from buildbench.harness import get_suite

# a ProcTHOR house whose doors[0].wall1 names an exterior wall the file does not hold
PARTIAL = Path(__file__).parents[1] / "scenes" / "fixtures" / "procthor_zg_partial_1_doors.json"


def test_a_task_files_scene_warning_is_named_once(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.WARNING)
    base = get_suite("legoeval").load_tasks("demo", 0)[0].to_dict()
    scene = json.loads(PARTIAL.read_text(encoding="utf-8"))
    records = [{**base, "id": "mine"}, {**base, "id": "other", "inputs": {**base["inputs"], "scene": scene}}]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["run", "legoeval", "--agent", "always-valid", "--tasks", str(path), "--samples", "3",
                 "--run-dir", str(tmp_path / "run"), "-q"]) == 0
    # episodes play in processes of their own, which log to the stderr they inherit
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    warnings += capfd.readouterr().err.splitlines()
    (line,) = [w for w in warnings if "exterior wall" in w]  # once, though 3 episodes reset its env
    assert line.startswith(f"{path}:2: task 'other': inputs.scene.doors[0].wall1: exterior wall "), line
