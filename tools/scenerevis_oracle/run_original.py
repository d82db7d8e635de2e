"""Drive the released SceneReVis code with generated replies on real rooms; record its answers.

Run (see README.md)::

    .venv/bin/python tools/scenerevis_oracle/run_original.py --orig /tmp/srv_orig \
        --rooms 30 --seed 0 --out tests/scenerevis/data/differential-original.jsonl

One JSON line per record:

* ``{"kind": "edit", "room", "seed", "scene", "steps": [...]}``: the room (flat, the released
  RL environment's view; in every fourth room every other object is an Objaverse asset, with a
  ``uid`` in place of the jid) and each turn's ``reply`` with the original's answer: ``calls`` (what
  its parser returned, or null), ``per_call`` effects (``applied``/``noop``/``exception``),
  ``exception`` (``"Type: message"`` when the edit raised; the scene is then unchanged and the
  released environment ends the episode), ``terminated``, ``scene`` (flat, after the turn),
  ``groups`` (``[name, count]`` of the released grouped scene, whose order the flat list
  follows), ``format_reward`` (``after``: the scene the released env checks ids against, which is the
  edited one; ``before``: the scene the reply saw) and ``physics`` of the scene after
  (pairs, out-of-bounds objects, rates, totals, the hint, ``terms``: R_col, R_oob, R_pen,
  R_oobvol as ``calculate_score`` computes them from these metrics, and ``support``: R_support
  with the keyword classes and the offline "floor" fallback).
  A sequence ends after a reply that raised or that stored unchecked values (NaN, strings…).
* ``{"kind": "init", "room", "instruction", "reply", "create_scene", "format_reward"}``: turn 0.

Physics runs ``TrimeshPhysicsMetrics`` with an empty models folder, so every object is the
released box placeholder. Its surface sampling draws from an unseeded generator; here every
``sample_surface`` call gets ``default_rng(0)`` so the recording repeats (sampling noise of
500 points stays: the comparison allows for it).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import ReplyGenerator, yaw_quaternion  # noqa: E402
from odd2_replies import Odd2ReplyGenerator, odd2_rooms  # noqa: E402
from odd3_replies import Odd3ReplyGenerator  # noqa: E402
from odd_replies import OddReplyGenerator, odd_rooms  # noqa: E402
from original import Original  # noqa: E402

ROOMS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scenerevis" / "respace_scenes" \
    / "dataset_bedroom_test.jsonl"
INSTRUCTIONS = (
    "Design a cozy bedroom with a queen bed, two nightstands and a wardrobe.",
    "Create a bright living room for a family of four.",
    "Arrange a small study room with a desk and a bookshelf.",
    "Make a calm space to read and rest.",
)


def _seed_sampling() -> None:
    import trimesh.sample

    trimesh.sample.random_generator = lambda seed=None: np.random.default_rng(0 if seed is None else seed)


def _finite(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value) and abs(value) < 1e6
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return False


def physics_record(orig: Original, grouped: dict[str, Any], models_dir: Path) -> dict[str, Any] | None:
    """The released reward physics of a scene, with the object index of every pair and OOB object."""
    objects = orig.to_flat(copy.deepcopy(grouped))["objects"]
    if not all(_finite(o.get(k)) for o in objects for k in ("pos", "size", "rot")):
        return None
    metrics_cls = orig.rl_utils.TrimeshPhysicsMetrics
    loaded: list[int] = []
    checks: list[tuple[bool, float]] = []

    class Recorder(metrics_cls):  # type: ignore[misc, valid-type]
        def _load_and_transform_mesh(self, obj_data: dict[str, Any], format_type: str = "ours") -> Any:
            mesh = super()._load_and_transform_mesh(obj_data, format_type)
            if mesh is not None:
                loaded.append(next(i for i, o in enumerate(objects) if o is obj_data or o == obj_data
                                   if i not in loaded))
            return mesh

        def _check_object_out_of_bounds(self, obj_mesh: Any, *args: Any, **kwargs: Any) -> Any:
            is_oob, volume = super()._check_object_out_of_bounds(obj_mesh, *args, **kwargs)
            full = obj_mesh.volume if obj_mesh.volume > 0 else float(np.prod(obj_mesh.extents))
            checks.append((bool(is_oob), float(volume / full) if full > 0 else 0.0))
            return is_oob, volume

    pairs: list[list[Any]] = []
    manager_cls = orig.rl_utils.trimesh.collision.CollisionManager
    original_internal = manager_cls.in_collision_internal

    def recording_internal(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original_internal(self, *args, **kwargs)
        for contact in result[1] if isinstance(result, tuple) else []:
            names = sorted(contact.names)
            pairs.append([int(names[0].split("_")[1]), int(names[1].split("_")[1]), float(contact.depth)])
        return result

    manager_cls.in_collision_internal = recording_internal
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            metrics = Recorder(models_base_path=str(models_dir)).evaluate_scene(copy.deepcopy(grouped), "ours")
    finally:
        manager_cls.in_collision_internal = original_internal
    oob = [[loaded[k], round(ratio, 4)] for k, (is_oob, ratio) in enumerate(checks) if is_oob]
    return {
        "loaded": loaded,
        "pairs": sorted([[min(a, b), max(a, b), round(d, 6)] for a, b, d in pairs if d > 0]),
        "oob": oob,
        "collision_rate": metrics["collision_rate"],
        "oob_rate": metrics["out_of_bounds_rate"],
        "total_penetration_m": round(float(metrics.get("total_penetration_depth", 0.0)), 6),
        "total_oob_volume_m3": round(float(metrics.get("total_oob_volume", 0.0)), 6),
        "feedback": orig.feedback(metrics),
        "terms": orig.physics_terms(metrics),
    }


def group_sizes(grouped: dict[str, Any]) -> list[list[Any]]:
    """``[group_name, object count]`` of each group of the released grouped scene, in order."""
    return [[g.get("group_name"), len(g.get("objects", []))] for g in grouped.get("groups", [])]


def per_call_effects(orig: Original, grouped: dict[str, Any], calls: list[Any]) -> list[str]:
    """What each call alone did, run in order as ``apply_tool_calls`` runs them."""
    effects = []
    scene = copy.deepcopy(grouped)
    for call in calls:
        if isinstance(call, dict) and call.get("name") == "terminate":
            effects.append("terminate")
            break
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                after = orig.scene_editor.apply_tool_calls(scene, [call])
        except Exception:  # noqa: BLE001 - the released code's own failure is the answer
            effects.append("exception")
            break
        effects.append("noop" if after == scene else "applied")
        scene = after
    return effects


def objaverse_asset(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the released RL environment holds an Objaverse asset: a ``uid`` (here made
    from the jid, so repeated models stay repeated), ``asset_source``, no ``jid``."""
    out = {k: v for k, v in obj.items() if k != "jid"}
    return {**out, "uid": f"objv{obj['jid'][:8]}", "asset_source": "objaverse"}


