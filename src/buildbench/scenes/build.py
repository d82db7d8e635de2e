"""Houses built in code, with Holodeck's id conventions.

``HouseBuilder`` collects rooms, doors, windows and objects, checks each as it is added
(overlapping rooms, doors between rooms that share no wall, openings wider than their wall,
unknown categories or assets are refused with a one-line message, and the builder keeps its
state), and ``build()`` turns them into a :class:`~buildbench.scenes.model.Scene`:

* walls: one per side per room, split where another room's corner lies on the side, ids
  ``wall|{room}|{direction}|{j}``; a wall with no room behind it also gets an exterior twin
  ``…|exterior`` whose polygon runs the other way; walls between two rooms joined by
  :meth:`HouseBuilder.open_wall` are ``empty`` (an open floor plan's invisible boundary);
* doors ``door|{i}|{room0}|{room1}`` with a hole in both wall sides; windows
  ``window|{wallId}|{i}`` in outside walls; holes wall-local ``(along, up)`` metres;
* objects ``{category}-{k} ({room})``; small objects on receptacles
  ``{category}-{k}|{receptacleId}`` with ``parent_id``; floor objects stand on the floor.

Deterministic: the same calls give the same scene.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass

from shapely.geometry import Point, Polygon

from buildbench.scenes.catalogue import AssetInfo, Catalogue, default_catalogue, material_info
from buildbench.scenes.model import (
    EXTERIOR,
    Opening,
    Point2,
    Room,
    Scene,
    SceneObject,
    Wall,
    wall_direction,
    yaw_quat_xyzw,
)

WALL_HEIGHT_M = 2.7
DEFAULT_DOOR = "Doorway_1"
DEFAULT_WINDOW = "Window_Fixed_60x48"
DEFAULT_FLOOR_MATERIAL = "DarkWoodFloors"
DEFAULT_WALL_MATERIAL = "Drywall"
EXTERIOR_WALL_MATERIAL = "Walldrywall4Tiled"
WINDOW_SILL_M = 0.9
WALL_OBJECT_CENTER_Y_M = 1.5
_EPS = 1e-6


class BuildError(ValueError):
    """A builder call was refused; the message names the element and the reason."""


@dataclass(frozen=True)
class _Segment:
    """One wall side of a room: ``start``→``end`` along the room's outline."""

    wall_id: str
    room_id: str
    start: Point2
    end: Point2
    direction: str
    neighbour: str | None  # the room on the other side, None for an outside wall

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)


@dataclass(frozen=True)
class _Hole:
    opening_id: str
    kind: str
    wall_id: str
    along: tuple[float, float]
    up: tuple[float, float]


