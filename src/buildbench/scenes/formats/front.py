"""3D-FRONT house JSON as the dataset ships it (read only): ``furniture`` (``uid``, ``jid``,
``title``/``category``, ``valid``, ``bbox`` extents in metres), ``mesh`` (``uid``, ``type`` such
as ``Floor``/``Ceiling``/``WallInner``, flat world-space ``xyz`` vertices, flat triangle
``faces``) and ``scene.room`` (``type``, ``instanceid``, ``children`` referring to a furniture
or mesh ``uid`` with ``pos``, scalar-last quaternion ``rot`` and ``scale``), y up. Read as the
dataset's own toolbox reads it: only furniture marked ``valid`` (the others have no 3D-FUTURE
model), mesh vertices as they are, a mesh's kind by its type's name (``…Floor…``, ``…Ceil…``).

Each room with a floor becomes one scene: its floor polygon is the union of its floor meshes'
triangles seen from above, its ceiling the top of its ceiling meshes. A furniture child is an
object whose ``pos`` is its bottom centre (as in the ReSpace/SceneReVis rooms made from
3D-FRONT) and whose size is its model's ``bbox`` times the child's ``scale`` (or the
``--asset-sizes`` entry of its ``jid`` when the file gives no ``bbox``); furniture that cannot
be sized or is not valid, a reference the file does not hold and a room without a floor are
``warning:`` lines.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from buildbench.geometry import rotation_from_quat_xyzw
from buildbench.scenes import scene_warnings
from buildbench.scenes.model import (
    MAX_COORD_M,
    Room,
    Scene,
    SceneFormatError,
    SceneObject,
    check_floor,
    within_bounds,
)
from buildbench.scenes.revis import revis_quat

from . import Format, Item, ReadOptions
from .common import category_of, num

FLOOR, CEILING = "floor", "ceil"
#: A child's scale beyond this is no furniture (3D-FRONT scales stay near 1).
MAX_SCALE = 100.0


def is_front(data: Any) -> bool:
    """Whether ``data`` has the shape of a 3D-FRONT house (``scene.room`` and ``furniture``)."""
    return (isinstance(data, dict) and isinstance(data.get("scene"), dict) and "room" in data["scene"]
            and "furniture" in data)


def read(data: Any, options: ReadOptions) -> list[Item]:
    houses = data if isinstance(data, list) else [data]
    items = []
    for h, house in enumerate(houses):
        at = f"[{h}]." if isinstance(data, list) else ""
        items += _house(house, at, options)
    return items


def _house(house: Any, at: str, options: ReadOptions) -> list[Item]:
    if not is_front(house):
        raise SceneFormatError(f"{at.rstrip('.') or 'document'}: expected a 3D-FRONT house ('furniture' and "
                               "'scene' holding 'room')")
    furniture = _by_uid(house.get("furniture"), f"{at}furniture")
    meshes = _by_uid(house.get("mesh", []), f"{at}mesh")
    rooms = house["scene"]["room"]
    if not isinstance(rooms, list):
        raise SceneFormatError(f"{at}scene.room: expected a list, got {type(rooms).__name__}")
    uid = str(house.get("uid") or "")
    items = []
    for r, room in enumerate(rooms):
        where = f"{at}scene.room[{r}]"
        if not isinstance(room, dict):
            raise SceneFormatError(f"{where}: expected an object, got {type(room).__name__}")
        scene = _room(room, where, furniture, meshes, at, options)
        if scene is not None:
            name = str(room.get("instanceid") or r)
            items.append(Item(scene, name=f"{uid}/{name}" if uid else name, room=str(room.get("type") or ""),
                              extra={"house": uid} if uid else {}))
    return items


def _by_uid(entries: Any, where: str) -> dict[str, tuple[int, dict[str, Any]]]:
    if not isinstance(entries, list):
        raise SceneFormatError(f"{where}: expected a list, got {type(entries).__name__}")
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("uid"), str | int) or isinstance(entry["uid"], bool):
            raise SceneFormatError(f"{where}[{i}]: expected an object with a 'uid'")
        out.setdefault(str(entry["uid"]), (i, entry))
    return out


def _room(room: dict[str, Any], where: str, furniture: dict[str, tuple[int, dict[str, Any]]],
          meshes: dict[str, tuple[int, dict[str, Any]]], at: str, options: ReadOptions) -> Scene | None:
    children = room.get("children", [])
    if not isinstance(children, list):
        raise SceneFormatError(f"{where}.children: expected a list, got {type(children).__name__}")
    triangles: list[np.ndarray] = []
    tops: list[float] = []
    objects: list[SceneObject] = []
    missing: list[str] = []
    invalid: list[str] = []
    room_id = str(room.get("instanceid") or where)
    for c, child in enumerate(children):
        here = f"{where}.children[{c}]"
        if not isinstance(child, dict):
            raise SceneFormatError(f"{here}: expected an object, got {type(child).__name__}")
        ref = str(child.get("ref"))
        if ref in meshes:
            kind = str(meshes[ref][1].get("type", "")).lower()
            if FLOOR in kind or CEILING in kind:
                tris = _mesh_triangles(meshes[ref], at, here)
                if FLOOR in kind:
                    triangles.append(tris)
                elif tris.size:
                    tops.append(float(tris[..., 1].max()))
        elif ref in furniture:
            model = furniture[ref][1]
            if model.get("valid") is not True:
                invalid.append(str(model.get("jid") or ref))
                continue
            obj = _object(child, here, model, f"{at}furniture[{furniture[ref][0]}]", room_id, len(objects), options)
            if obj is not None:
                objects.append(obj)
        else:
            missing.append(ref)
    if invalid:
        scene_warnings.warn(where, f"{len(invalid)} child(ren) are furniture the file marks not valid (no 3D-FUTURE "
                                   f"model; first: {invalid[0]!r}); left out", __name__)
    if missing:
        scene_warnings.warn(where, f"{len(missing)} child(ren) refer to no furniture or mesh of the file "
                                   f"(first: {missing[0]!r}); left out", __name__)
    vertices, floor_y = _floor(triangles, where)
    if vertices is None:
        scene_warnings.warn(where, "no Floor mesh: the room is left out", __name__)
        return None
    check_floor(vertices, f"{where} floor")
    ceiling = max(tops) if tops else None
    built = Room(id=room_id, vertices=vertices, room_type=str(room.get("type") or ""), floor_y=floor_y,
                 ceiling_y=ceiling if ceiling is not None and ceiling > floor_y else None,
                 origin={"vertices": f"{where}.children"})
    seen: dict[str, int] = {}
    for o in objects:  # ids unique within the scene, as every reader keeps them
        n = seen[o.id] = seen.get(o.id, 0) + 1
        if n > 1:
            o.id = f"{o.id}#{n}"
    return Scene(rooms=[built], objects=objects, source_format="3dfront")


def _transform(rec: dict[str, Any], where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A child's rotation matrix, scale and position."""
    pos = _triple(rec.get("pos", [0, 0, 0]), f"{where}.pos")
    scale = _triple(rec.get("scale", [1, 1, 1]), f"{where}.scale")
    quat = revis_quat(rec.get("rot", [0, 0, 0, 1]), f"{where}.rot")
    return rotation_from_quat_xyzw(quat), scale, pos


