"""Physical plausibility of a scene: interpenetrating objects, objects outside their room,
doors and windows blocked by furniture.

Objects are their true oriented boxes. Two boxes *collide* when they interpenetrate by
more than a contact tolerance; the depth is the minimum translation distance that
separates them (exact for boxes: the separating-axis test over the 15 candidate axes,
:func:`buildbench.geometry.sat_separation`). Not collisions:

* pairs that merely touch (depth up to :data:`TOUCH_TOL_M`);
* a receptacle child and its parent (``parent_id``: a book inside a shelf's box);
* one object resting on another: the upper one's bottom is at most :data:`RESTING_TOL_M`
  below the lower one's top (a table on a rug, a vase sunk a centimetre into a table).

Objects in different rooms are tested too: walls separate rooms geometrically, so two
boxes overlapping across a wall means at least one of them pierces it
(:func:`out_of_bounds` says which).

Empty (invisible) walls, the boundaries between the rooms of an open floor plan, are no
obstacle: an object may straddle one (a sofa across the line between the living and the
dining area is where it would stand in a real open plan), so :func:`out_of_bounds` measures
against the room's whole open space, and :func:`blocked_openings` keeps no free zone in
front of them (they are not doors; whether the rooms stay joined is
:func:`buildbench.scenes.reachability.reachable`'s question).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

from buildbench.geometry import contact_pairs, sat_separation
from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import RoomGeometry, SceneIndex, index_of
from buildbench.scenes.relations.open_plan import open_space

#: Interpenetration up to this depth, metres, is contact, not collision.
TOUCH_TOL_M = 0.01
#: An object whose bottom is at most this far, metres, below another's top rests on it.
RESTING_TOL_M = 0.05
#: A footprint may leave its room's floor polygon by this much, metres, before it counts
#: as out of bounds (zero-thickness walls: a wall-mounted box is flush with its wall).
OUT_OF_BOUNDS_TOL_M = 0.02
#: Depth, metres, in front of a door (either side) that furniture must leave free.
DOOR_CLEARANCE_M = 0.6
#: Objects no taller than this, metres (rugs, mats), never block a door.
FLOOR_COVERING_MAX_M = 0.05
# Out-of-bounds shares below this are rounding (0.1 % of the footprint).
_MIN_OUTSIDE_SHARE = 1e-3


@dataclass(frozen=True)
class Collision:
    """Objects ``a`` and ``b`` (scene order) interpenetrate by ``depth_m`` metres."""

    a: str
    b: str
    depth_m: float

    @property
    def explanation(self) -> str:
        return f"{self.a} and {self.b} interpenetrate by {self.depth_m:.3f} m"


@dataclass(frozen=True)
class OutOfBounds:
    """Object ``object_id`` leaves room ``room_id``.

    Attributes:
        outside_fraction: Share of its footprint area outside the room's floor polygon
            (grown by the tolerance); 1.0 when it belongs to no known room.
        reasons: ``"outside floor"``, ``"below floor"``, ``"above ceiling"``, ``"no room"``.
        other_rooms: Rooms its outside part lies in (it crosses a wall into them).
        vertical_m: How far it pierces the floor or ceiling, metres (0 if it does not).
    """

    object_id: str
    room_id: str
    outside_fraction: float
    reasons: tuple[str, ...] = ()
    other_rooms: tuple[str, ...] = ()
    vertical_m: float = 0.0

    @property
    def explanation(self) -> str:
        parts = []
        if "no room" in self.reasons:
            parts.append("lies in no known room")
        if "outside floor" in self.reasons:
            crossing = f", crossing into {', '.join(self.other_rooms)}" if self.other_rooms else ""
            parts.append(f"has {self.outside_fraction:.0%} of its footprint outside {self.room_id}{crossing}")
        for reason in ("below floor", "above ceiling"):
            if reason in self.reasons:
                parts.append(f"reaches {self.vertical_m:.2f} m {reason.split()[0]} the {reason.split()[1]}")
        return f"{self.object_id} " + " and ".join(parts)


@dataclass(frozen=True)
class Blocking:
    """Object ``object_id`` stands in the clearance zone of door/window ``opening_id``."""

    opening_id: str
    object_id: str
    room_id: str
    overlap_m2: float

    @property
    def explanation(self) -> str:
        return (f"{self.object_id} covers {self.overlap_m2:.2f} m² of the free space in front of"
                f" {self.opening_id} in {self.room_id}")


def collisions(
    scene: Scene, *, min_depth_m: float = 0.0, room_id: str | None = None, touch_tol_m: float = TOUCH_TOL_M,
    resting_tol_m: float = RESTING_TOL_M,
) -> list[Collision]:
    """Every pair of interpenetrating objects, deepest first (ties in scene order).

    Args:
        min_depth_m: Report only pairs at least this deep, metres.
        room_id: Only pairs with at least one object in this room.
        touch_tol_m: Depth up to which boxes merely touch, metres.
        resting_tol_m: See :data:`RESTING_TOL_M`.
    """
    for name, value in (("min_depth_m", min_depth_m), ("touch_tol_m", touch_tol_m),
                        ("resting_tol_m", resting_tol_m)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"collisions: {name} must be a finite non-negative number of metres, got {value!r}")
    index = index_of(scene)
    if room_id is not None and room_id not in index.rooms:
        scene.room(room_id)  # raises naming the known rooms
    pairs, depths = index.memo("pair_depths", lambda: _pair_depths(index))
    keep = (depths > touch_tol_m) & (depths >= min_depth_m)
    i, j = pairs[:, 0], pairs[:, 1]
    bottoms, tops = index.bottoms, index.tops
    resting = (bottoms[j] >= tops[i] - resting_tol_m) | (bottoms[i] >= tops[j] - resting_tol_m)
    keep &= ~resting
    out = []
    for k in np.flatnonzero(keep):
        a, b = int(i[k]), int(j[k])
        ia, ib = index.object_ids[a], index.object_ids[b]
        if index.parents[a] == ib or index.parents[b] == ia:
            continue
        if room_id is not None and room_id not in (index.object_rooms[a], index.object_rooms[b]):
            continue
        out.append(Collision(ia, ib, float(depths[k])))
    out.sort(key=lambda c: -c.depth_m)
    return out


def _pair_depths(index: SceneIndex) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping or touching index pairs and their penetration depths, metres."""
    pairs = contact_pairs(index.boxes, tol=0.0)
    if not len(pairs):
        return pairs, np.zeros(0)
    depth = -sat_separation(index.boxes.subset(pairs[:, 0]), index.boxes.subset(pairs[:, 1]))
    return pairs, np.maximum(depth, 0.0)


