"""Navigability and clearance of a room: can one walk in, reach the furniture, open the doors
and get to the windows?

Built on :func:`buildbench.scenes.reachability.reachable` (the occupancy grid, the walker
disc, the door passages), this adds what neither SceneReVis nor LEGO-Eval reports:

* **Free floor connected to the entrances**: the share of the room's free floor cells (those
  a walker's centre can occupy) joined to the far side of at least one door or open wall,
  and the same per entrance. A room without entrances (a single SceneReVis room) counts the
  share in its largest free area, so a sofa cutting the room in two halves it.
* **Reachable share**: of the objects that should be reachable, the share that is. Those are
  the floor obstacles of :mod:`.reachability` (standing on the floor, taller than a rug, not
  on a receptacle): wall-hung and ceiling objects and small objects on receptacles are left
  out (they are reached through their receptacle or not at all). None when the room has none.
* **Door swings**: a door's leaf turns about a hinge at one jamb and sweeps a quarter circle
  whose radius is the leaf's width. House files give no opening direction or hinge side
  (AI2-THOR's door records carry ``openness``, a fraction, and no swing), so: the leaf is
  assumed to swing into the room being judged (both rooms of a door judge it, each on its
  own side); a single leaf spans the hole, a double door (``double`` in the asset id) has two
  leaves of half the width hinged at both jambs, a door frame (``doorframe`` in the asset id)
  has no leaf; with one leaf the hinge may be at either jamb, and the swing is blocked only
  when it is blocked at both (the report names the objects of the less blocked side). An
  object intrudes when it stands on the floor below the top of the hole, is taller than a rug
  (:data:`~.collision.FLOOR_COVERING_MAX_M`; a leaf clears a rug), is not on a receptacle,
  and its footprint covers more than :data:`MIN_INTRUSION_M2` of the arc.
* **Window clearance**: a zone as wide as the window and :data:`WINDOW_CLEARANCE_M` deep in
  front of it is kept free of tall furniture: anything (not on a receptacle) that rises above
  the sill by more than :data:`WINDOW_COVER_SHARE` of the window's height, so a wardrobe or a
  bookcase blocks it and a dresser or a desk under it does not. The depth is the 30 in (760 mm) side of the clear floor
  space that the 2010 ADA Standards for Accessible Design ask before an operable part
  (§305.3, a 30 × 48 in space; §229.1 applies §309 to windows meant to be opened by
  occupants), with the window's width along the wall in place of the 48 in.

The walker is :data:`~.reachability.CLEARANCE_M` in radius (a 0.5 m passage: a person
walking, not a wheelchair; the ADA asks 36 in, 915 mm, of clear width on an accessible route,
§403.5.1, which a caller can ask for with ``clearance_m=0.46``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import shapely
from shapely.geometry import Polygon

from buildbench.scenes.collision import FLOOR_COVERING_MAX_M
from buildbench.scenes.model import Scene
from buildbench.scenes.reachability import CELL_M, CLEARANCE_M, Reachability, reachable
from buildbench.scenes.relations.index import SceneIndex, index_of

#: Depth of the clear zone in front of a window, metres (ADA §305.3's 30 in).
WINDOW_CLEARANCE_M = 0.76
#: Share of a window's height an object may cover above the sill before it blocks the window
#: (our choice: a low sideboard under a window is ordinary furnishing, a cupboard is not).
WINDOW_COVER_SHARE = 0.25
#: Smallest footprint area inside a swing arc or window zone that counts, m² (touching is not
#: blocking: a 5 × 5 cm corner).
MIN_INTRUSION_M2 = 0.0025
#: Points on a swing arc's curve.
_ARC_POINTS = 24


@dataclass(frozen=True)
class Navigability:
    """How walkable one room is (see the module docstring).

    Attributes:
        reach: The underlying :class:`~.reachability.Reachability`.
        connected_share: Share of the room's free floor joined to an entrance (largest free
            area without entrances), 0–1.
        entrance_shares: The same share for each door and open wall.
        reachable_share: Share of the objects that should be reachable that are, or None.
        blocked_swings: Door → objects in its leaf's swing (only doors whose swing is blocked).
        blocked_windows: Window → objects in its clear zone taller than its sill.
        explanation: One line per finding.
    """

    room_id: str
    reach: Reachability
    connected_share: float
    entrance_shares: dict[str, float]
    reachable_share: float | None
    blocked_swings: dict[str, tuple[str, ...]]
    blocked_windows: dict[str, tuple[str, ...]]
    explanation: str

    @property
    def blocked_doors(self) -> tuple[str, ...]:
        """Doors a walker cannot pass into the room's main free area."""
        return self.reach.unreachable_doors

    @property
    def ok(self) -> bool:
        return self.reach.ok and not self.blocked_swings and not self.blocked_windows

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record."""
        return {
            "room": self.room_id, "connected_share": self.connected_share,
            "entrance_shares": dict(self.entrance_shares), "reachable_share": self.reachable_share,
            "unreachable_objects": list(self.reach.unreachable_objects),
            "blocked_doors": list(self.blocked_doors), "blocked_open_walls": list(self.reach.unreachable_open_walls),
            "blocked_swings": {k: list(v) for k, v in self.blocked_swings.items()},
            "blocked_windows": {k: list(v) for k, v in self.blocked_windows.items()},
            "clearance_m": self.reach.clearance_m, "explanation": self.explanation,
        }


def navigability(scene: Scene, room_id: str, *, clearance_m: float = CLEARANCE_M, cell_m: float = CELL_M,
                 window_clearance_m: float = WINDOW_CLEARANCE_M) -> Navigability:
    """Navigability of ``room_id`` (see the module docstring); errors as :func:`reachable`'s."""
    if not math.isfinite(window_clearance_m) or window_clearance_m < 0:
        raise ValueError(f"navigability: window_clearance_m must be a finite non-negative number of metres, "
                         f"got {window_clearance_m!r}")
    reach = reachable(scene, room_id, clearance_m=clearance_m, cell_m=cell_m)
    index = index_of(scene)
    floor_y = index.rooms[room_id].floor_y
    should = len(reach.reachable_objects) + len(reach.unreachable_objects)
    share = len(reach.reachable_objects) / should if should else None
    swings: dict[str, tuple[str, ...]] = {}
    for door in scene.doors:
        if room_id in (door.room0, door.room1):
            blockers = door_swing_blockers(scene, index, door.id, room_id, floor_y)
            if blockers:
                swings[door.id] = blockers
    windows: dict[str, tuple[str, ...]] = {}
    for window in scene.windows:
        if room_id in (window.room0, window.room1):
            found = _window_blockers(scene, index, window.id, room_id, floor_y, window_clearance_m)
            if found:
                windows[window.id] = found
    lines = [reach.explanation]
    lines += [f"the swing of {d} into {room_id} is blocked by {', '.join(o)}" for d, o in swings.items()]
    lines += [f"{w} is blocked by {', '.join(o)} (covering over {WINDOW_COVER_SHARE:.0%} of it within "
              f"{window_clearance_m:.2f} m)" for w, o in windows.items()]
    return Navigability(room_id, reach, reach.connected_share, dict(reach.entrance_free_share), share, swings,
                        windows, "; ".join(lines))


