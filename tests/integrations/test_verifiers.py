"""The verifiers adapter: its own evaluate path, with the real ``openai`` client talking to our
loopback OpenAI-compatible server, scores what ``buildbench run`` scores for the same replies."""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeAlias

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.harness.episode import Episode
from buildbench.harness.errors import ConfigError
from buildbench.llm import Fault, ScriptedServer, ServerReply, ServerRequest, ServerToolCall

vf = pytest.importorskip("verifiers", reason="the verifiers adapter is optional: verifiers is not installed")
openai = pytest.importorskip("openai")

from buildbench.integrations.verifiers import DEFAULT_METRICS, UnscorableEpisode, load_environment  # noqa: E402
from buildbench.suites.example.env import PROMPTS as TOWER_PROMPTS  # noqa: E402

Reply: TypeAlias = ServerReply | str


def _tower(height_m: float, gap_m: float = 0.0) -> dict[str, Any]:
    """Two equal blocks reaching ``height_m``; the upper one floats ``gap_m`` above the lower."""
    half = height_m / 2
    return {"blocks": [{"center": [0, 0, half / 2], "size": [0.5, 0.5, half]},
                       {"center": [0, 0, 1.5 * half + gap_m], "size": [0.5, 0.5, half]}]}


def tower_model(tools: bool) -> Any:
    """A model that depends on its conversation only: on a lot of odd half-width (in cm) it floats
    its first tower and repairs it from the feedback; otherwise it stays at half the height."""

    def reply(request: ServerRequest) -> Reply:
        task_text = next(m["content"] for m in request.messages if m["role"] == "user")
        target = float(re.search(r"at least ([0-9.]+) m", task_text).group(1))  # type: ignore[union-attr]
        half_width_cm = round(float(re.search(r"<= ([0-9.]+) m", task_text).group(1)) * 100)  # type: ignore[union-attr]
        replies = sum(m["role"] == "assistant" for m in request.messages)
        repairs = half_width_cm % 2 == 1
        design = _tower(target, 0.05 if replies == 0 else 0.0) if repairs else _tower(target / 2)
        if tools:
            return ServerReply(tool_calls=(ServerToolCall("submit_blocks", design),))
        return json.dumps(design)

    return reply


def buildbench_run(suite: str, model: Any, tmp_path: Path, *, limit: int, protocol: str,
                   options: dict[str, Any]) -> tuple[dict[str, Episode], list[dict[str, Any]]]:
    """``buildbench run SUITE --agent llm`` against ``model`` behind the loopback server."""
    with ScriptedServer(model) as server:
        config = RunConfig(suite=suite, agent="llm", protocol=protocol, split="demo", limit=limit, workers=0,
                           model=f"vllm:scripted@{server.base_url}", options={"max_retries": 0, **options})
        Runner(config, tmp_path / "run").run()
        requests = [r.body for r in server.requests]
    with Store(tmp_path / "run") as store:
        return {ep.task_id: ep for ep in store.episodes()}, requests


def verifiers_eval(env: Any, model: Any) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The verifiers environment's own evaluate path, its model behind the loopback server."""
    with ScriptedServer(model) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="loopback", max_retries=0)
        results = env.evaluate_sync(client, model="scripted", max_concurrent=2)
        requests = [r.body for r in server.requests]
    return {o["info"]["task_id"]: o for o in results["outputs"]}, requests


def expected_reward(episode: Episode, metric: str) -> tuple[float, float]:
    """What our run scored: the sum of the env's step rewards, and the verifier metric."""
    return math.fsum(step.reward for step in episode.steps), float(episode.metrics[metric])


def conversations(requests: Sequence[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r["messages"], sort_keys=True) for r in requests)


@pytest.mark.parametrize("tools", [False, True], ids=["text", "tool-calls"])
def test_example_rollouts_get_the_rewards_of_buildbench_run(tools: bool, tmp_path: Path) -> None:
    episodes, run_requests = buildbench_run("example", tower_model(tools), tmp_path, limit=4, protocol="refine",
                                            options={"max_steps": 3, "tools": tools})
    system = TOWER_PROMPTS.read("system.md").strip()
    env = vf.load_environment("buildbench.integrations.verifiers", suite="example", split="demo", limit=4,
                              max_turns=3, system_prompt=system)  # as verifiers' own tools load environments
    outputs, vf_requests = verifiers_eval(env, tower_model(tools))

    assert sorted(outputs) == sorted(episodes) and len(outputs) == 4
    for task_id, ep in episodes.items():
        out = outputs[task_id]
        env_reward, passed = expected_reward(ep, "passed")
        assert ep.status == "ok" and out.get("error") is None
        assert (out["env_reward"], out["verifier_score"], out["reward"]) == (env_reward, passed, env_reward + passed)
        assert out["info"]["episode_seed"] == ep.seed
        assert out["num_turns"] == sum(step.role == "agent" for step in ep.steps)
    assert {o["reward"] for o in outputs.values()} == {0.0, 2.0}  # a repaired tower and a short one
    assert len(vf_requests) == len(run_requests)
    if not tools:  # the same conversations, message for message
        assert conversations(vf_requests) == conversations(run_requests)
    else:
        assert all(r["tools"][0]["function"]["name"] == "submit_blocks" for r in vf_requests)
        assert any(m["role"] == "tool" for r in vf_requests for m in r["messages"])


