"""Algorithm 1 (spec §3.2): take a finished room apart step by step, record the inverse of
each step as a forward tool call, and read the record backwards as a build trajectory.

Per chain: T ~ U{4..8}. For reverse step t = 0 … T−1 on the current scene S (stop when S is
empty), with progress p = t/(T−1):

* t = T−1: every remaining object is taken away; each gives a forward ``add_object`` with
  its exact desc/pos/rot/size.
* otherwise n ~ U{1..|S|} operations, each drawn from :data:`OP_PROBS` (multi-turn mode:
  add .35, move .20, rotate .20, scale .05, replace .10, remove .10; single-turn mode: add
  .30, scale .10). The inverse is applied to the earlier scene S' and the forward call
  recorded:

  - add: remove an object picked by the stage-aware volume rule (V = size product:
    p < .3 → V < .5 m³; .3 ≤ p < .7 → .5 ≤ V < 2 m³; p ≥ .7 → V ≥ 2 m³; an empty bucket
    → any object; uniform within the bucket);
  - remove: insert a pool asset with size ~ U(.3, 2)³ (2 decimals), x, z ~ U(−2, 2), y = 0,
    a uniform yaw;
  - move: x and z each shifted by U(−.5, .5) m (kept within the environment's ±50 m);
  - rotate: with probability .8 the final yaw snapped to 90° plus U(−15°, 15°), else a
    uniform yaw; the earlier quaternion is ``[0, sin θ/2, 0, cos θ/2]``;
  - scale: the size times one factor U(.7, 1.3), each extent kept within the sizes the
    environment accepts (≥ 5 mm, ≤ 20 m), so a chain from a thin source object still replays;
  - replace: desc and jid swapped for a different pool asset.

Two choices the spec leaves open, made here: the forward calls of one turn are the
inverses in reverse order (so applying them to S' gives S exactly, whatever objects they
share); an object inserted by a ``remove`` inverse is not touched again in the same step
(a forward turn that edits an object and then deletes it teaches nothing).

Objects are tracked by instance id during the reverse pass; a forward pass then renames
them to the ids the environment gives on ``add_object`` and masks added/replaced jids
(§3.2 "JID masking"), so every recorded call is valid against the scene it is applied to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..actions import MAX_COORD_M, MAX_SIZE_M, MIN_SIZE_M
from .assets import PoolAsset, default_pool
from .flat import Obj, Scene, copy_scene, empty_room, quat_yaw_deg, volume_m3, yaw_quat
from .replay import apply_turn, flat_of, state_of

OPS = ("add", "move", "rotate", "scale", "replace", "remove")
OP_PROBS: dict[str, tuple[float, ...]] = {
    "multi": (0.35, 0.20, 0.20, 0.05, 0.10, 0.10),
    "single": (0.30, 0.20, 0.20, 0.10, 0.10, 0.10),
}
TURNS_RANGE = (4, 8)
DECOR_MAX_M3, FURNITURE_MAX_M3 = 0.5, 2.0
MOVE_M = 0.5
SNAP_P, SNAP_JITTER_DEG = 0.8, 15.0
SCALE_RANGE = (0.7, 1.3)
DISTRACTOR_SIZE_M, DISTRACTOR_XZ_M = (0.3, 2.0), 2.0

_FORWARD_NAME = {"add": "add_object", "remove": "remove_object", "move": "move_object",
                 "rotate": "rotate_object", "scale": "scale_object", "replace": "replace_object"}


@dataclass
class Turn:
    """One forward step: ``calls`` applied to ``before`` give ``after``."""

    before: Scene
    calls: list[dict[str, Any]]
    after: Scene


@dataclass
class ReverseChain:
    """A forward trajectory from the empty room to ``source``.

    Attributes:
        target_turns: The T drawn for this chain (turns actually made may be fewer when the
            scene emptied early).
        ops: The operation drawn for every call of the sampled steps (not the final
            take-everything-away step), forward order: for operation statistics.
    """

    source: Scene
    turns: list[Turn]
    target_turns: int
    ops: list[str] = field(default_factory=list)

    @property
    def empty(self) -> Scene:
        return self.turns[0].before if self.turns else empty_room(self.source)


def _pick_by_volume(objs: list[Obj], progress: float, rng: np.random.Generator) -> Obj:
    if progress < 0.3:
        bucket = [o for o in objs if volume_m3(o) < DECOR_MAX_M3]
    elif progress < 0.7:
        bucket = [o for o in objs if DECOR_MAX_M3 <= volume_m3(o) < FURNITURE_MAX_M3]
    else:
        bucket = [o for o in objs if volume_m3(o) >= FURNITURE_MAX_M3]
    pool = bucket or objs
    return pool[int(rng.integers(len(pool)))]


def _addable_extent(size_m: float) -> float:
    """A perturbed extent (3 decimals) kept within what the environment accepts: scaling a
    millimetre-thin source object down would give an earlier size ``add_object`` refuses,
    and a chain must replay through the environment to its source."""
    return min(max(round(size_m, 3), MIN_SIZE_M), MAX_SIZE_M)


def _addable_coord(value_m: float) -> float:
    """A moved coordinate (2 decimals) kept within the environment's ±MAX_COORD_M, for the
    same reason."""
    return min(max(round(value_m, 2), -MAX_COORD_M), MAX_COORD_M)


def _add_call(o: Obj) -> dict[str, Any]:
    return {"name": "add_object", "_key": o["id"], "arguments": {
        "object_description": o["desc"], "position": list(o["pos"]),
        "rotation": list(o["rot"]), "size": list(o["size"])}}


def _pool_asset(pool: tuple[PoolAsset, ...], rng: np.random.Generator, avoid: str = "") -> PoolAsset:
    for _ in range(8):
        a = pool[int(rng.integers(len(pool)))]
        if a.desc != avoid:
            return a
    return a


class _Reverser:
    def __init__(self, pool: tuple[PoolAsset, ...], probs: tuple[float, ...], rng: np.random.Generator) -> None:
        self.pool, self.rng = pool, rng
        self.cum = np.cumsum(probs) / sum(probs)
        self.n_inserted = 0

    def draw_op(self) -> str:
        return OPS[min(int(np.searchsorted(self.cum, self.rng.random(), side="right")), len(OPS) - 1)]

    def inverse(self, op: str, earlier: Scene, fresh: set[str], progress: float) -> tuple[dict[str, Any], str] | None:
        """Apply the inverse of ``op`` to ``earlier``; the forward call, or None if no object fits."""
        rng = self.rng
        objs = earlier["objects"]
        if op == "remove":
            a = _pool_asset(self.pool, rng)
            self.n_inserted += 1
            lo, hi = DISTRACTOR_SIZE_M
            obj: Obj = {"id": f"~{self.n_inserted}", "desc": a.desc,
                   "size": [round(float(rng.uniform(lo, hi)), 2) for _ in range(3)],
                   "pos": [round(float(rng.uniform(-DISTRACTOR_XZ_M, DISTRACTOR_XZ_M)), 2), 0.0,
                           round(float(rng.uniform(-DISTRACTOR_XZ_M, DISTRACTOR_XZ_M)), 2)],
                   "rot": yaw_quat(float(rng.uniform(0.0, 360.0))), "jid": a.jid}
            objs.append(obj)
            fresh.add(obj["id"])
            return {"name": "remove_object", "arguments": {"jid": obj["id"]}}, op
        candidates = [o for o in objs if o["id"] not in fresh]
        if not candidates:
            return None
        if op == "add":
            o = _pick_by_volume(candidates, progress, rng)
            earlier["objects"] = [x for x in objs if x is not o]
            return _add_call(o), op
        o = candidates[int(rng.integers(len(candidates)))]
        if op == "move":
            final = list(o["pos"])
            o["pos"] = [_addable_coord(final[0] + float(rng.uniform(-MOVE_M, MOVE_M))), final[1],
                        _addable_coord(final[2] + float(rng.uniform(-MOVE_M, MOVE_M)))]
            return {"name": "move_object", "arguments": {"jid": o["id"], "new_position": final}}, op
        if op == "rotate":
            final = list(o["rot"])
            if rng.random() < SNAP_P:
                snapped = round(quat_yaw_deg(final) / 90.0) * 90.0
                yaw = snapped + float(rng.uniform(-SNAP_JITTER_DEG, SNAP_JITTER_DEG))
            else:
                yaw = float(rng.uniform(0.0, 360.0))
            o["rot"] = yaw_quat(yaw)
            return {"name": "rotate_object", "arguments": {"jid": o["id"], "new_rotation": final}}, op
        if op == "scale":
            final = list(o["size"])
            k = float(rng.uniform(*SCALE_RANGE))
            o["size"] = [_addable_extent(v * k) for v in final]
            return {"name": "scale_object", "arguments": {"jid": o["id"], "new_size": final}}, op
        final_desc = o["desc"]
        a = _pool_asset(self.pool, rng, avoid=final_desc)
        o["desc"], o["jid"] = a.desc, a.jid
        return {"name": "replace_object", "arguments": {"jid_to_replace": o["id"],
                                                         "new_object_description": final_desc}}, op


def reverse_chain(
    source: Scene,
    rng: np.random.Generator,
    *,
    pool: tuple[PoolAsset, ...] | None = None,
    mode: str = "multi",
) -> ReverseChain:
    """One Algorithm 1 chain for ``source`` (a checked flat scene with unique ids)."""
    rev = _Reverser(pool or default_pool(), OP_PROBS[mode], rng)
    n_turns = int(rng.integers(TURNS_RANGE[0], TURNS_RANGE[1] + 1))
    current = copy_scene(source)
    steps: list[tuple[list[dict[str, Any]], list[str]]] = []
    for t in range(n_turns):
        if not current["objects"]:
            break
        earlier = copy_scene(current)
        calls: list[dict[str, Any]] = []
        ops: list[str] = []
        if t == n_turns - 1:
            calls = [_add_call(o) for o in reversed(earlier["objects"])]
            earlier["objects"] = []
        else:
            progress = t / (n_turns - 1)
            fresh: set[str] = set()
            for _ in range(int(rng.integers(1, len(current["objects"]) + 1))):
                made = rev.inverse(rev.draw_op(), earlier, fresh, progress)
                if made is not None:
                    calls.append(made[0])
                    ops.append(made[1])
        if calls:
            steps.append((calls[::-1], ops[::-1]))
        current = earlier
    turns, ops_forward = _forward(source, steps[::-1])
    return ReverseChain(source, turns, n_turns, ops_forward)


def _forward(source: Scene, steps: list[tuple[list[dict[str, Any]], list[str]]]) -> tuple[list[Turn], list[str]]:
    """Replay the forward record from the empty room through the environment's executor,
    renaming reverse-pass handles to the ids the environment gives (see module doc)."""
    state = state_of(empty_room(source))
    names: dict[str, str] = {}
    turns: list[Turn] = []
    all_ops: list[str] = []
    before = flat_of(state)
    for calls, ops in steps:
        next_index = state.next_index
        for call in calls:  # ids of this turn's adds first: a later call may edit them
            if call["name"] == "add_object":
                names[call["_key"]] = f"obj_{next_index}"
                next_index += 1
        recorded = []
        for k, call in enumerate(calls):
            args = dict(call["arguments"])
            for key in ("jid", "jid_to_replace"):
                if key in args:
                    args[key] = names[args[key]]
            recorded.append({"id": f"tool_{k + 1}", "name": call["name"], "arguments": args})
        state, _ = apply_turn(state, recorded, f"reverse turn {len(turns) + 1}")
        after = flat_of(state)
        turns.append(Turn(before, recorded, after))
        before = after  # shared by two turns: scenes in a chain are never edited in place
        all_ops.extend(ops)
    return turns, all_ops


def chain_rng(seed: int, scene_index: int, candidate: int) -> np.random.Generator:
    return np.random.default_rng([seed, scene_index, candidate])


def op_counts(chains: list[ReverseChain]) -> dict[str, int]:
    """How often each operation was applied over the chains' sampled steps."""
    counts = dict.fromkeys(OPS, 0)
    for ch in chains:
        for op in ch.ops:
            counts[op] += 1
    return counts