def scene_navigability(scene: Scene, **options: Any) -> dict[str, Any]:
    """Every room's :meth:`Navigability.to_dict` and the totals: the mean connected share, the
    reachable share over all rooms' objects, the counts of blocked doors, swings and windows."""
    rooms = [navigability(scene, r.id, **options) for r in scene.rooms]
    should = sum(len(n.reach.reachable_objects) + len(n.reach.unreachable_objects) for n in rooms)
    got = sum(len(n.reach.reachable_objects) for n in rooms)
    return {
        "rooms": [n.to_dict() for n in rooms],
        "connected_share": sum(n.connected_share for n in rooms) / len(rooms) if rooms else None,
        "reachable_share": got / should if should else None,
        "blocked_doors": len({d for n in rooms for d in n.blocked_doors}),
        "blocked_swings": sum(len(n.blocked_swings) for n in rooms),
        "blocked_windows": len({w for n in rooms for w in n.blocked_windows}),
    }


def door_swing_blockers(scene: Scene, index: SceneIndex, door_id: str, room_id: str,
                        floor_y: float) -> tuple[str, ...]:
    """Objects in the swing of ``door_id``'s leaf into ``room_id`` (empty: it opens freely)."""
    door = scene.door(door_id)
    element = index.element(scene, door_id)
    inward = _inward(index, element.shape, element.front_xz, room_id)
    asset = door.asset_id.lower()
    if inward is None or "doorframe" in asset:
        return ()
    (ax, az), (bx, bz) = element.shape.coords
    a, b = (float(ax), float(az)), (float(bx), float(bz))
    width = math.dist(a, b)
    if width <= 0:
        return ()
    top = element.top_y
    if "double" in asset:
        arcs = [_arc(a, b, width / 2, inward), _arc(b, a, width / 2, inward)]
        return _intruders(index, shapely.union_all(arcs), room_id, floor_y, top)
    sides = [_intruders(index, _arc(hinge, other, width, inward), room_id, floor_y, top)
             for hinge, other in ((a, b), (b, a))]
    return min(sides, key=len) if all(sides) else ()


