"""SceneReVis under ``-o address=jid`` (the released naming: the scene shows no ids and a call
names an asset jid): each agent plays valid replies there, naming objects as that mode does, or
is refused before the run (the chain-replaying agents, whose chains name instance ids)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness import Action, EpisodeContext, Observation, Task, get_suite
from buildbench.harness.suite import RunChoice
from buildbench.llm import ChatRequest, ScriptedChat
from buildbench.suites.scenerevis import agents
from buildbench.suites.scenerevis.actions import NEED_RETRIEVAL
from buildbench.suites.scenerevis.agents.scripted import call_names, create_reply, turn_reply
from buildbench.suites.scenerevis.degrade import corrupt_calls
from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.outcome import SceneReVisOutcome
from buildbench.suites.scenerevis.tasks import load_tasks

ADDRESSES = ("id", "jid")
ROOM = {"room_type": "bedroom", "room_id": "Bedroom-7",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]]}
UPRIGHT = [0.0, 0.0, 0.0, 1.0]


def _obj(desc: str, jid: str, pos: list[float], size: list[float]) -> dict[str, Any]:
    return {"desc": desc, "jid": jid, "pos": pos, "rot": UPRIGHT, "size": size}


#: A bed and a wardrobe with jids of their own, two chairs of one model (a jid no call names
#: alone under address=jid) and a lamp still waiting for its asset (no jid at all).
OBJECTS = [
    _obj("Grey upholstered queen bed", "jid-bed", [0.0, 0.0, -1.0], [1.6, 0.5, 2.0]),
    _obj("White wardrobe with two doors", "jid-wardrobe", [-1.4, 0.0, 1.6], [1.0, 2.0, 0.6]),
    _obj("Oak dining chair", "jid-chair", [1.2, 0.0, 1.2], [0.45, 0.9, 0.5]),
    _obj("Oak dining chair", "jid-chair", [1.2, 0.0, 0.4], [0.45, 0.9, 0.5]),
    _obj("Brass floor lamp", NEED_RETRIEVAL, [1.6, 0.0, -1.6], [0.3, 1.6, 0.3]),
]


def _task(objects: list[dict[str, Any]], instruction: str = "A bedroom with a bed, a wardrobe and two chairs.") -> Task:
    return Task("bedroom_950", "scenerevis", inputs={"instruction": instruction,
                                                     "initial_scene": {**ROOM, "objects": objects}},
                target={"room_type": "bedroom"}, metadata={"room": "bedroom", "room_type": "bedroom"})


def _started(address: str) -> tuple[SceneReVisEnv, Observation]:
    env = SceneReVisEnv(SceneReVisOptions(render=False, address=address))
    obs, _ = env.reset(_task(OBJECTS), seed=0)
    return env, obs


def test_call_names_follow_the_address_mode() -> None:
    _, by_id = _started("id")
    _, by_jid = _started("jid")
    assert call_names(by_id.state["scene"]) == by_id.state["object_ids"] == [f"obj_{k}" for k in range(1, 6)]
    assert all("id" not in o for o in by_jid.state["scene"]["objects"])
    assert call_names(by_jid.state["scene"]) == ["jid-bed", "jid-wardrobe", None, None, None]
    assert by_jid.state["object_ids"] == by_id.state["object_ids"]  # what the physics report names


@pytest.mark.parametrize("address", ADDRESSES)
@pytest.mark.parametrize(("tool", "field"), [("move_object", "pos"), ("rotate_object", "rot"),
                                             ("scale_object", "size")])
def test_each_degradation_edits_the_object_it_names(address: str, tool: str, field: str) -> None:
    env, obs = _started(address)
    scene = obs.state["scene"]
    call = next(c for seed in range(40) for c in corrupt_calls(scene["objects"], 1.0, seed) if c["name"] == tool)
    result = env.step(Action(text=turn_reply("Degrading.", [call])))
    assert result.observation.state["errors"] == [] and result.info["valid"]
    after = result.observation.state["scene"]["objects"]
    changed = [k for k, (a, b) in enumerate(zip(scene["objects"], after, strict=True)) if a != b]
    assert len(changed) == 1
    k = changed[0]
    assert [key for key in after[k] if after[k][key] != scene["objects"][k][key]] == [field]
    named = call_names(scene)[k]
    assert named is not None and call["arguments"] == {("id" if address == "id" else "jid"): named,
                                                       **{a: v for a, v in call["arguments"].items()
                                                          if a not in ("id", "jid")}}


@pytest.mark.parametrize("address", ADDRESSES)
def test_the_fraction_is_of_the_objects_a_call_names(address: str) -> None:
    env, obs = _started(address)
    scene = obs.state["scene"]
    calls = corrupt_calls(scene["objects"], 1.0, 3)
    targets = {c["arguments"].get("id") or c["arguments"]["jid"] for c in calls}
    expected = {f"obj_{k}" for k in range(1, 6)} if address == "id" else {"jid-bed", "jid-wardrobe"}
    assert targets == expected and len(calls) == len(expected)
    assert len(corrupt_calls(scene["objects"], 0.5, 3)) == (3 if address == "id" else 1)  # floor(n / 2 + 0.5)
    result = env.step(Action(text=turn_reply("Degrading.", [*calls, {"name": "terminate",
                                                                      "arguments": {"reason": "done"}}])))
    assert result.terminated and result.observation.state["errors"] == []


def _refused(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    run_dir = tmp_path / "run"
    rc = main(["run", "scenerevis", *args, "--limit", "1", "-q", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert not run_dir.exists()
    return err[0]


@pytest.mark.parametrize("agent", ["oracle", "degraded"])
def test_chain_replaying_agents_are_refused_under_address_jid(agent: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(["--agent", agent, "--split", "chains", "-o", "address=jid"], tmp_path, capsys)
    assert f"agent {agent!r} replays chains that name objects by instance id" in line
    assert "use -o address=id" in line
    suite = get_suite("scenerevis")
    assert suite.check_run is not None
    suite.check_run(RunChoice(agent, "diagnose-act", "chains", suite.parse_options({"address": "id"})))
    suite.check_run(RunChoice("diagnose", "diagnose-act", "demo", suite.parse_options({"address": "jid"})))


def _play(agent: Any, task: Task, address: str, replies: list[str] | None = None
          ) -> tuple[SceneReVisOutcome, Observation]:
    env = SceneReVisEnv(SceneReVisOptions(render=False, address=address))
    ctx = EpisodeContext(task=task, seed=0)
    replies = [] if replies is None else replies

    async def run() -> Observation:
        obs, _ = env.reset(task, seed=0)
        while True:
            replies.append(str((action := await agent.act(obs, ctx)).text))
            result = env.step(action)
            obs = result.observation
            if result.terminated or result.truncated:
                return obs

    last = asyncio.run(run())
    return env.outcome(), last


def _pairs(obs: Observation) -> set[frozenset[str]]:
    return {frozenset(pair[:2]) for pair in obs.state["collisions"]}


def test_diagnose_repairs_what_a_jid_names_and_stops_with_the_rest_said() -> None:
    # The bed overlaps the wardrobe (both named alone); the two chairs of one model overlap each other.
    objects = [_obj("Grey upholstered queen bed", "jid-bed", [-0.8, 0.0, 0.6], [1.6, 0.5, 2.0]),
               _obj("White wardrobe with two doors", "jid-wardrobe", [-1.4, 0.0, 1.6], [1.0, 2.0, 0.6]),
               _obj("Oak dining chair", "jid-chair", [1.2, 0.0, 1.2], [0.45, 0.9, 0.5]),
               _obj("Oak dining chair", "jid-chair", [1.2, 0.0, 0.9], [0.45, 0.9, 0.5])]
    task = _task(objects)
    start = SceneReVisEnv(SceneReVisOptions(render=False, address="jid")).reset(task, seed=0)[0]
    assert _pairs(start) == {frozenset({"obj_1", "obj_2"}), frozenset({"obj_3", "obj_4"})}
    replies: list[str] = []
    out, last = _play(agents.diagnose(task, None, SceneReVisOptions()), task, "jid", replies)
    assert out.termination == "terminate" and out.invalid_replies == 0
    assert _pairs(last) == {frozenset({"obj_3", "obj_4"})}  # what no call can name stays, said so
    assert replies[-1].count("1 physical conflict(s) remain between objects that no call can name alone") == 2
    out, last = _play(agents.diagnose(task, None, SceneReVisOptions()), task, "id")
    assert out.termination == "terminate" and out.invalid_replies == 0 and _pairs(last) == set()


@pytest.mark.parametrize("task", load_tasks("goal", 0)[:2], ids=lambda t: t.id)
def test_diagnose_repairs_goal_rooms_under_address_jid(task: Task) -> None:
    out, last = _play(agents.diagnose(task, None, SceneReVisOptions()), task, "jid")
    assert out.termination == "terminate" and out.invalid_replies == 0
    assert last.state["collisions"] == [] and last.state["out_of_bounds"] == []


@pytest.mark.parametrize("factory", [agents.one_pass, agents.random_placement], ids=["one-pass", "random"])
def test_baselines_play_valid_replies_under_address_jid(factory: Any) -> None:
    task = load_tasks("demo", 0)[0]
    out, _ = _play(factory(task, None, SceneReVisOptions()), task, "jid")
    assert out.turns == 3 and out.termination == "terminate" and out.invalid_replies == 0
    assert out.scene is not None and out.scene["objects"] and all("id" not in o for o in out.scene["objects"])


_SCENE = re.compile(r"<current_scene>\s*```json\s*(.*?)```", re.DOTALL)


def _jid_model(request: ChatRequest) -> str:
    """A model that names objects by the jid it reads in the scene it is shown."""
    found = _SCENE.search(request.messages[-1].text)
    if found is None:
        return create_reply({**ROOM, "objects": []})
    objects = json.loads(found.group(1))["objects"]
    if not objects:
        return turn_reply("An empty room: a bed first.", [{"name": "add_object", "arguments": {
            "object_description": "Grey upholstered queen bed", "position": [0.0, 0.0, -1.0],
            "rotation": UPRIGHT, "size": [1.6, 0.5, 2.0]}}])
    if objects[0]["pos"][0] == 0.0:
        return turn_reply("Shift the bed.", [{"name": "move_object", "arguments": {
            "jid": objects[0]["jid"], "new_position": [0.3, 0.0, -1.0]}}])
    return turn_reply("Done.", [{"name": "terminate", "arguments": {"reason": "The bed is placed."}}])


def test_the_model_agent_names_objects_by_jid() -> None:
    task = load_tasks("demo", 0)[0]
    model = ScriptedChat(_jid_model)
    agent = agents.llm(task, model, SceneReVisOptions(address="jid", render=False))
    out, _ = _play(agent, task, "jid")
    assert out.termination == "terminate" and out.invalid_replies == 0 and out.applied_calls == 3
    assert out.scene is not None and out.scene["objects"][0]["pos"] == [0.3, 0.0, -1.0]
    assert "every object carrying the jid" in model.requests[0].messages[0].text
