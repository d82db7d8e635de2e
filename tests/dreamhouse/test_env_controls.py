"""DreamHouse's controls: what protocols do to an episode besides stepping, through the context."""

from __future__ import annotations

import asyncio
import json

import pytest

from buildbench.harness import Action, EpisodeContext
from buildbench.suites.dreamhouse.env import Evaluation, make_env
from buildbench.suites.dreamhouse.options import DreamHouseOptions
from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome
from buildbench.suites.dreamhouse.tasks import make_task

SILL = {"name": "Sill_a", "size": [4.0, 0.14, 0.038], "location": [2.0, 0.07, 0.019]}


@pytest.fixture()
def env():
    task = make_task("RN_01_0001")
    e = make_env(task, DreamHouseOptions(images="off"))
    e.reset(task)
    yield e
    e.close()


def _add_sill(env) -> None:
    env.step(Action(text="```json\n" + json.dumps({"members": [SILL]}) + "\n```"))


def test_controls_are_listed_by_name_with_their_docs(env):
    controls = env.controls
    assert {name: c.doc for name, c in controls.items()} == {
        "set_scope": "which tests decide a step: all, early or phased",
        "reset_scene": "empty the scene",
        "checkpoint": "remember the scene under a label",
        "restore": "put a labelled scene back",
        "evaluate": "validate the scene under a scope",
        "visual_score": "visual fidelity S of the scene against the target views",
        "note": "the protocol's bookkeeping, kept in the outcome",
    }
    assert {name for name, c in controls.items() if c.cpu_bound} == {"evaluate", "visual_score"}
    assert controls["checkpoint"].fn == env.save_checkpoint and controls["reset_scene"].fn == env.reset_scene_control


def test_checkpoints_restore_the_scene_by_label(env):
    saved = env.save_checkpoint("empty")
    assert saved.state == {"n_members": 0}
    _add_sill(env)
    assert len(env.structure) == 1
    assert env.restore_checkpoint("empty").state == {"n_members": 0} and len(env.structure) == 0
    with pytest.raises(ValueError, match="restore: no checkpoint 'later'; checkpoints: empty"):
        env.restore_checkpoint("later")
    with pytest.raises(ValueError, match="set_scope: unknown scope 'some'"):
        env.set_scope("some")


def test_controls_through_the_context_are_logged_and_reach_the_outcome(env):
    ctx = EpisodeContext(task=env.task, seed=0)

    async def play() -> Evaluation:
        await ctx.control(env.set_scope, "early")
        await ctx.control(env.note, {"plan": {"ok": True}})
        await ctx.control(env.save_checkpoint, label="step1")
        return await ctx.control_as("validator", env.evaluate, scope="all")

    ev = asyncio.run(play())
    outcome = env.outcome()
    assert isinstance(outcome, DreamHouseOutcome)
    assert env.check_scope == "early" and outcome.protocol == {"plan": {"ok": True}}
    last = ctx.steps[-1]
    assert last.role == "validator" and last.info["control"] == "evaluate"
    assert last.info["all_passed"] is ev.all_passed is False and last.reward == 0.0
    assert last.observation_text == ev.text
    assert [s.role for s in ctx.steps] == ["protocol", "protocol", "protocol", "validator"]
    # logged by control name with arguments by parameter name (the trajectory format of replays)
    assert [s.action_text for s in ctx.steps[:3]] == [
        '{"control": "set_scope", "args": {"scope": "early"}}',
        '{"control": "note", "args": {"values": {"plan": {"ok": true}}}}',
        '{"control": "checkpoint", "args": {"label": "step1"}}']


def test_a_text_agent_names_a_control(env):
    from buildbench.integrations.text import run_control

    _add_sill(env)
    result = run_control(env, "reset_scene", {})
    assert result.observation.state == {"n_members": 0} and len(env.structure) == 0
    assert result.info["control"] == "reset_scene"
    unknown = run_control(env, "explode", {})
    assert unknown.observation.text.startswith("Unknown control 'explode'; controls: checkpoint, evaluate")
