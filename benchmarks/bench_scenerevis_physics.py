"""SceneReVis physics metrics: a 30-object room, and the 500 shared real 3D-FRONT bedrooms.

Each figure is timed beside the released metric's method in the same run: trimesh box
meshes in an FCL ``CollisionManager`` (``in_collision_internal`` with contact data, depth
> 1 cm) and out-of-bounds by 500 surface samples per object tested against the 1 mm-
buffered floor polygon (``eval/myeval.py``, here seeded). Ours: the exact separating-axis
depths and exact outside shares of :mod:`buildbench.suites.scenerevis.check`.

* ``physics 30-object room``: collisions + out of bounds (target 20 ms);
* ``scene metrics 30-object room``: the same plus voxel loss and support;
* ``metrics 500 real rooms``: :func:`metrics_of` on the shared file, voxels included
  (target 10 s); skipped when ``../shared`` is absent. Its extra holds the OBR/CNR both
  methods measure.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import Figure, median_time

from buildbench.suites.scenerevis.check import EVALUATION, check_physics, parse_layout
from buildbench.suites.scenerevis.check.bounds import room_polygon
from buildbench.suites.scenerevis.check.layout import RoomLayout
from buildbench.suites.scenerevis.metrics import metrics_of, scene_metrics

REAL_ROOMS = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "scenerevis"
    / "respace_scenes"
    / "dataset_bedroom_test.jsonl"
)


def room_with_objects(n: int = 30, seed: int = 0) -> dict[str, Any]:
    """A 7 x 6 m L-shaped room with ``n`` boxes of furniture sizes at random yaws; some
    overlap and some cross the walls, as in a model's early turns."""
    rng = np.random.default_rng([seed, n])
    floor = [(0.0, 0.0), (7.0, 0.0), (7.0, 3.5), (4.0, 3.5), (4.0, 6.0), (0.0, 6.0)]
    objects = []
    for k in range(n):
        size = rng.uniform([0.3, 0.3, 0.3], [2.0, 2.0, 1.5]).round(2).tolist()
        yaw = float(rng.choice([0, 90, 180, 270, rng.uniform(0, 360)]))
        half = math.radians(yaw) / 2
        objects.append(
            {
                "desc": f"object {k}",
                "size": size,
                "jid": f"j{k}",
                "pos": [float(rng.uniform(0, 7)), 0.0, float(rng.uniform(0, 6))],
                "rot": [0.0, math.sin(half), 0.0, math.cos(half)],
            }
        )
    return {
        "room_type": "living room",
        "bounds_bottom": [[x, 0.0, z] for x, z in floor],
        "bounds_top": [[x, 2.8, z] for x, z in floor],
        "objects": objects,
    }


def released_method(layout: RoomLayout, seed: int = 0) -> tuple[set[int], set[int]]:
    """Colliding and out-of-bounds objects as the released metric finds them, on boxes."""
    import shapely
    import trimesh

    manager = trimesh.collision.CollisionManager()
    meshes = []
    for i in range(len(layout)):
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = layout.rotations[i], layout.centers[i]
        mesh = trimesh.creation.box(extents=layout.sizes[i], transform=transform)
        meshes.append(mesh)
        manager.add_object(str(i), mesh)
    _, contacts = manager.in_collision_internal(return_data=True)
    colliding = {int(name) for c in contacts if c.depth > 0.01 for name in c.names}
    poly = room_polygon(layout)
    oob = set()
    for i, mesh in enumerate(meshes):
        if mesh.area <= 0:
            continue
        points, _ = trimesh.sample.sample_surface(mesh, 500, seed=seed + i)
        inside = shapely.intersects_xy(poly, points[:, 0], points[:, 2])
        inside &= (points[:, 1] >= layout.floor_y - 0.001) & (points[:, 1] <= layout.ceiling_y + 0.001)
        if 1.0 - inside.mean() > 0.01:
            oob.add(i)
    return colliding, oob


def median_cpu(fn: Callable[[], Any], repeat: int) -> float:
    """Median process CPU seconds of ``fn()``: the cost of the code itself on a shared machine."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def run() -> list[Figure]:
    figures: list[Figure] = []
    scene = room_with_objects()
    layout = parse_layout(scene)
    ours = check_physics(layout, EVALUATION)
    theirs = released_method(layout)
    info = {
        "objects": len(layout),
        "colliding_ours": len(ours.colliding),
        "colliding_fcl": len(theirs[0]),
        "oob_ours": len(ours.out_of_bounds),
        "oob_sampled": len(theirs[1]),
        "same_colliding": set(ours.colliding) == theirs[0],
    }
    t_ours = median_time(lambda: check_physics(parse_layout(scene), EVALUATION), repeat=21, warmup=3)
    t_full = median_time(lambda: scene_metrics(scene), repeat=11, warmup=2)
    t_fcl = median_time(lambda: released_method(parse_layout(scene)), repeat=7, warmup=1)
    physics_cpu = median_cpu(lambda: check_physics(parse_layout(scene), EVALUATION), repeat=21)
    full_cpu = median_cpu(lambda: scene_metrics(scene), repeat=11)
    figures.append(
        Figure(
            "scenerevis physics 30-object room",
            t_ours,
            "trimesh + FCL + 500-sample OOB",
            t_fcl,
            0.020,
            {**info, "ours_cpu_s": physics_cpu},
        )
    )
    figures.append(
        Figure(
            "scenerevis scene metrics (+voxels, support) 30 objects",
            t_full,
            "trimesh + FCL + 500-sample OOB",
            t_fcl,
            None,
            {**info, "ours_cpu_s": full_cpu},
        )
    )
    if REAL_ROOMS.exists():
        records = [json.loads(line) for line in REAL_ROOMS.read_text().splitlines() if line.strip()]
        result = metrics_of(records)
        layouts = [parse_layout(r) for r in records]
        released = [released_method(lay) for lay in layouts]
        n = [max(len(lay), 1) for lay in layouts]
        extra = {
            "rooms": len(records),
            "OBR": result["OBR"],
            "CNR": result["CNR"],
            "VBL": result["VBL"],
            "collision_free_rate": result["collision_free_rate"],
            "valid_placement_rate": result["valid_placement_rate"],
            "OBR_sampled_fcl": float(
                np.mean([100 * len(o) / k for (_, o), k in zip(released, n, strict=True)])
            ),
            "CNR_sampled_fcl": float(
                np.mean([100 * len(c) / k for (c, _), k in zip(released, n, strict=True)])
            ),
        }
        t_rooms = median_time(lambda: metrics_of(records), repeat=3, warmup=0)
        t_released = median_time(
            lambda: [released_method(parse_layout(r)) for r in records], repeat=1, warmup=0
        )
        figures.append(
            Figure(
                "scenerevis metrics 500 real rooms",
                t_rooms,
                "trimesh + FCL + 500-sample OOB",
                t_released,
                10.0,
                extra,
            )
        )
    return figures


if __name__ == "__main__":
    for figure in run():
        print(json.dumps(figure.to_dict(), indent=1))
