"""The LLM evaluator pipeline: plan parsing, the DAG executor (reuse, concurrency, errors),
the step parsers, the baselines, and the whole pipeline driven by a scripted model through
the loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import pytest

from buildbench.llm import ScriptedChat, ScriptedServer
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.suites.legoeval.pipeline.arguments import parse_arguments, reference_arguments
from buildbench.suites.legoeval.pipeline.baselines import VLMJudge, parse_validity, sceneeval_check
from buildbench.suites.legoeval.pipeline.chat import Asker, StepFailed
from buildbench.suites.legoeval.pipeline.evaluator import LLMEvaluator
from buildbench.suites.legoeval.pipeline.execute import ToolCache, execute_plan
from buildbench.suites.legoeval.pipeline.identify import parse_constraints, parse_label
from buildbench.suites.legoeval.pipeline.plan import START, ToolPlan, parse_plan, reference_plan
from buildbench.suites.legoeval.pipeline.scripted import ReferenceScript
from buildbench.suites.legoeval.pipeline.validate import parse_judgment
from buildbench.suites.legoeval.tools import MENUS, TOOLS, ToolArgumentError, ToolContext, tool_menu

CONSTRAINTS = [
    {"id": "c0", "text": "There is a door between the living room and the bedroom.", "type": "FL"},
    {"id": "c1", "text": "The floor of the bedroom is wood.", "type": "MS"},
    {"id": "c2", "text": "The sofa in the living room is gray.", "type": "OS"},
    {"id": "c3", "text": "There is a bed in the bedroom.", "type": "OP"},
    {"id": "c4", "text": "The armchair in the living room is to the right of the sofa in the living room.",
     "type": "OP"},
]


def house() -> Scene:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom", floor_material="DarkWoodFloors")
    b.door("living room", "bedroom", along=0.2)
    b.window("bedroom", "north")
    b.place("bed", "bedroom", center_xz=(8, 2), yaw_deg=0)
    b.place("sofa", "living room", center_xz=(3, 1.0), yaw_deg=0, color="red")
    b.place("armchair", "living room", center_xz=(4.5, 1.0), yaw_deg=270)
    return b.build()


@pytest.fixture(scope="module")
def scene() -> Scene:
    return house()


def test_parse_plan_edges_start_and_rejections() -> None:
    menu = MENUS["OP"]
    plan = parse_plan('Chain-of-Thought: list then info\nTool Sequence: [{"from": "get_room_list", '
                      '"to": "get_object_list"}, {"from": "get_object_list", "to": "get_object_info"}]', menu)
    assert plan.edges[-1] == (START, "get_room_list")  # a bare source gets its START edge
    assert plan.nodes == ["get_room_list", "get_object_list", "get_object_info"]
    assert plan.predecessors("get_object_info") == ["get_object_list"]
    assert plan.reasoning == "list then info"
    assert parse_plan("Tool Sequence: []", menu).nodes == []
    with pytest.raises(ValueError, match="not on this constraint type's menu"):
        parse_plan('Tool Sequence: [{"from": "START", "to": "get_material_image"}]', menu)
    with pytest.raises(ValueError, match="unknown tool"):
        parse_plan('Tool Sequence: [{"from": "START", "to": "get_magic"}]', menu)
    with pytest.raises(ValueError, match="cycle"):
        parse_plan('Tool Sequence: [{"from": "START", "to": "get_room_list"}, {"from": "get_room_list", '
                   '"to": "get_object_list"}, {"from": "get_object_list", "to": "get_room_list"}]', menu)
    with pytest.raises(ValueError, match="Tool Sequence"):
        parse_plan("I would look at the room.", menu)


@pytest.mark.parametrize("ctype", ["FL", "MS", "OS", "OP"])
def test_reference_plans_stay_on_the_menu_and_reach_every_node(ctype: str) -> None:
    text = {"FL": "The bedroom has a door and a window on the north wall.",
            "MS": "The walls of the bedroom are white.",
            "OS": "The door of the bedroom is wooden.", "OP": "The lamp is to the left of the bed."}[ctype]
    plan = reference_plan(text, ctype)
    assert plan.nodes and set(plan.nodes) <= set(MENUS[ctype])
    for node in plan.nodes:
        assert plan.predecessors(node) or (START, node) in plan.edges
    ablated = reference_plan(text, ctype, disabled_groups=("environment", "multimodal"))
    assert all(TOOLS[n].group == "textual" for n in ablated.nodes)


def test_step_parsers() -> None:
    assert parse_constraints("Constraints:\n1. There is a bed.\n2. The bed is red.\n") == [
        "There is a bed.", "The bed is red."]
    assert parse_label("Object Placement") == "OP" and parse_label("label: MS") == "MS"
    with pytest.raises(ValueError):
        parse_label("no idea")
    assert parse_arguments("Chain-of-Thought: x\nArguments: ['bed-0 (bedroom)', 'bedroom']", 4) == [
        "bed-0 (bedroom)", "bedroom"]
    assert parse_arguments("Arguments: [('a', 'b'), ['c']]", 5) == [["a", "b"], ["c"]]
    with pytest.raises(ValueError):
        parse_arguments("Arguments: bed", 2)
    j = parse_judgment("Chain-of-Thought: ok\nEvaluation: <<False, the bed (ID: 'bed-0 (bedroom)')\n is blue>>")
    assert not j.holds and j.explanation == "the bed (ID: 'bed-0 (bedroom)') is blue"
    with pytest.raises(ValueError):
        parse_judgment("Evaluation: True")
    assert parse_validity("Reasoning: ..\nValidity: **True**") is True


def _slow(spec: Any, seconds: float) -> Any:
    original = spec.fn

    def fn(ctx: ToolContext, ids: list[Any]) -> dict[str, Any]:
        time.sleep(seconds)
        return original(ctx, ids)

    return dataclasses.replace(spec, fn=fn)


async def _all_rooms(tool: str, outputs: dict[str, Any]) -> list[Any]:
    return ["living room", "bedroom"]


def test_independent_tools_run_concurrently_and_dependents_wait(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("get_door_list", "get_window_list", "get_object_list"):
        monkeypatch.setitem(TOOLS, name, _slow(TOOLS[name], 1.0))
    plan = ToolPlan(((START, "get_door_list"), (START, "get_window_list"), (START, "get_object_list"),
                     ("get_object_list", "get_object_info")))

    async def choose(tool: str, outputs: dict[str, Any]) -> list[Any]:
        if tool == "get_object_info":
            return [oid for ids in (outputs.get("living room", []), outputs.get("bedroom", [])) for oid in ids
                    if oid.startswith(("bed", "sofa"))]
        return await _all_rooms(tool, outputs)

    ctx = ToolContext.for_scene(scene, render=False)
    out = asyncio.run(execute_plan(ctx, plan, choose, ToolCache()))
    calls = {c.tool: c for c in out.calls}
    # Overlap is read from each call's own start and end, not from a wall-clock budget that a
    # loaded machine would break.
    slow = [calls[n] for n in ("get_door_list", "get_window_list", "get_object_list")]
    assert max(c.started_s for c in slow) < min(c.ended_s for c in slow)  # all three in flight together
    info = calls["get_object_info"]
    assert info.started_s >= calls["get_object_list"].ended_s
    assert set(info.args) == {"bed-0 (bedroom)", "sofa-0 (living room)"}  # chosen from its parent's output
    assert "bed-0 (bedroom)" in out.text


@pytest.mark.parametrize("slower", ["get_door_list", "get_object_list"])
def test_outputs_under_one_key_merge_in_plan_order_whichever_tool_finishes_last(
        scene: Scene, monkeypatch: pytest.MonkeyPatch, slower: str) -> None:
    # The door and object lists both answer by room name: the merged text, and what a later node
    # sees, must not depend on which thread finishes first.
    monkeypatch.setitem(TOOLS, slower, _slow(TOOLS[slower], 0.3))
    plan = ToolPlan(((START, "get_door_list"), (START, "get_object_list"), ("get_door_list", "get_window_list")))
    seen: dict[str, dict[str, Any]] = {}

    async def choose(tool: str, outputs: dict[str, Any]) -> list[Any]:
        seen[tool] = dict(outputs)
        return await _all_rooms(tool, outputs)

    ctx = ToolContext.for_scene(scene, render=False)
    out = asyncio.run(execute_plan(ctx, plan, choose, ToolCache()))
    calls = {c.tool: c for c in out.calls}
    assert [c.tool for c in out.calls] == plan.nodes  # records in plan order
    shared = set(calls["get_door_list"].text) & set(calls["get_object_list"].text)
    assert shared  # the same room keys from both tools
    expected: dict[str, Any] = {}
    for node in plan.nodes:  # the later in the plan wins a shared key
        expected.update(calls[node].text)
    assert out.text == expected
    assert seen["get_window_list"] == calls["get_door_list"].text  # its ancestor's outputs only


def test_results_are_reused_across_constraints_and_branches(scene: Scene) -> None:
    ctx = ToolContext.for_scene(scene, render=False)
    cache = ToolCache()
    plan = ToolPlan(((START, "get_room_list"), ("get_room_list", "get_object_list")))
    first = asyncio.run(execute_plan(ctx, plan, _all_rooms, cache))
    assert not any(c.reused for c in first.calls)

    async def again() -> Any:
        return await execute_plan(ctx, plan, _all_rooms, cache)

    second = asyncio.run(again())
    assert all(c.reused for c in second.calls) and cache.hits == 2
    assert second.text == first.text


def test_a_failing_tool_is_recorded_and_the_plan_goes_on(scene: Scene) -> None:
    ctx = ToolContext.for_scene(scene, render=False)
    plan = ToolPlan(((START, "get_object_info"), (START, "get_room_list"), ("get_object_info", "get_door_list")))

    async def choose(tool: str, outputs: dict[str, Any]) -> list[Any]:
        if tool == "get_object_info":
            raise ToolArgumentError("get_object_info.object_ids[0]: expected an id string, got dict")
        return []

    out = asyncio.run(execute_plan(ctx, plan, choose, ToolCache()))
    calls = {c.tool: c for c in out.calls}
    assert "expected an id string" in calls["get_object_info"].error
    assert calls["get_door_list"].error == "no arguments selected; not run"
    assert out.text["room_list"] == ["living room", "bedroom"]


def test_reference_arguments_pick_ids_from_the_constraint(scene: Scene) -> None:
    ctx = ToolContext.for_scene(scene, render=False)
    text = CONSTRAINTS[4]["text"]
    assert reference_arguments(ctx, "get_object_list", text) == ["living room"]
    assert reference_arguments(ctx, "get_spatial_relation", text) == [
        ["sofa-0 (living room)", "armchair-0 (living room)"]]
    assert reference_arguments(ctx, "get_material_image", CONSTRAINTS[1]["text"]) == ["DarkWoodFloors"]


def test_asker_retries_warmer_then_fails_with_the_step_name() -> None:
    model = ScriptedChat(["nonsense", "still nonsense", "Evaluation: <<True, fine>>"])
    asker = Asker(model)
    j = asyncio.run(asker.parsed("validation", "TASK: x", parse_judgment, retries=3))
    assert j.holds and [r.temperature for r in model.requests] == [0.0, 0.1, 0.2]
    with pytest.raises(StepFailed, match="validation: no usable reply after 2 tries"):
        asyncio.run(Asker(ScriptedChat(["a", "b"])).parsed("validation", "TASK: x", parse_judgment, retries=1))


def test_llm_pipeline_end_to_end_through_the_loopback_server(scene: Scene) -> None:
    from buildbench.llm import OpenAIChat

    script = ReferenceScript(scene, CONSTRAINTS)
    with ScriptedServer(script.for_server()) as server:
        model = OpenAIChat("scripted-model", base_url=server.base_url)
        evaluator = LLMEvaluator(model, image_px=64)
        result = asyncio.run(evaluator.evaluate(scene, "A two-room flat.", [
            {"id": c["id"], "text": c["text"]} for c in CONSTRAINTS]))  # types left to the classifier
        asyncio.run(model.aclose())
        requests = list(server.requests)
    holds = [c.holds for c in result.constraints]
    assert holds == [True, True, False, True, True], [c.explanation for c in result.constraints]
    assert result.valid is False
    assert [c.type for c in result.constraints] == [c["type"] for c in CONSTRAINTS]
    assert "sofa-0 (living room)" in result.constraints[2].explanation  # explanations name full ids
    kinds = {r.last_user_text().split("\n", 1)[0] for r in requests}
    assert {"TASK: constraint classification", "TASK: tool planning", "TASK: argument selection",
            "TASK: constraint validation"} <= kinds
    # images reached the server with the validation of the material constraint
    material = [r for r in requests if "Requirement (Material Selection)" in r.last_user_text()]
    assert any(p.get("type") == "image_url" for r in material for p in r.messages[-1]["content"])
    # later constraints reuse earlier tool results (get_room_list is in every plan)
    assert result.cache_hits > 0 and any(c.reused for r in result.constraints[1:] for c in r.calls)
    submission = result.submission()
    assert [v.id for v in submission.verdicts or []] == [c["id"] for c in CONSTRAINTS]
    assert (submission.trace or [])[0]["plan"][0]["from"] == START
    assert submission.extra["cache_hits"] == result.cache_hits > 0


def test_pipeline_identifies_constraints_when_none_are_given(scene: Scene) -> None:
    script = ReferenceScript(scene, CONSTRAINTS[:2])
    model = ScriptedChat(script.for_chat())
    result = asyncio.run(LLMEvaluator(model, render=False).evaluate(scene, "A flat with a wooden bedroom floor."))
    assert [c.text for c in result.constraints] == [c["text"] for c in CONSTRAINTS[:2]]
    assert result.valid is True and script.calls["constraint identification"] == 1


def test_an_unparsable_validator_leaves_the_constraint_unjudged(scene: Scene) -> None:
    script = ReferenceScript(scene, CONSTRAINTS[:1])

    def reply(request: Any) -> str:
        text = request.messages[-1].text
        return "I think so." if text.startswith("TASK: constraint validation") else script(text)

    result = asyncio.run(LLMEvaluator(ScriptedChat(reply), render=False).evaluate(scene, "x", CONSTRAINTS[:1]))
    assert result.constraints[0].holds is None and "constraint validation" in result.constraints[0].error
    assert result.valid is None


def test_vlm_judge_majority_of_three_samples(scene: Scene) -> None:
    replies = ["Validity: True", "Validity: False", "Validity: True",  # holistic
               "Validity: False", "Validity: False", "Validity: True"]  # the one constraint
    model = ScriptedChat(replies)
    out = asyncio.run(VLMJudge(model, image_px=64).judge(scene, "A flat.", CONSTRAINTS[:1]))
    assert out["valid"] is True and out["verdicts"][0]["holds"] is False
    assert len(model.requests) == 6 and all(r.temperature == 0.7 for r in model.requests)
    assert len(model.requests[0].messages[0].images) == 5  # top-down + four walls of the largest room


def test_sceneeval_full_counts_unmeasurable_as_failed(scene: Scene) -> None:
    full = sceneeval_check(scene, CONSTRAINTS, "full")
    holds = [v["holds"] for v in full["verdicts"]]
    assert holds == [False, False, False, True, True]  # FL and MS are outside SceneEval's criteria
    measurable = sceneeval_check(scene, CONSTRAINTS, "measurable")
    assert [v["holds"] for v in measurable["verdicts"]] == [None, None, False, True, True]
    assert measurable["valid"] is False
    assert sceneeval_check(scene, CONSTRAINTS[:2], "measurable")["valid"] is None


def test_menus_feed_the_planner_prompt() -> None:
    model = ScriptedChat(['Tool Sequence: [{"from": "START", "to": "get_room_list"}]'])
    from buildbench.suites.legoeval.pipeline.plan import plan_tools

    plan = asyncio.run(plan_tools(Asker(model), "The walls are white.", "MS", []))
    prompt = model.requests[0].messages[0].text
    assert all(f"- {n}(" in prompt for n in tool_menu("MS")) and "get_object_match" not in prompt
    assert plan.nodes == ["get_room_list"]
