"""Bring your own model, agent and tasks, through the CLI, on every suite (issue 14).

Each suite's worked examples (``examples/<suite>/model.py`` and ``agent.py``) must run an
episode to a scored result, and ``buildbench tasks SUITE --json`` must be loadable by
``buildbench run SUITE --tasks``.

``buildbench run`` runs as a process of its own, from the repository (the example paths are
relative to it); ``report`` and ``tasks``, which only read, run in this process to save a Python
start and the package import each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import get_suite
from buildbench.harness.task_files import load_task_files

REPO = Path(__file__).resolve().parents[2]
SUITES = ["example", "dreamhouse", "buildarena", "bimedit", "legoeval", "scenerevis"]


def _bb(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BUILDBENCH_CACHE": os.environ.get("BUILDBENCH_CACHE", str(tmp_path / "cache"))}
    return subprocess.run([sys.executable, "-m", "buildbench", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)


def _in_process(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``buildbench ARGS`` run by this process; its stdout (it must exit 0)."""
    capsys.readouterr()
    rc = main(list(args))
    out = capsys.readouterr()
    assert rc == 0, out.err[-2000:]
    return out.out


def _report(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(_in_process(capsys, "report", str(run_dir), "--json"))


@pytest.mark.parametrize("suite", SUITES)
def test_model_function_runs_the_suite(suite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    out = _bb("run", suite, "--model", f"python:examples/{suite}/model.py:chat", "--split", "demo", "--limit", "1",
              "--run-dir", str(run_dir), "--workers", "0", "-q", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    rep = _report(run_dir, capsys)
    # --model without --agent picks the suite's model agent
    assert rep["agent"] == "llm" and rep["model"] == f"python:examples/{suite}/model.py:chat"
    assert rep["status"] == {"ok": 1} and rep["usage"]["requests"] >= 1


@pytest.mark.parametrize("suite", SUITES)
def test_agent_file_runs_the_suite(suite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    out = _bb("run", suite, "--agent", f"examples/{suite}/agent.py:make", "--split", "demo", "--limit", "1",
              "--run-dir", str(run_dir), "--workers", "0", "-q", tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    rep = _report(run_dir, capsys)
    # the run keeps the file absolute (read against the cwd), so a resume from elsewhere finds it
    assert rep["agent"] == f"{REPO}/examples/{suite}/agent.py:make" and rep["status"] == {"ok": 1}


@pytest.mark.parametrize("suite", SUITES)
def test_listed_tasks_load_back_and_run(suite: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUILDBENCH_CACHE", os.environ.get("BUILDBENCH_CACHE", str(tmp_path / "cache")))
    listed = _in_process(capsys, "tasks", suite, "--split", "demo", "--json")
    path = tmp_path / "tasks.jsonl"
    path.write_text(listed)
    expected = [json.loads(line) for line in listed.splitlines() if line.strip()]
    loaded = load_task_files(path, suite, get_suite(suite).validate_task)
    assert [t.to_dict() for t in loaded] == expected
    run_dir = tmp_path / "run"
    out = _bb("run", suite, "--tasks", str(path), "--limit", "1", "--run-dir", str(run_dir), "--workers", "0", "-q",
              tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert _report(run_dir, capsys)["episodes"] == 1


def test_bad_task_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "suite": "example", "inputs": {"target_height_m": 2}}\n')
    out = _bb("run", "example", "--tasks", str(path), "--run-dir", str(tmp_path / "run"), "-q", tmp_path=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == \
        f"error: {path}:1: task 't1': inputs.lot_half_width_m: missing (number>0 required) (option --tasks)"


def test_bad_model_and_agent_targets_are_exit_2(tmp_path: Path) -> None:
    out = _bb("run", "example", "--model", "python:examples/example/nope.py:chat", "--split", "demo",
              "--run-dir", str(tmp_path / "a"), "-q", tmp_path=tmp_path)
    assert out.returncode == 2 and out.stderr.strip().startswith("error: python model")
    out = _bb("run", "example", "--agent", "examples/example/agent.py:missing", "--split", "demo",
              "--run-dir", str(tmp_path / "b"), "-q", tmp_path=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == (f"error: agent factory '{REPO}/examples/example/agent.py:missing': "
                                  f"{REPO}/examples/example/agent.py has no attribute 'missing'")
