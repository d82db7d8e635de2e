"""Every LEGO-Eval agent through the harness (one episode each), model-backed ones with scripted
models; the LLM pipeline through the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from buildbench.harness import RunConfig, Task, execute_episode, get_suite
from buildbench.harness.errors import ConfigError
from buildbench.llm import ChatResponse, ScriptedChat, ScriptedServer, ToolCall
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import load_scene, write_thor
from buildbench.suites.legoeval import agents
from buildbench.suites.legoeval.constraints import parse
from buildbench.suites.legoeval.env import SUBMIT
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.pipeline.scripted import ReferenceScript
from buildbench.suites.legoeval.tasks import make_task, spec_for

TEXTS = [("There is a door between the living room and the bedroom.", True),
         ("The floor of the bedroom is wood.", True),
         ("There is a bed in the bedroom.", True),
         ("The sofa in the living room is gray.", False)]


def task(misaligned: bool = True) -> Task:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom", floor_material="DarkWoodFloors")
    b.door("living room", "bedroom")
    b.place("bed", "bedroom", center_xz=(8, 2))
    b.place("sofa", "living room", center_xz=(3, 1), color="red" if misaligned else "gray")
    specs = [spec_for(f"c{i}", t, parse(t)) for i, (t, _) in enumerate(TEXTS)]
    labels = [ok or not misaligned for _, ok in TEXTS]
    return make_task("t-mis" if misaligned else "t-ok", instruction="A flat with a red sofa... or a gray one.",
                     scene=write_thor(b.build()), constraints=specs, labels=labels, pair="p", aligned=not misaligned)


def run(agent: str, t: Task, model: Any = None, **options: Any) -> Any:
    config = RunConfig(suite="legoeval", agent=agent, protocol="evaluate", options={"render": False, **options})
    return asyncio.run(execute_episode(config, t, 0, None, model))


@pytest.mark.parametrize("agent, valid, holds", [
    ("deterministic", False, [True, True, True, False]),
    ("always-valid", True, [True] * 4),
    ("always-invalid", False, [False] * 4),
    ("sceneeval", False, [False, False, True, False]),
    ("sceneeval-measurable", False, [None, None, True, False]),
])
def test_scripted_agents(agent: str, valid: bool, holds: list[bool | None]) -> None:
    ep = run(agent, task())
    assert ep.status == "ok", ep.error
    assert ep.outcome["valid"] is valid
    assert [v["holds"] for v in ep.outcome["verdicts"]] == holds
    assert ep.metrics["holistic_correct"] == float(valid is False)


def test_deterministic_is_right_on_the_aligned_twin() -> None:
    ep = run("deterministic", task(misaligned=False))
    assert ep.outcome["valid"] is True and ep.metrics["holistic_correct"] == 1.0


def test_llm_agent_runs_the_pipeline_through_the_loopback_server() -> None:
    from buildbench.llm import OpenAIChat

    t = task()
    constraints = [dict(c) for c in t.inputs["constraints"]]
    script = ReferenceScript(load_scene(dict(t.inputs["scene"])), constraints)
    with ScriptedServer(script.for_server()) as server:
        model = OpenAIChat("scripted-model", base_url=server.base_url)
        ep = run("llm", t, model)
    assert ep.status == "ok", ep.error
    assert [v["holds"] for v in ep.outcome["verdicts"]] == [True, True, True, False]
    assert ep.outcome["valid"] is False and ep.metrics["holistic_correct"] == 1.0
    assert len(ep.outcome["trace"]) == 4 and ep.outcome["trace"][0]["plan"]
    assert ep.usage.get("requests", 0) > 8


def test_llm_agent_ablation_and_option_errors() -> None:
    t = task()
    script = ReferenceScript(load_scene(dict(t.inputs["scene"])), [dict(c) for c in t.inputs["constraints"]])
    ep = run("llm", t, ScriptedChat(script.for_chat()), disable="environment,multimodal")
    tools = {c["tool"] for step in ep.outcome["trace"] for c in step["calls"]}
    assert tools and all(not n.startswith(("get_topdown", "get_material", "get_property")) for n in tools)
    # the names are checked once, when the run's options are parsed (before any episode)
    with pytest.raises(ConfigError, match="disable='visual': unknown 'visual'; expected any of textual, environment"):
        get_suite("legoeval").parse_options({"disable": "visual"})
    with pytest.raises(ConfigError, match="needs --model"):
        agents.llm(t, None, LegoEvalOptions())


def test_tool_agent_drives_the_tools_and_submits() -> None:
    t = task()
    verdicts = [{"id": f"c{i}", "holds": i != 3, "explanation": "checked"} for i in range(4)]
    replies = [
        ChatResponse(tool_calls=(ToolCall.parse("1", "get_object_list", {"room_ids": ["living room"]}),)),
        ChatResponse(tool_calls=(ToolCall.parse("2", "get_object_info", {"object_ids": ["sofa-0 (living room)"]}),)),
        ChatResponse(tool_calls=(ToolCall.parse("3", SUBMIT, {"verdicts": verdicts}),)),
    ]
    model = ScriptedChat(replies)
    ep = run("tool-agent", t, model)
    assert ep.status == "ok", ep.error
    assert ep.outcome["valid"] is False and ep.outcome["tool_calls"] == 2
    # the tool answer reached the model as the reply to its call
    tool_msgs = [m for m in model.requests[2].messages if m.role == "tool"]
    assert '"assetId"' in tool_msgs[-1].text


def test_vlm_judge_agent() -> None:
    ep = run("vlm-judge", task(), ScriptedChat(lambda r: "Reasoning: fine\nValidity: True"), per_constraint="false")
    assert ep.status == "ok", ep.error
    assert ep.outcome["valid"] is True and ep.metrics["holistic_correct"] == 0.0


def test_translate_agent_lets_the_program_decide() -> None:
    t = task()
    inputs = dict(t.inputs)
    inputs["constraints"] = [*inputs["constraints"][:3], {"id": "c3", "text": "The couch is grey.", "type": "OS"}]
    t2 = Task(t.id, t.suite, inputs, dict(t.target), dict(t.metadata))
    program = {"op": "attribute", "of": {"category": "sofa"}, "attrs": {"color": "gray"}, "quant": "all"}
    model = ScriptedChat([f"```json\n{json.dumps(program)}\n```"])
    ep = run("translate", t2, model)
    assert [v["holds"] for v in ep.outcome["verdicts"]] == [True, True, True, False]
    assert "model" in ep.outcome["verdicts"][3]["explanation"] and len(model.requests) == 1
