"""Per-scene derived geometry, cached and checked against the scene on every use.

A relation call must be cheap (a tool answers in well under 10 ms on a 150-object house),
so footprints, box batches, room sides and corners are derived once per scene and kept in
a :class:`SceneIndex`. Scenes are mutable dataclasses that an environment edits in place,
so the cache is keyed on the scene object's identity *and* a snapshot of every field the
index derives from (ids, centres, sizes, rotations, rooms, parents, vertices, walls,
openings): :func:`index_of` compares the snapshot on each call and rebuilds on any
difference, so an edited scene can never be answered from stale geometry. The snapshot
copies values (lists become tuples), so editing a list in place is caught too.

Taking the snapshot reads every object, so a caller that asks many relations of a scene it
does not edit in between (a constraint check tries every pair of candidates) holds it with
:func:`unchanged`: the snapshot is compared once on entry and the index is reused for every
call inside the block, keeping a check linear in the scene's size instead of quadratic.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from numpy.typing import NDArray
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from buildbench.geometry import Boxes, rotation_from_quat_xyzw
from buildbench.scenes.model import Scene, SceneObject, Wall

FloatArray = NDArray[np.float64]
Point2 = tuple[float, float]

KINDS = ("object", "room", "wall", "door", "window")

# Consecutive polygon edges whose directions differ by less than this are one side:
# Holodeck's ``full_vertices`` insert the neighbours' corners along a straight wall.
_COLLINEAR_DEG = 1.0
# A room vertex whose interior angle is below this is a corner one can stand in.
_CONVEX_MAX_DEG = 170.0
# How many scenes' indexes are kept; an evaluator works on one or two at a time.
_CACHE_SIZE = 16


class UnknownIdError(KeyError):
    """An id that names no object, room, wall, door or window of the scene."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0])


class RelationError(ValueError):
    """A relation asked of elements it does not apply to (e.g. a room ``left_of`` a sofa)."""


@dataclass(frozen=True)
class RoomSide:
    """One straight side of a room's floor polygon (collinear edges merged).

    Attributes:
        start, end: ``(x, z)`` endpoints, metres, in polygon order.
        direction: Cardinal name of its outward normal (``north`` = +z, ``east`` = +x).
        inward_xz: Unit normal pointing into the room.
        wall_ids: Interior wall sides of this room lying on this side (may be empty when
            the scene has no wall records, e.g. SceneReVis files).
        open_wall_ids: Those of ``wall_ids`` that are empty (invisible) walls, the open
            boundary to a neighbouring room of an open floor plan.
        solid: The part of the side a wall stands on: the side less its empty walls (a
            LineString or MultiLineString; empty geometry when the whole side is open).
    """

    start: Point2
    end: Point2
    direction: str
    inward_xz: Point2
    wall_ids: tuple[str, ...]
    open_wall_ids: tuple[str, ...] = ()
    solid: BaseGeometry | None = None

    @property
    def line(self) -> LineString:
        return LineString([self.start, self.end])

    @property
    def solid_part(self) -> BaseGeometry:
        """:attr:`solid`, or the whole side when it was not derived."""
        return self.line if self.solid is None else self.solid

    @property
    def solid_wall_ids(self) -> tuple[str, ...]:
        return tuple(w for w in self.wall_ids if w not in self.open_wall_ids)


@dataclass(frozen=True)
class RoomGeometry:
    """A room's floor polygon, its merged sides and its convex corners."""

    id: str
    polygon: Polygon
    sides: tuple[RoomSide, ...]
    corners: tuple[tuple[Point2, int, int], ...]  # corner point, side before, side after
    floor_y: float
    ceiling_y: float | None


@dataclass(frozen=True)
class Element:
    """Anything a relation can name, reduced to floor-plan geometry.

    Attributes:
        kind: one of :data:`KINDS`.
        shape: Floor-plan shape: an object's footprint polygon, a wall's or opening's
            segment, a room's floor polygon.
        center_xz: Footprint centre (box centre for objects, hole centre for openings).
        front_xz: Unit facing on the floor: an object's front, a wall's or opening's normal
            into its room; None for rooms.
        bottom_y, top_y: Vertical extent, metres.
        room_id: The room it belongs to ("" when unknown; a room's own id for rooms).
    """

    kind: str
    id: str
    shape: BaseGeometry
    center_xz: Point2
    front_xz: Point2 | None
    bottom_y: float
    top_y: float
    room_id: str