def edit_sequence(orig: Original, record: dict[str, Any], index: int, seed: int, models_dir: Path,
                  steps: int, odd: bool = False, odd2: bool = False, odd3: bool = False) -> dict[str, Any]:
    objects = record["scene"]["objects"]
    if index % 4 == 0:
        objects = [objaverse_asset(o) if k % 2 else o for k, o in enumerate(objects)]
    flat = {"room_type": record["room_type"], "room_id": record["scene"].get("room_id") or f"Bedroom-{index}",
            "bounds_top": record["scene"]["bounds_top"], "bounds_bottom": record["scene"]["bounds_bottom"],
            "objects": objects}
    grouped = orig.to_grouped(copy.deepcopy(flat))
    gen = (Odd3ReplyGenerator(seed, index) if odd3 else Odd2ReplyGenerator(seed, index) if odd2
           else OddReplyGenerator(seed, index) if odd else ReplyGenerator(seed, index))
    out: dict[str, Any] = {"kind": "edit", "room": record["pth_orig_file"], "seed": [seed, index],
                           "scene": orig.to_flat(copy.deepcopy(grouped)), "steps": []}
    for step in range(steps):
        view = orig.to_flat(copy.deepcopy(grouped))
        reply = gen.next(view, step, last=step == steps - 1)
        with contextlib.redirect_stdout(io.StringIO()):
            calls = orig.extract_tool_calls(reply.text)
        entry: dict[str, Any] = {"reply": reply.text, "fault": [reply.kind, reply.detail],
                                 "calls_parsed": calls is not None, "exception": None, "terminated": False}
        before = copy.deepcopy(grouped)
        ended = False
        if calls:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    entry["terminated"] = any(c.get("name") == "terminate" for c in calls)
                    grouped = orig.apply(copy.deepcopy(grouped), calls)
            except Exception as exc:  # noqa: BLE001 - recorded as the original's answer
                entry["exception"] = f"{type(exc).__name__}: {exc}"
                entry["terminated"] = False
                ended = True
            entry["per_call"] = per_call_effects(orig, before, calls if isinstance(calls, list) else [calls])
        entry["format_reward"] = {"after": orig.format_reward(reply.text, grouped, turn=2),
                                  "before": orig.format_reward(reply.text, before, turn=2)}
        entry["scene"] = orig.to_flat(copy.deepcopy(grouped))["objects"]
        entry["groups"] = group_sizes(grouped)
        entry["physics"] = physics_record(orig, grouped, models_dir)
        if entry["physics"] is not None:
            entry["physics"]["support"] = orig.support_reward(copy.deepcopy(grouped))
        out["steps"].append(entry)
        if ended or entry["terminated"] or reply.kind == "stored" or entry["physics"] is None:
            break
    return out


