"""SceneReVis scene JSON (flat and grouped, ``scenerevis.md`` §1.3) <-> :class:`Scene`.

One room per file: ``bounds_bottom``/``bounds_top`` (flat) or ``room_envelope`` (grouped)
give the floor polygon, floor and ceiling heights; each object's ``pos`` is its bottom
centre (converted to the box centre), ``rot`` a scalar-last quaternion, ``size`` the
unrotated extents, ``desc`` the description (category found through the catalogue) and
``jid``/``uid`` the asset. Object ids: the record's ``id`` when it has one, else
``{category}-{k}`` in file order. Writing keeps each record and overwrites only changed
fields, so an unchanged scene writes back equal (key order included).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace
from typing import Any

import numpy as np

from buildbench.geometry import rotation_from_quat_xyzw
from buildbench.scenes.catalogue import Catalogue, default_catalogue
from buildbench.scenes.model import Origin, Room, Scene, SceneFormatError, SceneObject, check_floor
from buildbench.scenes.thor_parse import num

FLAT, GROUPED = "scenerevis-flat", "scenerevis-grouped"
_MAIN_GROUP = "main_group"


def is_revis(data: Any) -> bool:
    return isinstance(data, dict) and ("room_envelope" in data or "groups" in data or "bounds_bottom" in data)


def read_revis(data: dict[str, Any], *, catalogue: Catalogue | None = None) -> Scene:
    if not isinstance(data, dict):
        raise SceneFormatError(f"scene: expected a JSON object, got {type(data).__name__}")
    cat = catalogue or default_catalogue()
    grouped = "groups" in data or "room_envelope" in data
    envelope = data.get("room_envelope") if grouped else data
    where = "room_envelope" if grouped else "scene"
    if not isinstance(envelope, dict):
        raise SceneFormatError(f"{where}: expected an object with bounds_bottom")
    room = _room_from(data, envelope, "room_envelope." if grouped else "")
    records: list[tuple[dict[str, Any], str, str | None]] = []
    if grouped:
        groups = data.get("groups")
        if not isinstance(groups, list):
            raise SceneFormatError(f"groups: expected a list, got {type(groups).__name__}")
        for g, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("objects", []), list):
                raise SceneFormatError(f"groups[{g}]: expected an object with an 'objects' list")
            name = str(group.get("group_name", f"group_{g}"))
            records += [(o, f"groups[{g}].objects[{j}]", name) for j, o in enumerate(group.get("objects", []))]
    else:
        objects = data.get("objects", [])
        if not isinstance(objects, list):
            raise SceneFormatError(f"objects: expected a list, got {type(objects).__name__}")
        records = [(o, f"objects[{j}]", None) for j, o in enumerate(objects)]
    scene_objects = _objects_from(records, room, cat)
    raw = {k: (None if k in ("objects", "bounds_bottom", "bounds_top", "room_envelope") else v)
           for k, v in data.items()}
    if grouped:  # group names, types and key order are kept; their objects live in the scene
        raw["groups"] = [{k: (None if k == "objects" else v) for k, v in g.items()} for g in data["groups"]]
    return Scene(rooms=[room], objects=scene_objects, source_format=GROUPED if grouped else FLAT, raw=raw)


def write_revis(scene: Scene, grouped: bool = False, *, room_id: str | None = None) -> dict[str, Any]:
    """One room of ``scene`` as SceneReVis JSON (the only room unless ``room_id``)."""
    room = _pick_room(scene, room_id)
    own = scene.source_format in (FLAT, GROUPED)  # records of another format are no help
    bounds = _bounds_record(room if own else replace(room, raw={}))
    objects = [_object_record(o if own else replace(o, raw={}))
               for o in scene.objects if _home_room(scene, o) in (room.id, "")]
    out: dict[str, Any] = {}
    keep = scene.raw if own else {}
    if not keep:
        out.update(room_type=room.room_type or "room", room_id=room.id)
    for key, value in keep.items():
        if value is not None or key in ("objects", "groups", "bounds_bottom", "bounds_top", "room_envelope"):
            out[key] = copy.deepcopy(value)
    was_grouped = scene.source_format == GROUPED
    if grouped:
        for key in ("objects", "bounds_bottom", "bounds_top"):
            out.pop(key, None)
        out["room_envelope"] = {**(out.get("room_envelope") or {}), **bounds}
        out["groups"] = _groups(scene, objects, keep_raw=was_grouped)
    else:
        for key in ("groups", "room_envelope"):
            out.pop(key, None)
        out.update(bounds)
        out["objects"] = [rec for _, rec in objects]
    return out


# --- reading ------------------------------------------------------------------------------------
def _points(value: Any, where: str) -> list[tuple[float, float, float]]:
    if not isinstance(value, list) or len(value) < 3:
        raise SceneFormatError(f"{where}: expected >= 3 [x, y, z] points")
    out = []
    for j, p in enumerate(value):
        if not isinstance(p, (list, tuple)) or len(p) != 3:
            raise SceneFormatError(f"{where}[{j}]: expected [x, y, z], got {p!r}")
        out.append((num(p[0], f"{where}[{j}]"), num(p[1], f"{where}[{j}]"), num(p[2], f"{where}[{j}]")))
    return out


def _room_from(data: dict[str, Any], envelope: dict[str, Any], prefix: str) -> Room:
    bottom = _points(envelope.get("bounds_bottom"), f"{prefix}bounds_bottom")
    top = _points(envelope["bounds_top"], f"{prefix}bounds_top") if "bounds_top" in envelope else None
    if top is not None and len(top) != len(bottom):
        raise SceneFormatError(f"{prefix}bounds_top: {len(top)} points, bounds_bottom has {len(bottom)}")
    room_id = data.get("room_id") if isinstance(data.get("room_id"), str) and data.get("room_id") else "room"
    check_floor([(p[0], p[2]) for p in bottom], f"{prefix}bounds_bottom")
    raw: dict[str, Any] = {k: envelope[k] for k in ("bounds_bottom", "bounds_top") if k in envelope}
    origin: Origin = {"vertices": tuple(f"{prefix}bounds_bottom[{j}]" for j in range(len(bottom))),
                      "floor_y": f"{prefix}bounds_bottom", "ceiling_y": f"{prefix}bounds_top"}
    return Room(str(room_id), [(p[0], p[2]) for p in bottom], str(data.get("room_type", "") or ""),
                floor_y=min(p[1] for p in bottom), ceiling_y=max(p[1] for p in top) if top else None, raw=raw,
                origin=origin)


def _object_fields(rec: Any, where: str) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    if not isinstance(rec, dict):
        raise SceneFormatError(f"{where}: expected an object, got {type(rec).__name__}")
    ident = rec.get("id")
    if ident is not None and (isinstance(ident, bool) or not isinstance(ident, (str, int))):
        # read as no id, it would be replaced by a made-up one without a word
        raise SceneFormatError(f"{where}.id: expected text or a whole number, got {json.dumps(ident)}")
    triples = []
    for key in ("size", "pos"):
        # ReSpace records may give only the retrieved mesh's size (sampled_asset_size)
        name = "sampled_asset_size" if key == "size" and "size" not in rec and "sampled_asset_size" in rec else key
        v = rec.get(name)
        if not isinstance(v, (list, tuple)) or len(v) != 3:
            raise SceneFormatError(f"{where}.{name}: expected [x, y, z], got {v!r}")
        triples.append(tuple(num(c, f"{where}.{name}") for c in v))
    if any(s < 0 for s in triples[0]):
        raise SceneFormatError(f"{where}.size: extents must be >= 0, got {list(triples[0])}")
    return triples[0], triples[1], revis_quat(rec.get("rot"), f"{where}.rot")


def revis_quat(value: Any, where: str) -> tuple[float, float, float, float]:
    """An object's ``rot`` as a scalar-last quaternion. Besides ``[x, y, z, w]``, SceneReVis's
    own scene reader takes null or absent (no turn) and a bare number (a turn about +y, in
    radians); SceneFormatError for anything else, a zero quaternion included."""
    if value is None:
        return (0.0, 0.0, 0.0, 1.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        half = num(value, where) / 2.0
        return (0.0, math.sin(half), 0.0, math.cos(half))
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise SceneFormatError(f"{where}: expected a quaternion [x, y, z, w] or a yaw in radians, got {value!r}")
    quat = (num(value[0], where), num(value[1], where), num(value[2], where), num(value[3], where))
    norm = math.sqrt(sum(c * c for c in quat))
    if norm < 1e-9:
        raise SceneFormatError(f"{where}: zero quaternion")
    if not math.isfinite(norm):  # each part finite, their squares not
        raise SceneFormatError(f"{where}: quaternion {list(quat)} too large to normalise")
    return quat


def _center(pos: tuple[float, ...], size: tuple[float, ...], quat: tuple[float, ...]) -> tuple[float, float, float]:
    """Bottom centre -> box centre: half the height along the object's own up axis."""
    up = rotation_from_quat_xyzw(quat) @ np.array([0.0, size[1] / 2.0, 0.0])
    return (float(pos[0] + up[0]), float(pos[1] + up[1]), float(pos[2] + up[2]))