class HouseBuilder:
    """Build a house step by step; every method checks its input before changing state."""

    def __init__(self, *, wall_height_m: float = WALL_HEIGHT_M, query: str = "",
                 catalogue: Catalogue | None = None) -> None:
        if not (math.isfinite(wall_height_m) and 1.0 <= wall_height_m <= 10.0):
            raise BuildError(f"wall_height_m: expected 1-10 m, got {wall_height_m!r}")
        self.wall_height_m = float(wall_height_m)
        self.query = query
        self.catalogue = catalogue or default_catalogue()
        self._rooms: list[Room] = []
        self._holes: list[_Hole] = []
        self._doors: list[Opening] = []
        self._windows: list[Opening] = []
        self._objects: list[SceneObject] = []
        self._open: set[frozenset[str]] = set()

    # --- rooms ---------------------------------------------------------------------------
    def room(self, room_id: str, rect_or_vertices: Sequence[float] | Sequence[Sequence[float]], *,
             room_type: str = "", floor_material: str | None = None,
             wall_material: str | None = None) -> HouseBuilder:
        """Add a room from a rectangle ``(x0, z0, x1, z1)`` or floor vertices ``[(x, z), …]``
        (metres). Rectangles get Holodeck's order: clockwise from the min-x, min-z corner."""
        if not room_id or room_id == EXTERIOR or "|" in room_id:
            raise BuildError(f"room id {room_id!r}: must be non-empty, not {EXTERIOR!r}, without '|'")
        if any(r.id == room_id for r in self._rooms):
            raise BuildError(f"room {room_id!r}: id already used")
        vertices = _room_vertices(room_id, rect_or_vertices)
        poly = Polygon(vertices)
        if not poly.is_valid or poly.area < _EPS:
            raise BuildError(f"room {room_id!r}: floor polygon is self-intersecting or has no area")
        for other in self._rooms:
            overlap = poly.intersection(Polygon(other.vertices)).area
            if overlap > 1e-4:
                raise BuildError(f"room {room_id!r} overlaps room {other.id!r} by {overlap:.3f} m²")
        floor = _material(room_id, "floor_material", floor_material or DEFAULT_FLOOR_MATERIAL)
        wall = _material(room_id, "wall_material", wall_material or DEFAULT_WALL_MATERIAL)
        self._rooms.append(Room(room_id, vertices, room_type or room_id, floor, wall,
                                floor_y=0.0, ceiling_y=self.wall_height_m))
        return self

    def segments(self, room_id: str) -> list[_Segment]:
        """The wall sides of one room as they stand now."""
        room = self._room(room_id)
        return _room_segments(room, self._rooms)

    # --- doors, open walls and windows ----------------------------------------------------
    def open_wall(self, room0: str, room1: str) -> HouseBuilder:
        """Join two adjacent rooms without a wall (an open floor plan): every wall side they
        share is built ``empty``, as ProcTHOR writes such boundaries."""
        pair = frozenset((room0, room1))
        if room0 == room1 or EXTERIOR in pair:
            raise BuildError(f"open wall {room0!r}-{room1!r}: needs two different rooms (not {EXTERIOR!r})")
        self._room(room0)
        self._room(room1)
        if not any(s.neighbour == room1 for s in self.segments(room0)):
            raise BuildError(f"open wall {room0!r}-{room1!r}: the rooms are not adjacent (no shared wall)")
        if any({d.room0, d.room1} == pair for d in self._doors):
            raise BuildError(f"open wall {room0!r}-{room1!r}: a door already joins them")
        self._open.add(pair)
        return self

    def door(self, room0: str, room1: str, asset_id: str | None = None, *, along: float = 0.5,
             direction: str | None = None, openable: bool = True, openness: float = 1.0) -> str:
        """A door between two rooms sharing a wall (``room1`` may be ``"exterior"``);
        ``along`` places it in [0, 1] of the free span of the longest shared wall (or
        the longest wall facing ``direction``). Returns the door id."""
        if room0 == room1 or EXTERIOR == room0 == room1:
            raise BuildError(f"door {room0!r}-{room1!r}: a door needs two different rooms")
        if room0 == EXTERIOR:
            room0, room1 = room1, room0
        self._room(room0)
        if room1 != EXTERIOR:
            self._room(room1)
        asset = self._opening_asset(asset_id or DEFAULT_DOOR, "door")
        neighbour = None if room1 == EXTERIOR else room1
        if frozenset((room0, room1)) in self._open:
            raise BuildError(f"door {room0!r}-{room1!r}: the rooms are joined by an open wall")
        candidates = [s for s in self.segments(room0) if s.neighbour == neighbour]
        if not candidates:
            raise BuildError(f"door {room0!r}-{room1!r}: the rooms are not adjacent (no shared wall)"
                             if neighbour else f"door {room0!r}-exterior: room has no outside wall")
        seg = _pick_wall(candidates, direction, f"door {room0!r}-{room1!r}")
        assert asset.hole_m is not None
        lo, hi = self._hole_span(seg, asset, along, (0.0, asset.hole_m[1]), "door")
        i = len(self._doors)
        hole = ((lo[0], hi[0]), (lo[1], hi[1]))  # along the room's own wall side
        if neighbour is None:
            # Holodeck puts the outside first: room0 "exterior", wall0 the exterior twin, whose
            # polygon runs the other way, so the hole is measured from the other end
            names, walls = (EXTERIOR, room0), (f"{seg.wall_id}|exterior", seg.wall_id)
            lo, hi = (seg.length - hi[0], lo[1]), (seg.length - lo[0], hi[1])
        else:
            names, walls = (room0, room1), (seg.wall_id, _twin_id(seg, self.segments(room1)))
        door_id = f"door|{i}|{names[0]}|{names[1]}"
        self._holes.append(_Hole(door_id, "door", seg.wall_id, *hole))
        self._doors.append(Opening(door_id, "door", asset.asset_id, names[0], names[1], walls[0], walls[1],
                                   lo, hi, openable=openable, openness=openness if openable else 0.0))
        return door_id

    def window(self, room_id: str, direction: str, asset_id: str | None = None, *, along: float = 0.5,
               sill_m: float = WINDOW_SILL_M) -> str:
        """A window in the room's longest outside wall facing ``direction`` (north, south,
        east, west); ``sill_m`` is the hole's bottom above the floor. Returns its id."""
        self._room(room_id)
        asset = self._opening_asset(asset_id or DEFAULT_WINDOW, "window")
        outside = [s for s in self.segments(room_id) if s.neighbour is None]
        seg = _pick_wall(outside, direction, f"window in {room_id!r}")
        assert asset.hole_m is not None
        if not (math.isfinite(sill_m) and sill_m >= 0):
            raise BuildError(f"window in {room_id!r}: sill_m must be >= 0, got {sill_m!r}")
        lo, hi = self._hole_span(seg, asset, along, (sill_m, sill_m + asset.hole_m[1]), "window")
        i = sum(1 for w in self._windows if w.wall0 == seg.wall_id)
        window_id = f"window|{seg.wall_id}|{i}"
        self._holes.append(_Hole(window_id, "window", seg.wall_id, (lo[0], hi[0]), (lo[1], hi[1])))
        self._windows.append(Opening(window_id, "window", asset.asset_id, room_id, room_id, seg.wall_id,
                                     f"{seg.wall_id}|exterior", lo, hi))
        return window_id

    # --- objects -------------------------------------------------------------------------
    def place(self, category_or_asset: str, room_id: str, center_xz: Sequence[float] | None = None,
              yaw_deg: float = 0.0, on: str | None = None, *, color: str | None = None,
              material: str | None = None, shape: str | None = None, y_m: float | None = None) -> str:
        """Place an asset (a catalogue asset id, or a category whose first asset matching
        ``color``/``material``/``shape`` is used). Floor objects stand on the floor; with
        ``on`` the object stands on that receptacle (centred on it unless ``center_xz``);
        wall objects hang with their centre at ``y_m`` (1.5 m). Returns the object id."""
        room = self._room(room_id)
        asset = self._resolve_asset(category_or_asset, color, material, shape)
        yaw = _finite(yaw_deg, f"place {category_or_asset!r}: yaw_deg")
        parent = self._parent(on, room_id, asset) if on is not None else None
        if center_xz is None:
            cx, cz = (parent.center[0], parent.center[2]) if parent else room.centroid
        else:
            if len(center_xz) != 2:
                raise BuildError(f"place {category_or_asset!r}: center_xz must be (x, z), got {center_xz!r}")
            cx = _finite(center_xz[0], f"place {category_or_asset!r}: center_xz[0]")
            cz = _finite(center_xz[1], f"place {category_or_asset!r}: center_xz[1]")
        cy = self._center_y(asset, parent, y_m)
        if parent is not None:
            k = sum(1 for o in self._objects if o.parent_id == parent.id and o.category == asset.category)
            object_id = f"{asset.category}-{k}|{parent.id}"
        else:
            k = sum(1 for o in self._objects
                    if o.room_id == room_id and o.parent_id is None and o.category == asset.category)
            object_id = f"{asset.category}-{k} ({room_id})"
        attributes = {"color": asset.color, "material": asset.material, "shape": asset.shape,
                      "description": asset.description, "placement": asset.placement,
                      "size_source": "catalogue"}
        self._objects.append(SceneObject(object_id, asset.category, asset.asset_id, (cx, cy, cz),
                                         asset.size_m, yaw_quat_xyzw(yaw), room_id,
                                         parent.id if parent else None, attributes))
        return object_id

    # --- result --------------------------------------------------------------------------
    def build(self) -> Scene:
        """The scene as built so far (a fresh copy each call)."""
        walls: list[Wall] = []
        for room in self._rooms:
            for seg in _room_segments(room, self._rooms):
                if seg.neighbour is None:  # Holodeck lists the exterior twin first
                    walls.append(Wall(f"{seg.wall_id}|exterior", room.id, seg.end, seg.start,
                                      self.wall_height_m, EXTERIOR_WALL_MATERIAL, exterior=True))
                walls.append(Wall(seg.wall_id, room.id, seg.start, seg.end, self.wall_height_m,
                                  room.wall_material, empty=frozenset((room.id, seg.neighbour)) in self._open))
        known = {w.id for w in walls}
        for opening in [*self._doors, *self._windows]:
            if opening.wall0 not in known or (opening.wall1 and opening.wall1 not in known):
                raise BuildError(f"{opening.id}: its wall was split by a room added later; "
                                 "add rooms before doors and windows")
        return Scene(rooms=copy.deepcopy(self._rooms), walls=walls, doors=copy.deepcopy(self._doors),
                     windows=copy.deepcopy(self._windows), objects=copy.deepcopy(self._objects),
                     query=self.query, source_format="")

    # --- checks --------------------------------------------------------------------------
    def _room(self, room_id: str) -> Room:
        for r in self._rooms:
            if r.id == room_id:
                return r
        known = ", ".join(repr(r.id) for r in self._rooms) or "none"
        raise BuildError(f"unknown room {room_id!r} (known: {known})")

    def _opening_asset(self, asset_id: str, kind: str) -> AssetInfo:
        asset = self.catalogue.get(asset_id)
        if asset is None or asset.category != kind or asset.hole_m is None:
            known = ", ".join(a.asset_id for a in self.catalogue.by_category(kind) if a.hole_m)
            raise BuildError(f"{kind} asset {asset_id!r}: not a known {kind} (known: {known})")
        return asset

    def _hole_span(self, seg: _Segment, asset: AssetInfo, along: float, up: tuple[float, float],
                   kind: str) -> tuple[Point2, Point2]:
        assert asset.hole_m is not None
        width = asset.hole_m[0]
        if width > seg.length + _EPS:
            raise BuildError(f"{kind} {asset.asset_id!r} ({width:.2f} m wide) does not fit wall "
                             f"{seg.wall_id!r} ({seg.length:.2f} m)")
        if up[1] > self.wall_height_m + _EPS:
            raise BuildError(f"{kind} {asset.asset_id!r}: top at {up[1]:.2f} m is above the "
                             f"{self.wall_height_m:.2f} m wall {seg.wall_id!r}")
        if not (math.isfinite(along) and 0.0 <= along <= 1.0):
            raise BuildError(f"{kind} on {seg.wall_id!r}: along must be in [0, 1], got {along!r}")
        start = along * (seg.length - width)
        span = (start, start + width)
        for hole in self._holes:
            if hole.wall_id == seg.wall_id and span[0] < hole.along[1] - _EPS and hole.along[0] < span[1] - _EPS \
                    and up[0] < hole.up[1] - _EPS and hole.up[0] < up[1] - _EPS:
                raise BuildError(f"{kind} {asset.asset_id!r} on {seg.wall_id!r} overlaps {hole.opening_id!r}")
        return (span[0], up[0]), (span[1], up[1])

    def _resolve_asset(self, name: str, color: str | None, material: str | None,
                       shape: str | None) -> AssetInfo:
        asset = self.catalogue.get(name)
        if asset is not None:
            return asset
        if name in self.catalogue.category_info:
            try:
                return self.catalogue.pick(name, color=color, material=material, shape=shape)
            except KeyError as exc:
                raise BuildError(str(exc.args[0])) from None
        raise BuildError(f"place {name!r}: not a catalogue asset id or category "
                         f"(categories: {', '.join(self.catalogue.categories())})")

    def _parent(self, on: str, room_id: str, asset: AssetInfo) -> SceneObject:
        parent = next((o for o in self._objects if o.id == on), None)
        if parent is None:
            raise BuildError(f"place {asset.category!r} on {on!r}: no such object placed yet")
        if parent.room_id != room_id:
            raise BuildError(f"place {asset.category!r} on {on!r}: that object is in room "
                             f"{parent.room_id!r}, not {room_id!r}")
        info = self.catalogue.get(parent.asset_id)
        if info is not None and not info.receptacle:
            raise BuildError(f"place {asset.category!r} on {on!r}: a {parent.category} is not a receptacle")
        return parent

    def _center_y(self, asset: AssetInfo, parent: SceneObject | None, y_m: float | None) -> float:
        half = asset.size_m[1] / 2.0
        if parent is not None:
            return parent.top_y + half
        if y_m is not None:
            return _finite(y_m, f"place {asset.asset_id!r}: y_m")
        if asset.placement == "wall":
            return max(WALL_OBJECT_CENTER_Y_M, half)
        if asset.placement == "ceiling":
            return self.wall_height_m - half
        return half