def init_records(orig: Original, record: dict[str, Any], index: int, seed: int,
                 odd: bool = False, odd2: bool = False) -> list[dict[str, Any]]:
    """Turn-0 replies on this room's bounds: the released r_init of each (``odd``: the rooms of
    ``odd_replies.odd_rooms`` instead; ``odd2``: those of ``odd2_replies.odd2_rooms``)."""
    rng = np.random.default_rng([seed, index, 1000])
    bottom, top = record["scene"]["bounds_bottom"], record["scene"]["bounds_top"]
    room_id = str(rng.choice(["Bedroom-1234", "LivingRoom-7", "room_001", "bed_room_2"]))
    room_type = str(rng.choice(["bedroom", "living room", "Bedroom", "study", "living_room"]))
    base = {"room_type": room_type, "room_id": room_id, "bounds_top": top, "bounds_bottom": bottom, "objects": []}
    variants: dict[str, Any] = {
        "valid": base,
        "with_object": {**base, "objects": [{"desc": "bed", "size": [1, 1, 1], "pos": [0, 0, 0],
                                             "rot": yaw_quaternion(0)}]},
        "ragged": {**base, "bounds_top": top[:-1]},
        "five_vertices": {**base, "bounds_bottom": [*bottom, bottom[0]], "bounds_top": [*top, top[0]]},
        "big": {**base, "bounds_bottom": [[p[0] * 3, p[1], p[2] * 3] for p in bottom],
                "bounds_top": [[p[0] * 3, p[1], p[2] * 3] for p in top]},
        "grouped": {"room_type": room_type, "room_id": room_id,
                    "room_envelope": {"bounds_top": top, "bounds_bottom": bottom}, "groups": []},
    }
    if odd or odd2:
        variants = odd2_rooms(base) if odd2 else odd_rooms(base)
    out = []
    for name, scene in variants.items():
        body = json.dumps(scene, indent=2)
        replies = {name: f"<create_scene>\n```json\n{body}\n```\n</create_scene>"}
        if name == "valid" and not (odd or odd2):
            replies["think"] = f"<think>ok</think>\n{replies[name]}"
            replies["bad_json"] = f"<create_scene>\n```json\n{body[:-3]}\n```\n</create_scene>"
            replies["no_fence"] = f"<create_scene>\n{body}\n</create_scene>"
        for label, text in replies.items():
            instruction = str(rng.choice(INSTRUCTIONS))
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                created = orig.extract_create_scene(text)
                reward = orig.format_reward(text, {}, turn=1, requirement=instruction)
            out.append({"kind": "init", "room": record["pth_orig_file"], "variant": label,
                        "instruction": instruction, "reply": text, "create_scene": created,
                        "format_reward": reward})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orig", type=Path, required=True, help="checkout of Runder-sun/SceneReVis")
    parser.add_argument("--rooms", type=int, default=30)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--odd", action="store_true",
                        help="odd_replies.OddReplyGenerator's replies and odd_rooms' turn-0 rooms")
    parser.add_argument("--odd2", action="store_true",
                        help="odd2_replies.Odd2ReplyGenerator's replies and odd2_rooms' turn-0 rooms")
    parser.add_argument("--odd3", action="store_true",
                        help="odd3_replies.Odd3ReplyGenerator's replies (editing chains only, no turn-0 rooms)")
    args = parser.parse_args(argv)
    _seed_sampling()
    orig = Original(args.orig)
    records = [json.loads(line) for line in ROOMS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = np.random.default_rng([args.seed, 0])
    picked = sorted(int(i) for i in rng.choice(len(records), size=args.rooms, replace=False))
    with tempfile.TemporaryDirectory() as models_dir, args.out.open("w", encoding="utf-8") as fh:
        for index in picked:
            lines = [edit_sequence(orig, records[index], index, args.seed, Path(models_dir), args.steps, args.odd,
                                   args.odd2, args.odd3)]
            if not args.odd3:
                lines += init_records(orig, records[index], index, args.seed, args.odd, args.odd2)
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