def _bottom(center: tuple[float, ...], size: tuple[float, ...], quat: tuple[float, ...]) -> list[float]:
    up = rotation_from_quat_xyzw(quat) @ np.array([0.0, size[1] / 2.0, 0.0])
    return [float(center[0] - up[0]), float(center[1] - up[1]), float(center[2] - up[2])]


def _objects_from(records: list[tuple[dict[str, Any], str, str | None]], room: Room,
                  cat: Catalogue) -> list[SceneObject]:
    out: list[SceneObject] = []
    explicit = {_record_id(r) for r, _, _ in records if isinstance(r, dict)} - {""}
    counters: dict[str, int] = {}
    taken: set[str] = set()
    for rec, where, group in records:
        size, pos, quat = _object_fields(rec, where)
        desc, asset_id = _desc(rec), _asset_id(rec)
        category = cat.category_of(desc) or (cat.category_of(asset_id) if asset_id else None) or "object"
        object_id = _record_id(rec)
        if not object_id:
            k = counters.get(category, 0)
            while f"{category}-{k}" in explicit:
                k += 1
            counters[category] = k + 1
            object_id = f"{category}-{k}"
        if object_id in taken:
            raise SceneFormatError(f"{where}.id: duplicate id {object_id!r}")
        taken.add(object_id)
        attributes: dict[str, Any] = {"description": desc, "size_source": "record"}
        if group is not None:
            attributes["group"] = group
        sized = "sampled_asset_size" if "size" not in rec else "size"  # as _object_fields read it
        origin: Origin = {"center": tuple(f"{where}.pos[{c}]" for c in range(3)),
                          "size": tuple(f"{where}.{sized}[{c}]" for c in range(3)), "rotation": f"{where}.rot"}
        out.append(SceneObject(object_id, category, asset_id, _center(pos, size, quat),
                               (size[0], size[1], size[2]), (quat[0], quat[1], quat[2], quat[3]),
                               room.id, None, attributes, raw=rec, origin=origin))
    return out


