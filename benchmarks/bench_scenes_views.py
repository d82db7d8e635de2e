"""Rendered scene views (LEGO-Eval's 8 environment tools, SceneReVis's feedback) on a
5-room, 150-object house at 512² RGBA, overlays and labels included.

Ours: ``buildbench.scenes.views``, one renderer per image size kept for the process.
Baseline: the same views made the straightforward way, a fresh ``Renderer`` per view
(shaders compiled, framebuffers made and released each time), timed in the same run.
Target (issue): each view <= 0.1 s on CPU.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
from _common import Figure, median_time

from buildbench.render import Boxes, Renderer, gl_info
from buildbench.scenes import views
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.scenes.views import closeups, drawing, revis, topdown

PX = 512
TARGET_S = 0.1
ROOMS = {  # id -> (x0, z0, x1, z1), metres
    "living room": (0.0, 0.0, 8.0, 6.0), "kitchen": (8.0, 0.0, 13.0, 6.0), "bedroom": (0.0, 6.0, 6.0, 11.0),
    "office": (6.0, 6.0, 10.0, 11.0), "bathroom": (10.0, 6.0, 13.0, 11.0),
}
FLOOR_CATEGORIES = ("armchair", "chair", "side table", "plant", "floor lamp", "shelf", "cabinet", "stool",
                    "ottoman", "dresser", "garbage can", "coffee table")
SMALL_CATEGORIES = ("book", "vase", "mug", "bowl", "candle", "plate")


def bench_house(objects_per_room: int = 30) -> Scene:
    """5 rooms, doors between neighbours and to the outside, 6 windows and 30 objects a
    room (22 on the floor in a grid, 8 small ones on the floor objects)."""
    b = HouseBuilder()
    for room_id, rect in ROOMS.items():
        b.room(room_id, rect)
    for a, c in (("living room", "kitchen"), ("living room", "bedroom"), ("bedroom", "office"),
                 ("office", "bathroom"), ("kitchen", "bathroom")):
        b.door(a, c)
    b.door("living room", "exterior", direction="south")
    for room_id, side in (("living room", "west"), ("kitchen", "east"), ("bedroom", "north"),
                          ("office", "north"), ("bathroom", "east"), ("kitchen", "south")):
        b.window(room_id, side)
    for room_id, (x0, z0, x1, z1) in ROOMS.items():
        placed: list[str] = []
        floor_count = objects_per_room - 8
        cols = 6
        for k in range(floor_count):
            i, j = k % cols, k // cols
            x = x0 + 0.6 + (x1 - x0 - 1.2) * i / (cols - 1)
            z = z0 + 0.6 + (z1 - z0 - 1.2) * j / 3
            placed.append(b.place(FLOOR_CATEGORIES[k % len(FLOOR_CATEGORIES)], room_id, (x, z), yaw_deg=90.0 * (k % 4)))
        receptacles = [oid for oid in placed if b.catalogue.category_info[oid.split("-")[0]].receptacle]
        for k in range(objects_per_room - floor_count):
            b.place(SMALL_CATEGORIES[k % len(SMALL_CATEGORIES)], room_id, on=receptacles[k % len(receptacles)])
    return b.build()


def _fresh_render_views(scene, cameras, px):  # noqa: ANN001, ANN202 - mirrors drawing.render_views
    if scene.triangle_count == 0:
        return np.zeros((len(cameras), px, px, 4), np.uint8)
    r = Renderer(px, px, samples=drawing.SAMPLES)
    try:
        return r.render(scene, list(cameras))
    finally:
        r.release()


def _baseline(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with every view module rendering through a fresh Renderer."""
    modules = (closeups, topdown, revis)

    def run() -> object:
        saved = [m.render_views for m in modules]
        for m in modules:
            m.render_views = _fresh_render_views  # type: ignore[attr-defined]
        try:
            return fn()
        finally:
            for m, original in zip(modules, saved, strict=True):
                m.render_views = original  # type: ignore[attr-defined]

    return run


def run() -> list[Figure]:
    scene = bench_house()
    room = "living room"
    wall = next(w.id for w in scene.walls if w.room_id == room and "|north|" in w.id and not w.exterior)
    obj = next(o.id for o in scene.objects_in(room) if o.category == "shelf")
    door = scene.doors[0].id
    cases: dict[str, Callable[[], object]] = {
        "topdown_scene": lambda: views.topdown_scene(scene, px=PX),
        "topdown_room": lambda: views.topdown_room(scene, room, px=PX),
        "wall_view": lambda: views.wall_view(scene, wall, px=PX),
        "object_front_view": lambda: views.object_front_view(scene, obj, px=PX),
        "object_front_view (door)": lambda: views.object_front_view(scene, door, px=PX),
        "object_top_view": lambda: views.object_top_view(scene, obj, px=PX),
        "object_multiview (5 images)": lambda: views.object_multiview(scene, obj, px=PX),
        "material_swatch": lambda: views.material_swatch("DarkWoodFloors", px=PX),
        "relation_overlay (3 ids)": lambda: views.relation_overlay(scene, [obj, door, wall], px=PX),
        "revis_views (top + diagonal)": lambda: views.revis_views(scene, 0, px=PX),
    }
    extra = {"rooms": len(scene.rooms), "objects": len(scene.objects), "walls": len(scene.walls),
             "px": PX, "gl": gl_info().renderer, "load_avg_1min": os.getloadavg()[0]}
    figures = []
    for name, fn in cases.items():
        ours = median_time(fn, repeat=7, warmup=2)
        base = median_time(_baseline(fn), repeat=3, warmup=1)
        figures.append(Figure(name=f"scenes.views {name}, {PX}²", seconds=ours,
                              baseline="same view, fresh Renderer per call", baseline_seconds=base,
                              target_seconds=TARGET_S, extra=extra))
    figures.append(Figure(name="scenes.views scene_boxes (150 objects, 32 wall sides)",
                          seconds=median_time(lambda: views.scene_boxes(scene), repeat=7, warmup=1),
                          baseline="object boxes one by one (SceneObject.rotation, Boxes.from_centres each)",
                          baseline_seconds=median_time(lambda: _object_boxes_one_by_one(scene), repeat=3, warmup=1),
                          extra=extra))
    return figures


def _object_boxes_one_by_one(scene: Scene) -> list[Boxes]:
    """The naive way to turn objects into boxes: a rotation and a Boxes batch per object."""
    return [Boxes.from_centres(np.array([o.center]), np.array([o.size]) / 2, (0.5, 0.5, 0.5), o.rotation[None])
            for o in scene.objects]


if __name__ == "__main__":
    for f in run():
        print(f"{f.name:55s} {f.seconds * 1000:7.1f} ms   baseline {f.baseline_seconds * 1000:7.1f} ms")
