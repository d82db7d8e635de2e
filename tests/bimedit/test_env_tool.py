"""The execute_ifc_code tool: bound names, commits, sandbox limits, budget, malformed calls,
reload-per-call mode and the structured tool set."""

from __future__ import annotations

import json
from pathlib import Path

import ifcopenshell
import ifcopenshell.util.element
import pytest

from buildbench.harness import Action, Task, get_suite
from buildbench.harness.errors import ConfigError
from buildbench.llm import ToolCall
from buildbench.suites.bimedit.env import BimEditEnv
from buildbench.suites.bimedit.generate.scenes import write_scene
from buildbench.suites.bimedit.generate.tasks import code as oracle_code
from buildbench.suites.bimedit.generate.tasks.oracle import apply_and_write
from buildbench.suites.bimedit.options import BimEditOptions
from buildbench.suites.bimedit.score import predicted_model, score
from buildbench.suites.bimedit.tasks import BimTask

from ..worker_starts import roomy_starts


@pytest.fixture(scope="module")
def door_task(tmp_path_factory: pytest.TempPathFactory) -> Task:
    """A simple scene and a door-update task whose reference moves the door with its opening."""
    out = tmp_path_factory.mktemp("bimedit_env")
    m0 = write_scene("simple", 3, out).path
    f = ifcopenshell.open(str(m0))
    door = f.by_type("IfcDoor")[0]
    opening = ifcopenshell.util.element.get_filled_void(door)
    code = oracle_code.move([door.GlobalId, opening.GlobalId], (0.3, 0.0, 0.0))
    apply_and_write(code, m0, out / "gt.ifc", 0)
    return BimTask(task_id="DOR-UPD-DIR-A-001", element="door", operation="update", category="direct",
                   scene="simple", instruction=f"Move the door {door.GlobalId} and its opening 0.3 m along +x.",
                   input_ifc=str(m0), ground_truth_ifc=str(out / "gt.ifc"),
                   target_guids=(door.GlobalId, opening.GlobalId), oracle_code=code).to_harness()


def call(code: str, i: int = 0) -> Action:
    return Action(tool_calls=[ToolCall(id=f"c{i}", name="execute_ifc_code", arguments={"code": code})])


def answer(result) -> dict:
    return json.loads(result.observation.tool_results[0][1])


def test_bound_names_commit_and_persistent_state(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions())
    try:
        obs, _ = env.reset(door_task)
        assert "execute_ifc_code" in obs.text and obs.state["model_path"] in obs.text
        assert "at most 20 times" in obs.text and "Move the door" in obs.text
        r = env.step(call("result = sorted(k for k in ('ifc','ifcopenshell','api','util','element_util','guid',"
                          "'commit') if k in globals())\nn = len(ifc.by_type('IfcDoor'))"))
        assert answer(r)["result"] == sorted(["ifc", "ifcopenshell", "api", "util", "element_util", "guid", "commit"])
        assert answer(r)["status"] == "ok" and "committed" not in answer(r)
        # api submodules are usable without importing them (spec 6.2 pitfall); variables persist.
        r = env.step(call("w = api.root.create_entity(ifc, ifc_class='IfcWall', name='x')\nresult = n", 1))
        assert answer(r)["result"] >= 1
        r = env.step(call("print('saving')\ncommit()", 2))
        a = answer(r)
        assert a["committed"] is True and a["stdout"] == "saving\n"
        done = env.step(Action(text="finished"))
        assert done.terminated and not done.truncated
        out = env.outcome()
        assert out.committed and out.commits == 1 and out.failure == "executed"
        assert out.call_status == ["ok", "ok", "ok"] and out.tool_calls == 3
        pred = predicted_model(door_task, out, Path(env._require().workdir))
        assert len(ifcopenshell.open(str(pred)).by_type("IfcWall")) == len(
            ifcopenshell.open(door_task.inputs["ifc_path"]).by_type("IfcWall")) + 1
    finally:
        env.close()


def test_timeout_crash_and_memory_are_classified_and_the_episode_goes_on(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions(call_timeout_s=5.0))
    try:
        env.reset(door_task)
        # Three calls here start a fresh worker (IfcOpenShell import, model open): not the 5 s the
        # test's timeout is about, and on a loaded machine a start came close to it.
        roomy_starts(env._require().worker)
        env.step(call(door_task.target["oracle_code"]))  # commits the reference edit
        r = env.step(call("import time\ntime.sleep(30)", 1))
        assert answer(r)["status"] == "timeout" and "5 s limit" in answer(r)["note"]
        r = env.step(call("result = sorted(globals()).count('ifc')", 2))
        a = answer(r)
        assert a["status"] == "ok" and "fresh one" in a["note"]  # state lost, model reloaded from the commit
        env.step(call("import os\nos._exit(3)", 3))
        r = env.step(call("x = bytearray(10**12)", 4))
        assert answer(r)["status"] == "memory"
        r = env.step(call("result = len(ifc.by_type('IfcDoor'))", 5))
        assert answer(r)["status"] == "ok"
        out = env.outcome()
        assert out.call_status == ["ok", "timeout", "ok", "crash", "memory", "ok"]
        assert out.failure == "timeout"  # the first runtime failure decides the bucket
        assert score(door_task, out)["final"] == 1.0  # the committed edit survived the crashes
    finally:
        env.close()


