"""A scoring process does not run the Python-API user's main script again: a script's top-level
imports (torch, Ray) cost once, not once per scored episode; a call that needs what the script
defines still gets it (`buildbench.harness.forkserver_preload.without_main_script`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

# Stands for a heavy import at a script's top: each process that runs the script appends a line.
COUNTED = """
import os

with open(os.environ["R2_COUNT_FILE"], "a", encoding="utf-8") as f:
    f.write(f"{os.getpid()}\\n")
"""

DIRECT = """
import json
import os

import counted  # noqa: F401  (counts the processes that run this script)
from buildbench.harness.isolated import IsolationLimits, call_isolated

LIMITS = IsolationLimits(wall_s=120.0, cpu_s=60, memory_mb=None)


class Box:  # defined here: a child must run this script to unpickle one
    def __init__(self, value):
        self.value = value


def double(box):
    return box.value * 2


def runs():
    with open(os.environ["R2_COUNT_FILE"], encoding="utf-8") as f:
        return len(f.read().split())


if __name__ == "__main__":
    out = {}
    plain = [call_isolated(len, ("abc",), LIMITS, script_free=True) for _ in range(3)]
    out["plain"] = [(d.status, d.value) for d in plain]
    out["runs_after_plain"] = runs()
    own_fn = call_isolated(double, (Box(21),), LIMITS, script_free=True)
    out["own_fn"] = (own_fn.status, own_fn.value)
    out["runs_after_own_fn"] = runs()
    own_arg = call_isolated(repr, ([Box(1)],), LIMITS, script_free=True)
    out["own_arg"] = (own_arg.status, "Box object" in str(own_arg.value))
    out["runs_after_own_arg"] = runs()
    default = call_isolated(len, ("abc",), LIMITS)  # not script-free: runs it, as before
    out["default"] = (default.status, default.value)
    out["runs_after_default"] = runs()
    print(json.dumps(out))
"""

#: A run of the example suite's demo split (2 tasks x 3 samples) from a script; {config} is the
#: agent and how episodes run.
RUN = """
import json
import sys

import counted  # noqa: F401
from buildbench.harness import RunConfig, Runner

if __name__ == "__main__":
    config = RunConfig(suite="example", protocol="one-shot", split="demo", limit=2, samples=3, {config})
    result = Runner(config, sys.argv[1]).run()
    print(json.dumps(result.summary["status"]))
"""


def _python(tmp_path: Path, script: str, *args: str) -> tuple[dict | list, int]:
    (tmp_path / "counted.py").write_text(COUNTED, encoding="utf-8")
    (tmp_path / "mine.py").write_text(textwrap.dedent(script), encoding="utf-8")
    count = tmp_path / "count.txt"
    env = {**os.environ, "R2_COUNT_FILE": str(count)}
    done = subprocess.run([sys.executable, str(tmp_path / "mine.py"), *args], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), len(count.read_text(encoding="utf-8").split())


def test_script_free_calls_skip_the_script_unless_they_refer_to_it(tmp_path: Path) -> None:
    out, runs = _python(tmp_path, DIRECT)
    assert isinstance(out, dict)
    assert out["plain"] == [["ok", 3]] * 3
    assert out["runs_after_plain"] == 1  # the script itself only: none of the three children ran it
    assert out["own_fn"] == ["ok", 42]  # a function the script defines: its child runs the script
    assert out["runs_after_own_fn"] == 2
    assert out["own_arg"] == ["ok", True]  # an argument of a class the script defines: the same
    assert out["runs_after_own_arg"] == 3
    assert out["default"] == ["ok", 3] and out["runs_after_default"] == 4
    assert runs == 4


def test_a_runs_scoring_processes_skip_the_script(tmp_path: Path) -> None:
    status, runs = _python(tmp_path, RUN.format(config='agent="reference", workers=1'), str(tmp_path / "run"))
    assert status == {"ok": 6}
    # the script and the one pool worker (which may get work items the script defines); the six
    # scorings, one process each, no longer run it (8 before)
    assert runs == 2


def test_episodes_played_apart_skip_the_script(tmp_path: Path) -> None:
    status, runs = _python(tmp_path, RUN.format(config='agent="slow-reference", concurrency=4'), str(tmp_path / "run"))
    assert status == {"ok": 6}
    # the script itself only: neither the six episodes' processes nor their scorings ran it (7 before)
    assert runs == 1
