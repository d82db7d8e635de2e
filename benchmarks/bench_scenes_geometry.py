"""Scene geometry on a 5-room, 150-object house: every relation, collisions, out of bounds,
reachability. Target: each call <= 10 ms.

Each figure is timed beside a baseline in the same run:

* a relation call (the scene index cached and checked against the scene) against the same
  call with the index rebuilt from scratch (no cache), and ``near`` also against a naive
  shapely version that builds both footprints from the model on every call;
* collisions (cold: index built in the call) against python-fcl, a dynamic AABB tree
  manager of boxes built and queried per call, with contacts for the depths;
* out-of-bounds (cold) against a per-object shapely loop over the model's footprints;
* reachability of one room against a naive pipeline: the room shrunk by the clearance
  minus the union of buffered obstacle footprints, rasterised point by point with shapely,
  then a pure-Python BFS.

The machine is shared, so wall times swing; each figure also records the median process
CPU seconds of our call (``ours_cpu_s``) and of the baseline (``baseline_cpu_s``).
"""

from __future__ import annotations

import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import fcl
import numpy as np
import shapely
from _common import Figure, median_time
from scipy import ndimage
from shapely.geometry import Polygon

from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.collision import collisions, out_of_bounds
from buildbench.scenes.model import Scene
from buildbench.scenes.reachability import reachable
from buildbench.scenes.relations import RELATIONS, index_of, invalidate

TARGET_S = 0.010
ROOMS = {  # id -> (x0, z0, x1, z1), metres
    "living room": (0.0, 0.0, 7.0, 5.0),
    "kitchen": (7.0, 0.0, 11.0, 5.0),
    "bedroom": (0.0, 5.0, 5.0, 9.0),
    "bathroom": (5.0, 5.0, 8.0, 9.0),
    "office": (8.0, 5.0, 11.0, 9.0),
}
FLOOR = ["sofa", "armchair", "table", "chair", "desk", "bookshelf", "plant", "cabinet", "dresser", "rug",
         "floor lamp", "side table", "ottoman", "stool"]
SMALL = ["vase", "book", "bowl", "cup", "candle"]


def make_house(seed: int = 0) -> Scene:
    """Five rooms, doors between neighbours, a window each, 20 floor and 10 small objects per room."""
    rng = np.random.default_rng([seed, 150])
    b = HouseBuilder()
    for room_id, rect in ROOMS.items():
        b.room(room_id, rect)
    for r0, r1 in (("living room", "kitchen"), ("living room", "bedroom"), ("bedroom", "bathroom"),
                   ("bathroom", "office"), ("kitchen", "office")):
        b.door(r0, r1)
    b.door("living room", "exterior")
    for room_id, direction in (("living room", "west"), ("kitchen", "east"), ("bedroom", "north"),
                               ("bathroom", "north"), ("office", "east")):
        b.window(room_id, direction)
    for room_id, (x0, z0, x1, z1) in ROOMS.items():
        receptacles = []
        for k in range(20):
            category = FLOOR[int(rng.integers(len(FLOOR)))]
            yaw = float(rng.choice([0.0, 90.0, 180.0, 270.0])) if k % 4 else float(rng.uniform(0, 360))
            centre = (float(rng.uniform(x0 + 0.5, x1 - 0.5)), float(rng.uniform(z0 + 0.5, z1 - 0.5)))
            object_id = b.place(category, room_id, centre, yaw_deg=yaw)
            if category in ("table", "desk", "bookshelf", "cabinet", "dresser", "side table"):
                receptacles.append(object_id)
        for k in range(10):
            if not receptacles:
                break
            b.place(SMALL[k % len(SMALL)], room_id, on=receptacles[k % len(receptacles)])
    return b.build()