def _room_vertices(room_id: str, shape: Sequence[float] | Sequence[Sequence[float]]) -> list[Point2]:
    items = list(shape)
    if len(items) == 4 and all(isinstance(v, (int, float)) for v in items):
        x0, z0, x1, z1 = (_finite(v, f"room {room_id!r}: rectangle") for v in items)  # type: ignore[arg-type]
        if x1 - x0 < 0.1 or z1 - z0 < 0.1:
            raise BuildError(f"room {room_id!r}: rectangle (x0, z0, x1, z1) needs x1 > x0 and z1 > z0")
        return [(x0, z0), (x0, z1), (x1, z1), (x1, z0)]
    out: list[Point2] = []
    for i, v in enumerate(items):
        if isinstance(v, (int, float)) or len(v) != 2:  # type: ignore[arg-type]
            raise BuildError(f"room {room_id!r}: vertices[{i}] must be an (x, z) pair, got {v!r}")
        out.append((_finite(v[0], f"room {room_id!r}: vertices[{i}]"),  # type: ignore[index]
                    _finite(v[1], f"room {room_id!r}: vertices[{i}]")))  # type: ignore[index]
    if len(out) < 3:
        raise BuildError(f"room {room_id!r}: needs a rectangle (x0, z0, x1, z1) or >= 3 vertices")
    return out