def test_malformed_calls_and_the_budget(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions(max_calls=3))
    try:
        env.reset(door_task)
        bad = [ToolCall.parse("m0", "execute_ifc_code", '{"code": "x = 1'),
               ToolCall("m1", "execute_python", {"code": "x = 1"}),
               ToolCall("m2", "execute_ifc_code", {"source": "x = 1"})]
        r = env.step(Action(tool_calls=bad))
        texts = [json.loads(t) for _, t in r.observation.tool_results]
        assert [t["status"] for t in texts] == ["malformed"] * 3
        assert "not a JSON object" in texts[0]["error"] and "unknown tool 'execute_python'" in texts[1]["error"]
        assert "'code' must be a non-empty string" in texts[2]["error"]
        assert not r.truncated
        r = env.step(call("result = 1", 9))
        assert r.truncated and r.info["failure"] == "budget" and "budget of 3" in r.observation.tool_results[0][1]
        out = env.outcome()
        assert out.failure == "budget" and out.tool_calls == 3 and not out.committed
    finally:
        env.close()


def test_reload_per_call_keeps_only_committed_edits(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions(reload_per_call=True))
    try:
        obs, _ = env.reset(door_task)
        assert "do not carry over" in obs.text
        env.step(call("api.root.remove_product(ifc, product=ifc.by_type('IfcDoor')[0])\nkept = 1"))
        r = env.step(call("result = [len(ifc.by_type('IfcDoor')), 'kept' in globals()]", 1))
        n_doors = len(ifcopenshell.open(door_task.inputs["ifc_path"]).by_type("IfcDoor"))
        assert answer(r)["result"] == [n_doors, False]
        assert "fresh one" not in r.observation.text
        assert env.outcome().reload_per_call is True
    finally:
        env.close()


def test_structured_tools_query_and_edit(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions(action_format="structured"))
    door, opening = door_task.target["target_guids"]
    try:
        obs, _ = env.reset(door_task)
        assert {t.name for t in env.tools} == {"query_elements", "get_properties", "create_element",
                                              "modify_element", "delete_element"}
        r = env.step(Action(tool_calls=[ToolCall("q", "query_elements", {"ifc_class": "IfcDoor"}),
                                        ToolCall("g", "get_properties", {"guid": door}),
                                        ToolCall("x", "get_properties", {"id": door})]))
        q, g, x = (json.loads(t) for _, t in r.observation.tool_results)
        assert door in [e["guid"] for e in q["result"]["elements"]]
        assert g["result"]["relations"]["fills_opening"] == [opening]
        assert x["status"] == "malformed" and "unknown argument(s) ['id']" in x["error"]
        r = env.step(Action(tool_calls=[ToolCall("m", "modify_element", {"guid": door, "move_by_m": [0.3, 0, 0]})]))
        assert answer(r)["committed"] is True
        r = env.step(Action(tool_calls=[ToolCall("b", "get_properties", {"guid": "nope"})]))
        assert answer(r)["status"] == "error" and "no element with GlobalId 'nope'" in answer(r)["error"]
        metrics = score(door_task, env.outcome())
        assert metrics["final"] == 1.0  # moving the door moved its opening with it
    finally:
        env.close()


def test_structured_create_and_delete(door_task: Task) -> None:
    env = BimEditEnv(BimEditOptions(action_format="structured"))
    door, opening = door_task.target["target_guids"]
    try:
        env.reset(door_task)
        r = env.step(Action(tool_calls=[ToolCall("s", "query_elements", {"ifc_class": "IfcBuildingStorey"})]))
        storey = answer(r)["result"]["elements"][0]["guid"]
        r = env.step(Action(tool_calls=[
            ToolCall("c", "create_element", {"kind": "column", "storey": storey, "at": [1.0, 1.0],
                                             "width_m": 0.3, "height_m": 2.5}),
            ToolCall("w", "create_element", {"kind": "wall", "storey": storey, "start": [0.5, 0.5]}),
            ToolCall("d", "delete_element", {"guid": door})]))
        col, wall, gone = (json.loads(t) for _, t in r.observation.tool_results)
        assert col["status"] == "ok" and col["result"]["class"] == "IfcColumn"
        assert col["result"]["position_m"][:2] == [1.0, 1.0]
        assert wall["status"] == "error" and "needs the parameter 'end'" in wall["error"]
        assert sorted(gone["result"]["removed"]) == [door]
        r = env.step(Action(tool_calls=[ToolCall("g", "get_properties", {"guid": col["result"]["created"]})]))
        assert answer(r)["result"]["relations"]["container"] == storey
    finally:
        env.close()


def test_options_and_bad_tasks_give_clear_errors(door_task: Task) -> None:
    suite = get_suite("bimedit")
    options = suite.parse_options({"max_calls": "5", "reload_per_call": "true", "strict": "no"})
    env = suite.make_env(door_task, options)
    assert env.options is options and (options.max_calls, options.reload_per_call, options.strict) == (5, True, False)
    with pytest.raises(ConfigError, match=r"option max_calls='0': must be >= 1"):
        suite.parse_options({"max_calls": "0"})
    with pytest.raises(ConfigError, match=r"option action_format='yaml': expected one of code, structured"):
        suite.parse_options({"action_format": "yaml"})
    with pytest.raises(ConfigError, match=r"option call_timeout_s='soon'"):
        suite.parse_options({"call_timeout_s": "soon"})
    missing = Task.from_dict({**door_task.to_dict(), "inputs": {**door_task.inputs, "ifc_path": "/nope.ifc"}})
    with pytest.raises(ConfigError, match="input model /nope.ifc does not exist"):
        BimEditEnv().reset(missing)
    with pytest.raises(RuntimeError, match="call reset"):
        BimEditEnv().step(Action(text="hi"))
