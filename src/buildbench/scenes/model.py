"""The indoor-scene model: rooms, walls, doors, windows and objects, in metres, y up.

One in-memory form for every scene format we read (AI2-THOR house JSON as Holodeck and
ProcTHOR write it, SceneReVis flat and grouped JSON). Conventions, the same as AI2-THOR's
and SceneReVis's, so no format needs an axis swap:

* x and z span the floor, y points up; floor plans are ``(x, z)`` pairs.
* north is +z, east is +x (Holodeck's wall directions).
* an object's *front* faces +z at zero yaw; a yaw of θ degrees about +y turns the front to
  ``(sin θ, cos θ)`` in ``(x, z)`` (THOR ``rotation.y``; SceneReVis quaternion about +y).
* an object's box is its asset's extents ``size = (sx, sy, sz)`` before rotation, centred
  at ``center`` (THOR ``position`` is the bounding-box centre; SceneReVis ``pos`` is the
  bottom centre and is converted on reading).

Every element keeps ``raw``: the record it was read from, so writers can round-trip keys
this model does not interpret. Writers start from ``raw`` and overwrite what the model
owns; an element made in code has an empty ``raw``. A reader also notes in ``origin`` where
its file gave each checked field (:data:`Origin`), so :func:`check_scene` names the file's
own key (``objects[1].pos[0]``, ``[0].object_list[2].left``), not this model's (``center``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from buildbench.geometry import rotation_from_quat_xyzw

FloatArray = NDArray[np.float64]
Point2 = tuple[float, float]

#: The id AI2-THOR uses for the outside of a house (doors to the outside, exterior walls).
EXTERIOR = "exterior"


#: Sizes or coordinates beyond this many metres are corrupt, not a room: every reader of scenes
#: (``scenes convert``/``evaluate``, ``scenerevis metrics``) refuses them by this one bound.
MAX_COORD_M = 1.0e4


class SceneFormatError(ValueError):
    """A scene file or record could not be read; the message names the element and field."""


Origin = dict[str, str | tuple[str, ...]]
"""Where a reader found an element's fields: model field -> the file's key path, one for the
whole value or one per point/component (``{"center": ("objects[1].pos[0]", ...)}``)."""


def relocate(scene: Scene, prefix: str) -> None:
    """Prefix every element's origin: the scene is record ``prefix`` of a larger document."""
    elements: list[Room | Wall | SceneObject] = [*scene.rooms, *scene.walls, *scene.objects]
    for element in elements:
        element.origin = {name: (prefix + where if isinstance(where, str) else tuple(prefix + w for w in where))
                          for name, where in element.origin.items()}


def _wheres(origin: Origin, name: str, n: int, fallback: str) -> list[str]:
    """The file's key of each of the ``n`` parts of field ``name`` (``fallback``, the model's
    own words, for an element made in code)."""
    given = origin.get(name)
    if isinstance(given, tuple) and len(given) == n:
        return list(given)
    return [given if isinstance(given, str) else fallback] * n


def check_scene(scene: Scene) -> None:
    """Raise SceneFormatError, naming the element and field, unless ``scene`` is a room every
    command can measure: coordinates, sizes and quaternion parts finite and within
    :data:`MAX_COORD_M`, sizes >= 0, a non-zero quaternion, a ceiling above its floor. The
    SceneReVis metrics' reader applies the same rules, so what converts also scores."""
    for room in scene.rooms:
        where = f"room {room.id!r}"
        points = _wheres(room.origin, "vertices", len(room.vertices), "")
        for k, point in enumerate(room.vertices):
            _check_coords(point, [points[k] or f"{where} floor point {k}"] * 2)
        _check_coords((room.floor_y,), _wheres(room.origin, "floor_y", 1, f"{where} floor_y"))
        if room.ceiling_y is not None:
            [ceiling] = _wheres(room.origin, "ceiling_y", 1, f"{where} ceiling_y")
            _check_coords((room.ceiling_y,), [ceiling])
            check_height(room.floor_y, room.ceiling_y, ceiling if room.origin.get("ceiling_y") else where)
    for wall in scene.walls:
        _check_coords((*wall.start, *wall.end, wall.bottom_y, wall.height_m),
                      _wheres(wall.origin, "wall", 6, f"wall {wall.id!r}"))
    for k, obj in enumerate(scene.objects):
        where = f"objects[{k}] {obj.id!r}"
        # the size first: a reader's centre may be derived from it (a bottom centre plus half the height)
        sizes = _wheres(obj.origin, "size", 3, f"{where} size")
        _check_coords(obj.size, sizes)
        if min(obj.size) < 0:
            raise SceneFormatError(f"{sizes[[v < 0 for v in obj.size].index(True)]}: extents must be >= 0 m, "
                                   f"got {list(obj.size)}")
        _check_coords(obj.center, _wheres(obj.origin, "center", 3, f"{where} center"))
        rotation = _wheres(obj.origin, "rotation", 4, f"{where} rotation")
        _check_coords(obj.rotation_xyzw, rotation)
        if math.hypot(*obj.rotation_xyzw) < 1e-9:
            raise SceneFormatError(f"{rotation[0]}: zero quaternion {list(obj.rotation_xyzw)}")