def _desc(rec: dict[str, Any]) -> str:
    """The description; ReSpace records may carry only the retrieved asset's."""
    return str(rec.get("desc") or rec.get("sampled_asset_desc") or "")


def _asset_id(rec: dict[str, Any]) -> str:
    return str(rec.get("jid") or rec.get("uid") or rec.get("sampled_asset_jid") or "")


def _record_id(rec: dict[str, Any]) -> str:
    """The record's own instance id as text (exporters write ``"obj_3"`` or ``3``), or ""."""
    value = rec.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else ""


# --- writing ------------------------------------------------------------------------------------
def _home_room(scene: Scene, obj: SceneObject) -> str:
    """The room whose record holds ``obj``: its own, or for an object of a house that lies in no
    room, the room nearest its centre (first in order on a tie), where it counts as out of bounds.
    Every room's record took such an object before, counting it once per room."""
    if obj.room_id or len(scene.rooms) <= 1:
        return obj.room_id
    from shapely.geometry import Point, Polygon

    at = Point(obj.center[0], obj.center[2])
    return min(scene.rooms, key=lambda r: Polygon(r.vertices).distance(at)).id


def _pick_room(scene: Scene, room_id: str | None) -> Room:
    if room_id is not None:
        return scene.room(room_id)
    if len(scene.rooms) != 1:
        raise SceneFormatError(f"SceneReVis JSON holds one room; the scene has {len(scene.rooms)} "
                               "(name one with room_id)")
    return scene.rooms[0]


