"""An empty submission scores as a failure (issue 23): no machine at all, or a machine of only the
starting block, passes no task level, and a rate over zero calls is n/a, never a perfect 0 %."""

from __future__ import annotations

import json
import math

import pytest

from buildbench.harness import Action, Episode, Task
from buildbench.harness.suite import mean_metrics
from buildbench.llm import ToolCall
from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.metrics import level_rows
from buildbench.suites.buildarena.outcome import BuildArenaOutcome
from buildbench.suites.buildarena.report import summarize
from buildbench.suites.buildarena.score import score_episode


def _env(task_id: str) -> BuildArenaEnv:
    task = Task(task_id, "buildarena")
    env = BuildArenaEnv(task)
    env.reset(task, seed=1)
    return env


def score(task: Task, outcome: BuildArenaOutcome) -> dict[str, float]:
    """``score_episode`` of the outcome as the store keeps it (JSON) and reads it back."""
    return score_episode(task, BuildArenaOutcome.from_dict(json.loads(json.dumps(outcome.to_dict()))))


def _episode(task_id: str, metrics: dict[str, float]) -> Episode:
    return Episode(task_id=task_id, sample=0, suite="buildarena", agent="a", protocol="workflow", seed=0,
                   status="ok", metrics=metrics)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("task_id", ["transport-1", "support-1", "lift-1", "lift-2"])
def test_no_machine_and_a_bare_starting_block_fail(task_id: str) -> None:
    env = _env(task_id)
    nothing = score(env.task, env.outcome())
    assert (nothing["passed"], nothing["indicator"], nothing["parts"], nothing["approved"]) == (0, 0, 0, 0)
    assert nothing["calls"] == 0 and math.isnan(nothing["invalid_action_rate"])  # no call: no rate

    result = env.step(Action(tool_calls=[ToolCall.parse("c", "start", {})]))
    assert result.info["ok"]
    env.approve("1")
    env.set_final("1")
    bare = score(env.task, env.outcome())
    assert bare["simulated"] == 1.0 and bare["parts"] == 1.0
    assert bare["passed"] == 0.0, f"{task_id}: a bare starting block passed"
    assert bare["invalid_action_rate"] == 0.0  # one call that succeeded: a real 0 %


def test_a_rate_over_no_call_is_left_out_and_shown_as_na() -> None:
    env = _env("support-1")
    nothing = score(env.task, env.outcome())
    acted = {**nothing, "calls": 4.0, "invalid_calls": 1.0, "invalid_action_rate": 0.25}
    episodes = [_episode("support-1", nothing), _episode("support-1", acted), _episode("lift-1", nothing)]
    assert mean_metrics(episodes)["metrics"]["invalid_action_rate"] == 0.25  # not 0.125
    rows = level_rows(episodes)
    assert rows["support-1"]["invalid_action_rate"] == pytest.approx(25.0)
    assert math.isnan(rows["lift-1"]["invalid_action_rate"])
    per_task = {r["task"]: r for r in summarize(episodes)["tables"]["Per task (ours)"]}
    assert per_task["lift-1"]["invalid %"] is None and per_task["lift-1"]["SR %"] == 0.0