@dataclass
class SceneIndex:
    """Derived arrays of one scene state. Build with :func:`index_of`, never by hand."""

    object_ids: list[str]
    object_pos: dict[str, int]
    boxes: Boxes
    footprints: NDArray[np.object_]
    centers_xz: FloatArray
    fronts_xz: FloatArray
    bottoms: FloatArray
    tops: FloatArray
    object_rooms: list[str]
    parents: list[str | None]
    rooms: dict[str, RoomGeometry]
    elements: dict[str, tuple[str, int]]
    _scene_elements: dict[str, Element] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict)

    def element(self, scene: Scene, element_id: str) -> Element:
        """The element called ``element_id``; :class:`UnknownIdError` names the known kinds."""
        if not isinstance(element_id, str):
            raise UnknownIdError(f"element ids are strings, got {type(element_id).__name__} {element_id!r}")
        cached = self._scene_elements.get(element_id)
        if cached is not None:
            return cached
        found = self.elements.get(element_id)
        if found is None:
            raise UnknownIdError(_unknown_message(scene, element_id))
        kind, pos = found
        built = _build_element(self, scene, kind, pos)
        self._scene_elements[element_id] = built
        return built

    def memo(self, key: Any, make: Any) -> Any:
        """``make()`` computed once per index (per scene state) under ``key``."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]


_LOCK = threading.Lock()
_CACHE: OrderedDict[int, tuple[weakref.ref[Scene], tuple[Any, ...], SceneIndex]] = OrderedDict()


# Scenes held by :func:`unchanged` in this thread or task: id -> [scene, its index once asked].
_HELD: ContextVar[dict[int, list[Any]] | None] = ContextVar("held_scene_indexes", default=None)


@contextmanager
def unchanged(scene: Scene) -> Iterator[None]:
    """Hold ``scene``'s index for a block in which nobody edits the scene.

    The first :func:`index_of` of this scene inside the block (in this thread or task)
    compares the snapshot as usual; every later one returns the same index without reading
    the scene again. Blocks nest; an edit inside one would go unseen until it ends, so only
    code that reads the scene belongs in it. Nothing is built on entry, so a block that asks
    no relation costs nothing and raises nothing.
    """
    held = _HELD.get() or {}
    if id(scene) in held and held[id(scene)][0] is scene:
        yield
        return
    token = _HELD.set({**held, id(scene): [scene, None]})
    try:
        yield
    finally:
        _HELD.reset(token)


def index_of(scene: Scene) -> SceneIndex:
    """The :class:`SceneIndex` of ``scene`` as it is now (rebuilt after any edit)."""
    held = (_HELD.get() or {}).get(id(scene))
    if held is not None and held[0] is scene:
        if held[1] is None:
            held[1] = _checked_index(scene)
        index: SceneIndex = held[1]
        return index
    return _checked_index(scene)


def _checked_index(scene: Scene) -> SceneIndex:
    snapshot = scene_snapshot(scene)
    key = id(scene)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0]() is scene and hit[1] == snapshot:
            _CACHE.move_to_end(key)
            return hit[2]
    built = _build_index(scene)
    with _LOCK:
        _CACHE[key] = (weakref.ref(scene), snapshot, built)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return built


def invalidate(scene: Scene) -> None:
    """Drop the cached index of ``scene`` (never needed for correctness; frees memory)."""
    with _LOCK:
        _CACHE.pop(id(scene), None)


def scene_snapshot(scene: Scene) -> tuple[Any, ...]:
    """A value copy of every scene field the index derives from."""
    return (
        tuple(
            (o.id, tuple(o.center), tuple(o.size), tuple(o.rotation_xyzw), o.room_id, o.parent_id)
            for o in scene.objects
        ),
        tuple((r.id, tuple(map(tuple, r.vertices)), r.floor_y, r.ceiling_y) for r in scene.rooms),
        tuple(
            (w.id, w.room_id, tuple(w.start), tuple(w.end), w.height_m, w.exterior, w.bottom_y, w.empty)
            for w in scene.walls
        ),
        tuple(
            (d.id, d.kind, d.room0, d.room1, d.wall0, d.wall1, tuple(d.hole_min), tuple(d.hole_max))
            for d in scene.openings()
        ),
    )


# --- building ------------------------------------------------------------------------------


def _build_index(scene: Scene) -> SceneIndex:
    rooms = {r.id: _room_geometry(scene, r.id) for r in scene.rooms}
    objects = scene.objects
    centers, sizes, quats = _object_arrays(objects)
    boxes = Boxes(centers, sizes / 2.0, _rotations(quats))
    corners = boxes.corners()
    footprints = _footprints(boxes, corners)
    fronts = _fronts(boxes.rotations)
    centroids = shapely.centroid(footprints)
    centers_xz = boxes.centers[:, [0, 2]].copy()
    object_rooms = [_object_room(o, rooms, centroids[i]) for i, o in enumerate(objects)]
    elements: dict[str, tuple[str, int]] = {}
    groups: list[tuple[str, Sequence[Any]]] = [
        ("window", scene.windows), ("door", scene.doors), ("wall", scene.walls), ("room", scene.rooms),
        ("object", objects),
    ]
    for kind, items in groups:  # later kinds win a clash, as in Scene.kind_of's preference
        for pos, item in enumerate(items):
            elements[item.id] = (kind, pos)
    return SceneIndex(
        object_ids=[o.id for o in objects],
        object_pos={o.id: i for i, o in enumerate(objects)},
        boxes=boxes,
        footprints=footprints,
        centers_xz=centers_xz,
        fronts_xz=fronts,
        bottoms=corners[:, :, 1].min(axis=1) if len(objects) else np.zeros(0),
        tops=corners[:, :, 1].max(axis=1) if len(objects) else np.zeros(0),
        object_rooms=object_rooms,
        parents=[o.parent_id for o in objects],
        rooms=rooms,
        elements=elements,
    )


def _rotations(quats: FloatArray) -> FloatArray:
    """``(n, 3, 3)`` rotations of all objects in one batch (one SciPy call, not n)."""
    if not len(quats):
        return np.zeros((0, 3, 3))
    return rotation_from_quat_xyzw(quats).reshape(-1, 3, 3)


def _object_arrays(objects: Sequence[SceneObject]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Centres, sizes and quaternions as arrays; a bad object is named in a one-line error."""
    try:
        centers = np.array([o.center for o in objects], dtype=float).reshape(-1, 3)
        sizes = np.array([o.size for o in objects], dtype=float).reshape(-1, 3)
        quats = np.array([o.rotation_xyzw for o in objects], dtype=float).reshape(-1, 4)
    except (TypeError, ValueError):
        for o in objects:
            if len(o.center) != 3 or len(o.size) != 3 or len(o.rotation_xyzw) != 4:
                raise ValueError(f"object {o.id!r}: center, size and rotation_xyzw need 3, 3 and 4 numbers") from None
        raise ValueError("objects: center, size and rotation_xyzw must be numbers") from None
    finite = np.isfinite(centers).all(1) & np.isfinite(sizes).all(1) & np.isfinite(quats).all(1)
    bad = np.flatnonzero(~finite | (sizes < 0).any(1) | ~quats.any(1))
    if len(bad):
        o = objects[int(bad[0])]
        raise ValueError(f"object {o.id!r}: non-finite, negative or zero center/size/rotation "
                         f"{[*o.center, *o.size, *o.rotation_xyzw]}")
    return centers, sizes, quats