def _bounds_record(room: Room) -> dict[str, Any]:
    if room.raw.get("bounds_bottom") is not None:
        old = _room_from({}, room.raw, "")
        if (old.vertices, old.floor_y, old.ceiling_y) == (room.vertices, room.floor_y, room.ceiling_y):
            return copy.deepcopy(room.raw)
    ceiling = room.ceiling_y if room.ceiling_y is not None else room.floor_y + 2.6
    return {"bounds_top": [[x, ceiling, z] for x, z in room.vertices],
            "bounds_bottom": [[x, room.floor_y, z] for x, z in room.vertices]}


def _object_record(obj: SceneObject) -> tuple[str | None, dict[str, Any]]:
    desc = str(obj.attributes.get("description") or obj.category)
    quat = list(obj.rotation_xyzw)
    if not obj.raw:
        rec = {"desc": desc, "size": list(obj.size), "pos": _bottom(obj.center, obj.size, obj.rotation_xyzw),
               "rot": quat, "jid": obj.asset_id}
        return obj.attributes.get("group"), rec
    rec = copy.deepcopy(obj.raw)
    size, pos, old_quat = _object_fields(obj.raw, "object")
    if "id" in rec and obj.id != _record_id(obj.raw):  # an unchanged integer id stays an integer
        rec["id"] = obj.id
    if desc != _desc(obj.raw) and (_desc(obj.raw) or desc != obj.category):
        rec["desc"] = desc
    if tuple(obj.size) != size:
        rec["size"] = list(obj.size)
    if tuple(obj.rotation_xyzw) != old_quat:
        rec["rot"] = quat
    if obj.center != _center(pos, size, old_quat) or tuple(obj.size) != size or tuple(obj.rotation_xyzw) != old_quat:
        rec["pos"] = _bottom(obj.center, obj.size, obj.rotation_xyzw)
    key = "jid" if "jid" in rec or "uid" not in rec else "uid"
    if obj.asset_id != _asset_id(obj.raw):
        rec[key] = obj.asset_id
    return obj.attributes.get("group"), rec


def _groups(scene: Scene, objects: list[tuple[str | None, dict[str, Any]]], *, keep_raw: bool) -> list[dict[str, Any]]:
    raw_groups = scene.raw.get("groups") if keep_raw else None
    names: list[str] = []
    for group, _ in objects:
        name = group or _MAIN_GROUP
        if name not in names:
            names.append(name)
    layouts: dict[str, dict[str, Any]] = {str(g.get("group_name")): g for g in (raw_groups or [])
                                          if isinstance(g, dict)}
    out = []
    names = names or ([str(g.get("group_name")) for g in raw_groups or [] if isinstance(g, dict)][:1]
                      or [_MAIN_GROUP])
    for name in names:
        base = copy.deepcopy(layouts.get(name)) or {"group_name": name, "group_type": "functional_area",
                                                    "description": "", "objects": None}
        base["objects"] = [rec for group, rec in objects if (group or _MAIN_GROUP) == name]
        out.append(base)
    for name, layout in layouts.items():  # groups that were empty in the file stay
        if name not in names:
            out.append({**copy.deepcopy(layout), "objects": []})
    if raw_groups:  # file order of the groups
        order = [str(g.get("group_name")) for g in raw_groups if isinstance(g, dict)]
        out.sort(key=lambda g: order.index(g["group_name"]) if g["group_name"] in order else len(order))
    return out
