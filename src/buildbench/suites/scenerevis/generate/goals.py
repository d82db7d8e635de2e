"""Goal-oriented test tasks (spec §5.1, Table 3): real rooms made messy or incomplete, for
the agent to repair. The paper does not say how its initial scenes were made; these are our
rules, applied to room i with ``default_rng([seed, i, condition number])``:

* Rooms with fewer than :data:`MIN_OBJECTS` objects (after :func:`.flat.prepare_source`)
  are skipped.
* **missing only** (``missing``): remove m = max(1, round(u · n)) objects, u ~ U(0.3, 0.5),
  uniformly without replacement, except that the first removed is one of the room type's
  essentials (§4.3 lists) whenever the room has one; at least 2 objects stay.
* **chaotic only** (``chaotic``): disturb k = ⌈0.6 · n⌉ objects chosen uniformly: each moves
  a distance U(0.3, 1.0) m in a uniform direction on the floor (its centre then clamped to
  the room's bounding box grown by 0.5 m, so it may poke through a wall), and with
  probability 0.5 turns to a uniform yaw; height, size and description are kept.
* **chaotic & missing** (``chaotic_missing``): the missing rule, then the chaotic rule on
  what is left.

Objects keep their instance ids and assets. Each task holds the perturbed room as
``initial_scene``, the untouched room as ``reference_scene`` (never shown to the agent), and
what was done (``removed``: descriptions; ``disturbed``: ids).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from buildbench.harness import Task

from .assets import ESSENTIALS, normalize_room_type
from .flat import Scene, copy_scene, prepare_source, yaw_quat

CONDITIONS = ("chaotic_missing", "chaotic", "missing")
MIN_OBJECTS = 4
REMOVE_SHARE = (0.3, 0.5)
DISTURB_SHARE = 0.6
MOVE_M = (0.3, 1.0)
TURN_P = 0.5
CLAMP_MARGIN_M = 0.5

_INSTRUCTIONS = {
    "missing": ("This {room} is only partly furnished. Complete it with what a {room} needs, keeping the "
                "pieces that are already well placed."),
    "chaotic": ("The furniture in this {room} has been pushed around and knocked askew. Rearrange it into a "
                "tidy, usable layout with nothing overlapping or outside the walls."),
    "chaotic_missing": ("This {room} is messy and incomplete: pieces are out of place and some are missing. "
                        "Put everything back in order and add what the room lacks."),
}


def _remove(scene: Scene, rng: np.random.Generator) -> list[str]:
    objs = scene["objects"]
    n = len(objs)
    m = min(max(1, round(float(rng.uniform(*REMOVE_SHARE)) * n)), n - 2)
    words = [w for ws in ESSENTIALS.get(normalize_room_type(scene["room_type"]), {}).values() for w in ws]
    essential = [i for i, o in enumerate(objs) if any(w in o["desc"].lower() for w in words)]
    picks: list[int] = []
    if essential:
        picks.append(essential[int(rng.integers(len(essential)))])
    rest = [i for i in range(n) if i not in picks]
    picks += [rest[int(i)] for i in rng.choice(len(rest), size=m - len(picks), replace=False)]
    removed = [objs[i]["desc"] for i in sorted(picks)]
    scene["objects"] = [o for i, o in enumerate(objs) if i not in set(picks)]
    return removed


def _disturb(scene: Scene, rng: np.random.Generator) -> list[str]:
    objs = scene["objects"]
    xs = [p[0] for p in scene["bounds_bottom"]]
    zs = [p[2] for p in scene["bounds_bottom"]]
    k = math.ceil(DISTURB_SHARE * len(objs))
    moved = []
    for i in sorted(int(i) for i in rng.choice(len(objs), size=k, replace=False)):
        o = objs[i]
        dist, angle = float(rng.uniform(*MOVE_M)), float(rng.uniform(0.0, 2 * math.pi))
        x = min(max(o["pos"][0] + dist * math.cos(angle), min(xs) - CLAMP_MARGIN_M), max(xs) + CLAMP_MARGIN_M)
        z = min(max(o["pos"][2] + dist * math.sin(angle), min(zs) - CLAMP_MARGIN_M), max(zs) + CLAMP_MARGIN_M)
        o["pos"] = [round(x, 3), o["pos"][1], round(z, 3)]
        if rng.random() < TURN_P:
            o["rot"] = yaw_quat(float(rng.uniform(0.0, 360.0)))
        moved.append(o["id"])
    return moved


def too_few_objects(rooms: list[Scene]) -> list[int]:
    """Indices of the rooms :func:`goal_tasks` makes no task from (fewer than MIN_OBJECTS objects)."""
    return [i for i, raw in enumerate(rooms) if _too_few(prepare_source(raw)[0])]


def _too_few(room: dict[str, Any]) -> bool:
    return len(room["objects"]) < MIN_OBJECTS


def goal_tasks(rooms: list[Scene], condition: str, seed: int) -> list[dict[str, Any]]:
    """One task per room with at least MIN_OBJECTS objects, perturbed as ``condition`` says."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r} is not one of {', '.join(CONDITIONS)}")
    tasks = []
    for i, raw in enumerate(rooms):
        room, _ = prepare_source(raw)
        if _too_few(room):
            continue
        rng = np.random.default_rng([seed, i, CONDITIONS.index(condition)])
        scene = copy_scene(room)
        removed = _remove(scene, rng) if condition != "chaotic" else []
        disturbed = _disturb(scene, rng) if condition != "missing" else []
        room_type = normalize_room_type(room["room_type"])
        tasks.append({
            "id": f"goal_{condition}_{i:04d}",
            "condition": condition,
            "room_type": room_type,
            "instruction": _INSTRUCTIONS[condition].format(room=room_type),
            "initial_scene": scene,
            "reference_scene": room,
            "removed": removed,
            "disturbed": disturbed,
        })
    return tasks


def to_task(goal: dict[str, Any]) -> Task:
    """The goal task as a harness :class:`~buildbench.harness.Task` (the env starts on
    ``inputs["initial_scene"]`` at turn 1; the reference room is target-only)."""
    return Task(id=goal["id"], suite="scenerevis",
                inputs={"instruction": goal["instruction"], "initial_scene": goal["initial_scene"]},
                target={"room_type": goal["room_type"], "reference_scene": goal["reference_scene"]},
                metadata={"room_type": goal["room_type"], "split": f"goal-{goal['condition']}",
                          "condition": goal["condition"], "removed": len(goal["removed"]),
                          "disturbed": len(goal["disturbed"])})
