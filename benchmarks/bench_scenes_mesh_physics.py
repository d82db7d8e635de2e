"""Mesh-level physics (``geometry=procedural``): a 30-object room cold and warm beside
trimesh's ``CollisionManager`` on the same meshes, and the 500 shared real rooms.

* contacts, warm: :func:`buildbench.scenes.mesh_physics.mesh_contacts` on cached meshes
  (FCL models built once per mesh) beside a ``CollisionManager`` built from the same placed
  meshes and asked for all contacts (the release's call); target within 2x of it;
* metrics, cold / warm: the whole evaluation check (meshes made, contacts, 500-sample
  out-of-bounds) with the asset and mesh caches emptied first / kept;
* the 500 shared real rooms at the procedural level (no voxels), target 60 s.
"""

from __future__ import annotations

import json
from pathlib import Path

import trimesh
from _common import Figure, median_time
from bench_scenerevis_physics import REAL_ROOMS, room_with_objects

from buildbench.scenes import mesh_physics
from buildbench.scenes.assets import clear_cache
from buildbench.suites.scenerevis.check import EVALUATION, check_physics, parse_layout
from buildbench.suites.scenerevis.check.meshes import layout_meshes
from buildbench.suites.scenerevis.metrics import metrics_of

KINDS = ("double bed", "wardrobe", "dining table", "dining chair", "three-seat sofa", "nightstand", "bookshelf",
         "desk", "armchair", "floor lamp", "coffee table", "tv stand", "potted plant", "rug", "office chair")


def furnished_room(n: int = 30) -> dict:
    room = room_with_objects(n)
    for k, obj in enumerate(room["objects"]):
        obj["desc"] = KINDS[k % len(KINDS)]
    return room


def run() -> list[Figure]:
    layout = parse_layout(furnished_room())
    meshes = layout_meshes(layout, "procedural")
    world = [trimesh.Trimesh(m.vertices @ layout.rotations[i].T + layout.centers[i], m.faces)
             for i, m in enumerate(meshes)]

    def manager_contacts() -> None:
        manager = trimesh.collision.CollisionManager()
        for i, mesh in enumerate(world):
            manager.add_object(str(i), mesh)
        manager.in_collision_internal(return_data=True)

    def cold() -> None:
        clear_cache()  # the asset layer's procedural meshes
        mesh_physics._MESHES.clear()  # our FCL models, samples and volumes
        check_physics(layout, EVALUATION, geometry="procedural")

    ours = median_time(lambda: mesh_physics.mesh_contacts(meshes, layout.rotations, layout.centers), repeat=5)
    theirs = median_time(manager_contacts, repeat=5)
    pairs = len(mesh_physics.mesh_contacts(meshes, layout.rotations, layout.centers))
    extra = {"objects": len(layout), "faces": int(sum(len(m.faces) for m in meshes)), "pairs_in_contact": pairs,
             "ratio_to_collision_manager": ours / theirs}
    figures = [
        Figure("mesh contacts, 30 procedural objects, warm", ours, "trimesh CollisionManager (same meshes)", theirs,
               2.0 * theirs, extra),
        Figure("mesh-level metrics, 30 objects, cold cache", median_time(cold, repeat=3, warmup=0)),
        Figure("mesh-level metrics, 30 objects, warm cache",
               median_time(lambda: check_physics(layout, EVALUATION, geometry="procedural"), repeat=5)),
    ]
    if REAL_ROOMS.is_file():
        records = [json.loads(line) for line in Path(REAL_ROOMS).read_text().splitlines() if line.strip()]
        box = metrics_of(records, voxels=False)
        procedural = metrics_of(records, voxels=False, geometry="procedural")
        seconds = median_time(lambda: metrics_of(records, voxels=False, geometry="procedural"), repeat=1, warmup=0)
        figures.append(Figure(
            "scenerevis metrics, 500 real rooms, procedural meshes", seconds, target_seconds=60.0,
            extra={"rooms": len(records), "CNR_box": box["CNR"], "OBR_box": box["OBR"],
                   "CNR_procedural": procedural["CNR"], "OBR_procedural": procedural["OBR"],
                   "collision_free_rate_procedural": procedural["collision_free_rate"]}))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(json.dumps(figure.to_dict(), default=float))