def check_height(floor_y: float, ceiling_y: float, where: str) -> None:
    """A room with its ceiling at or below its floor has no height to hold anything."""
    if not ceiling_y > floor_y:
        raise SceneFormatError(f"{where}: ceiling y {ceiling_y} is not above floor y {floor_y}")


def within_bounds(value: float) -> bool:
    """Whether a finite coordinate or size is within :data:`MAX_COORD_M`."""
    return abs(value) <= MAX_COORD_M


def _check_coords(values: Sequence[float], wheres: Sequence[str]) -> None:
    """Each value finite and within the bound; ``wheres[k]`` names value ``k`` in errors."""
    for v, where in zip(values, wheres, strict=True):
        if not math.isfinite(v):
            raise SceneFormatError(f"{where}: {v} is not a finite number")
        if not within_bounds(v):
            raise SceneFormatError(f"{where}: {v:g} exceeds {MAX_COORD_M:g} m")


def check_floor(vertices: Sequence[Point2], where: str) -> None:
    """Raise SceneFormatError unless ``vertices`` outline a floor: three distinct points or more
    making one simple polygon of some area (non-convex is fine; a bow tie or a line is not, and
    the geometry checks could not measure against it)."""
    from shapely.geometry import Polygon

    if len({(round(x, 6), round(z, 6)) for x, z in vertices}) < 3:
        raise SceneFormatError(f"{where}: floor polygon needs >= 3 distinct points")
    polygon = Polygon(vertices)
    if not polygon.is_valid or polygon.area < 1e-9:
        raise SceneFormatError(f"{where}: floor polygon is self-intersecting or has no area")


@dataclass
class Room:
    """A room: a floor polygon ``vertices`` of ``(x, z)`` metres, in file order.

    Attributes:
        room_type: ``Bedroom``, ``living room``… as the file wrote it ("" when absent).
        floor_y, ceiling_y: Floor and ceiling heights, metres (ceiling None when unknown).
    """

    id: str
    vertices: list[Point2]
    room_type: str = ""
    floor_material: str | None = None
    wall_material: str | None = None
    floor_y: float = 0.0
    ceiling_y: float | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    origin: Origin = field(default_factory=dict, compare=False, repr=False)

    @property
    def area_m2(self) -> float:
        """Shoelace area of the floor polygon."""
        pts = np.asarray(self.vertices, dtype=float)
        x, z = pts[:, 0], pts[:, 1]
        return float(abs(np.dot(x, np.roll(z, -1)) - np.dot(z, np.roll(x, -1))) / 2.0)

    @property
    def centroid(self) -> Point2:
        from shapely.geometry import Polygon

        c = Polygon(self.vertices).centroid
        return (float(c.x), float(c.y))


@dataclass
class Wall:
    """One *side* of a wall segment from ``start`` to ``end`` (``(x, z)`` metres).

    AI2-THOR stores each physical wall once per room it bounds, and every outside wall once
    more as its exterior twin (``exterior=True``), whose polygon runs the other way.

    ``empty`` marks an invisible wall (THOR ``"empty": true``): the boundary between two
    rooms of an open floor plan, which AI2-THOR neither renders nor collides with. It still
    bounds its room's floor polygon, but it is an opening, not a surface: walkers pass
    through it and nothing stands against it or hangs on it.
    """

    id: str
    room_id: str
    start: Point2
    end: Point2
    height_m: float
    material: str | None = None
    exterior: bool = False
    bottom_y: float = 0.0
    empty: bool = False
    raw: dict[str, Any] = field(default_factory=dict)
    origin: Origin = field(default_factory=dict, compare=False, repr=False)

    @property
    def width_m(self) -> float:
        return math.dist(self.start, self.end)

    @property
    def direction_xz(self) -> Point2:
        """Unit vector from ``start`` to ``end``."""
        w = self.width_m or 1.0
        return ((self.end[0] - self.start[0]) / w, (self.end[1] - self.start[1]) / w)

    def point_at(self, along_m: float) -> Point2:
        """The floor point ``along_m`` metres from ``start`` toward ``end``."""
        dx, dz = self.direction_xz
        return (self.start[0] + dx * along_m, self.start[1] + dz * along_m)


