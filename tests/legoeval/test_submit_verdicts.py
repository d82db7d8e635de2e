"""One definition of a verdict: the ``Verdict`` record types the action record's verdicts, makes the
``submit_verdicts`` tool's parameters, and reads scripted data, tool calls and verdicts written as
text alike; a bad verdict is the same one-line message on every path and the episode goes on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from buildbench.harness import Action, Task, get_suite
from buildbench.llm import ToolCall
from buildbench.suites.legoeval.env import SUBMIT, LegoEvalEnv
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.spaces import LegoEvalAction, Verdicts
from buildbench.suites.legoeval.task_records import Verdict


@pytest.fixture(scope="module")
def demo() -> Task:
    return get_suite("legoeval").load_tasks("demo", 0)[0]


def _env(task: Task) -> LegoEvalEnv:
    env = LegoEvalEnv(task, LegoEvalOptions(render=False))
    env.reset(task)
    return env


def _ids(task: Task) -> list[str]:
    return [str(c["id"]) for c in task.inputs["constraints"]]


def _paths(data: dict[str, Any]) -> list[Action]:
    """The same submission as scripted data, as a ``submit_verdicts`` call and as JSON text."""
    return [Action(data=data), Action(tool_calls=[ToolCall.parse("s", SUBMIT, data)]),
            Action(text=f"My verdicts: {json.dumps(data)}")]


def test_the_tool_parameters_are_the_records_schema(demo: Task) -> None:
    tool = next(t for t in _env(demo).tools if t.name == SUBMIT)
    assert tool.parameters == Verdicts.json_schema()
    params = tool.parameters
    assert params["required"] == ["verdicts"] and params["additionalProperties"] is False
    item = params["properties"]["verdicts"]["items"]
    assert item == Verdict.json_schema()
    assert item["required"] == ["id", "holds"] and item["additionalProperties"] is False
    assert item["properties"]["id"]["type"] == "string"
    assert {"type": "null"} in item["properties"]["holds"]["anyOf"]
    assert all(p["description"] for p in (*item["properties"].values(), *params["properties"].values()))
    # the action record holds the same records
    action = LegoEvalAction.from_data({"verdicts": [{"id": "c0", "holds": True}], "identified": []})
    assert action.verdicts == [Verdict("c0", True, "")] and action.identified == []


@pytest.mark.parametrize("verdicts, message", [
    ([{"id": "c0", "holds": "yes"}], "verdicts[0].holds: expected true, false or null, got str"),
    ([{"id": "c0", "holds": True}, {"id": 1, "holds": True}], "verdicts[1].id: expected a string, got int"),
    ([{"id": "c0"}], "missing key 'verdicts[0].holds'"),
    ([{"id": "c0", "holds": None, "explanation": 3}], "verdicts[0].explanation: expected a string, got int"),
    ([{"id": "c0", "holds": True, "sure": 1}], "verdicts[0].sure: unknown field; fields: id, holds, explanation"),
    ([7], "verdicts[0]: expected an object, got int"),
    ("all", "verdicts: expected a list, got str"),
    ([{"id": "c0", "holds": True}, {"id": "c99", "holds": True}], "verdicts[1].id: unknown constraint 'c99'"),
])
def test_a_bad_verdict_is_one_line_on_every_path_and_the_episode_goes_on(
        demo: Task, verdicts: Any, message: str) -> None:
    seen = []
    for action in _paths({"verdicts": verdicts, "valid": True}):
        env = _env(demo)
        result = env.step(action)
        text = result.observation.text
        assert not result.terminated and len(text.splitlines()) == 1, text
        assert text.startswith(f"Invalid action: legoeval action: {message}"), text
        seen.append(result.info["invalid"])
        assert env.outcome().invalid_actions == 1 and env.outcome().valid is None
        good = env.step(Action(data={"verdicts": [{"id": i, "holds": True} for i in _ids(demo)]}))
        assert good.terminated and env.outcome().valid is True
    assert len(set(seen)) == 1  # the same message whichever way the verdicts came
    call = _env(demo).step(_paths({"verdicts": verdicts})[1])
    assert call.observation.tool_results[0][0] == "s"  # a tool call's error answers that call


def test_a_bad_holistic_verdict_is_named(demo: Task) -> None:
    for action in _paths({"verdicts": [], "valid": "yes"}):
        result = _env(demo).step(action)
        assert "legoeval action: valid: expected true, false or null, got str" in result.observation.text


def test_every_path_records_the_same_outcome(demo: Task) -> None:
    ids = _ids(demo)
    verdicts = [{"id": i, "holds": i != ids[1], "explanation": f"looked at {i}"} for i in reversed(ids[:3])]
    outcomes = []
    for action in _paths({"verdicts": verdicts}):
        env = _env(demo)
        assert env.step(action).terminated
        outcomes.append(env.outcome().to_dict())
    assert outcomes[0] == outcomes[1] == outcomes[2]
    got = outcomes[0]
    # task order; a constraint left out is unjudged; no holistic verdict given: derived (one fails)
    assert [v["id"] for v in got["verdicts"]] == ids and got["valid"] is False
    assert got["verdicts"][0] == {"id": ids[0], "holds": True, "explanation": f"looked at {ids[0]}"}
    assert got["verdicts"][3] == {"id": ids[3], "holds": None, "explanation": "no verdict"}


def test_scripted_data_keeps_the_trace_and_the_identified_verdicts(demo: Task) -> None:
    env = _env(demo)
    identified = [{"id": "own-0", "holds": False, "explanation": "no sofa"}]
    data = {"verdicts": [{"id": i, "holds": False} for i in _ids(demo)], "valid": False,
            "trace": [{"id": "c0", "plan": []}], "identified": identified, "mode": "kept as extra"}
    assert env.step(Action(data=data)).terminated
    outcome = env.outcome()
    assert outcome.trace == data["trace"] and outcome.identified == identified
    bad = _env(demo).step(Action(data={**data, "identified": [{"id": "own-0", "holds": "no"}]}))
    assert "legoeval action: identified[0].holds: expected true, false or null, got str" in bad.observation.text


def test_the_pipeline_submits_verdict_records() -> None:
    from buildbench.suites.legoeval.pipeline.evaluator import ConstraintResult, EvaluationResult

    result = EvaluationResult([ConstraintResult("c0", "There is a bed.", "OP", True, "bed-0 (bedroom)")])
    submission = result.submission()
    assert submission.verdicts == [Verdict("c0", True, "bed-0 (bedroom)")]
    assert LegoEvalAction.from_data(submission.to_dict()) == submission