def _footprints(boxes: Boxes, corners: FloatArray) -> NDArray[np.object_]:
    """Floor outlines: the bottom rectangle of upright boxes, the hull of all 8 corners else."""
    n = len(boxes)
    if n == 0:
        return np.empty(0, dtype=object)
    upright = np.abs(np.abs(boxes.rotations[:, 1, 1]) - 1.0) < 1e-9
    out = np.empty(n, dtype=object)
    ring = corners[:, [0, 1, 5, 4]][:, :, [0, 2]]
    if upright.any():
        out[upright] = shapely.polygons(ring[upright])
    if (~upright).any():
        out[~upright] = shapely.convex_hull(shapely.multipoints(corners[~upright][:, :, [0, 2]]))
    return out


def _fronts(rotations: FloatArray) -> FloatArray:
    """Local +z projected on the floor and normalised (local +y when lying on its back)."""
    if len(rotations) == 0:
        return np.zeros((0, 2))
    front = rotations[:, :, 2][:, [0, 2]]
    up = rotations[:, :, 1][:, [0, 2]]
    norm = np.linalg.norm(front, axis=1)
    flat = norm < 1e-9
    front = np.where(flat[:, None], up, front)
    norm = np.where(flat, np.linalg.norm(up, axis=1), norm)
    return front / np.where(norm > 0, norm, 1.0)[:, None]