def out_of_bounds(
    scene: Scene, *, tolerance_m: float = OUT_OF_BOUNDS_TOL_M, room_id: str | None = None,
    vertical: bool = True,
) -> list[OutOfBounds]:
    """Objects whose footprint leaves their room's floor polygon by more than
    ``tolerance_m`` metres (where the room is joined to others through empty walls, its
    floor here is the union of that whole open space, so straddling the open boundary is
    allowed), or (with ``vertical``) whose box pierces the floor or the
    ceiling (the room's ``ceiling_y``, else its tallest wall) by more than ``tolerance_m``.
    Objects with no known room (neither their ``room_id`` nor any floor under their
    footprint's centre) are reported with ``outside_fraction`` 1.0. Scene order.
    """
    if not np.isfinite(tolerance_m) or tolerance_m < 0:
        raise ValueError(f"out_of_bounds: tolerance_m must be a finite non-negative number, got {tolerance_m!r}")
    index = index_of(scene)
    if room_id is not None:
        scene.room(room_id)
    grown = {rid: index.memo(("grown", rid, tolerance_m), lambda rid=rid: _open_floor(scene, index, rid, tolerance_m))
             for rid in index.rooms}
    ceilings = index.memo("ceilings", lambda: _ceilings(scene, index))
    shares = _outside_shares(index, grown)
    out = []
    for k, object_id in enumerate(index.object_ids):
        rid = index.object_rooms[k]
        if room_id is not None and rid != room_id:
            continue
        room = index.rooms.get(rid)
        if room is None:
            out.append(OutOfBounds(object_id, rid, 1.0, ("no room",)))
            continue
        reasons: list[str] = []
        others: tuple[str, ...] = ()
        if shares[k] > _MIN_OUTSIDE_SHARE:
            reasons.append("outside floor")
            others = _rooms_entered(index, k, room, grown[rid])
        vertical_m = 0.0
        if vertical:
            below = room.floor_y - float(index.bottoms[k])
            ceiling = ceilings.get(rid)
            above = float(index.tops[k]) - ceiling if ceiling is not None else 0.0
            if below > tolerance_m:
                reasons.append("below floor")
                vertical_m = below
            if above > tolerance_m:
                reasons.append("above ceiling")
                vertical_m = max(vertical_m, above)
        if reasons:
            out.append(OutOfBounds(object_id, rid, float(shares[k]), tuple(reasons), others, vertical_m))
    return out