ROOM = {"room_type": "bedroom", "room_id": "Bedroom-7",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]], "objects": []}


def _calls(*calls: dict[str, Any]) -> str:
    return f"<think>Diagnosis.</think>\n<tool_calls>\n{json.dumps(list(calls))}\n</tool_calls>"


def _add(desc: str, pos: list[float], size: list[float]) -> dict[str, Any]:
    return {"id": "t", "name": "add_object", "arguments": {"object_description": desc, "position": pos,
                                                           "rotation": [0, 0, 0, 1], "size": size}}


SCENE_REPLIES: list[Reply] = [
    f"<create_scene>\n```json\n{json.dumps(ROOM)}\n```\n</create_scene>",
    _calls(_add("Modern queen bed with a grey headboard", [0, 0, -0.95], [1.6, 0.5, 2.0]),
           _add("Walnut nightstand with two drawers", [1.2, 0, -1.7], [0.5, 0.55, 0.42])),
    _calls(_add("White wardrobe", [-1.3, 0, 1.65], [1.2, 2.1, 0.6])),
    _calls({"id": "t", "name": "terminate", "arguments": {"reason": "complete"}}),
]


def test_a_scenerevis_rollout_gets_the_reward_of_buildbench_run(tmp_path: Path) -> None:
    episodes, run_requests = buildbench_run("scenerevis", SCENE_REPLIES, tmp_path, limit=1,
                                            protocol="diagnose-act", options={})
    env = load_environment("scenerevis", split="demo", limit=1)
    outputs, vf_requests = verifiers_eval(env, SCENE_REPLIES)
    ((task_id, ep),) = episodes.items()
    out = outputs[task_id]
    env_reward, valid = expected_reward(ep, DEFAULT_METRICS["scenerevis"])
    assert ep.status == "ok" and out.get("error") is None and len(vf_requests) == len(run_requests) == 4
    assert out["env_reward"] == pytest.approx(env_reward, abs=1e-12) and out["verifier_score"] == valid == 100.0
    assert out["reward"] == pytest.approx(env_reward + valid, abs=1e-12)
    assert out["stop_condition"] == "has_final_env_response"
    last_feedback = vf_requests[-1]["messages"][-1]["content"]
    assert any(part.get("type") == "image_url" for part in last_feedback)  # the render comes with the feedback


def test_an_agent_failure_scores_zero_and_a_broken_endpoint_is_never_a_reward(tmp_path: Path) -> None:
    garbage: list[Reply] = ["I would rather not build a room.", "Still no room."]
    episodes, _ = buildbench_run("scenerevis", garbage, tmp_path, limit=1, protocol="diagnose-act",
                                 options={"max_turns": 2})
    (ep,) = episodes.values()
    # No room built is the agent's own failure (AgentFailure): scored, with the reason.
    assert ep.status == "failed" and ep.error_kind == "agent_output" and "no final scene" in (ep.error or "")

    env = load_environment("scenerevis", split="demo", limit=1, options={"max_turns": 2})
    (out,) = verifiers_eval(env, garbage)[0].values()
    assert not out.get("error") and out["verifier_score"] == 0.0  # the suite's failing value

    broken = [ServerReply(fault=Fault.server_error(500))]  # the endpoint fails: played, never scored
    (out,) = verifiers_eval(load_environment("example", split="demo", limit=1), broken)[0].values()
    assert out["error"]["error"] == "ModelError" and math.isnan(out["reward"]) and math.isnan(out["env_reward"])


def test_group_scoring_leaves_an_unscorable_rollout_out_of_the_advantages() -> None:
    env = load_environment("example", split="demo", limit=1)
    states = []
    for reward in (1.0, 3.0, 5.0):  # env rewards; the verifier's metric is 0 (no blocks), then unscorable
        state = vf.State(input={"prompt": [], "task": "example", "info": {"task_id": "tower_0000_0000"}})
        state.update(completion=[], trajectory=[{"advantage": None, "reward": None}], error=None,
                     timing={"scoring_ms": 0.0, "total_ms": 0.0}, buildbench_rewards=[reward])
        state["buildbench_outcome"] = {"blocks": [] if reward < 5 else "broken", "attempts": 1, "invalid_actions": 0}
        states.append(state)
    rubric = env.rubric.rubrics[0]
    rubric.metric = "blocks"
    asyncio.run(rubric.score_group(states))
    assert [s["reward"] for s in states[:2]] == [1.0, 3.0] and math.isnan(states[2]["reward"])
    assert isinstance(states[2]["error"], UnscorableEpisode) and states[0]["error"] is None
    assert [s["advantage"] for s in states] == [-1.0, 1.0, 0.0]  # the mean of the scored two is 2
    assert [s["trajectory"][0]["advantage"] for s in states] == [-1.0, 1.0, 0.0]


def test_bad_settings_are_refused_with_one_line() -> None:
    with pytest.raises(ConfigError, match="no split 'nope'"):
        load_environment("example", split="nope")
    with pytest.raises(ConfigError, match="unknown option 'no_such_option'"):
        load_environment("example", options={"no_such_option": 1})
    with pytest.raises(ConfigError, match="limit must be a positive integer"):
        load_environment("example", limit=0)
    with pytest.raises(ConfigError, match="max_turns must be a positive integer"):
        load_environment("example", max_turns=0)