def _object_room(o: SceneObject, rooms: dict[str, RoomGeometry], centroid: Any) -> str:
    if o.room_id in rooms:
        return o.room_id
    for room in rooms.values():
        if room.polygon.covers(centroid):
            return room.id
    return o.room_id


def _room_geometry(scene: Scene, room_id: str) -> RoomGeometry:
    room = scene.room(room_id)
    pts = _dedupe([(float(x), float(z)) for x, z in room.vertices])
    if len(pts) < 3:
        raise ValueError(f"room {room_id!r}: floor polygon needs 3 distinct vertices, got {len(pts)}")
    polygon = Polygon(pts)
    if not polygon.is_valid or polygon.area <= 0:
        raise ValueError(f"room {room_id!r}: floor polygon is self-intersecting or has no area")
    merged = _merge_collinear(pts)
    ccw = Polygon(merged).exterior.is_ccw
    walls = scene.walls_of(room_id)
    sides = []
    for k, start in enumerate(merged):
        end = merged[(k + 1) % len(merged)]
        dx, dz = end[0] - start[0], end[1] - start[1]
        length = math.hypot(dx, dz)
        inward = (-dz / length, dx / length) if ccw else (dz / length, -dx / length)
        on_side = [w for w in walls if _segment_on(start, end, w.start, w.end)]
        open_walls = [w for w in on_side if w.empty]
        sides.append(RoomSide(start, end, _outward_direction(inward), inward, tuple(w.id for w in on_side),
                              tuple(w.id for w in open_walls), _solid_part(start, end, open_walls)))
    corners = []
    for k, point in enumerate(merged):
        before, after = (k - 1) % len(merged), k
        if _interior_angle_deg(merged, k, ccw) < _CONVEX_MAX_DEG:
            corners.append((point, before, after))
    return RoomGeometry(room_id, polygon, tuple(sides), tuple(corners), room.floor_y, room.ceiling_y)


def _solid_part(start: Point2, end: Point2, open_walls: Sequence[Wall]) -> BaseGeometry:
    """The side ``start``-``end`` less the segments of its empty walls."""
    side = LineString([start, end])
    if not open_walls:
        return side
    gaps = shapely.union_all([LineString([w.start, w.end]).buffer(1e-3, cap_style="flat") for w in open_walls])
    # files round corners, so a solid piece shorter than a centimetre is a rounding sliver
    pieces = [g for g in getattr(side.difference(gaps), "geoms", [side.difference(gaps)]) if g.length > 0.01]
    return shapely.union_all(pieces) if pieces else LineString()


def _outward_direction(inward: Point2) -> str:
    """Cardinal name of a side by its outward normal: Holodeck's name for every side of a
    rectangle, and the natural one for the inner sides of an L (which Holodeck's
    bounding-box rule would name after the nearer outer side)."""
    ox, oz = -inward[0], -inward[1]
    if abs(ox) > abs(oz):
        return "east" if ox > 0 else "west"
    return "north" if oz > 0 else "south"


def _dedupe(pts: list[Point2]) -> list[Point2]:
    out: list[Point2] = []
    for p in pts:
        if not out or math.dist(out[-1], p) > 1e-9:
            out.append(p)
    if len(out) > 1 and math.dist(out[0], out[-1]) <= 1e-9:
        out.pop()
    return out


def _merge_collinear(pts: list[Point2]) -> list[Point2]:
    keep = []
    n = len(pts)
    for k in range(n):
        a, b, c = pts[k - 1], pts[k], pts[(k + 1) % n]
        turn = math.degrees(
            abs(math.atan2(_cross(_sub(b, a), _sub(c, b)), float(np.dot(_sub(b, a), _sub(c, b)))))
        )
        if turn >= _COLLINEAR_DEG:
            keep.append(b)
    return keep if len(keep) >= 3 else pts


def _interior_angle_deg(pts: list[Point2], k: int, ccw: bool) -> float:
    a, b, c = pts[k - 1], pts[k], pts[(k + 1) % len(pts)]
    turn = math.degrees(math.atan2(_cross(_sub(b, a), _sub(c, b)), float(np.dot(_sub(b, a), _sub(c, b)))))
    left_turn = turn if ccw else -turn
    return 180.0 - left_turn


def _segment_on(a: Point2, b: Point2, start: Point2, end: Point2, tol: float = 1e-3) -> bool:
    """Whether segment ``start``-``end`` lies on segment ``a``-``b`` (within ``tol`` metres)."""
    return _point_segment_distance(start, a, b) <= tol and _point_segment_distance(end, a, b) <= tol


