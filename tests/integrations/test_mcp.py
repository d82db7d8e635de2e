"""``buildbench mcp``: the MCP SDK's own client plays a full episode of every suite, over stdio (the
command as a child process, as an agent app starts it) and over streamable HTTP on 127.0.0.1, with the
replies a scripted model gave in ``buildbench run``; the stored episodes and the run reports are the
same as that run's."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server is optional: the mcp package is not installed")

from buildbench.harness import get_suite  # noqa: E402
from buildbench.llm import ChatRequest, ChatResponse, ToolCall  # noqa: E402

from .mcp_play import (  # noqa: E402  (the helpers import the SDK)
    Policy,
    http_server,
    http_session,
    mcp_config,
    play,
    reference_run,
    run_async,
    stdio_session,
    stored,
)


def _call(name: str, arguments: dict[str, Any]) -> ChatResponse:
    return ChatResponse(tool_calls=(ToolCall.parse("call", name, arguments),))


def _replies(request: ChatRequest) -> int:
    return sum(m.role == "assistant" for m in request.messages)


# -- one scripted model per suite -------------------------------------------------------------
def tower(request: ChatRequest) -> ChatResponse:
    """Example: a tower whose upper block floats, then the repaired tower."""
    task_text = next(m.text for m in request.messages if m.role == "user")
    half = float(re.search(r"at least ([0-9.]+) m", task_text).group(1)) / 2  # type: ignore[union-attr]
    gap = 0.05 if _replies(request) == 0 else 0.0
    return _call("submit_blocks", {"blocks": [{"center": [0, 0, half / 2], "size": [0.5, 0.5, half]},
                                              {"center": [0, 0, 1.5 * half + gap], "size": [0.5, 0.5, half]}]})


ENGINE = [("start", {"note": "engine"}),
          ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Water Cannon", "note": "thruster"}),
          ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Torch", "note": "heater"}),
          ("twist_block", {"block_id": 3, "angle": 270})]


def engine(request: ChatRequest) -> str | ChatResponse:
    """BuildArena, builder alone: a steam engine (cannon heated by a torch), then TERMINATE."""
    said = _replies(request)
    if said < len(ENGINE):
        return _call(*ENGINE[said])
    return "Built and checked. TERMINATE"


def ifc_edit(task_code: str) -> Policy:
    """BIM-Edit: the task's oracle edit through the code tool, then the final answer."""

    def reply(request: ChatRequest) -> str | ChatResponse:
        return _call("execute_ifc_code", {"code": task_code}) if _replies(request) == 0 else "The edit is done."

    return reply


ROOM = {"room_type": "bedroom", "room_id": "Bedroom-7",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]], "objects": []}


def _scene_calls(*calls: dict[str, Any]) -> str:
    return f"<think>Diagnosis.</think>\n<tool_calls>\n{json.dumps(list(calls))}\n</tool_calls>"


def _add(desc: str, pos: list[float], size: list[float]) -> dict[str, Any]:
    return {"id": "t", "name": "add_object", "arguments": {"object_description": desc, "position": pos,
                                                           "rotation": [0, 0, 0, 1], "size": size}}


SCENE = [f"<create_scene>\n```json\n{json.dumps(ROOM)}\n```\n</create_scene>",
         _scene_calls(_add("Modern queen bed with a grey headboard", [0, 0, -0.95], [1.6, 0.5, 2.0]),
                      _add("Walnut nightstand with two drawers", [1.2, 0, -1.7], [0.5, 0.55, 0.42])),
         _scene_calls({"id": "t", "name": "terminate", "arguments": {"reason": "complete"}})]


def room(request: ChatRequest) -> str:
    """SceneReVis: create a room, furnish it, terminate (its turns come back with renders)."""
    return SCENE[min(_replies(request), len(SCENE) - 1)]


def judge(request: ChatRequest) -> ChatResponse:
    """LEGO-Eval, tool agent: look at the house from above, then judge every constraint as holding."""
    if _replies(request) == 0:
        return _call("get_room_list", {})
    ids = re.findall(r"^- (c\d+) ", next(m.text for m in request.messages if m.role == "user"), re.M)
    return _call("submit_verdicts", {"verdicts": [{"id": i, "holds": True, "explanation": "seen"} for i in ids],
                                     "valid": True})


