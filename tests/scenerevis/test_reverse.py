"""Algorithm 1: exact replay to the source room, determinism, operation statistics and the
inverse-operation rules, on real 3D-FRONT rooms and on generated rooms."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from buildbench.suites.scenerevis.actions import Addressing, apply_calls
from buildbench.suites.scenerevis.generate.flat import (
    MASKED_JID,
    canonical_objects,
    prepare_source,
    quat_yaw_deg,
    read_scenes,
    volume_m3,
)
from buildbench.suites.scenerevis.generate.pipeline import ReverseOptions, chains_for_scene
from buildbench.suites.scenerevis.generate.replay import ToolCallError, replay, state_of
from buildbench.suites.scenerevis.generate.reverse import (
    OP_PROBS,
    OPS,
    _pick_by_volume,
    chain_rng,
    op_counts,
    reverse_chain,
)
from buildbench.suites.scenerevis.generate.rooms import ROOM_TYPES, generate_rooms

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REAL = SHARED / "data" / "scenerevis" / "respace_scenes" / "dataset_bedroom_test.jsonl"


@pytest.fixture(scope="module")
def real_rooms() -> list[dict]:
    if not REAL.exists():
        pytest.skip(f"shared data not found: {REAL}")
    rooms = []
    for scene in read_scenes(REAL):
        rooms.append(prepare_source(scene)[0])
        if len(rooms) == 40:
            break
    return rooms


@pytest.fixture(scope="module")
def gen_rooms() -> list[dict]:
    return generate_rooms(14, seed=5)


def _assert_replays(records: list[dict], source: dict) -> None:
    assert records, "no chain was written"
    for rec in records:
        built = replay(rec)
        assert canonical_objects(built) == canonical_objects(source), rec["id"]
        for key in ("bounds_top", "bounds_bottom", "room_type", "room_id"):
            assert built[key] == source[key]


def test_real_rooms_replay_exactly(real_rooms: list[dict]) -> None:
    opts = ReverseOptions(seed=11, candidates=4, keep=3, filter_sources=False)
    for i, room in enumerate(real_rooms):
        records, _ = chains_for_scene(room, i, opts)
        assert len(records) == 3
        _assert_replays(records, room)


def test_generated_rooms_replay_exactly(gen_rooms: list[dict]) -> None:
    assert {r["room_type"] for r in gen_rooms} == set(ROOM_TYPES)
    opts = ReverseOptions(seed=3, candidates=5, keep=3)
    for i, room in enumerate(gen_rooms):
        records, stats = chains_for_scene(room, i, opts)
        assert stats.filtered_out == 0
        _assert_replays(records, room)


def test_replay_refuses_a_broken_chain(gen_rooms: list[dict]) -> None:
    records, _ = chains_for_scene(gen_rooms[0], 0, ReverseOptions(seed=1, candidates=1, keep=1))
    rec = json.loads(json.dumps(records[0]))
    turn = next(m for m in rec["messages"][3:] if m["role"] == "assistant")
    turn["content"] = turn["content"].replace('"tool_1", "name": "add_object"', '"tool_1", "name": "move_object"')
    with pytest.raises(ToolCallError, match="messages"):
        replay(rec)


def test_same_seed_same_chains_other_seed_differs(gen_rooms: list[dict]) -> None:
    room = gen_rooms[2]
    a = chains_for_scene(room, 7, ReverseOptions(seed=4))[0]
    b = chains_for_scene(room, 7, ReverseOptions(seed=4))[0]
    c = chains_for_scene(room, 7, ReverseOptions(seed=5))[0]
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(c)


@pytest.mark.parametrize("mode", ["multi", "single"])
def test_operation_shares_match_the_probabilities(gen_rooms: list[dict], mode: str) -> None:
    chains = [reverse_chain(room, chain_rng(2, i, k), mode=mode)
              for i, room in enumerate(gen_rooms) for k in range(40)]
    counts = op_counts(chains)
    total = sum(counts.values())
    assert total > 3000
    for op, p in zip(OPS, OP_PROBS[mode], strict=True):
        assert abs(counts[op] / total - p) < 0.025, (op, counts[op] / total, p)
    assert all(4 <= ch.target_turns <= 8 and len(ch.turns) <= ch.target_turns for ch in chains)
    assert {ch.target_turns for ch in chains} == set(range(4, 9))


def test_forward_calls_follow_the_inverse_rules(gen_rooms: list[dict]) -> None:
    """Each recorded call, applied to the state just before it, undoes one perturbation of
    the ranges Algorithm 1 allows."""
    seen = set()
    for i, room in enumerate(gen_rooms):
        for k in range(6):
            chain = reverse_chain(room, chain_rng(9, i, k))
            state = state_of(chain.empty)
            for turn in chain.turns:
                assert all(o["jid"] == MASKED_JID for o in turn.before["objects"])
                for call in turn.calls:
                    args = call["arguments"]
                    obj = next((o for o in state.objects if o["id"] == args.get("jid", args.get("jid_to_replace"))),
                               None)
                    name = call["name"]
                    seen.add(name)
                    if name == "move_object":
                        dx = abs(obj["pos"][0] - args["new_position"][0])
                        dz = abs(obj["pos"][2] - args["new_position"][2])
                        assert dx <= 0.505 and dz <= 0.505 and obj["pos"][1] == args["new_position"][1]
                    elif name == "scale_object":
                        ratios = [c / n for c, n in zip(obj["size"], args["new_size"], strict=True) if n > 0.05]
                        assert all(0.69 <= r <= 1.31 for r in ratios) and max(ratios) - min(ratios) < 0.02
                    elif name == "remove_object":
                        assert all(0.3 <= s <= 2.0 for s in obj["size"]) and obj["pos"][1] == 0.0
                        assert abs(obj["pos"][0]) <= 2.0 and abs(obj["pos"][2]) <= 2.0
                    elif name == "replace_object":
                        assert obj["desc"] != args["new_object_description"]
                    result = apply_calls(state, [call], Addressing.ID)
                    assert not result.errors, result.errors
                    state = result.state
    assert seen == {"add_object", "remove_object", "move_object", "rotate_object", "scale_object",
                    "replace_object"}


def test_rotate_inverse_is_snapped_or_uniform(gen_rooms: list[dict]) -> None:
    near, total = 0, 0
    for i, room in enumerate(gen_rooms):
        for k in range(20):
            chain = reverse_chain(room, chain_rng(6, i, k))
            state = state_of(chain.empty)
            for call in (c for turn in chain.turns for c in turn.calls):
                if call["name"] == "rotate_object":
                    obj = state.find(call["arguments"]["jid"])
                    final = quat_yaw_deg(call["arguments"]["new_rotation"])
                    off = abs((quat_yaw_deg(obj["rot"]) - round(final / 90.0) * 90.0 + 180.0) % 360.0 - 180.0)
                    total += 1
                    near += off <= 15.01
                state = apply_calls(state, [call], Addressing.ID).state
    # 0.8 snapped within ±15°, plus the uniform draws that land there by chance (0.2 × 1/3)
    assert total > 200 and 0.78 <= near / total <= 0.95


def test_stage_aware_volume_rule() -> None:
    rng = np.random.default_rng(0)
    objs = [{"id": str(v), "size": [v, 1.0, 1.0]} for v in (0.2, 0.4, 1.0, 1.5, 2.5, 4.0)]
    picks = {p: {volume_m3(_pick_by_volume(objs, p, rng)) for _ in range(60)} for p in (0.1, 0.5, 0.9)}
    assert picks[0.1] == {0.2, 0.4}
    assert picks[0.5] == {1.0, 1.5}
    assert picks[0.9] == {2.5, 4.0}
    only_small = objs[:2]
    assert {volume_m3(_pick_by_volume(only_small, 0.9, rng)) for _ in range(40)} == {0.2, 0.4}


def test_oracle_task_replays_in_the_environment(gen_rooms: list[dict]) -> None:
    from buildbench.harness import Action
    from buildbench.suites.scenerevis.agents.scripted import create_reply, turn_reply
    from buildbench.suites.scenerevis.env import SceneReVisEnv
    from buildbench.suites.scenerevis.generate.replay import oracle_task
    from buildbench.suites.scenerevis.options import SceneReVisOptions

    room = gen_rooms[3]
    rec = chains_for_scene(room, 3, ReverseOptions(seed=2, candidates=2, keep=1))[0][0]
    task = oracle_task(rec)
    chain = task.target["chain"]
    assert task.inputs["instruction"] == rec["metadata"]["global_user_instruction"]
    env = SceneReVisEnv(SceneReVisOptions(render=False, max_turns=len(chain["turns"]) + 2))
    env.reset(task, seed=0)
    env.step(Action(text=create_reply(chain["room"])))
    for calls in chain["turns"]:
        env.step(Action(text=turn_reply("replay", calls)))
    assert canonical_objects(env.outcome().scene) == canonical_objects(room)
