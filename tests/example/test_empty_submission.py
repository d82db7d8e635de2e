"""An empty tower scores as a failure (issue 23): the checker's `nonempty` test fails before any
test that only looks for faults among blocks could pass on nothing."""

from __future__ import annotations

import json

from buildbench.harness import Action, get_suite
from buildbench.suites.example.env import TowerEnv
from buildbench.suites.example.generate import make_task


def test_an_empty_design_through_the_env_and_the_scorer_fails() -> None:
    task = make_task(0, 0)
    env = TowerEnv(task)
    env.reset(task)
    result = env.step(Action(data={"blocks": []}))
    assert result.reward == 0.0 and "FAIL nonempty" in result.observation.text
    assert "PASS" not in result.observation.text
    outcome = json.loads(json.dumps(env.outcome()))
    metrics = get_suite("example").score(task, outcome)
    assert metrics["passed"] == 0.0 and metrics["height_ratio"] == 0.0 and metrics["blocks"] == 0.0
    # What nothing submitted at all scores: the same failure.
    assert get_suite("example").score(task, {})["passed"] == 0.0
