"""The BuildArena workflow end to end: a scripted model behind a local OpenAI-compatible server plays
every role (plans, drafts, reviews, builds through tool calls, designs control) through the Runner."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import RunConfig, Runner, Store
from buildbench.harness import suite as suite_registry
from buildbench.llm import ScriptedServer, ServerReply, ServerToolCall

ENGINE = [
    ("start", {"note": "engine"}),
    ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Water Cannon", "note": "thruster"}),
    ("attach_block_to", "{not json"),  # a malformed call: feedback, nothing changes
    ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Torch", "note": "heater"}),
    ("twist_block", {"block_id": 3, "angle": 270}),
]
VEHICLE = [("start", {})] + [
    ("attach_block_to", {"base_block": b, "face": f, "new_block": "Small Wooden Block"})
    for b, f in ((1, "E"), (2, "E"), (1, "F"), (4, "E"))
] + [("attach_block_to", {"base_block": b, "face": f, "new_block": "Powered Wheel"})
     for b, f in ((3, "A"), (5, "A"), (3, "B"), (5, "B"))] + [("flip_spin", {"block_id": 8}), ("flip_spin", {"block_id": 9})]
ASSEMBLY = [("add_machine", {"machine_id": "1"}), ("add_machine", {"machine_id": "2", "init_shift": [4, 0, 0]}),
            ("connect_blocks", {"block_a": "A_1", "face_a": "E", "block_b": "B_1", "face_b": "E", "connector": "Brace"})]
CONTROL = {"control_design": "all wheels forward",
           "control_config": [{"key": k, "action": "spinning_forward", "block_id": str(b)}
                              for b in (6, 7, 8, 9) for k in ("UpArrow",)],
           "control_sequence": [{"motion_action": "forward", "time": 0, "key": "UpArrow", "hold_for": 2}]}


def _plan(n: int) -> str:
    subs = "".join(f"<sub_structure_{i}><name>part {i}</name><description>engine {i}</description>"
                   f"<design_requirements>may be adjusted</design_requirements></sub_structure_{i}>"
                   for i in range(1, n + 1))
    return ("Here is the plan:\n<building_plan><overall_structure><description>rocket</description>"
            f"</overall_structure><sub_structures>{subs}</sub_structures></building_plan>")


def _text(message: dict) -> str:
    content = message.get("content") or ""
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def make_model(design: list, *, subs: int = 1, bad_first_control: bool = True):
    """A reply function that plays every role from the system prompt and the conversation."""

    def reply(request) -> ServerReply | str:
        messages = request.messages
        role = _text(messages[0]).split(".", 1)[0].removeprefix("Role: ")
        tools = {t["function"]["name"] for t in request.body.get("tools", [])}
        said = sum(1 for m in messages if m["role"] == "assistant")
        last = _text(messages[-1]) if messages[-1]["role"] == "user" else ""
        if role == "Planner":
            return "no xml here" if said == 0 else _plan(subs)
        if role == "Drafter":
            return "Block 1 - Starting Block - base - origin"
        if role == "Reviewer":
            return "Distances are fine. TERMINATE"
        if role == "Controller":
            if said == 0 and bad_first_control:
                bad = dict(CONTROL, control_config=[{"key": "Space", "action": "spinning_forward", "block_id": "6"}])
                return "```json\n" + json.dumps(bad) + "\n```"
            return "```json\n" + json.dumps(CONTROL) + "\n```"
        if role == "Guidance":
            if "Called" in last:
                return "Good. Next step please."
            return "The machine is complete. TERMINATE"
        # Builder: play the design of this stage, one call per reply.
        calls = ASSEMBLY if "add_machine" in tools else ([] if "start" not in tools else design)
        if said < len(calls):
            op, args = calls[said]
            return ServerReply(text="Next call.", tool_calls=(ServerToolCall(op, args),))
        alone = "You work alone" in _text(messages[1])
        return "Built and checked. TERMINATE" if alone else "Everything in the blueprint is built."

    return reply


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    assert "buildarena" in suite_registry.suite_names()  # registered through the package's entry points


def _run(tmp_path, reply, task: str, protocol: str = "workflow", **options):
    with ScriptedServer(reply) as server:
        config = RunConfig(suite="buildarena", agent="llm", protocol=protocol, model=f"vllm:scripted@{server.base_url}",
                           split=task, workers=0, options={"sim_duration_s": 1.0, **options})
        result = Runner(config, tmp_path).run()
        requests = len(server.requests)
    with Store(tmp_path) as store:
        (episode,) = list(store.episodes())
    return result, episode, requests


def test_five_role_workflow_builds_and_scores_an_engine(tmp_path):
    result, ep, requests = _run(tmp_path, make_model(ENGINE), "lift-1")
    assert ep.status == "ok", ep.error
    roles = [s.role for s in ep.steps]
    assert roles[:3] == ["planner", "planner", "drafter"]  # the first plan was malformed and retried
    assert {"reviewer", "builder", "guidance"} <= set(roles)
    assert ep.metrics["approved"] == 1.0 and ep.metrics["parts"] == 3.0
    assert ep.metrics["passed"] == 1.0 and ep.metrics["indicator"] == pytest.approx(13.76 / 2.75)
    assert ep.metrics["invalid_calls"] == 1.0 and ep.metrics["fail_malformed_call"] == 1.0
    assert ep.usage["requests"] == requests and ep.usage["input_tokens"] > 0
    builder_steps = [s for s in ep.steps if s.role == "builder" and s.tool_calls]
    assert len(builder_steps) == len(ENGINE)
    costs = {r["role"]: r for r in next(rows for title, rows in result.summary["tables"].items()
                                        if title.startswith("Cost per episode by role"))}
    assert costs["planner"]["requests"] == 2 and set(costs) == {"planner", "drafter", "reviewer", "builder",
                                                                  "guidance"}
    assert sum(r["requests"] for r in costs.values()) == requests


def test_transport_refines_wheels_and_runs_control_trials(tmp_path):
    _, ep, _ = _run(tmp_path, make_model(VEHICLE), "transport-1")
    assert ep.status == "ok", ep.error
    assert ep.outcome["final"] == "1_rfd"
    trials = ep.outcome["trials"]
    assert len(trials) == 3 and "error" in trials[0] and "error" not in trials[1]
    assert ep.outcome["control"]["control_sequence"][0]["key"] == "UpArrow"
    assert any(h["op"] == "change_control_key" for h in ep.outcome["machine"])
    assert ep.metrics["approved"] == 1.0 and ep.metrics["parts"] == 9.0
    assert [s.role for s in ep.steps].count("controller") == 3


def test_two_substructures_are_assembled(tmp_path):
    _, ep, _ = _run(tmp_path, make_model(ENGINE, subs=2), "lift-1")
    assert ep.status == "ok", ep.error
    assert ep.outcome["final"] == "assembly"
    assert set(ep.outcome["machines"]) == {"1", "2", "assembly"}
    assert ep.metrics["parts"] == 7.0  # two 3-block engines and a brace
    # Built, assembled and simulated, then judged by the task's rule: Lift Lv.1 allows one sub-structure (check.judge).
    assert ep.metrics["simulated"] == 1.0 and ep.metrics["passed"] == 0.0 and ep.metrics["indicator"] == 0.0


def test_objection_ends_the_branch_without_a_machine(tmp_path):
    base = make_model(ENGINE)

    def reply(request):
        if _text(request.messages[0]).startswith("Role: Reviewer"):
            return ServerReply(tool_calls=(ServerToolCall("raise_objection_draft",
                                                          {"key_failure": "x", "objection": "impossible"}),))
        return base(request)

    _, ep, _ = _run(tmp_path, reply, "lift-1")
    assert ep.status == "ok"
    assert ep.metrics["approved"] == 0.0 and ep.metrics["passed"] == 0.0 and ep.metrics["parts"] == 0.0
    assert not any(s.role == "builder" for s in ep.steps)


def test_turn_limit_leaves_the_machine_unapproved(tmp_path):
    def reply(request):
        if _text(request.messages[0]).startswith("Role: Guidance"):
            return "Keep going."
        return make_model(ENGINE)(request)

    _, ep, _ = _run(tmp_path, reply, "lift-1", build_turns=6)
    assert sum(1 for s in ep.steps if s.role in ("builder", "guidance")) == 6
    assert ep.metrics["approved"] == 0.0


def test_request_budget_ends_the_episode_with_budget_status(tmp_path):
    _, ep, requests = _run(tmp_path, make_model(ENGINE), "lift-1", max_requests=4)
    assert ep.status == "budget" and requests == 4


@pytest.mark.parametrize("protocol,roles", [("builder-only", {"builder"}), ("guidance-builder", {"builder", "guidance"})])
def test_ablations_use_only_their_roles(tmp_path, protocol, roles):
    _, ep, _ = _run(tmp_path, make_model(ENGINE), "lift-1", protocol=protocol)
    assert ep.status == "ok", ep.error
    assert {s.role for s in ep.steps} == {"protocol", *roles}
    assert ep.metrics["parts"] == 3.0 and ep.metrics["passed"] == 1.0


def test_closed_loop_feeds_simulation_back_and_revises(tmp_path):
    cold = [c for c in ENGINE if c[0] != "twist_block"]  # torch points the wrong way: the engine is cold

    def reply(request):
        tools = {t["function"]["name"] for t in request.body.get("tools", [])}
        role = _text(request.messages[0])
        if role.startswith("Role: Builder") and "start" not in tools and "attach_block_to" in tools:
            said = sum(1 for m in request.messages if m["role"] == "assistant")
            if said == 0:
                return ServerReply(tool_calls=(ServerToolCall("twist_block", {"block_id": 3, "angle": 270}),))
            return "Twisted the torch."
        if role.startswith("Role: Guidance") and "did not pass" in _text(request.messages[-1]):
            return "Turn the torch so it heats the cannon."
        return make_model(cold)(request)

    result, ep, _ = _run(tmp_path, reply, "lift-1", protocol="closed-loop", rounds=3)
    rounds = ep.outcome["rounds"]
    assert [r["passed"] for r in rounds] == [False, True]
    assert ep.outcome["final"] == "1_v2" and ep.metrics["passed"] == 1.0
    assert [s.role for s in ep.steps].count("simulator") == 2
    table6 = next(rows for title, rows in result.summary["tables"].items() if title.startswith("Table 6"))
    assert [(r["round"], r["SR % ours"], r["SR % paper"]) for r in table6] == [(1, 0.0, 0.0), (2, 100.0, 72.2)]