def relation_calls(scene: Scene) -> dict[str, tuple[Any, ...]]:
    """One realistic call per relation, on ids of the living room and its neighbours."""
    living = [o for o in scene.objects if o.room_id == "living room"]
    floor = [o.id for o in living if o.parent_id is None]
    child = next(o for o in living if o.parent_id is not None)
    wall = next(w.id for w in scene.walls_of("living room"))
    window = scene.windows[0].id
    a, b, c = floor[0], floor[1], floor[2]
    return {
        "near": (a, b), "far": (a, b), "left_of": (a, b), "right_of": (a, b), "in_front_of": (a, b),
        "behind": (a, b), "facing": (a, b), "facing_each_other": (a, b), "on_top_of": (child.id, child.parent_id),
        "under": (child.parent_id, child.id), "against_wall": (a,), "in_corner": (a,), "in_middle": (a,),
        "between": (a, b, c), "closer_than": (a, b, window), "aligned": (a, b), "same_direction": (a, b),
        "adjacent_rooms": ("living room", "kitchen"), "larger_room": ("living room", "kitchen"),
        "in_room": (a, "living room"), "on_wall": (window, "west"), "connects": (scene.doors[0].id, "living room"),
        "room_area": ("living room",), "count": ("chair", "living room"), "near wall": (a, wall),
    }


def naive_near(scene: Scene, a: str, b: str) -> float:
    return Polygon(scene.object(a).footprint()).distance(Polygon(scene.object(b).footprint()))


def fcl_collisions(scene: Scene) -> list[float]:
    """Penetration depths of every colliding pair (the callback's objects are fresh wrappers,
    so pairs are not named)."""
    objects = [fcl.CollisionObject(fcl.Box(*o.size), fcl.Transform(o.rotation, np.asarray(o.center, dtype=float)))
               for o in scene.objects]
    manager = fcl.DynamicAABBTreeCollisionManager()
    manager.registerObjects(objects)
    manager.setup()
    data = fcl.CollisionData(request=fcl.CollisionRequest(enable_contact=True, num_max_contacts=1))
    data.result = fcl.CollisionResult()
    found: list[float] = []

    def callback(o1: Any, o2: Any, cdata: Any) -> bool:
        result = fcl.CollisionResult()
        if fcl.collide(o1, o2, cdata.request, result):
            found.append(result.contacts[0].penetration_depth)
        return False

    manager.collide(data, callback)
    return found


def naive_out_of_bounds(scene: Scene, tol: float = 0.02) -> list[tuple[str, float]]:
    out = []
    for o in scene.objects:
        room = Polygon(scene.room(o.room_id).vertices).buffer(tol, join_style=2)
        fp = Polygon(o.footprint())
        share = 1.0 - fp.intersection(room).area / fp.area if fp.area > 0 else 0.0
        if share > 1e-3:
            out.append((o.id, share))
    return out


def naive_reachable(scene: Scene, room_id: str, clearance_m: float = 0.25, cell_m: float = 0.05) -> int:
    """Free components of a room by buffered shapely geometry, per-point tests and a Python BFS."""
    room = Polygon(scene.room(room_id).vertices)
    obstacles = [Polygon(o.footprint()).buffer(clearance_m) for o in scene.objects_in(room_id)
                 if o.parent_id is None and o.size[1] > 0.05 and o.bottom_y < 0.5]
    free_space = room.buffer(-clearance_m).difference(shapely.union_all(obstacles))
    x0, z0, x1, z1 = room.bounds
    xs = np.arange(x0 + cell_m / 2, x1, cell_m)
    zs = np.arange(z0 + cell_m / 2, z1, cell_m)
    free = np.array([[free_space.contains(shapely.Point(x, z)) for x in xs] for z in zs])
    return python_bfs(free)


