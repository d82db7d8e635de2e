"""The BIM-Edit report reads each stored outcome as a `BimEditOutcome`: an episode without one
(failed or unscored before its env gave one) is never "executed" and has no tool-call count."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from buildbench.harness import Episode
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.harness.stats import Estimate
from buildbench.harness.tables import cell_text
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
    # Over the scored t1 and t2 (t2 without an outcome); t3 and t4 unscored: in neither mean, counted.
    assert traj["n"] == 2 and traj["tool calls"] == 4.0 and traj["no outcome"] == 1 and traj["unscored"] == 2
    # The failed episode is scored (its zeros count), the unscored ones stay out of the means.
    assert out["tables"]["Table 1: scores, 0-100, mean ± std"][0]["n"] == 2
    assert out["unscored"] == 2


def test_a_run_with_outcomes_everywhere_has_no_extra_column() -> None:
    traj = summarize([_episode("t1"), _episode("t2")])["tables"][TRAJECTORIES][0]
    assert "no outcome" not in traj and "unscored" not in traj and traj["tool calls"] == 4.0


def test_trajectory_means_carry_task_intervals() -> None:
    """Tool calls and output tokens with 95 % intervals resampling tasks, recomputed by hand
    (numpy default_rng(0), 2000 resamples, 2.5/97.5 %): task a has two samples, one task's mean
    weighing by its samples as in the plain mean; the unscored episode is in neither."""
    def ep(task: str, sample: int, calls: int, tokens: int, status: str = "ok") -> Episode:
        out = _episode(task, status, {"failure": "executed", "tool_calls": calls})
        out.sample, out.usage = sample, {"output_tokens": tokens}
        return out

    episodes = [ep("a", 0, 2, 1000), ep("a", 1, 6, 3000), ep("b", 0, 3, 500), ep("c", 0, 10, 4000),
                ep("d", 0, 99, 99_000, status="api_error")]
    traj = summarize(episodes)["tables"][TRAJECTORIES][0]
    picks = np.random.default_rng(0).integers(0, 3, size=(2000, 3))
    for key, per_task, counts, scale in (("tool calls", [8.0, 3.0, 10.0], [2.0, 1.0, 1.0], 1.0),
                                         ("output ktokens", [4000.0, 500.0, 4000.0], [2.0, 1.0, 1.0], 1 / 1000)):
        means = np.asarray(per_task)[picks].sum(axis=1) / np.asarray(counts)[picks].sum(axis=1)
        low, high = np.quantile(means, [0.025, 0.975]) * scale
        cell = traj[key]
        assert isinstance(cell, Estimate) and cell == round(sum(per_task) / 4 * scale, 2), key
        assert (cell.low, cell.high, cell.n, cell.tasks) == (pytest.approx(low), pytest.approx(high), 4, 3)
        assert cell_text(cell) == f"{round(sum(per_task) / 4 * scale, 2):.2f} [{low:.2f}, {high:.2f}]"
    assert traj["n"] == 4 and traj["unscored"] == 1 and "no outcome" not in traj


@pytest.mark.parametrize("outcome", [{"failure": 3}, {"tool_calls": "many"}, {"call_status": "ok"}])
def test_a_malformed_stored_outcome_is_one_error_naming_the_episode(outcome: dict[str, Any]) -> None:
    with pytest.raises(OutcomeReadError) as caught:
        summarize([_episode("t1"), _episode("WAL-bad", outcome=outcome)])
    message = str(caught.value)
    assert "\n" not in message and "'WAL-bad' sample 0" in message and "bimedit outcome" in message