@dataclass
class Opening:
    """A door or window: a hole in ``wall0`` (and its other side ``wall1``).

    ``hole_min``/``hole_max`` are wall-local ``(along, up)`` metres as THOR's
    ``holePolygon``: ``along`` from the wall polygon's first point, ``up`` from the floor.
    Use :meth:`Scene.opening_center` for the true world position.
    """

    id: str
    kind: Literal["door", "window"]
    asset_id: str
    room0: str
    room1: str
    wall0: str
    wall1: str | None
    hole_min: Point2
    hole_max: Point2
    openable: bool = False
    openness: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def rooms(self) -> tuple[str, str]:
        return (self.room0, self.room1)

    @property
    def width_m(self) -> float:
        return abs(self.hole_max[0] - self.hole_min[0])

    @property
    def height_m(self) -> float:
        return abs(self.hole_max[1] - self.hole_min[1])


@dataclass
class SceneObject:
    """An object as an oriented box.

    Attributes:
        category: Lower-case singular noun (``bed``, ``armchair``); from the catalogue or
            parsed from the id/description.
        center: World centre of the box, metres.
        size: Box extents ``(sx, sy, sz)`` in the object's own frame, metres.
        rotation_xyzw: Full orientation as a scalar-last quaternion (SciPy's convention).
        room_id: Owning room ("" when the format has none).
        parent_id: The receptacle this object stands on/in (THOR nested ``children``), or None.
        attributes: ``color``, ``material``, ``shape``, ``description``… as known.
    """

    id: str
    category: str
    asset_id: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    rotation_xyzw: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    room_id: str = ""
    parent_id: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    origin: Origin = field(default_factory=dict, compare=False, repr=False)

    @property
    def rotation(self) -> FloatArray:
        """``(3, 3)`` rotation whose columns are the object's local axes in the world."""
        return rotation_from_quat_xyzw(self.rotation_xyzw)

    @property
    def yaw_deg(self) -> float:
        """Heading of the front in [0, 360): 0 faces +z, 90 faces +x."""
        fx, fz = self.front_xz
        return math.degrees(math.atan2(fx, fz)) % 360.0

    @property
    def front_xz(self) -> Point2:
        """Unit vector of the front (local +z) projected on the floor."""
        f = self.rotation[:, 2]
        n = math.hypot(f[0], f[2])
        if n < 1e-9:  # lying on its back: fall back to local +y's projection
            f = self.rotation[:, 1]
            n = math.hypot(f[0], f[2]) or 1.0
        return (float(f[0] / n), float(f[2] / n))

    @property
    def bottom_y(self) -> float:
        return float(self.corners()[:, 1].min())

    @property
    def top_y(self) -> float:
        return float(self.corners()[:, 1].max())

    def corners(self) -> FloatArray:
        """``(8, 3)`` world corners, in :data:`buildbench.geometry.BOX_CORNER_SIGNS` order."""
        from buildbench.geometry import BOX_CORNER_SIGNS

        half = np.asarray(self.size, dtype=float) / 2.0
        return np.asarray(self.center, dtype=float) + (BOX_CORNER_SIGNS * half) @ self.rotation.T

    def footprint(self) -> list[Point2]:
        """The floor-plane outline ``[(x, z)] * 4`` of the box, counter-clockwise from above
        for an upright box (the convex hull of the corners' projections otherwise)."""
        from shapely.geometry import MultiPoint

        hull = MultiPoint([(float(c[0]), float(c[2])) for c in self.corners()]).convex_hull
        coords = list(getattr(hull, "exterior", hull).coords)
        if len(coords) > 1 and coords[0] == coords[-1]:
            coords = coords[:-1]
        return [(float(x), float(z)) for x, z in coords]


def yaw_quat_xyzw(yaw_deg: float) -> tuple[float, float, float, float]:
    """Quaternion of a turn of ``yaw_deg`` degrees about +y (front +z → (sin, cos))."""
    half = math.radians(yaw_deg) / 2.0
    return (0.0, math.sin(half), 0.0, math.cos(half))


