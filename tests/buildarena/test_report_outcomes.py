"""The BuildArena report and the sensitivity report read each stored outcome as a
`BuildArenaOutcome`: an episode without one is shown as such, never under a physics profile it
did not record, and a scored one stays a failure under every setting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Episode, Store
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.suites.buildarena.outcome import OUTCOME_FORMAT
from buildbench.suites.buildarena.report import NO_OUTCOME, summarize
from buildbench.suites.buildarena.score import failure_metrics
from buildbench.suites.buildarena.sensitivity import SensitivityError, read_runs, sensitivity_report

PHYSICS = {"name": "besiege-1", "sha256": "ab" * 32, "values": {}}
PHYSICS_TABLE = "Physics profile and diverged simulations"
LOOP_TABLE = "Table 6: closed-loop rounds (paper: Seed-1.6, Support Lv.1)"


def _round(number: int, passed: bool) -> dict[str, Any]:
    entry = {"round": number, "machine": "1", "passed": passed, "indicator": 1.0, "parts": 5, "calls": 4,
             "invalid_calls": 1}
    return entry


def _episode(status: Any = "ok", outcome: dict[str, Any] | None = None, **extra: Any) -> Episode:
    if outcome is None:
        outcome = {"format": OUTCOME_FORMAT, "task_id": "support-1", "physics": PHYSICS,
                   "rounds": [_round(1, False), _round(2, True)]}
    metrics = {"passed": 1.0, "indicator": 1.0, "parts": 5.0, "approved": 1.0, "simulated": 1.0}
    if status == "failed":
        metrics = dict(failure_metrics(None))  # type: ignore[arg-type]
    elif status == "error":
        metrics = {}
    return Episode(task_id="support-1", sample=extra.pop("sample", 0), suite="buildarena", agent="a",
                   protocol="workflow", seed=0, status=status, outcome=outcome, metrics=metrics, **extra)


def _run() -> list[Episode]:
    return [_episode(),
            _episode("failed", {}, sample=1, error="agent output refused: 900 blocks", error_kind="agent_output"),
            _episode("error", {}, sample=2, error="SimulationDiverged: nan", error_kind="exception")]


def test_episodes_without_an_outcome_have_their_own_physics_row_and_no_rounds() -> None:
    out = summarize(_run())
    rows = {row["physics"]: row for row in out["tables"][PHYSICS_TABLE]}
    assert rows["besiege-1"]["episodes"] == 1 and rows["besiege-1"]["sha256"] == "ab" * 6
    missing = rows[NO_OUTCOME]
    assert (missing["episodes"], missing["diverged (unscored)"], missing["judged"]) == (2, 1, 0)
    assert "besiege-1 (not recorded)" not in rows
    loop = out["tables"][LOOP_TABLE]
    assert [row["episodes"] for row in loop] == [1, 1]  # the episode with rounds only
    # The failed episode counts (its zeros), the errored one does not.
    assert out["unscored"] == 1 and out["metrics"]["passed"] == 0.5


def test_a_malformed_stored_outcome_is_one_error_naming_the_episode() -> None:
    bad = _episode(outcome={"format": OUTCOME_FORMAT, "task_id": "support-1", "rounds": "three"}, sample=7)
    with pytest.raises(OutcomeReadError, match=r"'support-1' sample 7: .*buildarena outcome: rounds"):
        summarize([_episode(), bad])
    foreign = _episode(outcome={"format": "other/1", "task_id": "support-1"}, sample=8)
    with pytest.raises(OutcomeReadError, match="sample 8: .*format 'other/1'"):
        summarize([foreign])


def _store(tmp_path: Path, episodes: list[Episode]) -> Path:
    run_dir = tmp_path / "run"
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "buildarena", "agent": "a", "options": {}}, "tasks": 1})
        for episode in episodes:
            store.add_episode(episode)
    return run_dir


def test_sensitivity_keeps_a_failed_episode_without_an_outcome_as_a_failure(tmp_path: Path) -> None:
    failed = _run()[1:]  # the failed episode without an outcome and the unscored one
    runs = read_runs([_store(tmp_path, failed)])
    assert runs.unscored == 1 and [(ref.sample, ref.outcome) for ref in runs.episodes] == [(1, None)]
    report = sensitivity_report([tmp_path / "run"], ["drag=2x"], workers=1)
    for setting in report["tasks"]["support-1"]["settings"].values():
        assert setting["success_rate"] == 0.0 and setting["flips"] == 0


def test_sensitivity_names_the_run_and_episode_of_a_malformed_outcome(tmp_path: Path) -> None:
    bad = _episode(outcome={"format": OUTCOME_FORMAT, "task_id": 3}, sample=4)
    run_dir = _store(tmp_path, [bad])
    with pytest.raises(SensitivityError) as caught:
        read_runs([run_dir])
    assert str(caught.value).startswith(f"{run_dir}: episode 'support-1' sample 4: ")
    assert "task_id: expected a string, got int" in str(caught.value)
