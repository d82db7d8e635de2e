"""Scripted agents end to end in the env: clean rooms from the diagnose agent, exact replays
from the oracle, the baselines' weaknesses, and the model agent's context rules."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from buildbench.harness import EpisodeContext, Observation, Task
from buildbench.harness.errors import ConfigError
from buildbench.llm import Message
from buildbench.suites.scenerevis import agents
from buildbench.suites.scenerevis.agents.llm import IMAGE_TOKENS, SceneReVisLLMAgent
from buildbench.suites.scenerevis.check.rooms import missing_essentials
from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.generate.flat import canonical_objects
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.tasks import load_tasks


def play(factory: Any, task: Task, seed: int = 0, **options: Any) -> tuple[SceneReVisOutcome, Observation]:
    env = SceneReVisEnv(SceneReVisOptions(render=False, **options))
    agent = factory(task, None, {})
    ctx = EpisodeContext(task=task, seed=seed)

    async def run() -> Observation:
        obs, _ = env.reset(task, seed=seed)
        while True:
            result = env.step(await agent.act(obs, ctx))
            obs = result.observation
            if result.terminated or result.truncated:
                return obs

    last = asyncio.run(run())
    return env.outcome(), last


@pytest.mark.parametrize("task", load_tasks("demo", 0), ids=lambda t: t.id)
def test_diagnose_builds_clean_complete_rooms(task):
    out, last = play(agents.diagnose, task)
    assert out.termination == "terminate" and out.invalid_replies == 0
    assert last.state["collisions"] == [] and last.state["out_of_bounds"] == []
    assert not missing_essentials(task.metadata["room_type"], [o["desc"] for o in out.scene["objects"]])
    assert out.turns >= 3  # create, add, ..., terminate: never the -1 of a two-turn trajectory


@pytest.mark.parametrize("task", load_tasks("goal", 0)[:6], ids=lambda t: t.id)
def test_diagnose_repairs_goal_rooms(task):
    out, last = play(agents.diagnose, task)
    assert out.termination == "terminate"
    assert last.state["collisions"] == [] and last.state["out_of_bounds"] == []


def test_goal_rooms_start_broken():
    broken = 0
    for task in load_tasks("goal", 0)[:6]:
        env = SceneReVisEnv(SceneReVisOptions(render=False))
        obs, _ = env.reset(task, seed=0)
        broken += bool(obs.state["collisions"] or obs.state["out_of_bounds"])
    assert broken >= 2


@pytest.mark.parametrize("task", load_tasks("chains", 0), ids=lambda t: t.id)
def test_oracle_rebuilds_the_source_room_exactly(task):
    out, _ = play(agents.oracle, task)
    assert out.termination == "terminate" and out.invalid_replies == 0
    assert canonical_objects(out.scene) == canonical_objects(task.target["reference_scene"])


def test_oracle_needs_a_chain():
    with pytest.raises(ConfigError, match="carries no recorded chain"):
        agents.oracle(load_tasks("demo", 0)[0], None, SceneReVisOptions())


def test_one_pass_and_random_add_everything_in_one_turn_without_repair():
    tasks = load_tasks("demo", 0)
    problems = {"one-pass": 0, "random": 0}
    for name, factory in (("one-pass", agents.one_pass), ("random", agents.random_placement)):
        for task in tasks:
            out, last = play(factory, task)
            assert out.turns == 3 and out.termination == "terminate"
            problems[name] += len(last.state["collisions"]) + len(last.state["out_of_bounds"])
    assert problems["random"] > problems["one-pass"] > 0


def test_scripted_agents_are_deterministic():
    task = load_tasks("demo", 0)[3]
    assert play(agents.random_placement, task, seed=4)[0] == play(agents.random_placement, task, seed=4)[0]
    assert play(agents.diagnose, task, seed=4)[0] != play(agents.diagnose, task, seed=5)[0]  # room drawn by seed


def _agent(**kw: Any) -> SceneReVisLLMAgent:
    from buildbench.llm import ScriptedChat

    return SceneReVisLLMAgent(ScriptedChat(["unused"]), system_prompt="sys", **kw)


def test_llm_context_keeps_only_the_current_image():
    agent = _agent()
    image = np.zeros((4, 4, 3), dtype=np.uint8)
    for k in range(3):
        agent.turns.append(_turn(f"user {k}", image, f"reply {k}"))
    messages = agent.conversation()
    assert [len(m.images) for m in messages if m.role == "user"] == [0, 0, 1]
    assert [m.text for m in messages if m.role == "user"] == ["user 0", "user 1", "user 2"]


def test_llm_context_drops_the_oldest_exchanges_to_fit():
    agent = _agent(max_model_len=IMAGE_TOKENS + 3000, max_tokens=1000)
    image = np.zeros((4, 4, 3), dtype=np.uint8)
    for k in range(4):
        agent.turns.append(_turn(f"user {k} " + "x" * 2400, image, f"reply {k}"))
    texts = [m.text[:6] for m in agent.conversation()]
    assert texts[0] == "sys" and texts[-2:] == ["user 3", "reply "] and "user 0" not in texts


def _turn(user: str, image: np.ndarray, reply: str) -> Any:
    from buildbench.harness.llm_agent import _Turn

    return _Turn([Message.user(user, [image])], Message.assistant(reply))


def test_llm_prompt_explains_jid_naming_when_asked():
    from buildbench.suites.scenerevis.agents.llm import system_prompt

    assert 'name objects by that id' in system_prompt("id")
    assert "every object carrying the jid" in system_prompt("jid")
