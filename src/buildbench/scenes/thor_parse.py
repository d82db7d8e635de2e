"""Field readers for AI2-THOR house JSON: each turns one record into a model element.

Pure functions of the record (and, where named, the scene read so far), so the writer in
:mod:`~buildbench.scenes.thor` can re-read an element's original record and overwrite only
the fields the caller changed. Errors name the element path and field,
e.g. ``walls[3].polygon: expected 2 distinct floor points, got 1``.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from buildbench.scenes.catalogue import Catalogue
from buildbench.scenes.model import (
    EXTERIOR,
    Opening,
    Origin,
    Point2,
    Room,
    SceneFormatError,
    SceneObject,
    Wall,
    check_floor,
)

DEFAULT_SIZE_M = (0.5, 0.5, 0.5)


def num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SceneFormatError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise SceneFormatError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def text(record: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise SceneFormatError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def ident(record: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    """An id or a reference to one: a string, or an integer (some generators number their
    rooms ``0, 1, …``), read as its decimal text. Missing or null gives "" unless required."""
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return text(record, key, where, required=required)


def xyz(value: Any, where: str) -> tuple[float, float, float]:
    if not isinstance(value, dict):
        raise SceneFormatError(f"{where}: expected an object with x, y, z, got {type(value).__name__}")
    return (num(value.get("x"), f"{where}.x"), num(value.get("y", 0.0), f"{where}.y"),
            num(value.get("z"), f"{where}.z"))


def record_list(house: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = house.get(key, [])
    if items is None:
        return []
    if not isinstance(items, list):
        raise SceneFormatError(f"{key}: expected a list, got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise SceneFormatError(f"{key}[{i}]: expected an object, got {type(item).__name__}")
    return items


def material_name(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return str(value["name"])
    return value if isinstance(value, str) else None


# --- rooms --------------------------------------------------------------------------------
def room_from(record: dict[str, Any], where: str) -> Room:
    room_id = ident(record, "id", where)
    if isinstance(record.get("vertices"), list):
        vertices = []
        for j, v in enumerate(record["vertices"]):
            if not isinstance(v, (list, tuple)) or len(v) != 2:
                raise SceneFormatError(f"{where}.vertices[{j}]: expected an [x, z] pair, got {v!r}")
            vertices.append((num(v[0], f"{where}.vertices[{j}]"), num(v[1], f"{where}.vertices[{j}]")))
        floor_y = 0.0
        points_key = "vertices"
    elif isinstance(record.get("floorPolygon"), list):
        points = [xyz(p, f"{where}.floorPolygon[{j}]") for j, p in enumerate(record["floorPolygon"])]
        vertices = [(p[0], p[2]) for p in points]
        floor_y = min((p[1] for p in points), default=0.0)
        points_key = "floorPolygon"
    else:
        raise SceneFormatError(f"{where}: needs 'floorPolygon' or 'vertices'")
    check_floor(vertices, f"{where} ({room_id!r})")
    room_type = record.get("roomType") if isinstance(record.get("roomType"), str) else ""
    origin: Origin = {"vertices": tuple(f"{where}.{points_key}[{j}]" for j in range(len(vertices))),
                      "floor_y": f"{where}.{points_key}"}
    return Room(room_id, vertices, str(room_type), material_name(record, "floorMaterial"),
                material_name(record, "wallMaterial"), floor_y=floor_y, raw=record, origin=origin)


# --- walls --------------------------------------------------------------------------------
def wall_geometry(record: dict[str, Any], where: str) -> tuple[Point2, Point2, float, float, list[tuple[int, bool]]]:
    """(start, end, bottom_y, height, pattern) of a wall polygon in either point order.

    The floor points are the distinct ``(x, z)`` in order of appearance, so Holodeck's
    bottom-top-top-bottom and ProcTHOR's bottom-bottom-top-top (or top-top-bottom-bottom
    for its exterior walls) give the same segment. ``pattern`` lists, per polygon point,
    which endpoint it is and whether it is on top, so a changed wall is written back in
    its file's own order."""
    polygon = record.get("polygon")
    if not isinstance(polygon, list) or len(polygon) < 2:
        got = len(polygon) if isinstance(polygon, list) else type(polygon).__name__
        raise SceneFormatError(f"{where}.polygon: expected 4 points, got {got}")
    points = [xyz(p, f"{where}.polygon[{j}]") for j, p in enumerate(polygon)]
    floor: list[Point2] = []
    for x, _, z in points:
        if not any(abs(x - fx) < 1e-6 and abs(z - fz) < 1e-6 for fx, fz in floor):
            floor.append((x, z))
    if len(floor) != 2:
        raise SceneFormatError(f"{where}.polygon: expected 2 distinct floor points, got {len(floor)}")
    ys = [p[1] for p in points]
    bottom, top = min(ys), max(ys)
    height = top - bottom
    if height <= 0 and isinstance(record.get("height"), (int, float)):
        height = num(record["height"], f"{where}.height")
    pattern = [(0 if abs(p[0] - floor[0][0]) < 1e-6 and abs(p[2] - floor[0][1]) < 1e-6 else 1,
                p[1] > bottom + 1e-9) for p in points]
    return floor[0], floor[1], bottom, height, pattern


