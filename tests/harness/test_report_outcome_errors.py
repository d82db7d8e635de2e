"""A run folder whose stored outcome is malformed gives one `error:` line naming the run folder
and the episode (exit 2), from `buildbench report` of one run and of several, never a traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness import Episode, Store

#: Per suite: a stored outcome its record refuses.
MALFORMED: dict[str, dict[str, Any]] = {
    "bimedit": {"failure": ["api"]},
    "buildarena": {"format": "buildbench.buildarena.outcome/1", "task_id": "support-1", "rounds": {}},
    "dreamhouse": {"condition": 7},
    "scenerevis": {"turns": "two"},
}


def _run(root: Path, suite: str, name: str = "run") -> Path:
    run_dir = root / name
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": suite, "agent": "a", "protocol": "p", "options": {}}, "tasks": 1})
        store.add_episode(Episode(task_id="task-bad", sample=3, suite=suite, agent="a", protocol="p", seed=0,
                                  outcome=MALFORMED[suite], metrics={}))
    return run_dir


@pytest.mark.parametrize("suite", sorted(MALFORMED))
def test_report_names_the_run_folder_and_the_episode(suite: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run(tmp_path, suite)
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {run_dir}: episode 'task-bad' sample 3: stored outcome unreadable: {suite} outcome")


def test_comparing_runs_names_the_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run(tmp_path, "bimedit")
    other = tmp_path / "other"
    with Store(other) as store:
        store.write_manifest({"config": {"suite": "bimedit", "agent": "b", "protocol": "p", "options": {}}, "tasks": 1})
    assert main(["report", str(run_dir), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run_dir}: episode 'task-bad' sample 3: ") and err.count("\n") == 1
