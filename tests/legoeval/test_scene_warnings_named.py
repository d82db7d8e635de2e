"""A LEGO-Eval task's scene warnings name the task file, line, task and field, and are given
once when the file is read: the env, the agents and the scorer, which read the scene again in
every episode, do not repeat them unnamed (`buildbench.scenes.scene_warnings`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.harness import get_suite

# a ProcTHOR house whose doors[0].wall1 names an exterior wall the file does not hold
PARTIAL = Path(__file__).parents[1] / "scenes" / "fixtures" / "procthor_zg_partial_1_doors.json"


@pytest.mark.parametrize("agent", ["always-valid", "deterministic"])
def test_a_task_files_scene_warning_is_named_once(tmp_path: Path, agent: str) -> None:
    base = get_suite("legoeval").load_tasks("demo", 0)[0].to_dict()
    scene = json.loads(PARTIAL.read_text(encoding="utf-8"))
    # no stored plans: scoring derives them from the programs on the scene (plans.task_plans)
    records = [{**base, "id": "mine"}, {**base, "id": "other", "inputs": {**base["inputs"], "scene": scene},
                                        "target": {**base["target"], "plans": None}}]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    # a process of its own: the episodes' processes (forked from a forkserver it starts) log to
    # its stderr, where a forkserver an earlier test started would log elsewhere
    done = subprocess.run([sys.executable, "-m", "buildbench", "run", "legoeval", "--agent", agent, "--tasks",
                           str(path), "--samples", "3", "--run-dir", str(tmp_path / "run"), "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (line,) = [w for w in done.stderr.splitlines() if "exterior wall" in w]  # once, though 3 episodes read it
    assert f"{path}:2: task 'other': inputs.scene.doors[0].wall1: exterior wall " in line, line
