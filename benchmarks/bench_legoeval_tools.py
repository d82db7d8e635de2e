"""LEGO-Eval tools on a 5-room, 150-object house (issue 11: each textual and geometric tool
<= 10 ms; each rendered view <= 0.1 s on CPU).

Ours: the tool as the evaluator calls it (``run_tool`` on a :class:`ToolContext` whose id
index is built once per scene; the build time is reported beside). Baseline, timed in the
same run: the original's way of answering the same call, a scan of the house JSON lists for
every id on every call (door/window positions from the wall polygon, object footprints from
an asset-size table loaded once, as the original loads its annotation file once). Both
answer the same ids; the figure's ``extra`` holds the ids per call.

The environment tools (rendered views, PNG-encoded) have no baseline that runs here: the
original renders in AI2-THOR (Unity); each view's figure says so as its skipped baseline.
"""

from __future__ import annotations

import math
import time
from typing import Any

from _common import Figure, median_time

from buildbench.scenes.io import write_thor
from buildbench.suites.legoeval.tools import SceneIndex, ToolContext, run_tool
from buildbench.suites.legoeval.tools.sample import sample_house

TOOL_TARGET_S = 0.010
VIEW_TARGET_S = 0.1


# --- the original's style: scan the JSON on every call -------------------------------------
def scan_room_info(h: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    out = {}
    for rid in ids:
        for r in h["rooms"]:
            if r["id"] == rid:
                out[f"{rid}_coordinates"] = r["vertices"]
                out[f"{rid}_floor_material"] = (r.get("floorMaterial") or {}).get("name", "Unknown")
    return out


def scan_wall_list(h: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    return {f"{rid}_wall_list": [w["id"] for w in h["walls"] if w["roomId"] == rid and "exterior" not in w["id"]]
            for rid in ids}


def scan_wall_info(h: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    out = {}
    for wid in ids:
        for w in h["walls"]:
            if w["id"] == wid:
                for key in ("id", "roomId", "width", "height", "direction"):
                    out[f"{wid}_{key}"] = w.get(key)
                out[f"{wid}_coordinates"] = w.get("segment")
                out[f"{wid}_material"] = (w.get("material") or {}).get("name")
    return out


def scan_listing(h: dict[str, Any], key: str, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rid in ids:
        if key == "objects":
            out[rid] = [o["id"] for o in h[key] if o.get("roomId") == rid]
        else:
            out[rid] = [d["id"] for d in h[key] if rid in (d.get("room0"), d.get("room1"))]
    return out


def scan_opening_info(h: dict[str, Any], key: str, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for oid in ids:
        for d in h[key]:
            if d["id"] != oid:
                continue
            wall = next(w for w in h["walls"] if w["id"] == d["wall0"])
            p, q = wall["polygon"][0], wall["polygon"][3]
            out[f"{oid}_position"] = {"x": round((p["x"] + q["x"]) / 2, 2), "y": d["assetPosition"]["y"],
                                      "z": round((p["z"] + q["z"]) / 2, 2)}
            out[f"{oid}_rooms"] = [d["room0"], d["room1"]]
            out[f"{oid}_walls"] = [d["wall0"], d["wall1"]]
    return out


def _footprint_cm(o: dict[str, Any], size: tuple[float, float, float]) -> list[list[float]]:
    yaw = math.radians(o["rotation"]["y"])
    c, s = math.cos(yaw), math.sin(yaw)
    cx, cz = o["position"]["x"] * 100, o["position"]["z"] * 100
    pts = []
    for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1)):
        lx, lz = sx * size[0] * 50, sz * size[2] * 50
        pts.append([round(cx + lx * c + lz * s, 2), round(cz - lx * s + lz * c, 2)])
    return pts


def scan_object_info(h: dict[str, Any], sizes: dict[str, tuple[float, float, float]], ids: list[str]) -> dict[str, Any]:
    out = {}
    for oid in ids:
        for o in h["objects"]:
            if o["id"] == oid:
                out[oid] = {"id": oid, "assetId": o["assetId"], "roomId": o.get("roomId"),
                            "position": o["position"], "rotation": o["rotation"],
                            "coordinates": _footprint_cm(o, sizes[o["assetId"]])}
    return out


def scan_spatial(h: dict[str, Any], groups: list[list[str]]) -> dict[str, Any]:
    out = {}
    for group in groups:
        found = [next(o for o in h["objects"] if o["id"] == e) for e in group]
        anchor = found[0]
        yaw = math.radians(anchor["rotation"]["y"])
        front = (math.sin(yaw), math.cos(yaw))
        for other in found[1:]:
            dx = other["position"]["x"] - anchor["position"]["x"]
            dz = other["position"]["z"] - anchor["position"]["z"]
            out[f"{anchor['id']}|{other['id']}_relation"] = {
                "right_m": round(dx * front[1] - dz * front[0], 2), "front_m": round(dx * front[0] + dz * front[1], 2)}
    return out


def run() -> list[Figure]:
    scene = sample_house(5, 150)
    house = write_thor(scene)
    sizes = {o.asset_id: o.size for o in scene.objects}
    t_index = median_time(lambda: SceneIndex.build(scene), repeat=5)
    ctx = ToolContext.for_scene(scene, render=False)
    rooms = [r.id for r in scene.rooms]
    walls = [w for r in rooms for w in ctx.index.walls_by_room[r]]
    doors = [d.id for d in scene.doors]
    windows = [w.id for w in scene.windows]
    room_objects = ctx.index.objects_by_room[rooms[2]]
    groups = [room_objects[i:i + 3] for i in range(0, 9, 3)]
    cases: list[tuple[str, Any, Any]] = [
        ("get_room_list", None, lambda: [r["id"] for r in house["rooms"]]),
        ("get_room_info", rooms, lambda: scan_room_info(house, rooms)),
        ("get_wall_list", rooms, lambda: scan_wall_list(house, rooms)),
        ("get_wall_info", walls, lambda: scan_wall_info(house, walls)),
        ("get_door_list", rooms, lambda: scan_listing(house, "doors", rooms)),
        ("get_door_info", doors, lambda: scan_opening_info(house, "doors", doors)),
        ("get_window_list", rooms, lambda: scan_listing(house, "windows", rooms)),
        ("get_window_info", windows, lambda: scan_opening_info(house, "windows", windows)),
        ("get_object_list", rooms, lambda: scan_listing(house, "objects", rooms)),
        ("get_object_info", room_objects, lambda: scan_object_info(house, sizes, room_objects)),
        ("get_spatial_relation", groups, lambda: scan_spatial(house, groups)),
    ]
    figures = []
    for name, args, baseline in cases:
        ours = median_time(lambda name=name, args=args: run_tool(ctx, name, args), repeat=21, warmup=2)
        base = median_time(baseline, repeat=21, warmup=2)
        n_ids = 0 if args is None else len(args)
        label = "original-style JSON scan per call" + (" (text part)" if name == "get_spatial_relation" else "")
        figures.append(Figure(f"legoeval {name} (5 rooms, 150 objects)", ours, label, base, TOOL_TARGET_S,
                              {"ids_per_call": n_ids, "index_build_s": t_index}))
    # Where the index pays: a large house, one room's objects described at once.
    big = sample_house(20, 2000)
    big_house = write_thor(big)
    big_sizes = {o.asset_id: o.size for o in big.objects}
    big_ctx = ToolContext.for_scene(big, render=False)
    big_ids = big_ctx.index.objects_by_room[big.rooms[7].id]
    ours = median_time(lambda: run_tool(big_ctx, "get_object_info", big_ids), repeat=11, warmup=1)
    base = median_time(lambda: scan_object_info(big_house, big_sizes, big_ids), repeat=11, warmup=1)
    figures.append(Figure("legoeval get_object_info (20 rooms, 2000 objects)", ours,
                          "original-style JSON scan per call", base, TOOL_TARGET_S,
                          {"ids_per_call": len(big_ids), "index_build_s": median_time(lambda: SceneIndex.build(big))}))
    views = ToolContext.for_scene(scene, render=True, image_px=512)
    view_cases = [("get_topdown_scene", None), ("get_topdown_room", rooms[:1]), ("get_wall_scene", walls[:1]),
                  ("get_frontview_object", room_objects[:1]), ("get_topdown_object", room_objects[:1]),
                  ("get_material_image", [scene.rooms[0].floor_material]),
                  ("get_spatial_relation", groups[:1])]
    for name, args in view_cases:
        t0 = time.perf_counter()
        run_tool(views, name, args)  # first call: warms caches and shader-free code paths
        first = time.perf_counter() - t0
        ours = median_time(lambda name=name, args=args: run_tool(views, name, args), repeat=3, warmup=0)
        figures.append(Figure(f"legoeval {name} 512 px view + PNG", ours, "the original's AI2-THOR render", None,
                              VIEW_TARGET_S, {"first_call_s": first},
                              baseline_skipped="AI2-THOR (a Unity build with a display) does not run here"))
    return figures
