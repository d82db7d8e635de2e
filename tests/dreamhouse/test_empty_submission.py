"""A house with no members scores as a failure on every test and metric (issue 23): before, the
tests that only look for faults among members passed, so an empty submission scored pass_rate 0.7."""

from __future__ import annotations

import json
import math

import pytest

from buildbench.harness import Action, get_suite
from buildbench.suites.dreamhouse.check.validate import NOTHING_TO_CHECK
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.options import DreamHouseOptions
from buildbench.suites.dreamhouse.tasks import make_task

TASK = "RN_01_0001"


@pytest.mark.parametrize("profile", ["paper", "released"])
def test_an_empty_house_through_the_env_and_the_suite_scorer_fails(profile: str) -> None:
    task = make_task(TASK)
    env = make_env(task, DreamHouseOptions(images="off", profile=profile))
    try:
        env.reset(task)
        result = env.step(Action(text='```json\n{"members": []}\n```'))
        stored = json.loads(json.dumps(env.outcome().to_dict()))  # as the store keeps it
    finally:
        env.close()
    assert result.reward == 0.0 and not any(result.info["tests"].values())
    assert NOTHING_TO_CHECK in result.observation.text
    # The scorer every integration uses (Inspect's `verify`, verifiers, TRL) is the suite's own.
    suite = get_suite("dreamhouse")
    metrics = suite.score(task, suite.read_outcome(stored))
    assert metrics["members"] == 0.0
    assert metrics["structural_pass"] == metrics["pass_rate"] == 0.0
    tests = {k: v for k, v in metrics.items() if k.startswith("test_")}
    assert tests and not any(tests.values()), tests
    assert metrics["visual_pass"] == metrics["joint_pass"] == metrics["joint_pass_mean"] == 0.0
    assert math.isnan(metrics["visual_fidelity"]) and math.isnan(metrics["topological_fidelity"])  # n/a: failed
    assert metrics["topological_fidelity_any"] == 0.0  # nothing matches the target frame
