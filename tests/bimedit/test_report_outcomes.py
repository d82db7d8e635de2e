"""The BIM-Edit report reads each stored outcome as a `BimEditOutcome`: an episode without one
(failed or unscored before its env gave one) is never "executed" and has no tool-call count."""

from __future__ import annotations

from typing import Any

import pytest

from buildbench.harness import Episode
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.suites.bimedit.report import summarize

TABLE3 = "Table 3: runtime failure rates (%)"
TRAJECTORIES = "trajectories by instruction type"


def _episode(task_id: str, status: Any = "ok", outcome: dict[str, Any] | None = None, **extra: Any) -> Episode:
    metrics = {"final": 1.0, "geometry": 1.0, "semantics": 1.0, "topology": 1.0, "solved": 1.0}
    if status == "failed":
        metrics = dict.fromkeys(metrics, 0.0)
    elif status not in ("ok", "budget"):
        metrics = {}
    return Episode(task_id=task_id, sample=0, suite="bimedit", agent="a", protocol="p", seed=0, status=status,
                   outcome={"failure": "executed", "tool_calls": 4} if outcome is None else outcome,
                   metrics=metrics, usage={"output_tokens": 1000},
                   metadata={"operation": "update", "category": "direct", "scene": "simple", "element": "wall"},
                   **extra)


def test_episodes_without_an_outcome_are_failures_with_their_harness_class() -> None:
    episodes = [
        _episode("t1"),
        _episode("t2", "failed", {}, error="agent output refused: too big", error_kind="agent_output"),
        _episode("t3", "error", {}, error="RuntimeError: env broke", error_kind="exception"),
        _episode("t4", "api_error", {}, error="HTTP 500", error_kind="api_error"),
    ]
    out = summarize(episodes)
    row = out["tables"][TABLE3][0]
    assert row["n"] == 4
    # t2 and t3 are "other runtime" failures, t4 an API failure; none of them "executed".
    assert (row["other"], row["api"], row["overall"]) == (50.0, 25.0, 75.0)
    traj = out["tables"][TRAJECTORIES][0]
    assert traj["n"] == 4 and traj["tool calls"] == 4.0 and traj["no outcome"] == 3
    # The failed episode is scored (its zeros count), the unscored ones stay out of the means.
    assert out["tables"]["Table 1: scores, 0-100, mean ± std"][0]["n"] == 2
    assert out["unscored"] == 2


def test_a_run_with_outcomes_everywhere_has_no_extra_column() -> None:
    traj = summarize([_episode("t1"), _episode("t2")])["tables"][TRAJECTORIES][0]
    assert "no outcome" not in traj and traj["tool calls"] == 4.0


@pytest.mark.parametrize("outcome", [{"failure": 3}, {"tool_calls": "many"}, {"call_status": "ok"}])
def test_a_malformed_stored_outcome_is_one_error_naming_the_episode(outcome: dict[str, Any]) -> None:
    with pytest.raises(OutcomeReadError) as caught:
        summarize([_episode("t1"), _episode("WAL-bad", outcome=outcome)])
    message = str(caught.value)
    assert "\n" not in message and "'WAL-bad' sample 0" in message and "bimedit outcome" in message