def _room_segments(room: Room, rooms: Sequence[Room]) -> list[_Segment]:
    """The room's outline cut at other rooms' corners, each piece tagged with the room on
    its other side (None outside)."""
    others = [r for r in rooms if r.id != room.id]
    out: list[_Segment] = []
    n = len(room.vertices)
    for i in range(n):
        a, b = room.vertices[i], room.vertices[(i + 1) % n]
        length = math.dist(a, b)
        if length < _EPS:
            continue
        cuts = {0.0, 1.0}
        for other in others:
            for p in other.vertices:
                t = _param_on(a, b, p)
                if t is not None:
                    cuts.add(t)
        ts = sorted(cuts)
        for t0, t1 in zip(ts, ts[1:], strict=False):
            if (t1 - t0) * length < 1e-4:
                continue
            p = (a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0)
            q = (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)
            mid = Point((p[0] + q[0]) / 2, (p[1] + q[1]) / 2)
            neighbour = next((o.id for o in others if Polygon(o.vertices).exterior.distance(mid) < 1e-4), None)
            direction = wall_direction(p, q, room.vertices)
            out.append(_Segment(f"wall|{room.id}|{direction}|{len(out)}", room.id, p, q, direction, neighbour))
    return out


def _param_on(a: Point2, b: Point2, p: Point2) -> float | None:
    """Where ``p`` lies on segment a→b as a fraction in (0, 1), or None when off it."""
    dx, dz = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dz * dz
    t = ((p[0] - a[0]) * dx + (p[1] - a[1]) * dz) / length2
    if not (_EPS < t < 1 - _EPS):
        return None
    off = abs((p[0] - a[0]) * dz - (p[1] - a[1]) * dx) / math.sqrt(length2)
    return t if off < 1e-4 else None


