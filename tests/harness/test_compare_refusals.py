"""``buildbench compare RUN_A RUN_B`` refuses a pair it cannot compare with one ``error:`` line
naming the runs and why, exit 2, instead of a table of n/a that reads as a comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness.episode import Episode
from buildbench.harness.store import Store


def _run(root: Path, name: str, episodes: dict[str, str], suite: str = "example",
         agent: str = "reference") -> Path:
    """A stored run of ``suite`` whose episodes are ``task id -> status`` (an ``ok`` one passed)."""
    run_dir = root / name
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": suite, "agent": agent, "protocol": "one-shot",
                                         "split": "demo", "seed": 0, "samples": 1, "options": {}}})
        for task_id, status in episodes.items():
            metrics = {"passed": 1.0 if agent == "reference" else 0.0} if status == "ok" else {}
            store.add_episode(Episode(task_id=task_id, sample=0, suite=suite, agent=agent, protocol="one-shot",
                                      seed=0, status=status, metrics=metrics))  # type: ignore[arg-type]
    return run_dir


def _error(capsys: pytest.CaptureFixture[str], *args: Any) -> str:
    assert main(["compare", *map(str, args)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: compare: ")
    return line


def test_runs_that_share_no_task_are_refused_naming_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok", "t2": "ok"})
    b = _run(tmp_path, "b", {"u1": "ok", "u2": "ok", "u3": "ok", "u4": "ok"}, agent="short")
    line = _error(capsys, a, b, "--json")
    assert f"{a} (A) and {b} (B) share no task id" in line
    assert "A has 2 tasks (t1, t2); B has 4 tasks (u1, u2, u3, …)" in line


def test_runs_of_different_suites_are_refused_naming_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok"})
    b = _run(tmp_path, "b", {"t1": "ok"}, suite="legoeval")
    line = _error(capsys, a, b)
    assert f"{a} (A) and {b} (B) are runs of different suites (example, legoeval)" in line


def test_a_run_without_a_scored_episode_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok", "t2": "ok"})
    dead = _run(tmp_path, "dead", {"t1": "api_error", "t2": "error"}, agent="llm")
    for pair in ((a, dead), (dead, a)):
        line = _error(capsys, *pair)
        assert f"{dead} has no scored episode (1 api_error, 1 error)" in line
        assert "--errors-as-failures" in line
    # Counted as failures they are scored: a real comparison, 1 -> 0 on both tasks.
    assert main(["compare", str(a), str(dead), "--json", "--errors-as-failures"]) == 0
    passed = json.loads(capsys.readouterr().out)["metrics"]["passed"]
    assert (passed["tasks"], passed["diff"]) == (2, -1.0)
    empty = _run(tmp_path, "empty", {})
    assert "has no scored episode (no episodes): nothing to compare" in _error(capsys, a, empty)


def test_runs_with_no_task_scored_in_both_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok", "t2": "error"})
    b = _run(tmp_path, "b", {"t1": "error", "t2": "ok"}, agent="short")
    line = _error(capsys, a, b)
    assert "have no metric scored on a task of both (2 shared tasks" in line


def test_the_same_run_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok"})
    assert "are the same run folder: give two runs to compare" in _error(capsys, a, a)
    assert "are the same run folder" in _error(capsys, a, tmp_path / "." / "a")


def test_a_folder_that_is_no_run_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path, "a", {"t1": "ok"})
    (tmp_path / "empty").mkdir()
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "run.sqlite").write_text("not a database\n")
    for other, what in (("empty", "is not a buildbench run (no run.sqlite)"),
                        ("garbage", "not a buildbench run store")):
        assert main(["compare", str(a), str(tmp_path / other)]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(f"error: {tmp_path / other}") and what in line


def test_report_refuses_a_run_given_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its episodes would count twice in every mean (n=4 for a run of 2)."""
    a = _run(tmp_path, "a", {"t1": "ok", "t2": "ok"})
    b = _run(tmp_path, "b", {"t1": "ok", "t2": "ok"}, agent="short")
    for args in ([a, a], [a, b, tmp_path / "." / "a"]):
        assert main(["report", *map(str, args)]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("error: report: ") and f"is the run folder {a} again: give each run once" in line
    assert main(["report", str(a), str(b), "--json"]) == 0
    assert [row["episodes"] for row in json.loads(capsys.readouterr().out)["rows"]] == [2, 2]
