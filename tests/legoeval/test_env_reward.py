"""LEGO-Eval's reward: agreement of the submitted verdicts with a labelled task's labels."""

from __future__ import annotations

import pytest

from buildbench.harness import Action
from buildbench.suites.legoeval.env import LegoEvalEnv
from buildbench.suites.legoeval.options import LegoEvalOptions

from .test_env import task


def _submit(holds: list[bool | None], valid: bool | None) -> tuple[float, dict]:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    verdicts = [{"id": f"c{i}", "holds": h, "explanation": "looked"} for i, h in enumerate(holds)]
    result = env.step(Action(data={"verdicts": verdicts, "valid": valid}))
    assert result.terminated
    return result.reward, result.info


@pytest.mark.parametrize(("holds", "valid", "reward"), [
    ([True, True, True], True, 1.0),           # every verdict and the holistic one agree
    ([True, False, True], False, 0.5 * 2 / 3),  # one constraint and the holistic verdict wrong
    ([True, None, None], None, 0.5 * 1 / 3),    # abstaining is never rewarded
    ([False, False, False], False, 0.0),
])
def test_the_verdict_reward_is_the_agreement_with_the_labels(holds, valid, reward):
    got, info = _submit(holds, valid)
    assert got == pytest.approx(reward) and info["reward"] == "agreement"


def test_tool_calls_earn_nothing_and_an_unlabelled_scene_gives_no_signal():
    t = task()
    unlabelled = type(t)(t.id, t.suite, t.inputs, {k: v for k, v in t.target.items() if k != "labels"}, t.metadata)
    env = LegoEvalEnv(unlabelled, LegoEvalOptions(render=False))
    env.reset(unlabelled)
    bad = env.step(Action(data={"op": "nothing"}))
    assert bad.reward == 0.0 and not bad.terminated
    done = env.step(Action(data={"verdicts": [{"id": f"c{i}", "holds": True} for i in range(3)], "valid": True}))
    assert done.reward == 0.0 and done.info["reward"] == "unlabelled"