def is_exterior_wall(record: dict[str, Any]) -> bool:
    wall_id = str(record.get("id", ""))
    return record.get("roomId") == EXTERIOR or wall_id.endswith("|exterior") or wall_id.startswith("wall|exterior|")


def wall_from(record: dict[str, Any], where: str, interior_rooms: dict[frozenset[Point2], str]) -> Wall:
    """``interior_rooms`` maps an interior wall's endpoints to its room, so an exterior
    wall filed under ``roomId: "exterior"`` (ProcTHOR) is tied to the room it encloses."""
    wall_id = ident(record, "id", where)
    start, end, bottom, height, _ = wall_geometry(record, where)
    exterior = is_exterior_wall(record)
    room_id = ident(record, "roomId", where, required=False)
    if not room_id or (exterior and room_id == EXTERIOR):  # a null interior roomId was placed by geometry
        room_id = interior_rooms.get(segment_key(start, end), EXTERIOR if exterior else "")
    return Wall(wall_id, str(room_id), start, end, height, material_name(record, "material"),
                exterior=exterior, bottom_y=bottom, empty=is_empty_wall(record, where), raw=record,
                origin={"wall": f"{where}.polygon"})


def is_empty_wall(record: dict[str, Any], where: str) -> bool:
    """THOR's ``empty`` flag of an invisible wall (an open-plan boundary); absent or null
    is a solid wall."""
    value = record.get("empty")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SceneFormatError(f"{where}.empty: expected true or false, got {value!r}")
    return value


def segment_key(a: Point2, b: Point2) -> frozenset[Point2]:
    return frozenset({(round(a[0], 3), round(a[1], 3)), (round(b[0], 3), round(b[1], 3))})


