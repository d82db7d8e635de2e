"""Run the released SceneReVis evaluation (``eval/myeval.py``, ``eval/voxel_eval.py``,
unmodified) on real rooms whose 3D-FUTURE models are OUR meshes, and record its answers.

For every room each object's mesh at ``--level`` (from :mod:`buildbench.scenes.assets`, in
the object's frame, spanning its box) is written as ``MODELS/<key>/raw_model.glb``, the
layout the release reads, and the room's ``jid``s are replaced by those keys (one per
object, so equal jids of different sizes keep their own shapes). The release then loads,
scales and places the meshes itself. trimesh's surface sampling is unseeded in the release;
every ``sample_surface`` call here gets ``numpy.random.default_rng(0)``, as our
``-o geometry`` checks draw (seed 0 per object).

One JSON line per room: ``{"source", "line", "room_id", "level", "n_objects",
"colliding" (indices, a contact deeper than 1 cm), "colliding_any" (any contact),
"out_of_bounds" (indices), "oob_volume_m3", "mesh_digest" (of the room's meshes), "released" (the counts and rates of
``calculate_physics_metrics``), "voxel" (``total_oob_volume``, ``total_collision_volume``
of ``evaluate_scene_voxel_based``, for the first ``--voxel-rooms`` rooms)}``. Rooms are
named by file and line: the shared rooms are not copied.

    PYTHONPATH=WORK/pylib .venv/bin/python tools/scenerevis_mesh_oracle/run_mesh_oracle.py \\
        --orig WORK --level procedural --out tests/scenerevis/data/mesh-oracle-procedural.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from buildbench.suites.scenerevis.check.layout import parse_layout, scene_of
from buildbench.suites.scenerevis.check.meshes import layout_meshes

SHARED = Path(__file__).resolve().parents[3] / "shared/data/scenerevis"
ROOM_FILES = ("respace_scenes/dataset_bedroom_test.jsonl",)
EXAMPLES = "example_scenes"


def _seed_sampling() -> None:
    # Trimesh.sample passes seed=None on, so the generator factory itself is seeded.
    trimesh.sample.random_generator = lambda seed=None: np.random.default_rng(0 if seed is None else seed)


def rooms() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for name in ROOM_FILES:
        for number, line in enumerate((SHARED / name).read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append((name, number, dict(scene_of(json.loads(line)))))
    for path in sorted((SHARED / EXAMPLES).glob("*.json")):
        out.append((f"{EXAMPLES}/{path.name}", 1, json.loads(path.read_text(encoding="utf-8"))))
    return out


def mesh_digest(meshes: list[Any]) -> str:
    """Names the exact meshes of a room (the replay skips rooms whose shapes changed since)."""
    return hashlib.blake2b(b"".join(m.key for m in meshes), digest_size=8).hexdigest()


def export_models(scene: dict[str, Any], level: str, models: Path, tag: str) -> tuple[dict[str, Any], str]:
    """The scene with each object's jid replaced by a key whose GLB holds our mesh, and the
    digest of those meshes."""
    layout = parse_layout(scene)
    meshes = layout_meshes(layout, level)  # type: ignore[arg-type]
    out = json.loads(json.dumps(scene))
    for k, (obj, mesh) in enumerate(zip(out.get("objects") or [], meshes, strict=True)):
        key = f"{tag}-{k:03d}"
        folder = models / key
        folder.mkdir(parents=True, exist_ok=True)
        trimesh.Trimesh(mesh.vertices, mesh.faces, process=False).export(folder / "raw_model.glb")
        obj["jid"] = key
        obj.pop("asset_source", None)
    return out, mesh_digest(meshes)


def run_room(myeval: Any, voxel_eval: Any, scene: dict[str, Any], models: Path, voxels: bool) -> dict[str, Any]:
    with contextlib.redirect_stdout(io.StringIO()):
        room_mesh, objects, _, polygon, y0, y1 = myeval.parse_scene_from_json(scene, str(models), "respace")
        released = myeval.calculate_physics_metrics(room_mesh, objects, polygon, y0, y1)
        index = {name: int(name.split("_")[1]) for name in objects}
        manager = trimesh.collision.CollisionManager()
        for name, mesh in objects.items():
            manager.add_object(name, mesh)
        _, contacts = manager.in_collision_internal(return_data=True)
        deep = sorted({index[n] for c in contacts if c.depth > 0.01 for n in c.names})
        touching = sorted({index[n] for c in contacts if c.depth > 0 for n in c.names})
        oob, volume = [], 0.0
        for name, mesh in objects.items():
            is_oob, oob_volume = myeval.check_object_out_of_bounds(mesh, room_mesh, polygon, y0, y1)
            if is_oob:
                oob.append(index[name])
                volume += float(oob_volume)
        record: dict[str, Any] = {
            "n_objects": len(objects), "colliding": deep, "colliding_any": touching, "out_of_bounds": sorted(oob),
            "oob_volume_m3": round(volume, 9),
            "released": {k: released[k] for k in ("Collision Rate (%)", "Out-of-Bounds Rate (%)",
                                                 "Number of Colliding Pairs", "Number of Out-of-Bounds Objects")},
        }
        if voxels:
            figures = voxel_eval.evaluate_scene_voxel_based(scene, str(models), 0.05, "respace")["voxel_metrics"]
            record["voxel"] = {k: round(float(figures[k]), 9) for k in ("total_oob_volume", "total_collision_volume")}
    # The released count and our per-object reading of the same contacts must say the same.
    assert released["Collision Rate (%)"] == (len(deep) / len(objects) * 100 if objects else 0.0)
    assert released["Number of Out-of-Bounds Objects"] == len(oob)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orig", type=Path, required=True, help="folder holding eval/myeval.py, eval/voxel_eval.py")
    parser.add_argument("--level", default="procedural", choices=("box", "procedural"))
    parser.add_argument("--rooms", type=int, default=0, help="at most this many rooms (0: all)")
    parser.add_argument("--voxel-rooms", type=int, default=40, help="run voxel_eval on the first N rooms")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--odd", type=int, default=0, metavar="N",
                        help="N synthetic rooms of each kind of odd_rooms.py instead, each recorded whole")
    parser.add_argument("--odd2", type=int, default=0, metavar="N",
                        help="the same with odd_rooms.odd2_rooms (round 2)")
    args = parser.parse_args()
    sys.path.insert(0, str(args.orig / "eval"))
    import myeval  # the released modules, unmodified
    import voxel_eval

    _seed_sampling()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from odd_rooms import odd2_rooms, odd_rooms

    synthetic = odd_rooms(0, args.odd) if args.odd else odd2_rooms(0, args.odd2) if args.odd2 else []
    todo = [("odd_rooms", k + 1, room) for k, (_, room) in enumerate(synthetic)] if synthetic else rooms()
    if args.rooms:
        todo = todo[: args.rooms]
    with tempfile.TemporaryDirectory() as tmp, args.out.open("w", encoding="utf-8") as out:
        for count, (source, line, scene) in enumerate(todo):
            models = Path(tmp) / f"m{count}"
            exported, digest = export_models(scene, args.level, models, f"r{count}")
            record = {"source": source, "line": line, "room_id": scene.get("room_id"), "level": args.level,
                      "mesh_digest": digest, **({"scene": scene} if synthetic else {}),
                      **run_room(myeval, voxel_eval, exported, models, count < args.voxel_rooms)}
            out.write(json.dumps(record, sort_keys=True) + "\n")
            out.flush()
            print(f"{count + 1}/{len(todo)} {source}:{line}", file=sys.stderr)


if __name__ == "__main__":
    main()
