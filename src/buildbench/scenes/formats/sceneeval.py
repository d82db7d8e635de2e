"""SceneEval's input: the SmartScenes scene-state JSON (``{"format": "sceneState", "scene":
{"arch": {"elements": [...]}, "object": [...]}}``), z up, one file per scene
(``scene_{ID}.json``; the prompt lives in SceneEval's ``annotations.csv``, not the file).

Architecture: each ``Floor`` element's ``points`` are a room's floor (``roomId``), ``Wall``
elements give its height. Objects: ``modelId`` (``<source>.<asset id>``) and a 4x4
``transform.data`` in column-major order whose rotation turns the asset's own y-up frame
into the z-up world, so ``ZUP_TO_YUP @ R`` is the object's rotation in ours. The asset's
origin is taken as its bottom centre (3D-FUTURE's and objathor's origin; the released
examples put floor objects at z = floor height). Sizes are not in the format: they come from
our ``buildbench`` key on each object (written by us), else ``ReadOptions.asset_sizes``, else
the built-in catalogue (THOR asset ids); an object of unknown size is an error naming it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation
from shapely.geometry import Point, Polygon

from buildbench.scenes.catalogue import default_catalogue
from buildbench.scenes.model import Origin, Room, Scene, SceneFormatError, SceneObject, check_floor

from . import Format, Item, ReadOptions, as_records, one_or_list, read_record
from .zup import ZUP_TO_YUP, floor_to_ours, floor_to_theirs, to_ours, to_theirs

_EXT = "buildbench"
DEFAULT_WALL_M = 2.8


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SceneFormatError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _rooms(arch: dict[str, Any]) -> list[Room]:
    elements = arch.get("elements", [])
    if not isinstance(elements, list):
        raise SceneFormatError("scene.arch.elements: expected a list")
    heights: dict[str, tuple[float, str]] = {}  # room -> its highest wall and where the file gives it
    rooms: list[Room] = []
    regions = arch.get("regions", [])
    if not isinstance(regions, list):
        raise SceneFormatError("scene.arch.regions: expected a list")
    types = {str(r.get("id")): str(r.get("type", "")) for r in regions if isinstance(r, dict)}
    for i, el in enumerate(elements):
        where = f"scene.arch.elements[{i}]"
        if not isinstance(el, dict):
            raise SceneFormatError(f"{where}: expected an object")
        room_id = str(el.get("roomId", ""))
        if el.get("type") == "Wall" and "height" in el:
            height = _num(el["height"], f"{where}.height")
            if height > heights.get(room_id, (0.0, ""))[0]:
                heights[room_id] = (height, f"{where}.height")
        if el.get("type") != "Floor":
            continue
        pts = el.get("points")
        if not isinstance(pts, list) or len(pts) < 3:
            raise SceneFormatError(f"{where}.points: expected at least 3 [x, y, z] points")
        verts = []
        for j, p in enumerate(pts):
            if not isinstance(p, list) or len(p) < 2:
                raise SceneFormatError(f"{where}.points[{j}]: expected [x, y, z]")
            verts.append(floor_to_ours(_num(p[0], f"{where}.points[{j}]"), _num(p[1], f"{where}.points[{j}]")))
        check_floor(verts, f"{where}.points")
        kind = types.get(room_id, "")
        rooms.append(Room(id=room_id or f"room-{len(rooms)}", vertices=verts,
                          room_type="" if kind == "Other" else kind, raw={"element": el},
                          origin={"vertices": tuple(f"{where}.points[{j}]" for j in range(len(verts)))}))
    for room in rooms:
        room.ceiling_y, at = heights.get(room.id, (DEFAULT_WALL_M, ""))
        if at:
            room.origin["ceiling_y"] = at
    return rooms


def _ext(rec: dict[str, Any]) -> dict[str, Any]:
    """Our own key on a record (what the format cannot say), {} when absent."""
    ext = rec.get(_EXT)
    return ext if isinstance(ext, dict) else {}


def _size(rec: dict[str, Any], model_id: str, options: ReadOptions, where: str) -> tuple[float, float, float]:
    ext = _ext(rec)
    if isinstance(ext.get("size"), list) and len(ext["size"]) == 3:
        sx, sy, sz = (_num(v, f"{where}.{_EXT}.size") for v in ext["size"])
        return (sx, sy, sz)
    if model_id in options.asset_sizes:
        return options.asset_sizes[model_id]
    info = default_catalogue().get(model_id.split(".", 1)[-1])
    if info is not None:
        return info.size_m
    raise SceneFormatError(f"{where}: size of asset {model_id!r} unknown (SceneEval's format names assets, not "
                           "sizes: give them with --asset-sizes FILE, a JSON object model id -> [sx, sy, sz])")


def _object(rec: dict[str, Any], i: int, rooms: list[Room], options: ReadOptions) -> SceneObject:
    where = f"scene.object[{i}]"
    model_id = str(rec.get("modelId", ""))
    data = (rec.get("transform") or {}).get("data") if isinstance(rec.get("transform"), dict) else None
    if not isinstance(data, list) or len(data) != 16:
        raise SceneFormatError(f"{where}.transform.data: expected 16 numbers (a column-major 4x4 matrix)")
    m = np.array([_num(v, f"{where}.transform.data[{k}]") for k, v in enumerate(data)]).reshape(4, 4).T
    linear = m[:3, :3]
    scale = np.linalg.norm(linear, axis=0)
    if np.any(scale < 1e-9):
        raise SceneFormatError(f"{where}.transform.data: a zero scale")
    unit_columns = linear / scale
    if np.linalg.det(unit_columns) < 1e-6:
        raise SceneFormatError(f"{where}.transform.data: a mirroring or flattening matrix, not a rotation and scale")
    rot = ZUP_TO_YUP @ unit_columns
    base = _size(rec, model_id, options, where)
    ext = _ext(rec)
    size = base if ext.get("size") else (float(base[0] * scale[0]), float(base[1] * scale[1]),
                                         float(base[2] * scale[2]))
    bottom = np.array(to_ours([float(v) for v in m[:3, 3]]), dtype=float)
    center = bottom + rot @ np.array([0.0, size[1] / 2.0, 0.0])
    x, y, z, w = Rotation.from_matrix(rot).as_quat()
    room = next((r.id for r in rooms if Polygon(r.vertices).buffer(1e-6).contains(Point(center[0], center[2]))),
                rooms[0].id if len(rooms) == 1 else "")
    oid = str(ext.get("id") or rec.get("id") or i)
    category = str(ext.get("category") or "object")
    attrs = {"description": str(ext["description"])} if ext.get("description") else {}
    # the centre and turn are the transform's; the size is ours, or the asset's scaled by it
    at = f"{where}.transform.data"
    origin: Origin = {"center": at, "rotation": at, "size": f"{where}.{_EXT}.size" if ext.get("size") else at}
    return SceneObject(id=oid, category=category, asset_id=model_id, center=tuple(float(c) for c in center),  # type: ignore[arg-type]
                       size=size, rotation_xyzw=(float(x), float(y), float(z), float(w)), room_id=room,
                       attributes=attrs, raw=rec, origin=origin)


def _scene(doc: dict[str, Any], options: ReadOptions) -> Scene:
    """The rooms and objects of one scene state (errors and origins name the document's keys)."""
    scene_rec = doc["scene"]
    rooms = _rooms(scene_rec.get("arch") or {})
    if not rooms:
        raise SceneFormatError("scene.arch: no Floor element (a room needs its floor)")
    objs = scene_rec.get("object", [])
    if not isinstance(objs, list):
        raise SceneFormatError("scene.object: expected a list")
    objects = [_object(o if isinstance(o, dict) else {}, i, rooms, options) for i, o in enumerate(objs)]
    return Scene(rooms=rooms, objects=objects, source_format="sceneeval", raw={"sceneeval": doc})


def read(data: Any, options: ReadOptions) -> list[Item]:
    items = []
    for n, doc in enumerate(as_records(data, "scene state")):
        scene_rec = doc.get("scene")
        if doc.get("format") != "sceneState" or not isinstance(scene_rec, dict):
            raise SceneFormatError(f"[{n}]: not a scene state (expected 'format': 'sceneState' and a 'scene' object)")
        up = scene_rec.get("up", [0, 0, 1])
        if not isinstance(up, list) or up != [0, 0, 1]:
            raise SceneFormatError(f"[{n}].scene.up: only z-up scene states are read, got {up!r}")
        arch = scene_rec.get("arch") or {}
        if not isinstance(arch, dict):
            raise SceneFormatError(f"[{n}].scene.arch: expected an object, got {type(arch).__name__}")
        # other units would be scaled without a word if these were ignored
        for key, value in (("scene.unit", scene_rec.get("unit", 1)), ("scene.arch.scaleToMeters",
                                                                        arch.get("scaleToMeters", 1))):
            if isinstance(value, bool) or value != 1:
                raise SceneFormatError(f"[{n}].{key}: only scene states in metres are read (1), got {value!r}")
        scene = read_record(n, functools.partial(_scene, options=options), doc)
        ext = _ext(scene_rec)
        items.append(Item(scene, name=str(scene_rec.get("id", n)), instruction=str(ext.get("prompt", "")),
                          room=str(ext.get("room", scene.rooms[0].room_type))))
    return items


def _column_major(obj: SceneObject) -> list[float]:
    rot = ZUP_TO_YUP.T @ obj.rotation
    bottom = np.asarray(obj.center) - obj.rotation @ np.array([0.0, obj.size[1] / 2.0, 0.0])
    m = np.eye(4)
    m[:3, :3] = rot
    m[:3, 3] = to_theirs(tuple(float(v) for v in bottom))  # type: ignore[arg-type]
    return [float(v) for v in m.T.reshape(-1)]


def _scene_state(item: Item) -> dict[str, Any]:
    scene = item.scene
    elements: list[dict[str, Any]] = []
    for room in scene.rooms:
        height = (room.ceiling_y or room.floor_y + DEFAULT_WALL_M) - room.floor_y
        pts = [[*floor_to_theirs(v), 0.0] for v in room.vertices]
        elements.append({"id": f"{room.id}|floor", "roomId": room.id, "type": "Floor", "points": pts})
        for j, (a, b) in enumerate(zip(pts, pts[1:] + pts[:1], strict=True)):
            elements.append({"id": f"wall|{room.id}|{j}", "roomId": room.id, "type": "Wall", "height": height,
                             "points": [a, b], "holes": []})
    objects = []
    for i, obj in enumerate(scene.objects):
        ext: dict[str, Any] = {"id": obj.id, "category": obj.category, "size": list(obj.size)}
        if obj.attributes.get("description"):
            ext["description"] = obj.attributes["description"]
        model = obj.raw.get("modelId") if scene.source_format == "sceneeval" else None
        objects.append({"id": str(i + 1), "index": i, "modelId": model or obj.asset_id, "parentId": "",
                        "transform": {"rows": 4, "cols": 4, "data": _column_major(obj)}, _EXT: ext})
    regions = [{"id": r.id, "type": r.room_type or "Other"} for r in scene.rooms]
    return {"format": "sceneState", "scene": {
        "version": "scene@1.0.2", "up": [0, 0, 1], "front": [0, 1, 0], "unit": 1.0, "id": item.name or "scene",
        "arch": {"version": "arch@1.0.2", "up": [0, 0, 1], "front": [0, 1, 0], "scaleToMeters": 1,
                 "elements": elements, "regions": regions},
        "object": objects, _EXT: {"prompt": item.instruction, "room": item.room}}}


def write(items: Sequence[Item]) -> Any:
    return one_or_list([_scene_state(item) for item in items])


FORMAT = Format("sceneeval", "SceneEval input: SmartScenes scene state, z up (one scene_{ID}.json per scene)",
                read, write, "no sizes or categories in the format (ours ride in a 'buildbench' key; others need "
                "--asset-sizes); doors and windows (wall holes) are not read or written; walls are rebuilt "
                "from the floor outline")