# --- Holodeck's open_walls ------------------------------------------------------------------
def xz_pair(value: Any, where: str) -> Point2:
    """An ``[x, z]`` pair of finite numbers (metres)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise SceneFormatError(f"{where}: expected an [x, z] pair, got {value!r}")
    return (num(value[0], where), num(value[1], where))


def open_wall_keys(house: dict[str, Any]) -> list[frozenset[Point2]]:
    """The :func:`segment_key` of each ``open_walls.segments`` entry, in file order.

    Holodeck writes ``{"segments": [[[x0, z0], [x1, z1]], ...], "openWallBoxes": [...]}``:
    each segment a removed wall's ``segment`` (``(x, z)`` metres, either direction), each
    box a 4-point ``(x, z)`` rectangle, two per segment (one either side of it). Absent, null
    or an empty list (Holodeck's own readers test ``open_walls != []``, as other generators write
    it) means no open walls; anything else malformed raises, naming the entry and field."""
    value = house.get("open_walls")
    if value is None or value == []:
        return []
    if not isinstance(value, dict):
        raise SceneFormatError(f"open_walls: expected an object with 'segments' and 'openWallBoxes', "
                               f"got {type(value).__name__}")
    keys = []
    for i, segment in enumerate(_open_walls_list(value, "segments")):
        where = f"open_walls.segments[{i}]"
        if not isinstance(segment, list) or len(segment) != 2:
            raise SceneFormatError(f"{where}: expected two [x, z] points, got {segment!r}")
        start, end = (xz_pair(p, f"{where}[{j}]") for j, p in enumerate(segment))
        key = segment_key(start, end)
        if len(key) != 2:
            raise SceneFormatError(f"{where}: the two points are the same, {segment!r}")
        keys.append(key)
    for i, box in enumerate(_open_walls_list(value, "openWallBoxes")):
        where = f"open_walls.openWallBoxes[{i}]"
        if not isinstance(box, list) or len(box) < 3:
            raise SceneFormatError(f"{where}: expected a polygon of >= 3 [x, z] points, got {box!r}")
        for j, p in enumerate(box):
            xz_pair(p, f"{where}[{j}]")
    return keys


def _open_walls_list(value: dict[str, Any], key: str) -> list[Any]:
    items = value.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise SceneFormatError(f"open_walls.{key}: expected a list, got {type(items).__name__}")
    return items


# --- doors and windows --------------------------------------------------------------------
def hole_corners(record: dict[str, Any], where: str) -> tuple[Point2, Point2]:
    """The wall-local ``(along, up)`` min and max corners of a door or window hole: THOR's
    ``holePolygon``, or, in houses of schema 0.0.1 (before ProcTHOR's 1.0.0 upgrade), the
    same two points as ``boundingBox: {min, max}``."""
    hole, key = record.get("holePolygon"), "holePolygon"
    box = record.get("boundingBox")
    if hole is None and isinstance(box, dict) and "min" in box and "max" in box:
        hole, key = [box["min"], box["max"]], "boundingBox"
    if not isinstance(hole, list) or len(hole) != 2:
        got = len(hole) if isinstance(hole, list) else type(hole).__name__
        raise SceneFormatError(f"{where}.holePolygon: expected 2 points (min, max), got {got}")
    lo = xyz(hole[0], f"{where}.{key}[0]" if key == "holePolygon" else f"{where}.{key}.min")
    hi = xyz(hole[1], f"{where}.{key}[1]" if key == "holePolygon" else f"{where}.{key}.max")
    return (lo[0], lo[1]), (hi[0], hi[1])


def opening_from(record: dict[str, Any], where: str, kind: str) -> Opening:
    """A door or window. A side whose room is null (Phone2Proc names the outside so) is the
    outside for ``room0``; a missing ``room1`` is ``room0`` (ProcTHOR's outside doors)."""
    opening_id = ident(record, "id", where)
    lo, hi = hole_corners(record, where)
    room1 = ident(record, "room1", where, required=False)
    room0 = ident(record, "room0", where, required=False) or (EXTERIOR if room1 else "")
    if not room0:
        raise SceneFormatError(f"{where}.room0: expected a room id, got {record.get('room0')!r}")
    openness = record.get("openness", 0.0)
    return Opening(
        opening_id, kind,  # type: ignore[arg-type]
        text(record, "assetId", where, required=False), room0, room1 or room0,
        ident(record, "wall0", where), ident(record, "wall1", where, required=False) or None,
        lo, hi, openable=bool(record.get("openable", False)),
        openness=num(openness, f"{where}.openness") if openness is not None else 0.0, raw=record)


# --- objects ------------------------------------------------------------------------------
def euler_quat(rotation: Any, where: str) -> tuple[float, float, float, float]:
    """Unity Euler degrees (z, then x, then y, about fixed axes) -> xyzw quaternion."""
    if rotation is None:
        return (0.0, 0.0, 0.0, 1.0)
    rx, ry, rz = xyz({"x": 0, "y": 0, "z": 0, **rotation} if isinstance(rotation, dict) else rotation, where)
    if rx == 0.0 and rz == 0.0:
        half = math.radians(ry) / 2.0
        return (0.0, math.sin(half), 0.0, math.cos(half))
    q = Rotation.from_euler("YXZ", [ry, rx, rz], degrees=True).as_quat()
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def quat_euler(q: tuple[float, float, float, float]) -> dict[str, float]:
    """Inverse of :func:`euler_quat`; a pure yaw gives ``{x: 0, y: yaw, z: 0}``."""
    if abs(q[0]) < 1e-12 and abs(q[2]) < 1e-12:
        return {"x": 0, "y": round(math.degrees(2.0 * math.atan2(q[1], q[3])) % 360.0, 9), "z": 0}
    with warnings.catch_warnings():
        # at x = +-90 deg SciPy warns and zeroes z; the angles it returns still give the same
        # rotation, so a user converting a tipped-over object needs no Python warning
        warnings.simplefilter("ignore", UserWarning)
        ry, rx, rz = Rotation.from_quat(q).as_euler("YXZ", degrees=True)
    return {"x": float(rx), "y": float(ry), "z": float(rz)}


def record_size(record: dict[str, Any], where: str) -> tuple[float, float, float] | None:
    """A size stored in the record itself: ``boundingBox``/``bbox`` as ``{x, y, z}``,
    ``{size: {x, y, z}}`` or ``{min, max}``, or ``size`` as ``[sx, sy, sz]`` (metres; the
    list form is what Hippo-style Holodeck derivatives write for generated assets)."""
    listed = record.get("size")
    if isinstance(listed, list):
        if len(listed) != 3:
            raise SceneFormatError(f"{where}.size: expected [sx, sy, sz], got {len(listed)} values")
        sx, sy, sz = (num(v, f"{where}.size[{j}]") for j, v in enumerate(listed))
        return (abs(sx), abs(sy), abs(sz))
    for key in ("boundingBox", "bbox", "size"):
        box = record.get(key)
        if isinstance(box, dict):
            if "min" in box and "max" in box:
                lo, hi = xyz(box["min"], f"{where}.{key}.min"), xyz(box["max"], f"{where}.{key}.max")
                return (abs(hi[0] - lo[0]), abs(hi[1] - lo[1]), abs(hi[2] - lo[2]))
            if isinstance(box.get("size"), dict):
                return xyz(box["size"], f"{where}.{key}.size")
            if {"x", "y", "z"} <= set(box):
                return xyz(box, f"{where}.{key}")
    return None


def vertices_size(record: dict[str, Any], center: tuple[float, float, float], yaw_deg: float,
                  where: str, height_m: float | None) -> tuple[float, float, float] | None:
    """Holodeck's footprint ``vertices`` (centimetres, world frame) turned into the local
    extents; the height is ``height_m``, or for a floor object (None) twice its centre height."""
    verts = record.get("vertices")
    if not isinstance(verts, list) or len(verts) < 3:
        return None
    pts = np.array([[num(v[0], f"{where}.vertices[{j}]"), num(v[1], f"{where}.vertices[{j}]")]
                    for j, v in enumerate(verts) if isinstance(v, (list, tuple)) and len(v) == 2]) / 100.0
    if len(pts) < 3:
        return None
    t = math.radians(yaw_deg)
    # world (x, z) -> local: undo the yaw that turned local +z toward (sin t, cos t)
    local_x = (pts[:, 0] - center[0]) * math.cos(t) - (pts[:, 1] - center[2]) * math.sin(t)
    local_z = (pts[:, 0] - center[0]) * math.sin(t) + (pts[:, 1] - center[2]) * math.cos(t)
    return (float(np.ptp(local_x)), 2.0 * center[1] if height_m is None else height_m, float(np.ptp(local_z)))


def object_category(record: dict[str, Any], catalogue: Catalogue) -> str:
    asset_id = record.get("assetId") if isinstance(record.get("assetId"), str) else ""
    object_id = str(record.get("id", ""))
    for candidate in (asset_id, object_id, str(record.get("object_name", ""))):
        category = catalogue.category_of(candidate) if candidate else None
        if category:
            return category
    head = re.split(r"[|(\-]", object_id, maxsplit=1)[0].strip()
    return " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", head).lower().split()) or "object"