def _twin_id(seg: _Segment, other_segments: list[_Segment]) -> str:
    for s in other_segments:
        if s.neighbour == seg.room_id and {s.start, s.end} == {seg.start, seg.end}:
            return s.wall_id
    for s in other_segments:  # corners differ in the last digits: match by midpoint
        if s.neighbour == seg.room_id and math.dist(_mid(s), _mid(seg)) < 1e-3:
            return s.wall_id
    raise BuildError(f"wall {seg.wall_id!r}: no matching wall side in room {seg.neighbour!r}")


def _mid(s: _Segment) -> Point2:
    return ((s.start[0] + s.end[0]) / 2, (s.start[1] + s.end[1]) / 2)


def _pick_wall(candidates: list[_Segment], direction: str | None, what: str) -> _Segment:
    if direction is not None:
        if direction not in ("north", "south", "east", "west"):
            raise BuildError(f"{what}: direction must be north, south, east or west, got {direction!r}")
        facing = [s for s in candidates if s.direction == direction]
        if not facing:
            have = ", ".join(sorted({s.direction for s in candidates})) or "none"
            raise BuildError(f"{what}: no suitable wall facing {direction} (suitable walls face: {have})")
        candidates = facing
    return max(candidates, key=lambda s: (round(s.length, 6), -candidates.index(s)))


def _material(room_id: str, field_name: str, name: str) -> str:
    if material_info(name) is None:
        raise BuildError(f"room {room_id!r}: {field_name} {name!r} is not a known material")
    return name


def _finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BuildError(f"{what}: expected a finite number, got {value!r}")
    return float(value)