def _open_floor(scene: Scene, index: SceneIndex, room_id: str, tolerance_m: float) -> Polygon:
    """The room's floor, with every room of its open space (see :func:`open_space`), grown
    by ``tolerance_m`` metres."""
    rooms = open_space(scene, index, room_id)
    floor = index.rooms[room_id].polygon if len(rooms) == 1 else shapely.union_all(
        [index.rooms[r].polygon.buffer(1e-6, join_style=2) for r in rooms])
    grown: Polygon = floor.buffer(tolerance_m, join_style=2)
    return grown


def _outside_shares(index: SceneIndex, grown: dict[str, Polygon]) -> np.ndarray:
    """Share of every footprint outside its (grown) room; 0 for objects with no room."""
    n = len(index.object_ids)
    shares = np.zeros(n)
    rooms = np.array([grown.get(r) for r in index.object_rooms], dtype=object)
    known = np.array([g is not None for g in rooms], dtype=bool)
    if not known.any():
        return shares
    fps = index.footprints
    inside = np.zeros(n, dtype=bool)
    inside[known] = shapely.contains(rooms[known], fps[known])
    todo = np.flatnonzero(known & ~inside)
    if not len(todo):
        return shares
    areas = shapely.area(fps[todo])
    solid = areas > 1e-12
    kept = shapely.area(shapely.intersection(fps[todo], rooms[todo]))
    shares[todo[solid]] = 1.0 - kept[solid] / areas[solid]
    # Flat footprints (a zero-depth painting) are measured by length instead.
    flat = todo[~solid]
    if len(flat):
        lengths = shapely.length(fps[flat])
        inner = shapely.length(shapely.intersection(fps[flat], rooms[flat]))
        shares[flat] = np.where(lengths > 0, 1.0 - inner / np.where(lengths > 0, lengths, 1.0),
                                (~shapely.covers(rooms[flat], fps[flat])).astype(float))
    return np.clip(shares, 0.0, 1.0)


def _rooms_entered(index: SceneIndex, k: int, room: RoomGeometry, grown: Polygon) -> tuple[str, ...]:
    outside = shapely.difference(index.footprints[k], grown)
    return tuple(
        rid for rid, g in index.rooms.items()
        if rid != room.id and shapely.intersection(outside, g.polygon).area > 1e-6
    )


def _ceilings(scene: Scene, index: SceneIndex) -> dict[str, float]:
    out = {}
    for rid, g in index.rooms.items():
        if g.ceiling_y is not None:
            out[rid] = g.ceiling_y
            continue
        heights = [w.bottom_y + w.height_m for w in scene.walls_of(rid)]
        if heights:
            out[rid] = max(heights)
    return out


def blocked_openings(
    scene: Scene, *, clearance_m: float = DOOR_CLEARANCE_M, windows: bool = False, room_id: str | None = None,
) -> list[Blocking]:
    """Objects standing in the free zone in front of a door (and, with ``windows``, a
    window): the rectangle as wide as the hole reaching ``clearance_m`` metres into each
    room it opens onto. An object blocks when its footprint covers more than 1 cm² of the
    zone and its height range meets the hole's (a rug, or a painting hung above a door,
    does not block).
    """
    if not np.isfinite(clearance_m) or clearance_m <= 0:
        raise ValueError(f"blocked_openings: clearance_m must be a positive number of metres, got {clearance_m!r}")
    index = index_of(scene)
    openings = list(scene.doors) + (list(scene.windows) if windows else [])
    out = []
    for opening in openings:
        element = index.element(scene, opening.id)
        if element.front_xz is None:
            continue
        (x0, z0), (x1, z1) = element.shape.coords
        for sign in (1.0, -1.0):
            nx, nz = element.front_xz[0] * sign * clearance_m, element.front_xz[1] * sign * clearance_m
            zone = Polygon([(x0, z0), (x1, z1), (x1 + nx, z1 + nz), (x0 + nx, z0 + nz)])
            zone_room = _room_at(index, (x0 + x1) / 2 + nx / 2, (z0 + z1) / 2 + nz / 2)
            if zone_room is None or (room_id is not None and zone_room != room_id):
                continue
            overlap = shapely.area(shapely.intersection(index.footprints, zone)) if len(index.footprints) else []
            for k in np.flatnonzero(np.asarray(overlap) > 1e-4):
                height = index.tops[k] - index.bottoms[k]
                meets = index.bottoms[k] < element.top_y and index.tops[k] > element.bottom_y
                if height > FLOOR_COVERING_MAX_M and meets:
                    out.append(Blocking(opening.id, index.object_ids[k], zone_room, float(overlap[k])))
    return out


def _room_at(index: SceneIndex, x: float, z: float) -> str | None:
    point = shapely.Point(x, z)
    for rid, g in index.rooms.items():
        if g.polygon.covers(point):
            return rid
    return None