def _point_segment_distance(p: Point2, a: Point2, b: Point2) -> float:
    ux, uz = b[0] - a[0], b[1] - a[1]
    length_sq = ux * ux + uz * uz
    t = 0.0 if length_sq == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * ux + (p[1] - a[1]) * uz) / length_sq))
    return math.hypot(p[0] - a[0] - t * ux, p[1] - a[1] - t * uz)


def _sub(a: Point2, b: Point2) -> Point2:
    return (a[0] - b[0], a[1] - b[1])


def _cross(a: Point2, b: Point2) -> float:
    return a[0] * b[1] - a[1] * b[0]


def _build_element(index: SceneIndex, scene: Scene, kind: str, pos: int) -> Element:
    if kind == "object":
        o = scene.objects[pos]
        return Element(
            "object",
            o.id,
            index.footprints[pos],
            (float(index.centers_xz[pos, 0]), float(index.centers_xz[pos, 1])),
            (float(index.fronts_xz[pos, 0]), float(index.fronts_xz[pos, 1])),
            float(index.bottoms[pos]),
            float(index.tops[pos]),
            index.object_rooms[pos],
        )
    if kind == "room":
        g = index.rooms[scene.rooms[pos].id]
        c = g.polygon.centroid
        top = g.ceiling_y if g.ceiling_y is not None else g.floor_y
        return Element("room", g.id, g.polygon, (c.x, c.y), None, g.floor_y, top, g.id)
    if kind == "wall":
        w = scene.walls[pos]
        line = LineString([w.start, w.end])
        mid = line.interpolate(0.5, normalized=True)
        return Element(
            "wall", w.id, line, (mid.x, mid.y), _wall_normal(index, w.room_id, w.start, w.end, w.exterior),
            w.bottom_y, w.bottom_y + w.height_m, w.room_id,
        )
    opening = scene.doors[pos] if kind == "door" else scene.windows[pos]
    try:
        wall = scene.wall(opening.wall0)
    except KeyError:
        raise ValueError(f"{kind} {opening.id!r}: its wall0 {opening.wall0!r} is not in the scene") from None
    a, b = wall.point_at(opening.hole_min[0]), wall.point_at(opening.hole_max[0])
    line = LineString([a, b])
    mid = line.interpolate(0.5, normalized=True)
    return Element(
        kind, opening.id, line, (mid.x, mid.y),
        _wall_normal(index, wall.room_id, wall.start, wall.end, wall.exterior),
        wall.bottom_y + min(opening.hole_min[1], opening.hole_max[1]),
        wall.bottom_y + max(opening.hole_min[1], opening.hole_max[1]),
        opening.room0 if opening.room0 in index.rooms else opening.room1,
    )


def _wall_normal(index: SceneIndex, room_id: str, start: Point2, end: Point2, exterior: bool) -> Point2 | None:
    """Unit normal of a wall side pointing into its room (out of it for an exterior twin)."""
    dx, dz = end[0] - start[0], end[1] - start[1]
    length = math.hypot(dx, dz)
    if length <= 0:
        return None
    left = (-dz / length, dx / length)
    room = index.rooms.get(room_id)
    if room is None:
        return left
    mid = ((start[0] + end[0]) / 2 + left[0] * 1e-3, (start[1] + end[1]) / 2 + left[1] * 1e-3)
    inside = room.polygon.covers(Point(mid))
    into_room = left if inside else (-left[0], -left[1])
    return (-into_room[0], -into_room[1]) if exterior else into_room


def _unknown_message(scene: Scene, element_id: str) -> str:
    counts = {
        "object": len(scene.objects), "room": len(scene.rooms), "wall": len(scene.walls),
        "door": len(scene.doors), "window": len(scene.windows),
    }
    known = ", ".join(f"{n} {k}s" for k, n in counts.items() if n)
    similar = [x for x in _all_ids(scene) if element_id.lower() in x.lower()][:3]
    hint = f"; did you mean {', '.join(map(repr, similar))}?" if similar else ""
    return f"no object, room, wall, door or window with id {element_id!r} (scene has {known or 'nothing'}){hint}"


def _all_ids(scene: Scene) -> Iterable[str]:
    for items in (scene.objects, scene.rooms, scene.walls, scene.doors, scene.windows):
        for item in items:
            yield item.id