def _window_blockers(scene: Scene, index: SceneIndex, window_id: str, room_id: str, floor_y: float,
                     depth_m: float) -> tuple[str, ...]:
    element = index.element(scene, window_id)
    inward = _inward(index, element.shape, element.front_xz, room_id)
    if inward is None or depth_m <= 0:
        return ()
    (ax, az), (bx, bz) = element.shape.coords
    nx, nz = inward[0] * depth_m, inward[1] * depth_m
    zone = Polygon([(ax, az), (bx, bz), (bx + nx, bz + nz), (ax + nx, az + nz)])
    tall = element.bottom_y + WINDOW_COVER_SHARE * (element.top_y - element.bottom_y)
    return tuple(
        index.object_ids[k] for k in _candidates(index, zone, room_id)
        if index.tops[k] > tall and index.bottoms[k] < element.top_y
    )


def _inward(index: SceneIndex, line: Any, front: tuple[float, float] | None,
            room_id: str) -> tuple[float, float] | None:
    """The wall normal pointing into ``room_id`` at an opening (None when unknown)."""
    if front is None:
        return None
    mid = line.interpolate(0.5, normalized=True)
    room = index.rooms[room_id].polygon
    for sign in (1.0, -1.0):
        if room.covers(shapely.Point(mid.x + sign * front[0] * 0.05, mid.y + sign * front[1] * 0.05)):
            return (sign * front[0], sign * front[1])
    return None


def _arc(hinge: tuple[float, float], latch: tuple[float, float], radius: float,
         inward: tuple[float, float]) -> Polygon:
    """The quarter disc a leaf hinged at ``hinge`` sweeps from the wall (pointing at ``latch``)
    to square with the wall, into the room."""
    ux, uz = (latch[0] - hinge[0]), (latch[1] - hinge[1])
    n = math.hypot(ux, uz)
    ux, uz = ux / n, uz / n
    points = [hinge]
    for i in range(_ARC_POINTS + 1):
        t = math.pi / 2 * i / _ARC_POINTS
        c, s = math.cos(t) * radius, math.sin(t) * radius
        points.append((hinge[0] + c * ux + s * inward[0], hinge[1] + c * uz + s * inward[1]))
    return Polygon(points)


def _intruders(index: SceneIndex, zone: Any, room_id: str, floor_y: float, top_y: float) -> tuple[str, ...]:
    return tuple(
        index.object_ids[k] for k in _candidates(index, zone, room_id)
        if index.bottoms[k] < top_y and index.tops[k] - floor_y > FLOOR_COVERING_MAX_M
    )


def _candidates(index: SceneIndex, zone: Any, room_id: str) -> list[int]:
    """Objects of the room, not on a receptacle, whose footprint covers more than
    :data:`MIN_INTRUSION_M2` of ``zone``."""
    return [
        k for k in range(len(index.object_ids))
        if index.object_rooms[k] == room_id and index.parents[k] is None
        and float(shapely.intersection(index.footprints[k], zone).area) > MIN_INTRUSION_M2
    ]
