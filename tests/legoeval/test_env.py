"""The LEGO-Eval env: tool calls as actions, verdict submission, bad actions, bad scenes."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import Action, Task, get_suite
from buildbench.llm import ToolCall
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import write_thor
from buildbench.suites.legoeval.constraints import parse
from buildbench.suites.legoeval.env import SUBMIT, LegoEvalEnv, make_env
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.outcome import LegoEvalOutcome
from buildbench.suites.legoeval.score import score
from buildbench.suites.legoeval.tasks import make_task, spec_for

TEXTS = ["There is a bed in the bedroom.", "The floor of the bedroom is wood.",
         "There is a door between the living room and the bedroom."]


def task(scene: dict | None = None, task_id: str = "t0") -> Task:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom", floor_material="DarkWoodFloors")
    b.door("living room", "bedroom")
    b.place("bed", "bedroom", center_xz=(8, 2))
    specs = [spec_for(f"c{i}", t, parse(t)) for i, t in enumerate(TEXTS)]
    return make_task(task_id, instruction="A flat with a bedroom.", scene=scene or write_thor(b.build()),
                     constraints=specs, labels=[True, True, True], pair="p0", aligned=True)


def test_reset_shows_instruction_constraints_summary_and_tools() -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    obs, info = env.reset(t)
    assert "A flat with a bedroom." in obs.text and "c1 [MS] The floor of the bedroom is wood." in obs.text
    assert "2 rooms" in obs.text and info["scene_error"] is None
    assert len(env.tools) == 22 and env.tools[-1].name == SUBMIT
    assert "scene" not in obs.state and obs.state["constraints"][0]["id"] == "c0"


def test_tool_calls_are_actions_answered_with_their_output() -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    call = ToolCall.parse("call_1", "get_object_list", {"room_ids": ["bedroom"]})
    result = env.step(Action(tool_calls=[call]))
    assert not result.terminated
    assert result.observation.tool_results[0][0] == "call_1"
    assert json.loads(result.observation.tool_results[0][1]) == {"bedroom": ["bed-0 (bedroom)"]}
    data = env.step(Action(data={"tool": "get_room_list"}))
    assert "room_list" in data.observation.text and env.outcome().tool_calls == 2


def test_image_tools_attach_pngs() -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=True))
    env.reset(t)
    result = env.step(Action(data={"tool": "get_topdown_room", "args": ["bedroom"]}))
    assert len(result.observation.images) == 1 and result.observation.images[0].startswith(b"\x89PNG")
    assert "bedroom*/*topdown_room*/*output__image" in result.observation.text


@pytest.mark.parametrize("action, message", [
    (Action(tool_calls=[ToolCall.parse("c", "get_room_info", "{not json")]), "not valid JSON"),
    (Action(text="I think it is fine."), "no tool call and no verdicts"),
    (Action(data={"verdicts": [{"id": "c9", "holds": True}]}), "unknown constraint 'c9'"),
    (Action(data={"verdicts": [{"id": "c0", "holds": "yes"}]}), "verdicts[0].holds: expected true, false or null"),
])
def test_bad_actions_are_feedback_and_change_nothing(action: Action, message: str) -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    result = env.step(action)
    assert not result.terminated and message in result.observation.text
    assert env.outcome().invalid_actions == 1 and env.outcome().valid is None


def test_unknown_tool_and_bad_arguments_answer_with_an_error() -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    calls = [ToolCall.parse("a", "get_magic", {}), ToolCall.parse("b", "get_room_info", {"wall_ids": ["x"]}),
             ToolCall.parse("c", "get_room_info", {"room_ids": ["attic", "bedroom"]})]
    result = env.step(Action(tool_calls=calls))
    answers = dict(result.observation.tool_results)
    assert answers["a"].startswith("error: unknown tool 'get_magic'")
    assert "unknown argument(s) ['wall_ids']" in answers["b"]
    assert "attic_error" in answers["c"] and "bedroom_floor_material" in answers["c"]


def test_submitting_verdicts_ends_the_episode_and_scores() -> None:
    t = task()
    env = make_env(t, get_suite("legoeval").parse_options({"render": "false"}))
    assert env.options.render is False
    env.reset(t)
    verdicts = [{"id": "c0", "holds": True, "explanation": "bed-0 (bedroom)"}, {"id": "c1", "holds": True},
                {"id": "c2", "holds": False}]
    result = env.step(Action(tool_calls=[ToolCall.parse("s", SUBMIT, {"verdicts": verdicts})]))
    assert result.terminated and result.observation.tool_results[0][0] == "s"
    outcome = env.outcome()
    assert isinstance(outcome, LegoEvalOutcome)
    assert outcome.valid is False  # no holistic verdict given: the AND of the constraints
    metrics = score(t, outcome)
    assert metrics["holistic_correct"] == 0.0 and metrics["valid_pred"] == 0.0


def test_an_unreadable_scene_is_reported_and_leaves_verdicts_unknown() -> None:
    t = task(scene={"rooms": "not a list"})
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    obs, info = env.reset(t)
    assert info["scene_error"] and "could not be read" in obs.text
    result = env.step(Action(data={"tool": "get_room_list"}))
    assert "only submit_verdicts works" in result.observation.text
    assert all(v["holds"] is None for v in env.outcome().verdicts)


def test_the_outcome_is_typed_from_the_env_through_the_store_to_the_scorer(stored_episode) -> None:
    from buildbench.harness import RunConfig

    suite = get_suite("legoeval")
    t = suite.load_tasks("demo", 0)[0]
    kept = stored_episode(RunConfig(suite="legoeval", agent="deterministic", protocol="evaluate", split="demo",
                                    workers=0), t)
    stored = suite.read_outcome(kept.outcome)
    assert isinstance(stored, LegoEvalOutcome) and stored.to_dict() == kept.outcome
    assert len(stored.verdicts) == len(t.inputs["constraints"]) and stored.valid is not None
    assert suite.score(t, stored) == kept.metrics  # the store's record scores as the env's did
    # what the env produced is the record itself, and the store keeps its dict
    env = suite.make_env(t, suite.parse_options({}))
    env.reset(t)
    env.step(Action(data={"verdicts": stored.verdicts, "valid": stored.valid}))
    assert env.outcome().to_dict() == {**kept.outcome, "tool_calls": 0, "invalid_actions": 0}
