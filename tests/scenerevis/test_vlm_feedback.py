"""SceneReVis VLM layout feedback (-o vlm_feedback): a scripted critic behind the loopback
OpenAI-compatible server; its critique reaches the next observation after the physics hint, a
failing critic gives no feedback and a recorded note, and recorded calls replay offline."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.harness import suite as suite_registry
from buildbench.harness.errors import ConfigError
from buildbench.llm import Fault, ScriptedChat, ScriptedServer
from buildbench.suites.scenerevis.suite import suite as scenerevis_suite
from buildbench.suites.scenerevis.tasks import load_tasks
from buildbench.suites.scenerevis.vlm_feedback import MAX_TOKENS, TEMPERATURE, critique, critique_text

CRITIQUE = "[Layout] Bed floats mid-room; desk missing. Push the bed to the north wall and add a desk."


@pytest.fixture
def one_task(monkeypatch: pytest.MonkeyPatch) -> None:
    task = next(t for t in load_tasks("demo", 0) if t.metadata.get("room") == "bedroom")
    suite = dataclasses.replace(scenerevis_suite, load_tasks=lambda split, seed: [task])
    monkeypatch.setitem(suite_registry._loaded, "scenerevis", suite)


def run(tmp_path: Path, options: dict[str, Any]) -> Any:
    config = RunConfig(suite="scenerevis", agent="diagnose", protocol="diagnose-act", split="demo", workers=0,
                       options={"max_retries": 0, **options})
    Runner(config, tmp_path, progress=False).run()
    with Store(tmp_path) as store:
        return next(store.episodes())


def agent_prompts(ep: Any) -> list[str]:
    """The observations the agent answered, in order (the step after each is what it saw)."""
    return [s.observation_text or "" for s in ep.steps]


ROOM = ('<create_scene>\n```json\n{"room_type": "bedroom", "room_id": "r", "bounds_bottom": [[0,0,0],[4,0,0],'
        '[4,0,4],[0,0,4]], "bounds_top": [[0,2.6,0],[4,2.6,0],[4,2.6,4],[0,2.6,4]], "objects": ['
        '{"desc": "bed", "size": [1.6,0.5,2.0], "pos": [2,0,2], "rot": [0,0,0,1]},'
        '{"desc": "wardrobe", "size": [1.2,2.0,0.6], "pos": [2.2,0,2.2], "rot": [0,0,0,1]}]}\n```\n</create_scene>')
STOP = '<think>Done.</think>\n<tool_calls>[{"name": "terminate", "arguments": {"reason": "done"}}]</tool_calls>'


def text_of(body: dict) -> str:
    parts = body["messages"][-1]["content"]
    return parts if isinstance(parts, str) else "".join(p.get("text", "") for p in parts)


def test_the_critique_lands_in_the_next_observation(one_task, tmp_path):
    agent_bodies: list[dict] = []

    def reply(request):
        if request.body["model"] == "critic":
            return CRITIQUE
        agent_bodies.append(request.body)
        return ROOM if len(agent_bodies) == 1 else STOP

    with ScriptedServer(reply) as server:
        config = RunConfig(suite="scenerevis", agent="llm", protocol="diagnose-act", split="demo", workers=0,
                           model=f"vllm:agent@{server.base_url}",
                           options={"max_retries": 0, "render": False,
                                    "vlm_feedback": f"vllm:critic@{server.base_url}"})
        Runner(config, tmp_path, progress=False).run()
        critic_bodies = [r.body for r in server.requests if r.body["model"] == "critic"]
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    # One critique, after the creating turn (the terminating turn leaves nothing to play).
    assert len(critic_bodies) == 1 and len(agent_bodies) == 2
    body = critic_bodies[0]
    assert body["temperature"] == TEMPERATURE and body.get("max_tokens", body.get("max_completion_tokens")) == MAX_TOKENS
    assert any(p.get("type") == "image_url" for p in body["messages"][-1]["content"])
    assert "laid out for this request" in text_of(body)
    assert [r["status"] for r in ep.outcome["vlm_feedback"]] == ["ok"]
    assert ep.outcome["vlm_feedback"][0]["text"] == CRITIQUE
    # The agent's second prompt holds the critique at the end of the feedback block, after the physics hint.
    assert CRITIQUE not in text_of(agent_bodies[0])
    block = text_of(agent_bodies[1]).split("<feedback>\n", 1)[1].split("\n</feedback>", 1)[0]
    last = block.splitlines()[-1]
    assert last.endswith(f" {CRITIQUE}") and len(last) > len(CRITIQUE) + 20  # the hint comes first
    assert "wardrobe" in last.lower() and "bed" in last.lower()  # it names the colliding pair
    logged = [s for s in ep.steps if "vlm_feedback" in s.info]
    assert len(logged) == 1 and logged[0].role == "protocol" and logged[0].observation_text == CRITIQUE


def test_the_env_folds_the_critique_after_the_physics_hint():
    from buildbench.harness import Action
    from buildbench.suites.scenerevis.env import SceneReVisEnv
    from buildbench.suites.scenerevis.options import SceneReVisOptions

    task = next(t for t in load_tasks("demo", 0) if t.metadata.get("room") == "bedroom")
    env = SceneReVisEnv(SceneReVisOptions(render=False))
    env.reset(task, seed=0)
    room = ('<create_scene>\n```json\n{"room_type": "bedroom", "room_id": "r", "bounds_bottom": [[0,0,0],[4,0,0],'
            '[4,0,4],[0,0,4]], "bounds_top": [[0,2.6,0],[4,2.6,0],[4,2.6,4],[0,2.6,4]], "objects": ['
            '{"desc": "bed", "size": [1.6,0.5,2.0], "pos": [2,0,2], "rot": [0,0,0,1]},'
            '{"desc": "wardrobe", "size": [1.2,2.0,0.6], "pos": [2.2,0,2.2], "rot": [0,0,0,1]}]}\n```\n</create_scene>')
    result = env.step(Action(text=room))
    assert "<feedback>" in result.observation.text  # the two overlap: a physics hint
    hint_line = result.observation.text.split("<feedback>\n", 1)[1].split("\n</feedback>", 1)[0].splitlines()[-1]
    updated = env.layout_feedback({"turn": 1, "status": "ok", "text": CRITIQUE})
    block = updated.text.split("<feedback>\n", 1)[1].split("\n</feedback>", 1)[0]
    assert block.splitlines()[-1] == f"{hint_line} {CRITIQUE}"
    assert updated.text.endswith(result.observation.text.split("</feedback>", 1)[1])
    # No critique (or a failed call): the record is kept, the observation is not replaced.
    assert env.layout_feedback({"turn": 1, "status": "error", "text": "", "error": "x"}) is None
    assert [r["status"] for r in (env.outcome().vlm_feedback or [])] == ["ok", "error"]


@pytest.mark.parametrize("trouble", ["api error", "no issue"])
def test_a_failing_or_satisfied_critic_gives_no_feedback(one_task, tmp_path, trouble):
    reply = "The layout looks good." if trouble == "no issue" else CRITIQUE
    with ScriptedServer(lambda request: reply) as server:
        if trouble == "api error":
            server.inject(*[Fault.server_error(500)] * 20)
        ep = run(tmp_path, {"vlm_feedback": f"vllm:critic@{server.base_url}", "render": False})
    assert ep.status == "ok" and "collision_rate" in ep.metrics
    records = ep.outcome["vlm_feedback"]
    assert records and all(r["text"] == "" for r in records)
    if trouble == "api error":
        assert all(r["status"] == "error" and r["error"] for r in records)
    else:
        assert all(r["status"] == "ok" for r in records)
    assert all(CRITIQUE not in (s.observation_text or "") for s in ep.steps)


def test_recorded_critiques_replay_without_the_server(one_task, tmp_path):
    record = tmp_path / "critic.jsonl"
    with ScriptedServer(lambda request: CRITIQUE) as server:
        url = server.base_url
        first = run(tmp_path / "a", {"vlm_feedback": f"vllm:critic@{url}", "vlm_feedback_record": str(record),
                                     "render": False})
    assert record.exists() and len(record.read_text().splitlines()) == len(first.outcome["vlm_feedback"])
    again = run(tmp_path / "b", {"vlm_feedback": f"vllm:critic@{url}", "vlm_feedback_record": str(record),
                                 "render": False})
    assert [r["text"] for r in again.outcome["vlm_feedback"]] == [r["text"] for r in first.outcome["vlm_feedback"]]


def test_off_by_default_and_rule_is_refused(one_task, tmp_path):
    ep = run(tmp_path / "off", {"render": False})
    assert "vlm_feedback" not in ep.outcome and not any("vlm_feedback" in s.info for s in ep.steps)
    with pytest.raises(ConfigError, match="vlm_feedback"):
        run(tmp_path / "rule", {"vlm_feedback": "rule"})


def test_critique_text_and_a_raising_model():
    assert critique_text('  "[Layout] Sofa mid-room. Move it to the wall."  ') == "[Layout] Sofa mid-room. Move it to the wall."
    assert critique_text('""') == "" and critique_text("No issues found.") == ""
    assert critique_text("[Layout] Everything is properly placed.") == ""

    class Broken(ScriptedChat):
        async def generate(self, request):  # type: ignore[override]
            raise RuntimeError("replay file has no answer")

    import asyncio

    found = asyncio.run(critique(Broken([]), np.zeros((4, 4, 3), np.uint8), "a bedroom", 2))
    assert found.status == "error" and "replay file has no answer" in found.error and found.text == ""


def test_an_sft_export_shows_the_critique_as_the_env_speaking(one_task, tmp_path):
    pytest.importorskip("datasets", reason="datasets (the train extra) is not installed")
    import json

    from buildbench.harness.sft import export_sft

    with ScriptedServer(lambda request: CRITIQUE) as server:
        run(tmp_path / "run", {"vlm_feedback": f"vllm:critic@{server.base_url}", "render": False})
    export_sft(tmp_path / "run", tmp_path / "out")
    [record] = [json.loads(line) for line in (tmp_path / "out" / "episodes.jsonl").read_text().splitlines()]

    def text(message: dict) -> str:
        content = message["content"]
        return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)

    assert any(CRITIQUE in text(m) for m in record["messages"] if m["role"] == "user")
    assert not any(CRITIQUE in text(m) for m in record["messages"] if m["role"] == "assistant")