def house(task_id: str) -> Policy:
    """DreamHouse, planner-atomic: the reference plan, then the whole frame as one Blender script."""
    from buildbench.suites.dreamhouse.agents import plan_for
    from buildbench.suites.dreamhouse.scripts import fenced, structure_to_bpy
    from buildbench.suites.dreamhouse.tasks import ground_truth

    task = next(t for t in get_suite("dreamhouse").load_tasks("demo", 0) if t.id == task_id)
    truth = ground_truth(task)

    def reply(request: ChatRequest) -> str:
        if _replies(request) == 0:
            plan = plan_for(truth, dict(task.inputs["lot_size"]))
            return "Here is my plan:\n```json\n" + json.dumps(plan) + "\n```"
        return fenced(structure_to_bpy(truth.structure, task.inputs["collection"]))

    return reply


@dataclass
class Case:
    protocol: str
    policy: Policy
    agent: str = "llm"
    split: str = "demo"
    options: dict[str, Any] = field(default_factory=dict)


def _first(suite: str, split: str = "demo") -> str:
    return get_suite(suite).load_tasks(split, 0)[0].id


def case(suite: str) -> Case:
    if suite == "example":
        return Case("refine", tower, options={"tools": True})
    if suite == "buildarena":
        return Case("builder-only", engine, split="lift-1", options={"sim_duration_s": 1.0})
    if suite == "bimedit":
        task = get_suite("bimedit").load_tasks("demo", 0)[0]
        return Case("tool-loop", ifc_edit(task.target["oracle_code"]), options={"retry_delay_s": 0.01})
    if suite == "scenerevis":
        return Case("diagnose-act", room)
    if suite == "legoeval":
        return Case("evaluate", judge, agent="tool-agent")
    if suite == "dreamhouse":
        return Case("planner-atomic", house(_first("dreamhouse")), options={"images": "off"})
    raise AssertionError(suite)


#: Metrics that measure wall time (SceneReVis's ``latency_s``): never equal between two runs.
WALL_CLOCK = re.compile(r"latency|duration|wall")


def differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The metrics in which two runs differ (NaN equals NaN: a metric without data in both), wall
    times left out."""

    def same(x: Any, y: Any) -> bool:
        if isinstance(x, float) and isinstance(y, float):
            return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        return bool(x == y)

    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
            if not WALL_CLOCK.search(k) and not same(a.get(k), b.get(k))}


def _cli_args(suite: str, c: Case, task: str, run_dir: Path) -> list[str]:
    args = [suite, "--split", c.split, "--task", task, "--protocol", c.protocol, "--agent", c.agent,
            "--run-dir", str(run_dir), "--model", "mcp:test-client"]
    for key, value in c.options.items():
        # -o values are text, as typed on a command line (a string is not JSON-quoted)
        args += ["-o", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    return args


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("suite", ["example", "dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval"])
def test_an_episode_over_mcp_is_stored_and_scored_as_buildbench_run_stores_it(suite: str, tmp_path: Path) -> None:
    c = case(suite)
    task = _first(suite, c.split)
    reference, replies = reference_run(suite, c.policy, tmp_path / "run", protocol=c.protocol, agent=c.agent,
                                       split=c.split, task=task, options=c.options)
    assert reference.status == "ok" and reference.metrics, (reference.status, reference.error)
    config = mcp_config(suite, protocol=c.protocol, agent=c.agent, split=c.split, options=c.options)

    async def over_http(url: str) -> list[Any]:
        async with http_session(url) as session:
            return await play(session, task, replies)

    with http_server(config, tmp_path / "http", only=[task]) as url:
        http_results = run_async(lambda: over_http(url))

    async def over_stdio() -> list[Any]:
        async with stdio_session(_cli_args(suite, c, task, tmp_path / "stdio"), tmp_path) as session:
            return await play(session, task, replies)

    stdio_results = run_async(over_stdio)
    _, reference_report = stored(tmp_path / "run")
    for run, results in (("http", http_results), ("stdio", stdio_results)):
        episode, report = stored(tmp_path / run)
        end = results[-1].structuredContent
        assert end["ended"] and end["episode"]["status"] == "ok", (run, end)
        assert (episode.status, episode.sample, episode.seed) == ("ok", reference.sample, reference.seed)
        assert differences(episode.metrics, reference.metrics) == {}, run
        assert differences(report["metrics"], reference_report["metrics"]) == {}, run
        assert [s.role for s in episode.steps] == [s.role for s in reference.steps]
        assert episode.metadata["mcp_client"]["name"] == "mcp"  # the SDK client's own name
        assert report["episodes"] == 1 and report["unscored"] == 0
        if suite == "scenerevis":  # the renders come as MCP image content
            assert any(block.type == "image" for r in results for block in r.content)
