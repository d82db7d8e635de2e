"""Pieces of the workflow: plan parsing, role prompts, the team agent's threads, control designs."""

from __future__ import annotations

import asyncio

import pytest

from buildbench.harness import EpisodeContext, Observation, Task
from buildbench.llm import ChatResponse, ScriptedChat, ToolCall
from buildbench.suites.buildarena.agents import ROLES, UNANSWERED, Team, role_prompt, tools_named
from buildbench.suites.buildarena.controller import ControlDesignError, parse_design
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.plan import PlanError, parse_plan

PLAN = """Sure.
<building_plan>
  <overall_structure><description>a bridge</description><assembly>brace the halves</assembly></overall_structure>
  <sub_structures>
    <sub_structure_2><name>north half</name></sub_structure_2>
    <sub_structure_1><name>south half</name><components>8 wooden blocks</components></sub_structure_1>
  </sub_structures>
</building_plan> thanks"""


def test_plan_is_parsed_in_sub_structure_order():
    plan = parse_plan(PLAN)
    assert plan.overall == {"description": "a bridge", "assembly": "brace the halves"}
    assert [s["name"] for s in plan.sub_structures] == ["south half", "north half"]
    assert plan.text.startswith("<building_plan>") and plan.text.endswith("</building_plan>")


@pytest.mark.parametrize("text,message", [
    ("no plan", "no <building_plan>"),
    ("<building_plan><sub_structures><sub_structure_1><name>a</sub_structure_1></sub_structures></building_plan>",
     "malformed"),
    ("<building_plan><overall_structure/></building_plan>", "no <sub_structures>"),
    ("<building_plan><sub_structures></sub_structures></building_plan>", "no sub-structure"),
    ("<building_plan><sub_structures><part/></sub_structures></building_plan>", "unexpected element <part>"),
])
def test_bad_plans_say_why(text, message):
    with pytest.raises(PlanError, match=message):
        parse_plan(text)


def test_every_role_prompt_carries_the_catalogue_and_conventions():
    for role in ROLES:
        prompt = role_prompt(role)
        assert prompt.startswith(f"Role: {role.capitalize()}.")
        assert "Powered Wheel" in prompt and "Winch" in prompt and "+y north" in prompt and "$" not in prompt
    assert "Alpha0-Alpha9" in role_prompt("controller")
    assert "raise_objection_refine" in role_prompt("guidance", "raise_objection_refine")
    with pytest.raises(ValueError, match="unknown role 'painter'"):
        role_prompt("painter")


def test_tools_by_name_include_objections():
    (attach, objection) = tools_named(["attach_block_to", "raise_objection_draft"])
    assert "Powered Wheel" in attach.description
    assert objection.parameters["required"] == ["key_failure", "objection"]
    with pytest.raises(KeyError):
        tools_named(["fly"])


def _obs(text: str, role: str = "builder", thread: str = "t", tools=(), results=()) -> Observation:
    return Observation(text=text, tool_results=list(results), state={"role": role, "thread": thread,
                                                                     "tools": list(tools)})


def test_team_keeps_one_conversation_per_thread_and_answers_every_call():
    calls = (ToolCall("a", "start", {}), ToolCall("b", "reset", {}))
    model = ScriptedChat([ChatResponse(tool_calls=calls), "ok", "plan text"])
    team = Team(model, BuildArenaOptions(max_requests=5))
    ctx = EpisodeContext(task=Task("lift-1", "buildarena"), seed=7)
    first = asyncio.run(team.act(_obs("build it", tools=("start", "reset")), ctx))
    assert [c.name for c in first.tool_calls] == ["start", "reset"] and first.usage["requests"] == 1
    asyncio.run(team.act(_obs("next", tools=("start",), results=[("a", "started")]), ctx))
    sent = model.requests[1]
    assert [m.role for m in sent.messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert sent.messages[3].text == "started" and sent.messages[4].text == UNANSWERED
    assert sent.temperature == 0.5 and sent.seed == 7 and [t.name for t in sent.tools] == ["start"]
    asyncio.run(team.act(_obs("plan please", role="planner", thread="plan"), ctx))
    planner = model.requests[2]
    assert planner.messages[0].text.startswith("Role: Planner.") and len(planner.messages) == 2
    assert planner.tools == () and planner.tool_choice is None


def test_team_budget_refusal_becomes_an_action_error():
    team = Team(ScriptedChat(["one"]), BuildArenaOptions(max_requests=1))
    ctx = EpisodeContext(task=Task("lift-1", "buildarena"), seed=0)
    assert asyncio.run(team.act(_obs("a"), ctx)).error is None
    refused = asyncio.run(team.act(_obs("b"), ctx))
    assert refused.error is not None and refused.error.kind == "budget"


def test_team_history_window_keeps_the_first_message():
    model = ScriptedChat(lambda request: "fine")
    team = Team(model, BuildArenaOptions(history=1))
    ctx = EpisodeContext(task=Task("lift-1", "buildarena"), seed=0)
    for text in ("task", "second", "third", "fourth"):
        asyncio.run(team.act(_obs(text), ctx))
    assert [m.text for m in model.requests[-1].messages[1:]] == ["task", "fine", "fourth"]


@pytest.mark.parametrize("raw,message", [
    ("not json", "not valid JSON"),
    ("[1]", "must be a JSON object"),
    ({"control_config": [], "control_sequence": [{}]}, "No control keys assigned"),
    ({"control_config": [{"key": "UpArrow", "action": "x", "block_id": 1}]}, "No control sequence found"),
    ({"control_config": [{"key": "UpArrow"}], "control_sequence": [{"time": 0}]}, r"control_config\[0\] lacks action"),
    ({"control_config": [{"key": "UpArrow", "action": "x", "block_id": 1}], "control_sequence": [{"time": 0}]},
     r"control_sequence\[0\] lacks key, hold_for"),
])
def test_bad_control_designs_say_why(raw, message):
    with pytest.raises(ControlDesignError, match=message):
        parse_design(raw)


def test_control_sequence_is_sorted_by_time():
    design = parse_design("```json\n" + '{"control_config": [{"key": "UpArrow", "action": "a", "block_id": 2}], '
                          '"control_sequence": [{"time": 5, "key": "A", "hold_for": 1}, '
                          '{"time": 1, "key": "B", "hold_for": 1}]}' + "\n```")
    assert [e["time"] for e in design.sequence] == [1, 5]


def test_workflow_limits_are_validated():
    with pytest.raises(ValueError, match="build_turns"):
        BuildArenaOptions(build_turns=0)