def object_from(record: dict[str, Any], where: str, catalogue: Catalogue, *, parent: SceneObject | None,
                room_at: Any) -> tuple[SceneObject, list[str]]:
    """One object (not its children) and the warnings met reading it. ``room_at(x, z)``
    names the room containing a floor point (for files without ``roomId``)."""
    object_id = ident(record, "id", where)
    center = xyz(record.get("position"), f"{where}.position")
    quat = euler_quat(record.get("rotation"), f"{where}.rotation")
    asset_id = text(record, "assetId", where, required=False)
    category = object_category(record, catalogue)
    attributes: dict[str, Any] = {}
    warnings: list[str] = []
    asset = catalogue.get(asset_id) if asset_id else None
    size = None
    size_at = f"{where}.assetId"
    if asset is not None:
        size, attributes["size_source"] = asset.size_m, "catalogue"
        if asset.source != "thor-size":
            attributes.update(color=asset.color, material=asset.material, shape=asset.shape,
                              description=asset.description)
    if size is None:
        size = record_size(record, where)
        attributes["size_source"] = "record"
        size_at = f"{where}." + ("size" if isinstance(record.get("size"), list) else next(
            (key for key in ("boundingBox", "bbox", "size") if isinstance(record.get(key), dict)), "size"))
    pool = catalogue.by_category(category)
    if size is None:
        yaw = math.degrees(2.0 * math.atan2(quat[1], quat[3]))
        info = catalogue.category_info.get(category)
        on_floor = parent is None and (info is None or info.placement == "floor")
        size = vertices_size(record, center, yaw, where, None if on_floor else (pool[0].size_m[1] if pool else 0.5))
        attributes["size_source"] = "vertices"
        size_at = f"{where}.vertices"
    if size is None:
        size = pool[0].size_m if pool else DEFAULT_SIZE_M
        attributes["size_source"] = "category-default" if pool else "default"
        warnings.append(f"{where} {object_id!r}")
    room_id = ident(record, "roomId", where, required=False) or None
    if room_id is None:
        room_id = parent.room_id if parent is not None else room_at(center[0], center[2])
    origin: Origin = {"center": tuple(f"{where}.position.{axis}" for axis in "xyz"), "size": size_at,
                      "rotation": f"{where}.rotation"}
    return SceneObject(object_id, category, asset_id, center, (float(size[0]), float(size[1]), float(size[2])),
                       quat, str(room_id), parent.id if parent else None, attributes, raw=record,
                       origin=origin), warnings
