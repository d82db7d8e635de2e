"""AI2-THOR house JSON (as Holodeck and ProcTHOR write it) <-> :class:`Scene`.

Reading accepts both id conventions (``wall|{room}|{direction}|{j}`` and
``wall|{n}|{x0}|{z0}|{x1}|{z1}``), nested ``children`` (flattened into ``Scene.objects`` with
``parent_id``), walls without ``direction``/``segment``/``width``/``height`` and wall polygons
in either point order, exterior walls marked by ``roomId`` or by id, rooms given by
``vertices`` or ``floorPolygon``, and ProcTHOR's ``"empty": true`` on the invisible walls of
an open floor plan (:attr:`Wall.empty`; absent or null is a solid wall). Writing starts from
each element's original record and overwrites only what differs from a re-read of that
record, so an unchanged scene writes back equal to its file (``write_thor(read_thor(d)) ==
d``); elements made in code are written in Holodeck's layout (``"empty": true`` only on
empty walls).

Holodeck's top-level ``open_walls``, ``{"segments": [[[x0, z0], [x1, z1]], ...],
"openWallBoxes": [...]}``, lists the ``(x, z)`` metre segments of the walls it removed between
rooms joined by an "open" doorway (both sides removed, each segment listed once, a segment
and its reverse being one). Those boundaries are read as empty walls
(:mod:`buildbench.scenes.thor_open`): a wall side (not an exterior twin) whose endpoints equal
a segment's, in either order, to the millimetre is read as empty, and a room edge
(``full_vertices``, else the floor polygon) on a segment with no wall side there gets one
rebuilt, empty, under the id Holodeck gave it, ``wall|{room}|{direction}|{j}``. Only whole
segments match: ``open_walls`` records no ids. Writing leaves the rebuilt walls out, writes no
``empty`` key for a wall open by ``open_walls``, and writes ``open_walls`` back as read, less
any segment (and its two boxes) whose wall sides were all made solid. A malformed
``open_walls`` is refused with one line naming the entry and field.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import math
import re
from dataclasses import replace
from typing import Any

from shapely.geometry import Point, Polygon

from buildbench.scenes import thor_open as to
from buildbench.scenes import thor_parse as tp
from buildbench.scenes.catalogue import Catalogue, default_catalogue
from buildbench.scenes.model import (
    EXTERIOR,
    Opening,
    Room,
    Scene,
    SceneFormatError,
    SceneObject,
    Wall,
    wall_direction,
)
from buildbench.scenes.scene_warnings import warn

log = logging.getLogger(__name__)

_MODELLED = ("query", "rooms", "walls", "doors", "windows", "objects")
_LAYER = "Procedural0"
# Holodeck floor/wall object ids: "{category}-{k} ({room})", no "|" in either part.
_HOLODECK_OBJECT_ID = re.compile(r"[^|]+ \([^|]+\)")


def read_thor(house: dict[str, Any], *, catalogue: Catalogue | None = None) -> Scene:
    """A scene from a THOR house dict; raises SceneFormatError naming element and field."""
    if not isinstance(house, dict):
        raise SceneFormatError(f"house: expected a JSON object, got {type(house).__name__}")
    if not isinstance(house.get("rooms"), list):
        raise SceneFormatError("rooms: missing or not a list (not a THOR house JSON)")
    cat = catalogue or default_catalogue()
    rooms = [tp.room_from(r, f"rooms[{i}]") for i, r in enumerate(tp.record_list(house, "rooms"))]
    wall_records = tp.record_list(house, "walls")
    interior = {}
    for i, rec in enumerate(wall_records):
        if not tp.is_exterior_wall(rec):
            start, end, *_ = tp.wall_geometry(rec, f"walls[{i}]")
            room_id = tp.ident(rec, "roomId", f"walls[{i}]", required=False)
            interior[tp.segment_key(start, end)] = room_id or _room_on_outline(start, end, rooms, f"walls[{i}]")
    walls = [tp.wall_from(r, f"walls[{i}]", interior) for i, r in enumerate(wall_records)]
    walls = to.apply_open_walls(house, rooms, walls)
    for room in rooms:
        own = [w for w in walls if w.room_id == room.id]
        if own:
            highest = max(own, key=lambda w: w.bottom_y + w.height_m)
            room.ceiling_y = highest.bottom_y + highest.height_m
            if "wall" in highest.origin:  # the room's height is the file's wall's
                room.origin["ceiling_y"] = highest.origin["wall"]
    doors = [tp.opening_from(r, f"doors[{i}]", "door") for i, r in enumerate(tp.record_list(house, "doors"))]
    windows = [tp.opening_from(r, f"windows[{i}]", "window")
               for i, r in enumerate(tp.record_list(house, "windows"))]
    wall_ids = {w.id for w in walls}
    # warnings wait until the house is known to be good: a bad one gets its error line alone
    warnings: list[tuple[str, str]] = []  # (element path, text)
    for kind, openings in (("doors", doors), ("windows", windows)):
        for i, opening in enumerate(openings):
            if _drop_missing_outside(opening, wall_ids):
                warnings.append((f"{kind}[{i}].wall1", f"exterior wall {opening.raw.get('wall1')!r} is not in the "
                                 "house (a partial house?); the opening is read without an outside wall"))
    room_at = _room_locator(rooms)
    objects: list[SceneObject] = []
    guessed: list[str] = []
    for i, rec in enumerate(tp.record_list(house, "objects")):
        _read_object_tree(rec, f"objects[{i}]", cat, None, room_at, objects, guessed)
    if guessed:
        # One line per house: Objaverse assets (Holodeck's small objects) are routinely unknown.
        shown = "; ".join(guessed[:3]) + (f"; … {len(guessed) - 3} more" if len(guessed) > 3 else "")
        warnings.append(("", f"{len(guessed)} object(s) of unknown asset size, category defaults used "
                             f"(attributes['size_source']): {shown}"))
    _link_flat_children(objects)
    raw = {k: (_placeholder(k, v) if k in _MODELLED else v) for k, v in house.items()}
    query = house.get("query") if isinstance(house.get("query"), str) else ""
    scene = Scene(rooms, walls, doors, windows, objects, str(query), _convention(rooms, wall_records), raw)
    check_references(scene)
    for where, text in warnings:
        warn(where, text, log.name)
    return scene


def write_thor(scene: Scene) -> dict[str, Any]:
    """The house dict for ``scene`` (see the module docstring for what is kept)."""
    if scene.source_format not in ("holodeck", "procthor"):  # records of another format are no help
        scene = _without_raw(scene)
    holodeck = scene.source_format != "procthor"
    out: dict[str, Any] = {}
    layout = scene.raw or {k: None for k in _MODELLED}
    for key, value in layout.items():
        out[key] = copy.deepcopy(value)
    if scene.query or "query" in layout:
        out["query"] = scene.query
    interior = {tp.segment_key(w.start, w.end): w.room_id for w in scene.walls if not w.exterior}
    rooms_by_id = {r.id: r for r in scene.rooms}
    out["rooms"] = [_room_record(r) for r in scene.rooms]
    wall_ids = {w.id for w in scene.walls}
    open_keys = to.scene_keys(scene)
    kept = [w for w in scene.walls if not to.is_rebuilt(w, open_keys)]
    out["walls"] = [_wall_record(w, rooms_by_id, interior, holodeck, wall_ids, open_keys) for w in kept]
    if "open_walls" in out:
        out["open_walls"] = to.open_walls_record(scene, kept)
    out["doors"] = [_opening_record(d, wall_ids) for d in scene.doors]
    out["windows"] = [_opening_record(w, wall_ids) for w in scene.windows]
    out["objects"] = _object_records(scene, _room_locator(scene.rooms))
    for key in ("walls", "doors", "windows", "objects"):
        if scene.raw and key not in scene.raw and not out[key]:
            del out[key]  # a list the file did not have stays absent
        elif scene.raw and key in scene.raw and scene.raw[key] is None and not out[key]:
            out[key] = None  # ProcTHOR's partial houses write an empty list as null
    if not scene.raw:
        out.setdefault("proceduralParameters", _default_procedural(scene))
        out.setdefault("metadata", {"schema": "1.0.0", "warnings": {}})
    return out


def _without_raw(scene: Scene) -> Scene:
    return Scene(rooms=[replace(r, raw={}) for r in scene.rooms], walls=[replace(w, raw={}) for w in scene.walls],
                 doors=[replace(d, raw={}) for d in scene.doors], windows=[replace(w, raw={}) for w in scene.windows],
                 objects=[replace(o, raw={}) for o in scene.objects], query=scene.query, source_format="", raw={})


def check_references(scene: Scene) -> None:
    """Raise SceneFormatError for duplicate ids or references to unknown rooms/walls."""
    groups: list[tuple[str, list[Any]]] = [("rooms", scene.rooms), ("walls", scene.walls), ("doors", scene.doors),
                                           ("windows", scene.windows), ("objects", scene.objects)]
    for kind, items in groups:
        seen: dict[str, str] = {}
        for i, item in enumerate(items):
            where = _element_path(item, f"{kind}[{i}]")
            if item.id in seen:
                raise SceneFormatError(f"{where}.id: duplicate id {item.id!r} (also at {seen[item.id]})")
            seen[item.id] = where
    room_ids = {r.id for r in scene.rooms} | {EXTERIOR}
    wall_ids = {w.id for w in scene.walls}
    for kind, items in (("doors", scene.doors), ("windows", scene.windows)):
        for i, o in enumerate(items):
            for field, value in (("room0", o.room0), ("room1", o.room1)):
                if value not in room_ids:
                    raise SceneFormatError(f"{kind}[{i}].{field}: unknown room {value!r}")
            for field, wall in (("wall0", o.wall0), ("wall1", o.wall1)):
                if wall is not None and wall not in wall_ids:
                    raise SceneFormatError(f"{kind}[{i}].{field}: unknown wall {wall!r}")
    for i, w in enumerate(scene.walls):
        if w.room_id not in room_ids:
            raise SceneFormatError(f"walls[{i}].roomId: unknown room {w.room_id!r}")
    for i, obj in enumerate(scene.objects):
        if obj.room_id and obj.room_id not in room_ids:
            raise SceneFormatError(f"{_element_path(obj, f'objects[{i}]')}.roomId: unknown room {obj.room_id!r} "
                                   f"({obj.id!r})")


def _element_path(item: Any, fallback: str) -> str:
    """The file's path of an element: a nested THOR object is ``objects[2].children[0]`` in
    the file, not its index in our flattened object list (``fallback``, also for elements
    made in code)."""
    origin = getattr(item, "origin", None) or {}
    center = origin.get("center")
    first = center[0] if isinstance(center, tuple) and center else None
    if isinstance(first, str) and ".position." in first:
        return first.rsplit(".position.", 1)[0]
    return fallback


# --- reading helpers ------------------------------------------------------------------------
def _read_object_tree(rec: dict[str, Any], where: str, cat: Catalogue, parent: SceneObject | None,
                      room_at: Any, out: list[SceneObject], guessed: list[str]) -> None:
    obj, warnings = tp.object_from(rec, where, cat, parent=parent, room_at=room_at)
    guessed.extend(warnings)
    if parent is not None:
        obj.attributes["thor_nested"] = True
    out.append(obj)
    children = rec.get("children")
    if children is None:
        return
    if not isinstance(children, list):
        raise SceneFormatError(f"{where}.children: expected a list, got {type(children).__name__}")
    for j, child in enumerate(children):
        if not isinstance(child, dict):
            raise SceneFormatError(f"{where}.children[{j}]: expected an object, got {type(child).__name__}")
        _read_object_tree(child, f"{where}.children[{j}]", cat, obj, room_at, out, guessed)


def _drop_missing_outside(opening: Opening, wall_ids: set[str]) -> bool:
    """ProcTHOR's partial houses (saved by the generator before it adds the exterior walls)
    name an outside door's exterior wall before it exists: that side becomes None instead
    of failing the reference check. True when it did."""
    wall1 = opening.wall1
    if wall1 is None or wall1 in wall_ids or not tp.is_exterior_wall({"id": wall1}):
        return False
    opening.wall1 = None
    return True


def _room_on_outline(start: tuple[float, float], end: tuple[float, float], rooms: list[Room], where: str) -> str:
    """The room of an interior wall written with a null ``roomId`` (Phone2Proc's split
    walls): the first room whose outline the wall's midpoint lies on, within 1 cm."""
    mid = Point((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    for room in rooms:
        if len(room.vertices) >= 3 and Polygon(room.vertices).exterior.distance(mid) < 0.01:
            return room.id
    raise SceneFormatError(f"{where}.roomId: missing, and the wall from {start} to {end} lies on no room's outline")


def _placeholder(key: str, value: Any) -> list[Any] | None:
    """What ``Scene.raw`` keeps of a modelled top-level key: its place in the key order,
    and for the lists whether the file wrote ``null`` (None) rather than a list ([])."""
    return [] if key != "query" and value is not None else None


def _link_flat_children(objects: list[SceneObject]) -> None:
    """Holodeck writes small objects flat, named ``{category}-{k}|{receptacleId}`` where the
    receptacle id is ``{category}-{k} ({room})``. ProcTHOR's generator names objects
    ``{room}|{k}|{j}``, whose tail ``{k}|{j}`` may happen to be another object's id, so only
    a Holodeck-shaped receptacle id links."""
    ids = {o.id for o in objects}
    for obj in objects:
        if obj.parent_id is None and "|" in obj.id:
            receptacle = obj.id.split("|", 1)[1]
            if receptacle in ids and receptacle != obj.id and _HOLODECK_OBJECT_ID.fullmatch(receptacle):
                obj.parent_id = receptacle


def _room_locator(rooms: list[Room]) -> Any:
    polygons = [(r.id, Polygon(r.vertices).buffer(1e-6)) for r in rooms if len(r.vertices) >= 3]

    def room_at(x: float, z: float) -> str:
        point = Point(x, z)
        for room_id, poly in polygons:
            if poly.is_valid and poly.contains(point):
                return room_id
        return ""

    return room_at


def _convention(rooms: list[Room], walls: list[dict[str, Any]]) -> str:
    if rooms and all(r.id.startswith("room|") for r in rooms) and not any("direction" in w for w in walls):
        return "procthor"
    return "holodeck"


# --- writing helpers ------------------------------------------------------------------------
def _pt(x: float, y: float, z: float) -> dict[str, float]:
    return {"x": x, "y": y, "z": z}


def _set_material(rec: dict[str, Any], key: str, name: str | None, old: str | None) -> None:
    if name == old:
        return
    if name is None:
        rec.pop(key, None)
    elif isinstance(rec.get(key), dict):
        rec[key] = {**rec[key], "name": name}
    elif isinstance(rec.get(key), str):  # the file names its materials bare (ProcTHOR 0.0.1)
        rec[key] = name
    else:
        rec[key] = {"name": name}


def _room_record(room: Room) -> dict[str, Any]:
    if not room.raw:
        return {"id": room.id, "roomType": room.room_type or room.id,
                "floorMaterial": {"name": room.floor_material or "DarkWoodFloors"},
                "wallMaterial": {"name": room.wall_material or "Drywall"},
                "floorPolygon": [_pt(x, room.floor_y, z) for x, z in room.vertices],
                "vertices": [[x, z] for x, z in room.vertices], "children": [], "ceilings": [], "layer": _LAYER}
    rec = copy.deepcopy(room.raw)
    old = tp.room_from(room.raw, "room")
    if room.id != old.id:  # an unchanged integer id stays an integer
        rec["id"] = room.id
    if room.room_type != old.room_type:
        rec["roomType"] = room.room_type
    _set_material(rec, "floorMaterial", room.floor_material, old.floor_material)
    _set_material(rec, "wallMaterial", room.wall_material, old.wall_material)
    if room.vertices != old.vertices or room.floor_y != old.floor_y:
        if "floorPolygon" in rec:
            rec["floorPolygon"] = [_pt(x, room.floor_y, z) for x, z in room.vertices]
        if "vertices" in rec:
            rec["vertices"] = [[x, z] for x, z in room.vertices]
    return rec


def _wall_record(wall: Wall, rooms: dict[str, Room], interior: dict[Any, str], holodeck: bool,
                 wall_ids: set[str], open_keys: set[frozenset[tuple[float, float]]]) -> dict[str, Any]:
    room = rooms.get(wall.room_id)
    direction = wall_direction(wall.start, wall.end, room.vertices) if room else "north"
    if not wall.raw:
        rec: dict[str, Any] = {"id": wall.id, "roomId": wall.room_id, "material": {"name": wall.material or "Drywall"},
                               "polygon": _wall_polygon(wall, None)}
        if holodeck:
            rec.update(width=wall.width_m, height=wall.height_m, direction=direction,
                       segment=[list(wall.start), list(wall.end)])
            if not wall.exterior and f"{wall.id}|exterior" in wall_ids:
                rec["connect_exterior"] = f"{wall.id}|exterior"
        if wall.empty:  # THOR writes the flag only on invisible walls
            rec["empty"] = True
        rec["layer"] = _LAYER
        return rec
    rec = copy.deepcopy(wall.raw)
    old = tp.wall_from(wall.raw, "wall", interior)
    old.empty = old.empty or (not old.exterior and tp.segment_key(old.start, old.end) in open_keys)
    if not old.exterior and not tp.ident(wall.raw, "roomId", "wall", required=False):
        with contextlib.suppress(SceneFormatError):  # where the reader placed it, not where it is now
            old.room_id = _room_on_outline(old.start, old.end, list(rooms.values()), "wall")
    if wall.id != old.id:
        rec["id"] = wall.id
    if wall.room_id != old.room_id:
        rec["roomId"] = wall.room_id
    _set_material(rec, "material", wall.material, old.material)
    if wall.empty != old.empty:
        if wall.empty or "empty" in rec:
            rec["empty"] = wall.empty
    if (wall.start, wall.end, wall.height_m, wall.bottom_y) != (old.start, old.end, old.height_m, old.bottom_y):
        pattern = tp.wall_geometry(wall.raw, "wall")[4]
        rec["polygon"] = _wall_polygon(wall, pattern)
        for key, value in (("width", wall.width_m), ("height", wall.height_m), ("direction", direction),
                           ("segment", [list(wall.start), list(wall.end)])):
            if key in rec:  # derived keys are written back only where the file had them
                rec[key] = value
    return rec


def _wall_polygon(wall: Wall, pattern: list[tuple[int, bool]] | None) -> list[dict[str, float]]:
    ends = (wall.start, wall.end)
    order = pattern or [(0, False), (0, True), (1, True), (1, False)]  # Holodeck: p, p top, q top, q
    top = wall.bottom_y + wall.height_m
    return [_pt(ends[i][0], top if up else wall.bottom_y, ends[i][1]) for i, up in order]


def _opening_record(opening: Opening, wall_ids: set[str]) -> dict[str, Any]:
    hole = [_pt(opening.hole_min[0], opening.hole_min[1], 0), _pt(opening.hole_max[0], opening.hole_max[1], 0)]
    center = _pt((opening.hole_min[0] + opening.hole_max[0]) / 2, (opening.hole_min[1] + opening.hole_max[1]) / 2, 0)
    if not opening.raw:
        rec: dict[str, Any] = {"id": opening.id, "assetId": opening.asset_id}
        if opening.kind == "door":
            rec.update(openable=opening.openable, openness=opening.openness)
        rec.update(room0=opening.room0, room1=opening.room1, wall0=opening.wall0, wall1=opening.wall1,
                   holePolygon=hole, assetPosition=center)
        if opening.kind == "window":
            rec.update(roomId=opening.room0, layer=_LAYER)
        return rec
    rec = copy.deepcopy(opening.raw)
    old = tp.opening_from(opening.raw, "opening", opening.kind)
    _drop_missing_outside(old, wall_ids)
    for key, new, was in (("id", opening.id, old.id), ("assetId", opening.asset_id, old.asset_id),
                          ("room0", opening.room0, old.room0), ("room1", opening.room1, old.room1),
                          ("wall0", opening.wall0, old.wall0), ("wall1", opening.wall1, old.wall1),
                          ("openable", opening.openable, old.openable), ("openness", opening.openness, old.openness)):
        if new != was:
            rec[key] = new
    if (opening.hole_min, opening.hole_max) != (old.hole_min, old.hole_max):
        rec["holePolygon"] = hole
        if "assetPosition" in rec:
            rec["assetPosition"] = {**rec["assetPosition"], "x": center["x"], "y": center["y"]}
    return rec


def _object_records(scene: Scene, room_at: Any) -> list[dict[str, Any]]:
    nested_default = scene.source_format == "procthor"
    records: dict[str, dict[str, Any]] = {}
    top: list[dict[str, Any]] = []
    by_id = {o.id: o for o in scene.objects}
    for obj in scene.objects:
        rec = _object_record(obj, by_id.get(obj.parent_id or ""), room_at)
        records[obj.id] = rec
        nest = obj.parent_id in records and obj.attributes.get("thor_nested", nested_default and not obj.raw)
        if nest:
            parent_rec = records[obj.parent_id]  # type: ignore[index]
            if not isinstance(parent_rec.get("children"), list):  # absent or null in the file
                parent_rec["children"] = []
            parent_rec["children"].append(rec)
        else:
            top.append(rec)
    return top


def _object_record(obj: SceneObject, parent: SceneObject | None, room_at: Any) -> dict[str, Any]:
    if not obj.raw:
        name = obj.id.split(" (")[0].split("|")[0]
        rec: dict[str, Any] = {
            "id": obj.id, "object_name": name, "assetId": obj.asset_id, "position": _pt(*obj.center),
            "rotation": tp.quat_euler(obj.rotation_xyzw), "roomId": obj.room_id, "kinematic": True,
            "material": None, "layer": _LAYER}
        if not obj.asset_id or default_catalogue().get(obj.asset_id) is None:
            # THOR knows an asset's size from its id; another generator's asset (a 3D-FUTURE jid,
            # an --asset-sizes entry) would read back at its category's default size
            rec["size"] = [float(v) for v in obj.size]
        return rec
    rec = copy.deepcopy(obj.raw)
    old, _ = tp.object_from(obj.raw, "object", default_catalogue(), parent=parent, room_at=room_at)
    if obj.id != old.id:
        rec["id"] = obj.id
    if obj.asset_id != old.asset_id:
        rec["assetId"] = obj.asset_id
    if obj.center != old.center:
        rec["position"] = {**rec.get("position", {}), **_pt(*obj.center)}
    if not _same_rotation(obj.rotation_xyzw, old.rotation_xyzw):
        rec["rotation"] = tp.quat_euler(obj.rotation_xyzw)
    if obj.room_id != old.room_id:
        rec["roomId"] = obj.room_id
    if isinstance(rec.get("children"), list):  # refilled from the scene's own children by _object_records
        rec["children"] = []
    return rec


def _same_rotation(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(math.isclose(x, y, abs_tol=1e-12) for x, y in zip(a, b, strict=True))


def _default_procedural(scene: Scene) -> dict[str, Any]:
    lights = [{"id": "DirectionalLight", "type": "directional", "intensity": 1.0,
               "position": _pt(0.0, 5.0, 0.0), "rotation": _pt(66.0, 75.0, 0.0), "rgb": {"r": 1.0, "g": 1.0, "b": 1.0}}]
    for room in scene.rooms:
        cx, cz = room.centroid
        lights.append({"id": f"light|{room.id}", "type": "point", "roomId": room.id, "intensity": 0.75,
                       "range": 15, "position": _pt(cx, (room.ceiling_y or 2.7) - 0.3, cz),
                       "rgb": {"r": 1.0, "g": 1.0, "b": 1.0}, "layer": _LAYER})
    return {"ceilingColor": {"r": 1.0, "g": 1.0, "b": 1.0}, "ceilingMaterial": {"name": "PureWhite"},
            "floorColliderThickness": 1.0, "lights": lights, "receptacleHeight": 0.7, "reflections": [],
            "skyboxId": "SkyMountain"}
