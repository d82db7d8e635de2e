"""Renders from meshes (``-o geometry=procedural``) against the box renders, in one run.

1. SceneReVis: one environment step of ``bench_scenerevis_env``'s stepper (parse, apply,
   retrieval, physics and hint, the merged 512² top + diagonal image, the turn reward) with the
   env at the ``procedural`` level (procedural meshes in the image and the physics) against the
   same step at the ``box`` level. Issue target: <= 0.5 s on CPU. ``extra`` also times the
   merged image alone at both levels.
2. LEGO-Eval's views of ``bench_scenes_views``'s 5-room, 150-object house at 512², procedural
   against boxes, each view a figure.

Meshes are kept between views (``scenes.views.meshes``' cache, as in a run): the step figure is
the steady state of an episode (each step replaces one object, whose mesh is new; the rest are
reused), with the first step on a cold cache in ``extra``. The house views are timed cold
(cache cleared before each call: the first view of a house), warm in ``extra``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from _common import Figure, median_time
from bench_scenerevis_env import _room, _stepper
from bench_scenes_views import PX, bench_house

from buildbench.render import gl_info
from buildbench.scenes import views
from buildbench.scenes.views.meshes import clear_mesh_cache
from buildbench.suites.scenerevis.options import SceneReVisOptions
from buildbench.suites.scenerevis.render import render_merged

STEP_TARGET_S = 0.5
LEVEL = "procedural"


def _step_at(scene: dict, level: str) -> Callable[[], None]:
    env, step = _stepper(scene)
    env.options = SceneReVisOptions(max_turns=100, geometry=level)  # type: ignore[arg-type]
    return step


def _big_room(scene: dict, n: int = 30) -> dict:
    """An 8 x 8 m room holding ``n`` of the room's objects (cycled) on a grid 1.5 m apart."""
    floor = [[-4.0, 0.0, 4.0], [4.0, 0.0, 4.0], [4.0, 0.0, -4.0], [-4.0, 0.0, -4.0]]
    objects = []
    for k in range(n):
        o = dict(scene["objects"][k % len(scene["objects"])])
        o.update(id=f"{o['id']}_{k}", pos=[-3.4 + 1.35 * (k % 6), 0.0, -3.2 + 1.6 * (k // 6)],
                 size=[min(s, 1.2) if i != 1 else s for i, s in enumerate(o["size"])])
        objects.append(o)
    return {**scene, "bounds_bottom": floor, "bounds_top": [[x, 2.8, z] for x, _, z in floor], "objects": objects}


def _step_figure(scene: dict, what: str) -> Figure:
    extra: dict[str, object] = {"objects": len(scene["objects"]), "gl": gl_info().renderer,
                                "load_average_1min": round(os.getloadavg()[0], 2)}
    mesh_step, box_step = _step_at(scene, LEVEL), _step_at(scene, "box")
    mesh_s = median_time(mesh_step, repeat=9, warmup=2)
    box_s = median_time(box_step, repeat=9, warmup=2)

    def cold_step() -> None:
        clear_mesh_cache()
        mesh_step()

    extra["cold_cache_step_s"] = round(median_time(cold_step, repeat=5, warmup=0), 4)
    extra["render_only_s"] = {level: round(median_time(lambda lv=level: render_merged(scene, geometry=lv),
                                                       repeat=7, warmup=1), 4) for level in (LEVEL, "box")}
    return Figure(name=f"scenerevis env step, {LEVEL} meshes in the render and physics ({what})",
                  seconds=mesh_s, baseline="the same step at the box level", baseline_seconds=box_s,
                  target_seconds=STEP_TARGET_S, extra=extra)


def run() -> list[Figure]:
    scene = _room()
    figures = [_step_figure(scene, f"{len(scene['objects'])}-object living room"),
               _step_figure(_big_room(scene), "30 objects in an 8 x 8 m room")]
    house = bench_house()
    room = "living room"
    obj = next(o.id for o in house.objects_in(room) if o.category == "shelf")
    wall = next(w.id for w in house.walls if w.room_id == room and "|north|" in w.id and not w.exterior)
    cases: dict[str, Callable[[str], object]] = {
        "topdown_scene": lambda g: views.topdown_scene(house, px=PX, geometry=g),
        "topdown_room": lambda g: views.topdown_room(house, room, px=PX, geometry=g),
        "wall_view": lambda g: views.wall_view(house, wall, px=PX, geometry=g),
        "object_front_view": lambda g: views.object_front_view(house, obj, px=PX, geometry=g),
        "object_multiview (5 images)": lambda g: views.object_multiview(house, obj, px=PX, geometry=g),
        "revis_views (top + diagonal)": lambda g: views.revis_views(house, 0, px=PX, geometry=g),
    }
    house_extra = {"objects": len(house.objects), "px": PX, "gl": gl_info().renderer}
    for name, fn in cases.items():
        def cold(f: Callable[[str], object] = fn) -> None:
            clear_mesh_cache()
            f(LEVEL)

        ours = median_time(cold, repeat=5, warmup=1)
        warm = median_time(lambda f=fn: f(LEVEL), repeat=5, warmup=1)
        boxes = median_time(lambda f=fn: f("box"), repeat=5, warmup=1)
        figures.append(Figure(name=f"scenes.views {name} from {LEVEL} meshes (cold), 150-object house, {PX}²",
                              seconds=ours, baseline="the same view from boxes", baseline_seconds=boxes,
                              extra={**house_extra, "warm_cache_s": round(warm, 4)}))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(json.dumps(figure.to_dict(), indent=2))
