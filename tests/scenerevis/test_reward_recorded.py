"""Every reward value of recorded episodes stays what it was: the scripted agents' episodes (ids and
the released ``address=jid`` mode, box and procedural geometry) and hand-written replies that hit
each format rule, replayed turn by turn against ``data/recorded-rewards.json``.

The file was written before the reward terms moved from ``check/`` into ``reward/``; rewrite it
(``python tests/scenerevis/test_reward_recorded.py --write``) only for a change meant to alter rewards.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Action, RunConfig, Task, execute_episode, get_suite
from buildbench.suites.scenerevis.env import SceneReVisEnv
from buildbench.suites.scenerevis.options import SceneReVisOptions

DATA = Path(__file__).resolve().parent / "data" / "recorded-rewards.json"

#: (agent, split, tasks, options): the scripted agents' episodes, in-process, scored as a run scores them.
EPISODES: list[tuple[str, str, int, dict[str, Any]]] = [
    ("diagnose", "demo", 2, {}),
    ("diagnose", "demo", 1, {"address": "jid"}),
    ("one-pass", "demo", 1, {"geometry": "procedural"}),
    ("random", "demo", 2, {}),
    ("random", "demo", 1, {"address": "jid"}),
    ("oracle", "chains", 2, {}),
    ("oracle", "chains", 1, {"address": "jid"}),
    ("degraded", "chains", 1, {"degrade": 0.75}),
]

_BOX = {"room_type": "bedroom", "room_id": "Bedroom-7",
        "bounds_bottom": [[-2, 0, 2], [2, 0, 2], [2, 0, -2], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]], "objects": []}
_HEX = {**_BOX, "bounds_bottom": [[-2, 0, 2], [0, 0, 2.5], [2, 0, 2], [2, 0, -2], [0, 0, -2.5], [-2, 0, -2]],
        "bounds_top": [[-2, 2.6, 2], [0, 2.6, 2.5], [2, 2.6, 2], [2, 2.6, -2], [0, 2.6, -2.5], [-2, 2.6, -2]]}
_TASK = Task("bedroom_901", "scenerevis", inputs={"instruction": "A calm bedroom with a bed, a nightstand and a rug."},
             target={"room_type": "bedroom"}, metadata={"room": "bedroom", "room_type": "bedroom"})


def _create(room: dict[str, Any]) -> str:
    return f"<create_scene>\n```json\n{json.dumps(room)}\n```\n</create_scene>"


def _calls(*calls: Any) -> str:
    return f"<think>Diagnosis.</think>\n<tool_calls>\n{json.dumps(list(calls))}\n</tool_calls>"


def _add(desc: str, pos: list[float], size: list[float]) -> dict[str, Any]:
    return {"name": "add_object", "arguments": {"object_description": desc, "position": pos,
                                                "rotation": [0, 0, 0, 1], "size": size}}


#: Hand-written replies, one list per episode: turn 0 variants, then each r_fmt penalty, sizes
#: off their priors, a lamp on no surface, and the final turn.
REPLIES: dict[str, list[str]] = {
    "box-room": [
        _create(_BOX),
        _calls(_add("Modern queen bed with a grey headboard", [0, 0, -0.95], [1.6, 0.5, 2.0]),
               _add("Walnut nightstand with two drawers", [1.2, 0, -1.7], [0.5, 0.55, 0.42])),
        "<tool_calls>[]</tool_calls><think>late</think>",
        _calls(_add("Huge table lamp", [1.2, 1.4, -1.7], [0.9, 3.5, 0.9])).replace("]\n</tool", ",]\n</tool"),
        _calls({"name": "teleport_object", "arguments": {}}, "not a call", {"arguments": {}},
               {"name": "move_object"}, {"name": "move_object", "arguments": []},
               {"name": "move_object", "arguments": {"id": "nowhere", "position": [0, 0, 0]}},
               {"name": "rotate_object", "arguments": {"rotation": [0, 0, 0, 1]}}),
        _calls(_add("Tiny wool rug", [0, 0, 0.8], [0.2, 0.3, 0.2]),
               _add("Wardrobe twice too tall", [-1.3, 0, 1.65], [1.2, 5.0, 0.6]),
               _add("Floor lamp", [-1.6, 0, -1.6], [0.3, 1.6, 0.3])),
        _calls({"name": "terminate", "arguments": {"reason": "complete"}}),
    ],
    "hex-room": [_create(_HEX), _calls(_add("Double bed", [0, 0, 0], [1.6, 0.5, 2.0])),
                 _calls({"name": "terminate", "arguments": {"reason": "complete"}})],
    "thinking-turn-0": [f"<think>plan</think>{_create(_BOX)}"],
    "wrong-room-type": [_create({**_BOX, "room_type": "kitchen"})],
    "placed-at-turn-0": [_create({**_BOX, "objects": [{"desc": "bed", "pos": [0, 0, 0], "size": [1, 1, 1]}]})],
    "too-large": [_create({**_BOX, "bounds_bottom": [[-4, 0, 4], [4, 0, 4], [4, 0, -4], [-4, 0, -4]]})],
}


def _replayed(name: str, replies: list[str], options: dict[str, Any]) -> dict[str, Any]:
    env = SceneReVisEnv(SceneReVisOptions(render=False, **options))
    try:
        env.reset(_TASK, seed=3)
        steps = []
        for reply in replies:
            result = env.step(Action(text=reply))
            steps.append({"reward": result.reward, "terms": result.info.get("reward_terms")})
            if result.terminated or result.truncated:
                break
        return {"steps": steps, "trajectory": env.outcome().trajectory_reward}
    finally:
        env.close()


def _played(agent: str, split: str, task: Task, options: dict[str, Any]) -> dict[str, Any]:
    config = RunConfig(suite="scenerevis", agent=agent, protocol="diagnose-act", split=split, workers=0,
                       options={"render": False, **options})
    with tempfile.TemporaryDirectory() as folder:
        episode = asyncio.run(execute_episode(config, task, 0, Path(folder)))
    assert episode.status == "ok", episode.error
    steps = [{"reward": s.reward, "terms": s.info.get("reward_terms")} for s in episode.steps
             if "reward_terms" in s.info]
    return {"steps": steps, "trajectory": (episode.outcome or {}).get("trajectory_reward")}


def recorded() -> dict[str, Any]:
    """Every recorded episode's per-turn rewards with their breakdowns and its trajectory return."""
    suite = get_suite("scenerevis")
    out: dict[str, Any] = {}
    for agent, split, limit, options in EPISODES:
        for task in suite.load_tasks(split, 0)[:limit]:
            key = f"{agent} {task.id} {json.dumps(options, sort_keys=True)}"
            out[key] = _played(agent, split, task, options)
    for name, replies in REPLIES.items():
        for options in ({}, {"address": "jid"}):
            out[f"replies {name} {json.dumps(options, sort_keys=True)}"] = _replayed(name, replies, options)
    # A JSON round trip, so the comparison is the file's values (floats round-trip exactly).
    return json.loads(json.dumps(out))