def median_cpu(fn: Callable[[], Any], repeat: int) -> float:
    """Median process CPU seconds of ``fn()``: the cost of the code itself on a busy machine."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def python_bfs(free: np.ndarray) -> int:
    """Number of 4-connected components of ``free`` by a plain queue (the baseline)."""
    rows, cols = free.shape
    seen = np.zeros_like(free)
    grid = free.tolist()
    mark = seen.tolist()
    components = 0
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] and not mark[r][c]:
                components += 1
                queue = deque([(r, c)])
                mark[r][c] = True
                while queue:
                    y, x = queue.popleft()
                    for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                        if 0 <= ny < rows and 0 <= nx < cols and grid[ny][nx] and not mark[ny][nx]:
                            mark[ny][nx] = True
                            queue.append((ny, nx))
    return components


def run() -> list[Figure]:
    scene = make_house()
    assert len(scene.objects) == 150 and len(scene.rooms) == 5, (len(scene.objects), len(scene.rooms))
    figures: list[Figure] = []

    def cold(fn: Any) -> Any:
        def call() -> Any:
            invalidate(scene)
            return fn()
        return call

    t_index = median_time(cold(lambda: index_of(scene)), repeat=7)
    t_naive_fp = median_time(lambda: [Polygon(o.footprint()) for o in scene.objects], repeat=5)
    figures.append(Figure("scene index build (150 objects)", t_index, "model footprint() per object (shapely)",
                          t_naive_fp, TARGET_S, {"objects": 150}))

    for name, args in relation_calls(scene).items():
        fn = RELATIONS["near" if name == "near wall" else name]
        verdict = fn(scene, *args)
        t = median_time(lambda fn=fn, args=args: fn(scene, *args), repeat=50, warmup=3)
        t_cold = median_time(cold(lambda fn=fn, args=args: fn(scene, *args)), repeat=5)
        figures.append(Figure(f"relation {name}", t, "same call, index rebuilt (no cache)", t_cold, TARGET_S,
                              {"holds": verdict.holds, "value": verdict.value,
                               "ours_cpu_s": median_cpu(lambda fn=fn, args=args: fn(scene, *args), 50),
                               "baseline_cpu_s": median_cpu(cold(lambda fn=fn, args=args: fn(scene, *args)), 5)}))
    a, b = relation_calls(scene)["near"]
    assert math.isclose(naive_near(scene, a, b), RELATIONS["near"](scene, a, b).value, abs_tol=1e-9)
    figures.append(Figure("relation near", median_time(lambda: RELATIONS["near"](scene, a, b), repeat=50),
                          "naive shapely footprints per call", median_time(lambda: naive_near(scene, a, b), repeat=50),
                          TARGET_S))

    ours = collisions(scene, touch_tol_m=0.0, resting_tol_m=0.0)
    theirs = [d for d in fcl_collisions(scene) if d > 1e-9]
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    t_coll = median_time(cold(lambda: collisions(scene)), repeat=7)
    t_fcl = median_time(lambda: fcl_collisions(scene), repeat=5)
    figures.append(Figure("collisions 150 objects (cold index)", t_coll, "python-fcl AABB tree + box contacts",
                          t_fcl, TARGET_S, {"pairs_interpenetrating": len(ours),
                                            "reported": len(collisions(scene)),
                                            "ours_cpu_s": median_cpu(cold(lambda: collisions(scene)), 15),
                                            "baseline_cpu_s": median_cpu(lambda: fcl_collisions(scene), 5)}))
    t_warm = median_time(lambda: collisions(scene), repeat=20)
    figures.append(Figure("collisions 150 objects (warm index)", t_warm, "python-fcl AABB tree + box contacts",
                          t_fcl, TARGET_S))

    t_oob = median_time(cold(lambda: out_of_bounds(scene)), repeat=7)
    t_oob_naive = median_time(lambda: naive_out_of_bounds(scene), repeat=5)
    figures.append(Figure("out_of_bounds 150 objects (cold index)", t_oob, "per-object shapely loop", t_oob_naive,
                          TARGET_S, {"reported": len(out_of_bounds(scene)),
                                     "ours_cpu_s": median_cpu(cold(lambda: out_of_bounds(scene)), 15),
                                     "baseline_cpu_s": median_cpu(lambda: naive_out_of_bounds(scene), 5)}))

    r = reachable(scene, "living room")
    assert python_bfs(r.free_mask) == ndimage.label(r.free_mask)[1]
    t_reach = median_time(lambda: reachable(scene, "living room"), repeat=9)
    t_naive = median_time(lambda: naive_reachable(scene, "living room"), repeat=3)
    figures.append(Figure("reachable living room (7 x 5 m, 0.05 m grid)", t_reach,
                          "buffered shapely union, per-point tests, Python BFS", t_naive, TARGET_S,
                          {"cells": int(r.free_mask.size), "unreachable": len(r.unreachable_objects),
                           "ours_cpu_s": median_cpu(lambda: reachable(scene, "living room"), 9),
                           "baseline_cpu_s": median_cpu(lambda: naive_reachable(scene, "living room"), 3)}))
    return figures


if __name__ == "__main__":
    for f in run():
        d = f.to_dict()
        cpu = f.extra.get("ours_cpu_s")
        cpu_words = f" (cpu {cpu * 1e3:.3f} ms)" if cpu is not None else ""
        print(f"{f.name:50s} {f.seconds * 1e3:8.3f} ms{cpu_words}  vs {f.baseline}: "
              f"{(f.baseline_seconds or 0) * 1e3:8.3f} ms  ok={d['meets_target']}")