def _coordinate(value: Any, where: str) -> float:
    number = num(value, where)
    if not within_bounds(number):  # the bound every scene meets; beyond it the floor union overflows
        raise SceneFormatError(f"{where}: {number:g} exceeds {MAX_COORD_M:g} m")
    return number


def _triple(value: Any, where: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != 3:
        raise SceneFormatError(f"{where}: expected [x, y, z], got {value!r}"[:200])
    return np.array([num(v, f"{where}[{i}]") for i, v in enumerate(value)])


def _mesh_triangles(entry: tuple[int, dict[str, Any]], at: str, used_by: str) -> np.ndarray:
    i, mesh = entry
    where = f"{at}mesh[{i}]"
    xyz, faces = mesh.get("xyz"), mesh.get("faces")
    if not isinstance(xyz, list) or len(xyz) % 3 or not isinstance(faces, list) or len(faces) % 3:
        raise SceneFormatError(f"{where}: expected flat 'xyz' (3 numbers a vertex) and 'faces' (3 indices a "
                               f"triangle), used by {used_by}")
    points = np.array([_coordinate(v, f"{where}.xyz[{k}]") for k, v in enumerate(xyz)]).reshape(-1, 3)
    for k, f in enumerate(faces):
        if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f < len(points):
            raise SceneFormatError(f"{where}.faces[{k}]: {f!r} is not a vertex index (0..{len(points) - 1})")
    return points[np.array(faces, dtype=int).reshape(-1, 3)] if faces else np.zeros((0, 3, 3))


def _floor(triangles: list[np.ndarray], where: str) -> tuple[list[tuple[float, float]] | None, float]:
    from shapely.geometry import MultiPolygon, Polygon
    from shapely.ops import unary_union

    tris = [t for group in triangles for t in group]
    pieces = [Polygon(t[:, [0, 2]]) for t in tris]
    pieces = [p for p in pieces if p.area > 1e-9]
    if not pieces:
        return None, 0.0
    # triangles of one floor meet edge to edge; a hair of buffer closes float seams between them
    shape = unary_union([p.buffer(1e-6) for p in pieces]).buffer(-1e-6)
    if isinstance(shape, MultiPolygon):
        parts = sorted(shape.geoms, key=lambda p: p.area, reverse=True)
        scene_warnings.warn(where, f"the Floor meshes form {len(parts)} separate areas; the largest "
                                   f"({parts[0].area:.2f} of {shape.area:.2f} m²) is the room's floor", __name__)
        shape = parts[0]
    if not isinstance(shape, Polygon) or shape.is_empty:
        return None, 0.0
    shape = shape.simplify(1e-4)
    holes = [h for h in shape.interiors if Polygon(h).area > 1e-4]
    if holes:  # our rooms are simple polygons: a pillar's or a shaft's hole is floor to us
        scene_warnings.warn(where, f"the floor has {len(holes)} hole(s) ({sum(Polygon(h).area for h in holes):.2f} "
                                   "m²), read as floor", __name__)
    ring = [(round(float(x), 6), round(float(z), 6)) for x, z in list(shape.exterior.coords)[:-1]]
    return ring, float(min(t[:, 1].min() for t in tris))


def _object(child: dict[str, Any], at: str, model: dict[str, Any], model_at: str, room_id: str, n: int,
            options: ReadOptions) -> SceneObject | None:
    jid = str(model.get("jid") or "")
    rot, scale, pos = _transform(child, at)
    for k, factor in enumerate(scale):
        if not 0 < abs(factor) <= MAX_SCALE:
            raise SceneFormatError(f"{at}.scale[{k}]: {factor:g} is not a scale factor (0 < |s| <= {MAX_SCALE:g})")
    sized = f"{model_at}.bbox"
    extents = _extents(model.get("bbox"), sized)
    if extents is None:
        sized = f"{at}.ref"  # the --asset-sizes entry of its model
        if jid not in options.asset_sizes:
            scene_warnings.warn(at, f"model {jid or child.get('ref')!r} has no 'bbox' and no --asset-sizes entry: "
                                    "left out", __name__)
            return None
        extents = np.array(options.asset_sizes[jid], dtype=float)
    size = np.abs(extents * scale)
    center = pos + rot @ np.array([0.0, size[1] / 2.0, 0.0])
    name = str(model.get("category") or model.get("title") or jid or "object")
    oid = str(child.get("instanceid") or f"object_{n}")
    return SceneObject(id=oid, category=category_of(name.split("/")[-1]), asset_id=jid,
                       center=(round(float(center[0]), 9), round(float(center[1]), 9), round(float(center[2]), 9)),
                       size=(float(size[0]), float(size[1]), float(size[2])), rotation_xyzw=_quat(rot),
                       room_id=room_id, attributes={"description": str(model.get("title") or name)},
                       raw={"ref": child.get("ref")},
                       origin={"center": tuple(f"{at}.pos[{k}]" for k in range(3)), "rotation": f"{at}.rot",
                               "size": tuple(f"{sized}[{k}]" if sized.endswith("bbox") else sized
                                             for k in range(3))})


def _extents(bbox: Any, where: str) -> np.ndarray | None:
    """A model's ``bbox`` as its three extents: ``[x, y, z]``, or ``[[min], [max]]`` corners; None when absent."""
    if bbox is None:
        return None
    if isinstance(bbox, list) and len(bbox) == 2 and all(isinstance(c, list) for c in bbox):
        low, high = _triple(bbox[0], f"{where}[0]"), _triple(bbox[1], f"{where}[1]")
        return np.abs(high - low)
    extents = _triple(bbox, where)
    if min(extents) < 0:
        raise SceneFormatError(f"{where}: extents {extents.tolist()} have a side < 0")
    return extents


def _quat(rot: np.ndarray) -> tuple[float, float, float, float]:
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(rot).as_quat()
    return (float(x), float(y), float(z), float(w)) if w >= 0 or math.isclose(w, 0.0) else (
        float(-x), float(-y), float(-z), float(-w))


FORMAT = Format("3dfront", "3D-FRONT house JSON (furniture, mesh, scene.room); one scene per room with a floor",
                read, None,
                "read only: walls, doors, windows and ceiling meshes other than the height dropped; objects "
                "without a bbox left out unless --asset-sizes names their jid")
