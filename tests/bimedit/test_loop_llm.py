"""The full BIM-Edit loop: a scripted model behind a local OpenAI-compatible server, the real
client over HTTP, the tool loop, the sandboxed tool, the runner, the scorer and the report."""

from __future__ import annotations

import dataclasses
import json

import ifcopenshell
import ifcopenshell.util.element
import pytest

from buildbench.harness import RunConfig, Runner, Store, Task, get_suite, run_report
from buildbench.harness import suite as suite_registry
from buildbench.llm import Fault, ScriptedServer, ServerReply, ServerToolCall
from buildbench.suites.bimedit.generate.scenes import write_scene
from buildbench.suites.bimedit.generate.tasks import code as oracle_code
from buildbench.suites.bimedit.generate.tasks.oracle import apply_and_write
from buildbench.suites.bimedit.tasks import BimTask


@pytest.fixture(scope="module")
def door_task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    out = tmp_path_factory.mktemp("bimedit_loop")
    m0 = write_scene("simple", 5, out).path
    f = ifcopenshell.open(str(m0))
    door = f.by_type("IfcDoor")[0]
    opening = ifcopenshell.util.element.get_filled_void(door)
    code = oracle_code.move([door.GlobalId, opening.GlobalId], (0.0, 0.25, 0.0))
    apply_and_write(code, m0, out / "gt.ifc", 0)
    return BimTask(task_id="DOR-UPD-DIR-A-001", element="door", operation="update", category="direct",
                   scene="simple", instruction=f"Move the door {door.GlobalId} with its opening 0.25 m along +y.",
                   input_ifc=str(m0), ground_truth_ifc=str(out / "gt.ifc"),
                   target_guids=(door.GlobalId, opening.GlobalId), oracle_code=code).to_harness()


@pytest.fixture
def registered(door_task: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bimedit suite with this module's task as its demo split."""
    suite = dataclasses.replace(get_suite("bimedit"), load_tasks=lambda split, seed: [door_task])
    monkeypatch.setitem(suite_registry._loaded, "bimedit", suite)


def code_call(code: str) -> ServerToolCall:
    return ServerToolCall("execute_ifc_code", {"code": code})


def run(tmp_path, url: str, **options):
    config = RunConfig(suite="bimedit", agent="llm", protocol="tool-loop", split="demo",
                       model=f"vllm:scripted@{url}", workers=0,
                       options={"max_retries": 0, "retry_delay_s": 0.05, **options})
    result = Runner(config, tmp_path).run()
    with Store(tmp_path) as store:
        return result, next(store.episodes())


def test_model_edits_through_the_tool_with_a_malformed_call_and_an_api_retry(registered, door_task, tmp_path):
    replies = [
        ServerReply(tool_calls=(code_call("result = ifcopenshell.util.unit.calculate_unit_scale(ifc)"),)),
        ServerReply(tool_calls=(ServerToolCall("execute_ifc_code", '{"code": "print(1'),)),
        ServerReply(fault=Fault.server_error(500)),
        ServerReply(tool_calls=(code_call(door_task.target["oracle_code"]),)),
        ServerReply(text="The door and its opening have moved."),
    ]
    with ScriptedServer(replies) as server:
        result, ep = run(tmp_path, server.base_url)
        requests = server.requests
    assert len(requests) == 5
    first = requests[0].body
    assert [t["function"]["name"] for t in first["tools"]] == ["execute_ifc_code"]
    assert first["temperature"] == 0.0
    assert first["messages"][0]["role"] == "system" and "unit" in first["messages"][0]["content"]
    assert door_task.inputs["instruction"] in first["messages"][1]["content"]
    assert "model.ifc" in first["messages"][1]["content"]
    tool_answers = [m for m in requests[2].body["messages"] if m["role"] == "tool"]
    assert json.loads(tool_answers[0]["content"])["result"] == 1.0
    assert json.loads(tool_answers[1]["content"])["status"] == "malformed"
    # The retry re-sends the failed request's conversation unchanged.
    assert requests[3].body["messages"] == requests[2].body["messages"]
    assert ep.status == "ok" and ep.outcome["failure"] == "executed"
    assert ep.outcome["call_status"] == ["ok", "malformed", "ok"] and ep.outcome["commits"] == 1
    assert any(s.info.get("retry_in_s") == 0.05 for s in ep.steps)
    assert ep.metrics["final"] == 1.0 and ep.metrics["solved"] == 1.0
    assert ep.usage["requests"] == 5  # the failed call counts as a request too
    table3 = result.summary["tables"]["Table 3: runtime failure rates (%)"]
    assert table3[0]["overall"] == 0.0 and table3[1]["source"].startswith("paper: ")
    traj = result.summary["tables"]["trajectories by instruction type"]
    assert traj[0]["category"] == "direct" and traj[0]["tool calls"] == 3.0 and traj[0]["output ktokens"] > 0


def test_a_second_api_error_ends_the_episode_and_the_last_commit_is_scored(registered, door_task, tmp_path):
    replies = [
        ServerReply(tool_calls=(code_call(door_task.target["oracle_code"]),)),
        ServerReply(fault=Fault.server_error(502)),
        ServerReply(fault=Fault.server_error(502)),
    ]
    with ScriptedServer(replies) as server:
        result, ep = run(tmp_path, server.base_url)
    assert ep.status == "api_error" and ep.outcome["failure"] == "api"
    assert ep.metrics["final"] == 1.0 and ep.metrics["failure_api"] == 1.0
    assert result.summary["tables"]["Table 3: runtime failure rates (%)"][0]["api"] == 100.0
    # Kept out of the means unless the report counts API failures the paper's way.
    assert result.summary["unscored"] == 1 and result.summary["metrics"] == {}
    assert result.summary["tables"]["Table 1: scores, 0-100, mean ± std"][0]["n"] == 0
    paper_way = run_report(tmp_path, errors_as_failures=True)
    assert paper_way["metrics"]["final"] == 1.0
    assert paper_way["tables"]["Table 1: scores, 0-100, mean ± std"][0]["n"] == 1


def test_the_call_budget_ends_the_episode(registered, tmp_path):
    with ScriptedServer(lambda request: ServerReply(tool_calls=(code_call("result = 1"),))) as server:
        _, ep = run(tmp_path, server.base_url, max_calls=2)
        assert len(server.requests) == 3  # the third call is refused, as LangGraph's recursion limit does
    assert ep.status == "budget" and ep.outcome["failure"] == "budget" and ep.outcome["tool_calls"] == 2
    assert ep.metrics["failure_budget"] == 1.0
