"""DreamHouse's controls: what protocols do to an episode besides stepping, through the context."""

from __future__ import annotations

import asyncio
import json

import pytest

from buildbench.harness import Action, EpisodeContext
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.tasks import make_task

SILL = {"name": "Sill_a", "size": [4.0, 0.14, 0.038], "location": [2.0, 0.07, 0.019]}


@pytest.fixture()
def env():
    task = make_task("RN_01_0001")
    e = make_env(task, {"images": "off"})
    e.reset(task)
    yield e
    e.close()


def _add_sill(env) -> None:
    env.step(Action(text="```json\n" + json.dumps({"members": [SILL]}) + "\n```"))


def test_checkpoints_restore_the_scene_by_label(env):
    assert set(env.controls) == {"set_scope", "reset_scene", "checkpoint", "restore", "evaluate", "visual_score",
                                 "note"}
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

    async def play():
        await ctx.control(env, "set_scope", {"scope": "early"}, role="protocol")
        await ctx.control(env, "note", {"values": {"plan": {"ok": True}}}, role="protocol")
        return await ctx.control(env, "evaluate", {"scope": "all"}, role="validator")

    ev = asyncio.run(play())
    assert env.check_scope == "early" and env.outcome()["protocol"] == {"plan": {"ok": True}}
    last = ctx.steps[-1]
    assert last.role == "validator" and last.info["control"] == "evaluate"
    assert last.info["all_passed"] is ev.all_passed is False and last.reward == 0.0
    assert last.observation_text == ev.text
    assert [s.action_text for s in ctx.steps[:2]] == [
        '{"control": "set_scope", "args": {"scope": "early"}}',
        '{"control": "note", "args": {"values": {"plan": {"ok": true}}}}']
