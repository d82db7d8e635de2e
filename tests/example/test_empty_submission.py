"""An empty tower scores as a failure (issue 23): the checker's `nonempty` test fails before any
test that only looks for faults among blocks could pass on nothing."""

from __future__ import annotations

import json

from buildbench.harness import Action, get_suite
from buildbench.suites.example.env import TowerEnv
from buildbench.suites.example.generate import make_task
from buildbench.suites.example.outcome import TowerOutcome


def test_an_empty_design_through_the_env_and_the_scorer_fails() -> None:
    task = make_task(0, 0)
    env = TowerEnv(task)
    env.reset(task)
    result = env.step(Action(data={"blocks": []}))
    assert result.reward == 0.0 and "FAIL nonempty" in result.observation.text
    assert "PASS" not in result.observation.text
    suite = get_suite("example")
    stored = json.loads(json.dumps(env.outcome().to_dict()))  # as the store keeps it
    metrics = suite.score(task, suite.read_outcome(stored))
    assert metrics["passed"] == 0.0 and metrics["height_ratio"] == 0.0 and metrics["blocks"] == 0.0
    # What nothing submitted at all scores: the same failure.
    assert suite.score(task, TowerOutcome())["passed"] == 0.0