def _differences(got: Any, expected: Any, where: str) -> list[str]:
    """Where ``got`` departs from ``expected``: numbers beyond 1e-9 (what another machine's last bits
    could move, far below any change of a rule), anything else when not equal."""
    if isinstance(expected, dict) and isinstance(got, dict):
        if sorted(got) != sorted(expected):
            return [f"{where}: keys {sorted(got)} != {sorted(expected)}"]
        return [d for key in expected for d in _differences(got[key], expected[key], f"{where}.{key}")]
    if isinstance(expected, list) and isinstance(got, list):
        if len(got) != len(expected):
            return [f"{where}: {len(got)} items != {len(expected)}"]
        return [d for k, (g, e) in enumerate(zip(got, expected, strict=True)) for d in _differences(g, e, f"{where}[{k}]")]
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(got, numbers) and not isinstance(expected, bool):
        return [] if abs(got - expected) <= 1e-9 else [f"{where}: {got!r} != {expected!r}"]
    return [] if got == expected else [f"{where}: {got!r} != {expected!r}"]


@pytest.mark.slow
def test_the_recorded_episodes_keep_every_reward_value() -> None:
    expected = json.loads(DATA.read_text(encoding="utf-8"))
    assert _differences(recorded(), expected, "episodes") == []


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/scenerevis/test_reward_recorded.py --write")
    DATA.write_text(json.dumps(recorded(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DATA}")
