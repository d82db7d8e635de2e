"""Mesh-level physics (``geometry=procedural``): a 30-object room cold and warm beside
trimesh's ``CollisionManager`` on the same meshes, and the 500 shared real rooms.

* contacts, warm: :func:`buildbench.scenes.mesh_physics.mesh_contacts` on cached meshes
  (FCL models built once per mesh) beside a ``CollisionManager`` built from the same placed
  meshes and asked for all contacts (the release's call); target within 2x of it;
* metrics, cold / warm: the whole evaluation check (meshes made, contacts, 500-sample
  out-of-bounds) with the asset and mesh caches emptied first / kept; cold beside the same
  check at the box level (what the meshes cost), warm beside cold (what the caches save);
* ``scenerevis metrics`` of the 500 shared real rooms at the procedural level with the
  default options (voxel loss and support included), cold, beside the same call at the box
  level in the same process; target 60 s. CPU seconds go with the wall times: on a shared
  machine the wall time follows the load.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    cold_s = median_time(cold, repeat=3, warmup=0)
    box_s = median_time(lambda: check_physics(layout, EVALUATION), repeat=5)
    figures = [
        Figure("mesh contacts, 30 procedural objects, warm", ours, "trimesh CollisionManager (same meshes)", theirs,
               2.0 * theirs, extra),
        Figure("mesh-level metrics, 30 objects, cold cache", cold_s, "the same check at the box level", box_s),
        Figure("mesh-level metrics, 30 objects, warm cache",
               median_time(lambda: check_physics(layout, EVALUATION, geometry="procedural"), repeat=5),
               "the same check, caches emptied first (the cold figure)", cold_s),
    ]
    if REAL_ROOMS.is_file():
        records = [json.loads(line) for line in Path(REAL_ROOMS).read_text().splitlines() if line.strip()]
        clear_cache()
        mesh_physics._MESHES.clear()
        mesh_physics._GRIDS.clear()
        procedural, seconds, cpu = _timed(lambda: metrics_of(records, geometry="procedural"))
        box, box_seconds, box_cpu = _timed(lambda: metrics_of(records))
        figures.append(Figure(
            "scenerevis metrics, 500 real rooms, procedural meshes, default options", seconds,
            "the same at the box level", box_seconds, target_seconds=60.0,
            extra={"rooms": len(records), "cpu_seconds": cpu, "box_cpu_seconds": box_cpu,
                   "ratio_to_box": seconds / box_seconds, **_headline(box, "box"), **_headline(procedural, "procedural")}))
    return figures


def _timed(call: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def _headline(metrics: dict[str, Any], level: str) -> dict[str, float]:
    return {f"{name}_{level}": float(metrics[name])
            for name in ("CNR", "OBR", "collision_free_rate", "VBL", "unsupported_rate") if name in metrics}


if __name__ == "__main__":
    for figure in run():
        print(json.dumps(figure.to_dict(), default=float))