@dataclass
class Scene:
    """A house or a single room.

    Attributes:
        query: The instruction the scene was made for (THOR ``query``), or "".
        source_format: ``holodeck``, ``procthor``, ``scenerevis-flat``, ``scenerevis-grouped``
            or ``""`` for scenes built in code; writers use it to pick conventions.
        raw: Top-level keys not modelled (``proceduralParameters``, ``metadata``…), verbatim.
    """

    rooms: list[Room] = field(default_factory=list)
    walls: list[Wall] = field(default_factory=list)
    doors: list[Opening] = field(default_factory=list)
    windows: list[Opening] = field(default_factory=list)
    objects: list[SceneObject] = field(default_factory=list)
    query: str = ""
    source_format: str = ""
    raw: dict[str, Any] = field(default_factory=dict)

    # --- lookups (ids are unique within each list; readers check it) ---------------------
    def room(self, room_id: str) -> Room:
        return _find(self.rooms, room_id, "room")

    def wall(self, wall_id: str) -> Wall:
        return _find(self.walls, wall_id, "wall")

    def door(self, door_id: str) -> Opening:
        return _find(self.doors, door_id, "door")

    def window(self, window_id: str) -> Opening:
        return _find(self.windows, window_id, "window")

    def object(self, object_id: str) -> SceneObject:
        return _find(self.objects, object_id, "object")

    def openings(self) -> Iterator[Opening]:
        yield from self.doors
        yield from self.windows

    def objects_in(self, room_id: str) -> list[SceneObject]:
        return [o for o in self.objects if o.room_id == room_id]

    def walls_of(self, room_id: str, *, exterior: bool = False) -> list[Wall]:
        return [w for w in self.walls if w.room_id == room_id and w.exterior == exterior]

    def children_of(self, object_id: str) -> list[SceneObject]:
        return [o for o in self.objects if o.parent_id == object_id]

    def kind_of(self, element_id: str) -> str | None:
        """``room``, ``wall``, ``door``, ``window`` or ``object`` for a known id, else None."""
        for kind, items in (("object", self.objects), ("room", self.rooms), ("wall", self.walls),
                            ("door", self.doors), ("window", self.windows)):
            if any(x.id == element_id for x in items):
                return kind
        return None

    # --- derived geometry -----------------------------------------------------------------
    def opening_center(self, opening: Opening) -> tuple[float, float, float]:
        """True world centre ``(x, y, z)`` of a door or window hole (not the wall midpoint
        the original LEGO-Eval tools report)."""
        wall = self.wall(opening.wall0)
        along = (opening.hole_min[0] + opening.hole_max[0]) / 2.0
        x, z = wall.point_at(along)
        y = wall.bottom_y + (opening.hole_min[1] + opening.hole_max[1]) / 2.0
        return (x, y, z)

    def bounds_xz(self) -> tuple[Point2, Point2]:
        """``((min_x, min_z), (max_x, max_z))`` over every room's floor."""
        pts = np.array([p for r in self.rooms for p in r.vertices], dtype=float).reshape(-1, 2)
        if not len(pts):
            return ((0.0, 0.0), (0.0, 0.0))
        lo, hi = pts.min(0), pts.max(0)
        return ((float(lo[0]), float(lo[1])), (float(hi[0]), float(hi[1])))


def _find(items: Sequence[Any], element_id: str, kind: str) -> Any:
    for item in items:
        if item.id == element_id:
            return item
    known = ", ".join(repr(i.id) for i in items[:8]) + (" …" if len(items) > 8 else "")
    raise KeyError(f"no {kind} with id {element_id!r} (known: {known or 'none'})")


def wall_direction(start: Point2, end: Point2, room_vertices: Sequence[Point2]) -> str:
    """Holodeck's cardinal name for a wall segment of a room: the side of the room's
    bounding box it lies on (south = min z, north = max z, west = min x, east = max x);
    for a slanted wall, the side its outward normal points to most."""
    pts = np.asarray(room_vertices, dtype=float)
    (x0, z0), (x1, z1) = start, end
    eps = 1e-6
    if abs(z0 - z1) < eps:
        return "south" if abs(z0 - pts[:, 1].min()) <= abs(z0 - pts[:, 1].max()) else "north"
    if abs(x0 - x1) < eps:
        return "west" if abs(x0 - pts[:, 0].min()) <= abs(x0 - pts[:, 0].max()) else "east"
    cx, cz = pts.mean(0)
    mx, mz = (x0 + x1) / 2 - cx, (z0 + z1) / 2 - cz
    if abs(mx) >= abs(mz):
        return "east" if mx > 0 else "west"
    return "north" if mz > 0 else "south"
