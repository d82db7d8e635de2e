"""Goal-oriented tasks: the three perturbation conditions follow their written rules."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.generate.assets import ESSENTIALS
from buildbench.suites.scenerevis.generate.flat import prepare_source, read_scenes
from buildbench.suites.scenerevis.generate.goals import CONDITIONS, goal_tasks, to_task
from buildbench.suites.scenerevis.generate.rooms import generate_rooms

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REAL = SHARED / "data" / "scenerevis" / "respace_scenes" / "dataset_bedroom_test.jsonl"


@pytest.fixture(scope="module")
def rooms() -> list[dict]:
    if not REAL.exists():
        pytest.skip(f"shared data not found: {REAL}")
    out = []
    for scene in read_scenes(REAL):
        out.append(scene)
        if len(out) == 60:
            break
    return out


def _by_id(scene: dict) -> dict[str, dict]:
    return {o["id"]: o for o in scene["objects"]}


def test_missing_only(rooms: list[dict]) -> None:
    tasks = goal_tasks(rooms, "missing", seed=1)
    assert len(tasks) == sum(1 for r in rooms if len(prepare_source(r)[0]["objects"]) >= 4) > 20
    for t in tasks:
        ref, init = _by_id(t["reference_scene"]), _by_id(t["initial_scene"])
        n, kept = len(ref), len(init)
        assert n - kept == len(t["removed"]) >= 1 and kept >= 2
        assert all(init[i] == ref[i] for i in init) and not t["disturbed"]
        if n >= 7:
            assert 0.25 * n <= n - kept <= 0.55 * n
        words = [w for ws in ESSENTIALS["bedroom"].values() for w in ws]
        if any(w in o["desc"].lower() for o in ref.values() for w in words):
            assert any(w in d.lower() for d in t["removed"] for w in words)


def test_chaotic_only(rooms: list[dict]) -> None:
    for t in goal_tasks(rooms, "chaotic", seed=1):
        ref, init = _by_id(t["reference_scene"]), _by_id(t["initial_scene"])
        assert set(ref) == set(init) and not t["removed"]
        assert len(t["disturbed"]) == math.ceil(0.6 * len(ref))
        for oid, o in init.items():
            r = ref[oid]
            assert (o["desc"], o["size"], o["pos"][1]) == (r["desc"], r["size"], r["pos"][1])
            if oid in t["disturbed"]:
                d = math.dist((o["pos"][0], o["pos"][2]), (r["pos"][0], r["pos"][2]))
                assert d <= 1.0 + 1e-6 and (d >= 0.299 or o["pos"] != r["pos"])
            else:
                assert o == r


def test_both_and_determinism(rooms: list[dict]) -> None:
    a = goal_tasks(rooms, "chaotic_missing", seed=3)
    assert json.dumps(a) == json.dumps(goal_tasks(rooms, "chaotic_missing", seed=3))
    assert json.dumps(a) != json.dumps(goal_tasks(rooms, "chaotic_missing", seed=4))
    for t in a:
        assert t["removed"] and t["disturbed"]
        assert set(t["disturbed"]) <= {o["id"] for o in t["initial_scene"]["objects"]}
    with pytest.raises(ValueError, match="condition"):
        goal_tasks(rooms, "tidy", seed=0)


def test_goal_tasks_start_the_environment() -> None:
    rooms = generate_rooms(3, seed=0)
    for cond in CONDITIONS:
        task = to_task(goal_tasks(rooms, cond, seed=0)[0])
        env = SceneReVisEnv()
        obs = env.reset(task, seed=0).observation
        assert "<current_scene>" in obs.text and obs.state["turn"] == 1
        assert set(task.inputs) == {"instruction", "initial_scene"}
