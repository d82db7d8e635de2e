"""The environment: turn 0, editing turns, malformed replies, budget, images, rewards, and the
whole loop with a scripted model behind the loopback OpenAI-compatible server."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from buildbench.harness import Action, RunConfig, Runner, Store, Task
from buildbench.harness import suite as suite_registry
from buildbench.llm import ScriptedServer, ServerReply
from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.reward import trajectory_return
from buildbench.suites.scenerevis.suite import suite as scenerevis_suite

ROOM = {"room_type": "bedroom", "room_id": "Bedroom-7",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]], "objects": []}
TASK = Task("bedroom_900", "scenerevis", inputs={"instruction": "A calm bedroom with a bed and a nightstand."},
            target={"room_type": "bedroom"}, metadata={"room": "bedroom", "room_type": "bedroom"})


def create(room: dict = ROOM) -> str:
    return f"<create_scene>\n```json\n{json.dumps(room)}\n```\n</create_scene>"


def turn(*calls: dict) -> str:
    return f"<think>Diagnosis.</think>\n<tool_calls>\n{json.dumps(list(calls))}\n</tool_calls>"


def add(desc: str, pos: list[float], size: list[float]) -> dict:
    return {"id": "t", "name": "add_object", "arguments": {"object_description": desc, "position": pos,
                                                           "rotation": [0, 0, 0, 1], "size": size}}


BED = add("Modern queen bed with a grey headboard", [0, 0, -0.95], [1.6, 0.5, 2.0])
NIGHTSTAND = add("Walnut nightstand with two drawers", [1.2, 0, -1.7], [0.5, 0.55, 0.42])
WARDROBE = add("White wardrobe", [-1.3, 0, 1.65], [1.2, 2.1, 0.6])
TERMINATE = {"id": "t", "name": "terminate", "arguments": {"reason": "complete"}}


def started(**options) -> tuple[SceneReVisEnv, object]:
    env = SceneReVisEnv(SceneReVisOptions(**options))
    env.reset(TASK, seed=5)
    result = env.step(Action(text=create()))
    return env, result


def test_turn_zero_shows_text_only_then_the_scene_and_the_merged_image():
    env = SceneReVisEnv(SceneReVisOptions())
    obs, _ = env.reset(TASK, seed=5)
    assert obs.text == TASK.inputs["instruction"] and not obs.images and obs.state["phase"] == "create"
    result = env.step(Action(text=create()))
    assert result.info["valid"] and not result.terminated
    assert "<current_scene>\n```json\n" in result.observation.text
    assert result.observation.images[0].shape == (570, 1070, 3)
    assert result.info["reward_terms"]["phase"] == "init"


def test_edits_apply_and_retrieval_fills_asset_ids():
    env, _ = started(render=False)
    result = env.step(Action(text=turn(BED, NIGHTSTAND)))
    objs = result.observation.state["scene"]["objects"]
    assert [o["id"] for o in objs] == ["obj_1", "obj_2"]
    assert all(o["jid"].startswith("3dfuture-") for o in objs)
    assert objs[1]["size"] == [0.5, 0.55, 0.42]  # the requested size is kept unless retrieved_size
    assert result.info["applied"][0].startswith("added obj_1")


def test_retrieved_size_option_takes_the_catalogue_size():
    env, _ = started(render=False, retrieved_size=True)
    obj = env.step(Action(text=turn(NIGHTSTAND))).observation.state["scene"]["objects"][0]
    assert obj["retrieved_size"] == obj["size"] and obj["size"] != [0.5, 0.55, 0.42]


MALFORMED = {
    "no tags": "I would add a bed.",
    "invalid json": "<think>x</think><tool_calls>[{\"name\": \"move_object\",</tool_calls>",
    "no think": "<tool_calls>[]</tool_calls>",
    "unbalanced": "<think>x</think><tool_calls>[]",
    "unknown id": turn({"name": "move_object", "arguments": {"jid": "obj_42", "new_position": [0, 0, 0]}}),
    "nan size": "<think>x</think><tool_calls>[{\"name\": \"scale_object\", \"arguments\": "
                "{\"jid\": \"obj_1\", \"new_size\": [NaN, 1, 1]}}]</tool_calls>",
    "huge size": turn({"name": "scale_object", "arguments": {"jid": "obj_1", "new_size": [1e9, 1, 1]}}),
    "unknown tool": turn({"name": "delete_everything", "arguments": {}}),
    "half bad": turn(WARDROBE, {"name": "remove_object", "arguments": {"jid": "obj_77"}}),
}


@pytest.mark.parametrize("label", list(MALFORMED))
def test_every_malformed_reply_gets_feedback_and_leaves_the_scene_unchanged(label):
    env, _ = started(render=False)
    env.step(Action(text=turn(BED)))
    before = env.outcome().scene
    result = env.step(Action(text=MALFORMED[label]))
    assert not result.info["valid"] and not result.terminated
    assert "Your reply was not applied; the scene is unchanged." in result.observation.text
    assert result.observation.state["errors"]
    assert env.outcome().scene == before and env.outcome().invalid_replies == 1


def test_a_bad_room_is_asked_for_again():
    env = SceneReVisEnv(SceneReVisOptions(render=False))
    env.reset(TASK, seed=5)
    bad = env.step(Action(text=create({**ROOM, "bounds_top": ROOM["bounds_top"][:2]})))
    assert not bad.info["valid"] and "could not create the room" in bad.observation.text
    assert bad.observation.state["phase"] == "create" and bad.reward == -1.0
    assert env.step(Action(text=create())).info["valid"]


def test_physics_feedback_names_collisions_with_depths():
    env, _ = started(render=False)
    overlap = add("Walnut nightstand", [1.0, 0, -1.7], [0.5, 0.55, 0.42])
    result = env.step(Action(text=turn(BED, overlap)))
    assert "<feedback>\n[Physics] Collisions: 'obj_1: Modern queen bed" in result.observation.text
    assert "(depth: 5.0cm)" in result.observation.text
    assert result.observation.state["collisions"] == [["obj_1", "obj_2", 0.05]]
    quiet, _ = started(render=False, feedback=False)
    assert "<feedback>" not in quiet.step(Action(text=turn(BED, overlap))).observation.text


def test_the_optimizer_option_repairs_after_the_edit():
    env, _ = started(render=False, optimize=True)
    outside = add("Walnut nightstand", [2.05, 0, 0.5], [0.5, 0.55, 0.42])
    result = env.step(Action(text=turn(BED, outside)))
    assert result.observation.state["out_of_bounds"] == []
    assert env.outcome().scene["objects"][1]["pos"] != [2.05, 0, 0.5]


def test_terminate_ends_with_the_final_reward_and_the_trajectory_return():
    env, first = started(render=False)
    env.step(Action(text=turn(BED, NIGHTSTAND)))
    env.step(Action(text=turn(WARDROBE)))
    last = env.step(Action(text=turn(TERMINATE)))
    assert last.terminated and not last.truncated
    out = env.outcome()
    assert out.termination == "terminate" and out.turns == 4
    assert [p for p in ("init", "turn", "turn", "final")] == [
        first.info["reward_terms"]["phase"], "turn", "turn", last.info["reward_terms"]["phase"]]
    assert out.trajectory_reward == pytest.approx(trajectory_return(out.turn_rewards))
    assert "not comparable" in out.judge.lower() or "rule" in out.judge.lower()
    with pytest.raises(Exception, match="after the episode ended"):
        env.step(Action(text=turn(TERMINATE)))


def test_the_turn_budget_truncates():
    env, _ = started(render=False, max_turns=3)
    assert not env.step(Action(text=turn(BED))).truncated
    last = env.step(Action(text=turn(NIGHTSTAND)))
    assert last.truncated and not last.terminated and env.outcome().termination == "budget"
    assert last.info["reward_terms"]["phase"] == "final"


def test_jid_addressing_hides_ids_edits_the_first_copy_and_removes_every_copy():
    env, _ = started(render=False, address="jid")
    twin = add("Walnut nightstand with two drawers", [-1.2, 0, -1.7], [0.5, 0.55, 0.42])
    scene = env.step(Action(text=turn(NIGHTSTAND, twin))).observation.state["scene"]
    jids = [o["jid"] for o in scene["objects"]]
    assert "id" not in scene["objects"][0] and jids[0] == jids[1]
    moved = env.step(Action(text=turn({"name": "move_object", "arguments": {"jid": jids[0],
                                                                            "new_position": [0, 0, 1]}})))
    assert [o["pos"] for o in moved.observation.state["scene"]["objects"]] == [[0, 0, 1], [-1.2, 0, -1.7]]
    removed = env.step(Action(text=turn({"name": "remove_object", "arguments": {"jid": jids[0]}})))
    assert removed.observation.state["scene"]["objects"] == []


def test_a_goal_task_starts_on_its_scene_at_turn_one():
    scene = {**ROOM, "objects": [{"desc": "Queen bed", "size": [1.6, 0.5, 2.0], "pos": [0, 0, 0],
                                  "rot": [0, 0, 0, 1], "jid": "src-bed"}]}
    goal = Task("goal_x", "scenerevis", inputs={"instruction": "Tidy this bedroom.", "initial_scene": scene})
    env = SceneReVisEnv(SceneReVisOptions())
    obs, info = env.reset(goal, seed=1)
    assert info["turn"] == 1 and obs.images and '"id": "obj_1"' in obs.text and '"jid": "src-bed"' in obs.text


def test_same_seed_same_observations():
    def play() -> tuple[list[str], list[np.ndarray]]:
        env = SceneReVisEnv(SceneReVisOptions())
        env.reset(TASK, seed=11)
        results = [env.step(Action(text=t)) for t in (create(), turn(BED, NIGHTSTAND), turn(WARDROBE))]
        return [r.observation.text for r in results], [r.observation.images[0] for r in results]

    (t1, i1), (t2, i2) = play(), play()
    assert t1 == t2 and all(np.array_equal(a, b) for a, b in zip(i1, i2, strict=True))


# --- the whole loop over HTTP --------------------------------------------------------------
@pytest.fixture
def one_task(monkeypatch: pytest.MonkeyPatch) -> None:
    suite = dataclasses.replace(scenerevis_suite, load_tasks=lambda split, seed: [TASK])
    monkeypatch.setitem(suite_registry._loaded, "scenerevis", suite)


def test_a_scripted_model_through_the_loopback_server(one_task, tmp_path):
    replies = [ServerReply(text=create()), ServerReply(text=MALFORMED["unknown tool"]),
               ServerReply(text=turn(BED, NIGHTSTAND)), ServerReply(text=turn(WARDROBE)),
               ServerReply(text=turn(TERMINATE))]
    with ScriptedServer(replies) as server:
        config = RunConfig(suite="scenerevis", agent="llm", protocol="diagnose-act", split="demo",
                           model=f"vllm:scripted@{server.base_url}", workers=0, options={"max_retries": 0})
        result = Runner(config, tmp_path).run()
        requests = [r.body for r in server.requests]
    with Store(tmp_path) as store:
        ep = next(store.episodes())
    assert len(requests) == 5 and ep.status == "ok"
    first = requests[0]["messages"]
    assert first[0]["role"] == "system" and "<create_scene>" in first[0]["content"]
    assert first[1]["content"] == TASK.inputs["instruction"]  # turn 0: text only
    assert requests[0]["temperature"] == 0.0

    def images(message: dict) -> int:
        content = message["content"]
        return 0 if isinstance(content, str) else sum(p["type"] == "image_url" for p in content)

    last = requests[4]["messages"]
    assert [images(m) for m in last if m["role"] == "user"] == [0, 0, 0, 0, 1]  # only the current image
    refused = [m for m in requests[2]["messages"] if m["role"] == "user"][-1]["content"]
    refused_text = refused if isinstance(refused, str) else "".join(p.get("text", "") for p in refused)
    assert "not applied" in refused_text and "unknown tool 'delete_everything'" in refused_text
    assert ep.outcome["termination"] == "terminate" and ep.outcome["invalid_replies"] == 1
    assert [o["id"] for o in ep.outcome["scene"]["objects"]] == ["obj_1", "obj_2", "obj_3"]
    assert ep.metrics["collision_rate"] == 0.0 and ep.metrics["oob_rate"] == 0.0
    assert any(step.image_paths for step in ep.steps)
    assert result.summary["tables"]["Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)"]
