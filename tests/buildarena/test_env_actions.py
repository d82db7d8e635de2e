"""The construction env: one library call per step, clear feedback for every bad action, the machine
unchanged by failures, stages, control trials and the scored outcome."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import Action, Task, get_suite
from buildbench.llm import ToolCall
from buildbench.suites.buildarena.env import NOT_EXECUTED, BuildArenaEnv, rebuild_outcome
from buildbench.suites.buildarena.model import Rules
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.score import failure_category
from buildbench.suites.buildarena.score import score_episode as score


def _env(task_id: str = "lift-1", **kw) -> BuildArenaEnv:
    task = Task(task_id, "buildarena")
    env = BuildArenaEnv(task, BuildArenaOptions(sim_duration_s=0.5, **kw))
    env.reset(task, seed=1)
    return env


def _call(env: BuildArenaEnv, op: str, args=None, call_id: str = "c"):
    return env.step(Action(tool_calls=[ToolCall.parse(call_id, op, {} if args is None else args)]))


def _engine(env: BuildArenaEnv) -> None:
    for op, args in (("start", {}), ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Water Cannon"}),
                     ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Torch"}),
                     ("twist_block", {"block_id": 3, "angle": 270})):
        assert _call(env, op, args).info["ok"]


def _snapshot(env: BuildArenaEnv) -> str:
    return json.dumps(env.machine().to_json(), sort_keys=True)


def test_reset_shows_the_task_and_offers_the_build_tools():
    task = Task("support-2", "buildarena")
    env = BuildArenaEnv(task)
    observation, info = env.reset(task, seed=0)
    assert "gap 10 units wide" in observation.text
    assert info == {"task": "support-2", "category": "support", "control_trials": 3}
    names = {t.name for t in env.tools}
    assert {"start", "attach_block_to", "twist_block", "get_machine_summary"} <= names
    assert not names & {"add_machine", "change_control_key"}


@pytest.mark.parametrize("action,expected,category", [
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", '{"base_block": 1,')]), "not valid JSON",
     "malformed_call"),
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", "[1, 2]")]), "not valid JSON", "malformed_call"),
    (Action(tool_calls=[ToolCall.parse("c", "launch_rocket", {})]), "Unknown operation 'launch_rocket'", "bad_call"),
    (Action(tool_calls=[ToolCall.parse("c", "add_machine", {"machine_id": "1"})]), "not available in this stage",
     "tool_unavailable"),
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", {"base_block": 1, "face": "A"})]),
     "Missing parameter(s) 'new_block'", "bad_call"),
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", {"base_block": 9, "face": "A",
                                                                 "new_block": "Torch"})]), "Base block 9 not found",
     "unknown_block"),
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", {"base_block": 1, "face": "Q",
                                                                 "new_block": "Torch"})]), "does not have face Q",
     "missing_face"),
    (Action(tool_calls=[ToolCall.parse("c", "attach_block_to", {"base_block": 1, "face": "A",
                                                                 "new_block": "Brick"})]), "Block Brick not available",
     "unavailable_block_type"),
    (Action(tool_calls=[ToolCall.parse("c", "shift_block", {"block_id": 2, "shift_real": [float("nan"), 0, 0]})]),
     "shift_real must be a list of three finite numbers", "out_of_range"),
    (Action(tool_calls=[ToolCall.parse("c", "shift_block", {"block_id": 2, "shift_real": [1e9, 0, 0]})]),
     "must be within", "out_of_range"),
    (Action(tool_calls=[ToolCall.parse("c", "remove_block", {"block_id": 1})]), "can not be removed",
     "unsupported_operation"),
    (Action(text="I will now attach a wheel."), "no tool call", "bad_call"),
    (Action(data={"op": "attach_block_to", "params": "A"}), "must be a JSON object", "bad_call"),
])
def test_bad_actions_get_feedback_and_change_nothing(action, expected, category):
    env = _env()
    _call(env, "start")
    _call(env, "attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"})
    before = _snapshot(env)
    result = env.step(action)
    assert expected in result.observation.text
    assert result.info["ok"] is False and result.info["failure"] == category
    assert not result.terminated and not result.truncated
    assert _snapshot(env) == before
    if action.tool_calls:
        assert result.observation.tool_results == [("c", result.observation.text)]
    assert env.outcome().stats["failures"] == {category: 1}


def test_library_refusals_are_categorised():
    env = _env()
    _call(env, "start")
    _call(env, "attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"})
    occupied = _call(env, "attach_block_to", {"base_block": 1, "face": "E", "new_block": "Torch"})
    assert occupied.info["failure"] == "occupied_face"
    _call(env, "attach_block_to", {"base_block": 2, "face": "A", "new_block": "Small Wooden Block"})
    overlap = _call(env, "attach_block_to", {"base_block": 1, "face": "A", "new_block": "Powered Wheel"})
    assert overlap.info["failure"] == "overlap" and "Overlapping detected" in overlap.observation.text
    twice = _call(env, "connect_blocks", {"block_a": 1, "face_a": "A", "block_b": 1, "face_b": "A",
                                          "connector": "Brace"})
    assert twice.info["failure"] == "excess_connection"
    assert failure_category("something nobody wrote") == "other"


def test_only_the_first_of_several_calls_runs():
    env = _env()
    calls = [ToolCall.parse("a", "start", {}), ToolCall.parse("b", "reset", {})]
    result = env.step(Action(tool_calls=calls))
    assert result.observation.tool_results[1] == ("b", NOT_EXECUTED)
    assert env.machine().num_blocks == 1
    assert env.outcome().stats == {"calls": 1, "invalid_calls": 0, "extra_calls": 1, "control_errors": 0,
                                      "failures": {}}


def test_call_budget_truncates():
    env = _env(max_calls=2)
    assert not _call(env, "start").truncated
    assert _call(env, "get_machine_summary").truncated
    late = _call(env, "attach_block_to", {"base_block": 1, "face": "A", "new_block": "Torch"})
    assert late.truncated and "budget" in late.observation.text and env.machine().num_blocks == 1


def test_ten_thousand_attach_calls_are_answered_and_counted():
    env = _env()
    _call(env, "start")
    for _ in range(10_000):
        result = env.step(Action(data={"op": "attach_block_to",
                                       "params": {"base_block": 1, "face": "A", "new_block": "Torch"}}))
    assert "already occupied" in result.observation.text
    stats = env.outcome().stats
    assert stats["calls"] == 10_001 and stats["invalid_calls"] == 9_999 and env.machine().num_blocks == 2


def test_refine_stage_edits_a_copy_with_refine_tools_only():
    env = _env("transport-1")
    _call(env, "start")
    _call(env, "attach_block_to", {"base_block": 1, "face": "A", "new_block": "Powered Wheel"})
    env.approve("1")
    observation = env.begin("refine", "1_rfd", source="1")
    assert "Stage refine" in observation.text
    assert {t.name for t in env.tools} == {"twist_block", "shift_block", "flip_spin", "get_machine_summary",
                                           "get_block_details"}
    assert "is flipped" in _call(env, "flip_spin", {"block_id": 2}).observation.text
    assert not env.machine("1").blocks["2"].flipped and env.machine("1_rfd").blocks["2"].flipped
    assert _call(env, "start").info["failure"] == "tool_unavailable"
    with pytest.raises(ValueError, match="no machine 'nope'"):
        env.begin("refine", "x", source="nope")
    with pytest.raises(ValueError, match="unknown stage kind"):
        env.begin("paint", "x")


def test_outcome_rebuilds_and_scores_the_approved_machine():
    env = _env()
    _engine(env)
    assert score(env.task, env.outcome())["approved"] == 0.0  # nothing approved yet
    env.approve("1")
    env.set_final("1")
    stored = json.loads(json.dumps(env.outcome().to_dict()))
    outcome = get_suite("buildarena").read_outcome(stored)
    assert outcome == env.outcome()  # the store's JSON reads back as the same record
    machine = rebuild_outcome(stored)
    assert machine is not None and json.dumps(machine.to_json()) == json.dumps(env.machine("1").to_json())
    metrics = score(env.task, outcome)
    assert metrics["passed"] == 1.0 and metrics["parts"] == 3.0 and metrics["invalid_action_rate"] == 0.0
    with pytest.raises(ValueError, match="not a buildarena outcome"):
        rebuild_outcome({"blocks": []})


def test_assembly_outcome_rebuilds_from_its_parts():
    env = _env()
    _engine(env)
    env.approve("1")
    env.begin("build", "2")
    _engine(env)
    env.approve("2")
    env.begin("assemble", "assembly", candidates=("1", "2"))
    assert _call(env, "add_machine", {"machine_id": "1"}).info["ok"]
    assert _call(env, "add_machine", {"machine_id": "2", "init_shift": [4, 0, 0]}).info["ok"]
    env.approve("assembly")
    env.set_final("assembly")
    machine = rebuild_outcome(json.loads(json.dumps(env.outcome().to_dict())))
    assert machine is not None and sorted(machine.blocks) == ["A_1", "A_2", "A_3", "B_1", "B_2", "B_3"]


@pytest.mark.parametrize("profile", ["default", "released"])
def test_a_stored_call_that_fails_on_replay_is_named_not_dropped(profile: str):
    # A stored history holds only calls that succeeded: replaying it without one would score
    # another (smaller) machine than the episode's, so the rebuild refuses by name.
    env = _env(profile=profile)
    _engine(env)
    env.approve("1")
    env.set_final("1")
    stored = json.loads(json.dumps(env.outcome().to_dict()))
    assert rebuild_outcome(stored) is not None
    stored["machine"][1]["params"]["base_block"] = 99
    with pytest.raises(ValueError, match=r"history call 1 \(attach_block_to\) fails on replay"):
        rebuild_outcome(stored)


def _vehicle(env: BuildArenaEnv) -> None:
    _call(env, "start")
    for face in ("A", "B"):
        _call(env, "attach_block_to", {"base_block": 1, "face": face, "new_block": "Powered Wheel"})
    env.approve("1")
    env.set_final("1")
    env.begin("control", "1")


def test_control_trials_report_errors_and_keep_the_best():
    env = _env("transport-1")
    _vehicle(env)
    bad = env.step(Action(text="I think we should drive north."))
    assert "not valid JSON" in bad.observation.text and not bad.terminated
    design = {"control_design": "forward",
              "control_config": [{"key": "UpArrow", "action": "spinning_forward", "block_id": "2"},
                                 {"key": "Space", "action": "spinning_forward", "block_id": "3"}],
              "control_sequence": [{"time": 0, "key": "UpArrow", "hold_for": 0.3}]}
    second = env.step(Action(text="```json\n" + json.dumps(design) + "\n```"))
    text = second.observation.text
    assert "control_config[1]" in text and "not a valid control key" in text
    assert "Trajectory" in text and "t=0s: Starting Block [0.00, 0.00, 0.00]" in text
    empty = env.step(Action(data={"control_config": [], "control_sequence": []}))
    assert "No control keys assigned" in empty.observation.text and empty.terminated
    outcome = env.outcome()
    assert [t["generation"] for t in outcome.trials] == [1, 2, 3]
    assert outcome.control["control_config"][0]["block_id"] == "2"
    assert [h["op"] for h in outcome.machine][-2:] == ["change_control_key", "add_control_sequence"]
    assert env.step(Action(data=design)).observation.text.startswith("All 3 control trials")


def test_env_options_are_parsed():
    options = get_suite("buildarena").parse_options({"sim_duration_s": "2", "max_calls": "5", "max_shift": "none"})
    env = BuildArenaEnv(Task("lift-2", "buildarena"), options)
    assert env.options.sim_duration_s == 2.0 and env.options.max_calls == 5 and env.rules.max_shift is None
    assert BuildArenaEnv(Task("lift-2", "buildarena")).rules == Rules()  # the default max_shift is the library's
