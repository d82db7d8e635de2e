"""Relations to a room's shell (walls, corners, middle) and between rooms; counts and areas.

A room's *sides* are the straight runs of its floor polygon (collinear vertices merged),
named like Holodeck's walls (north = the side at max z…). A wall argument may be a wall
id, a cardinal name (``"north"``: every side of the room with that name) or None (every
side). Works for any simple polygon, including L-shaped rooms, whose reflex (inner) corner
is not a corner one can stand in.

Empty (invisible) walls, the open boundaries of an open floor plan, bound a room's floor
but are no surface: :func:`against_wall`, :func:`in_corner` and :func:`on_wall` measure
to the *solid* part of each side only (the side less its empty walls), so nothing stands
against, sits in a corner formed by, or hangs on an open boundary. :func:`in_middle` and
:func:`in_room` use the floor polygon, which an empty wall still bounds (the living area
of an open plan is still its own room). :func:`adjacent_rooms` counts an empty wall
between the two rooms as an opening joining them, like a door.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import shapely
from shapely.geometry import LineString, Point
from shapely.geometry.base import BaseGeometry
from shapely.ops import polylabel

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import (
    Element,
    RelationError,
    RoomGeometry,
    RoomSide,
    SceneIndex,
    index_of,
)
from buildbench.scenes.relations.open_plan import open_walls_between
from buildbench.scenes.relations.verdict import Verdict, degrees, metres, resolve, threshold

#: ``against_wall``: the largest gap, metres, between the footprint and the wall segment.
AGAINST_WALL_M = 0.15
#: ``against_wall``: the largest angle, degrees, between the object's front and the wall's
#: normal into the room (its back turned to the wall).
AGAINST_WALL_ANGLE_DEG = 30.0
#: ``in_corner``: the largest gap, metres, from the footprint to *each* of the two sides
#: meeting at a convex corner of the room (interior angle below 170°).
IN_CORNER_M = 0.5
#: ``in_middle``: the largest *radial position* of the object's centre (0 at the room's
#: centre, 1 on the wall along the ray from it; see :func:`in_middle`).
IN_MIDDLE_MAX_RADIAL = 0.5
#: ``in_room``: the smallest share of the footprint area inside the room's floor.
IN_ROOM_MIN_SHARE = 0.5
#: ``on_wall``: the largest gap, metres, between an opening's hole or an object's footprint
#: and the wall.
ON_WALL_M = 0.05
#: ``adjacent_rooms``: the shortest shared boundary, metres, for two rooms to be adjacent.
ADJACENT_MIN_SHARED_M = 0.5
# Boundaries closer than this, metres, count as shared (files round coordinates).
_SHARED_TOL_M = 0.05
_DIRECTIONS = ("north", "south", "east", "west")
_COMPARISONS = {"==": lambda x, y: x == y, ">=": lambda x, y: x >= y, "<=": lambda x, y: x <= y,
                ">": lambda x, y: x > y, "<": lambda x, y: x < y, "!=": lambda x, y: x != y}


def _room_of(index: SceneIndex, scene: Scene, relation: str, element: Element, room: str | None) -> RoomGeometry:
    room_id = room if room is not None else element.room_id
    if room is not None:
        resolve(scene, relation, {"room": room}, {"room": ("room",)})
    if room_id not in index.rooms:
        raise RelationError(f"{relation}: {element.id!r} is in no known room; name one with room=")
    return index.rooms[room_id]


@dataclass(frozen=True)
class _WallTarget:
    """A wall a relation measures to: ``solid`` is where a wall stands (empty geometry for
    an empty wall or a wholly open side), ``line`` the whole segment, ``inward`` its unit
    normal into the room."""

    label: str
    solid: BaseGeometry
    line: LineString
    inward: tuple[float, float]

    @property
    def is_open(self) -> bool:
        return bool(self.solid.is_empty)


def _wall_targets(
    index: SceneIndex, scene: Scene, relation: str, element: Element, room: str | None, wall: str | None
) -> list[_WallTarget]:
    """Every wall the argument names: a wall id, or the sides of ``room`` (default: the
    element's room) of a cardinal name (any if None)."""
    if wall is not None and wall.lower() not in _DIRECTIONS:
        target = index.element(scene, wall)
        if target.kind != "wall" or target.front_xz is None:
            raise RelationError(f"{relation}: wall {wall!r} is a {target.kind}, not a wall")
        solid = LineString() if scene.wall(wall).empty else target.shape
        return [_WallTarget(target.id, solid, target.shape, target.front_xz)]
    geom = _room_of(index, scene, relation, element, room)
    sides = [s for s in geom.sides if wall is None or s.direction == wall.lower()]
    if not sides:
        raise RelationError(f"{relation}: room {geom.id!r} has no {wall} wall")
    return [_WallTarget(_side_label(geom, s), s.solid_part, s.line, s.inward_xz) for s in sides]


def _side_label(geom: RoomGeometry, side: RoomSide) -> str:
    if side.solid_part.is_empty:
        return " / ".join(side.wall_ids) or f"the {side.direction} side of {geom.id}"
    return " / ".join(side.solid_wall_ids) or f"the {side.direction} wall of {geom.id}"


def _open_verdict(preposition: str, element: Element, targets: list[_WallTarget], limits: dict[str, float]) -> Verdict:
    """The answer when every wall named is an empty (invisible) wall. Value: the gap,
    metres, to the nearest of those open boundaries."""
    labels = " / ".join(t.label for t in targets)
    gap = min(float(shapely.distance(element.shape, t.line)) for t in targets)
    return Verdict(False, gap, f"{element.id} is {metres(gap)} from {labels}, an empty (invisible) wall, the open "
                   f"boundary to the next room: not {preposition} it (there is no wall)",
                   {"gap_m": gap, "wall": labels, "open": True, **limits})


def against_wall(scene: Scene, a: str, wall: str | None = None, *, max_gap_m: float = AGAINST_WALL_M,
                 max_angle_deg: float = AGAINST_WALL_ANGLE_DEG, back_to_wall: bool = True) -> Verdict:
    """a stands against a wall: its footprint is within ``max_gap_m`` metres of the wall
    segment, its centre on the room side of it, and (with ``back_to_wall``) its front is
    within ``max_angle_deg`` of the wall's normal into the room, i.e. its back is to the
    wall. ``wall``: a wall id, ``"north"``/``"south"``/``"east"``/``"west"`` (sides of a's
    room) or None (any wall of a's room). Gaps are measured to the solid part of each side:
    an empty (invisible) wall of an open floor plan is nothing to stand against, so it
    never holds there (naming an empty wall, or a side that is wholly open, gives False).

    Value: the gap to the best-fitting wall, metres.
    """
    gap_limit = threshold("against_wall", "max_gap_m", max_gap_m)
    angle_limit = threshold("against_wall", "max_angle_deg", max_angle_deg)
    index, (ea,) = resolve(scene, "against_wall", {"a": a}, {"a": ("object",)})
    assert ea.front_xz is not None
    fits = []
    targets = _wall_targets(index, scene, "against_wall", ea, None, wall)
    limits = {"max_gap_m": gap_limit, "max_angle_deg": angle_limit}
    if all(t.is_open for t in targets):
        return _open_verdict("against", ea, targets, limits)
    for target in (t for t in targets if not t.is_open):
        label, (nx, nz) = target.label, target.inward
        gap = float(shapely.distance(ea.shape, target.solid))
        sx, sz = target.line.coords[0]
        room_side = (ea.center_xz[0] - sx) * nx + (ea.center_xz[1] - sz) * nz > 0
        cos = max(-1.0, min(1.0, ea.front_xz[0] * nx + ea.front_xz[1] * nz))
        angle = math.degrees(math.acos(cos))
        ok = gap <= gap_limit and room_side and (not back_to_wall or angle <= angle_limit + 1e-9)
        fits.append((not ok, gap, angle, label, room_side))
    failed, gap, angle, label, room_side = min(fits)
    if not failed:
        why = "against it" + (f" (back to the wall, {degrees(angle)})" if back_to_wall else "")
    elif gap > gap_limit:
        why = f"not against it (> {metres(gap_limit)})"
    elif not room_side:
        why = "not against it (on the other side of the wall)"
    else:
        why = f"not against it (faces {degrees(angle)} off the wall's normal > {degrees(angle_limit)})"
    return Verdict(
        not failed,
        gap,
        f"{a} is {metres(gap)} from {label}: {why}",
        {"gap_m": gap, "angle_deg": angle, "wall": label, "max_gap_m": gap_limit, "max_angle_deg": angle_limit},
    )


def in_corner(scene: Scene, a: str, room: str | None = None, *, max_m: float = IN_CORNER_M) -> Verdict:
    """a is in a corner of its room (or of ``room``): for some convex corner of the floor
    polygon, a's footprint is within ``max_m`` metres of both sides meeting there (two
    non-parallel walls). Gaps are measured to the solid part of each side: a corner one of
    whose sides is an empty (invisible) wall of an open floor plan is open on that side and
    is no corner to stand in; when every corner is so, the relation is False.

    Value: for the best corner, the larger of the two gaps, metres (when every corner is
    open, the gap to the best corner's two sides as lines).
    """
    limit = threshold("in_corner", "max_m", max_m)
    index, (ea,) = resolve(scene, "in_corner", {"a": a}, {"a": ("object",)})
    geom = _room_of(index, scene, "in_corner", ea, room)
    if not geom.corners:
        raise RelationError(f"in_corner: room {geom.id!r} has no convex corner")
    candidates: list[tuple[bool, float, Any, str]] = []
    for point, before, after in geom.corners:
        sides = [geom.sides[k] for k in (before, after)]
        is_open = any(side.solid_part.is_empty for side in sides)
        parts = [side.line if is_open else side.solid_part for side in sides]
        gap = max(float(shapely.distance(ea.shape, part)) for part in parts)
        candidates.append((is_open, gap, point, _corner_name(sides[0].direction, sides[1].direction)))
    is_open, value, point, name = min(candidates, key=lambda c: c[:2])
    holds = value <= limit and not is_open
    if is_open:
        why = "not in a corner (every corner of the room has an empty wall, open to the next room)"
    elif holds:
        why = f"in the corner (<= {metres(limit)} from both walls)"
    else:
        why = f"not in a corner (> {metres(limit)})"
    open_near = [c[3] for c in candidates if c[0] and c[1] <= limit and c[3] != name]
    if open_near and not holds:
        why += f"; the {' and '.join(open_near)} corner is open (an empty wall), no corner to stand in"
    return Verdict(
        holds,
        value,
        f"{a} is {metres(value)} from the farther wall of the {name} corner of {geom.id}"
        f" at ({point[0]:.2f}, {point[1]:.2f}): {why}",
        {"gap_m": value, "corner_xz": list(point), "corner": name, "room": geom.id, "max_m": limit, "open": is_open},
    )


def _corner_name(d1: str, d2: str) -> str:
    if d1 == d2:
        return d1
    ns = [d for d in (d1, d2) if d in ("north", "south")]
    ew = [d for d in (d1, d2) if d in ("east", "west")]
    return f"{ns[0]}-{ew[0]}" if ns and ew else f"{d1}-{d2}"


def room_centre(index: SceneIndex, room: RoomGeometry) -> Point:
    """The room's centre: its area centroid, or its pole of inaccessibility (the interior
    point farthest from the walls) when the centroid falls outside the floor (a thin U)."""

    def make() -> Point:
        c = room.polygon.centroid
        return c if room.polygon.contains(c) else polylabel(room.polygon, tolerance=0.01)

    return index.memo(("centre", room.id), make)


def radial_position(index: SceneIndex, room: RoomGeometry, x: float, z: float) -> float:
    """0 at the room's centre (:func:`room_centre`), 1 where the ray from the centre through
    ``(x, z)`` first meets the wall; above 1 beyond that wall."""
    pole = room_centre(index, room)
    dx, dz = x - pole.x, z - pole.y
    r = math.hypot(dx, dz)
    if r < 1e-12:
        return 0.0
    reach = 2.0 * math.hypot(*(room.polygon.bounds[2] - room.polygon.bounds[0],
                               room.polygon.bounds[3] - room.polygon.bounds[1]))
    ray = LineString([(pole.x, pole.y), (pole.x + dx / r * reach, pole.y + dz / r * reach)])
    hits = shapely.get_coordinates(ray.intersection(room.polygon.exterior))
    if not len(hits):
        return math.inf
    wall_at = float(min(math.hypot(hx - pole.x, hz - pole.y) for hx, hz in hits))
    return r / wall_at if wall_at > 0 else math.inf


def in_middle(scene: Scene, a: str, room: str | None = None, *,
              max_radial: float = IN_MIDDLE_MAX_RADIAL) -> Verdict:
    """a is in the middle of its room (or of ``room``): the radial position of a's centre
    is at most ``max_radial``. The radial position is a's distance from the room's centre
    (its area centroid, or the interior point farthest from the walls when the centroid is
    outside the floor) divided by the distance from the centre to the wall along the same
    ray: with 0.5, the middle of a rectangular room is the centred rectangle of half its
    width and half its depth, and an L-shaped room's middle is the L shrunk by half about
    its centroid.

    Value: the radial position (dimensionless).
    """
    limit = threshold("in_middle", "max_radial", max_radial)
    index, (ea,) = resolve(scene, "in_middle", {"a": a}, {"a": ("object",)})
    geom = _room_of(index, scene, "in_middle", ea, room)
    radial = radial_position(index, geom, *ea.center_xz)
    holds = radial <= limit
    why = f"in the middle (<= {limit:.2f})" if holds else f"not in the middle (> {limit:.2f})"
    return Verdict(
        holds,
        radial,
        f"{a} is at radial position {radial:.2f} of {geom.id} (0 = centre, 1 = wall): {why}",
        {"radial": radial, "room": geom.id, "max_radial": limit},
    )


def in_room(scene: Scene, a: str, room: str, *, min_share: float = IN_ROOM_MIN_SHARE) -> Verdict:
    """a is in ``room``: at least ``min_share`` of a's footprint area lies on its floor
    (for a flat footprint, its centre does).

    Value: the share inside, 0-1.
    """
    limit = threshold("in_room", "min_share", min_share)
    index, (ea, er) = resolve(scene, "in_room", {"a": a, "room": room}, {"a": ("object",), "room": ("room",)})
    area = ea.shape.area
    if area > 1e-12:
        share = float(shapely.intersection(ea.shape, er.shape).area / area)
    else:
        share = 1.0 if er.shape.covers(Point(ea.center_xz)) else 0.0
    holds = share >= limit
    return Verdict(
        holds,
        share,
        f"{share:.0%} of {a}'s footprint is in {room}: {'in' if holds else 'not in'} it (>= {limit:.0%})",
        {"share": share, "min_share": limit, "room_id_field": index.object_rooms[index.object_pos[a]]},
    )


def on_wall(scene: Scene, a: str, wall: str, room: str | None = None, *, max_gap_m: float = ON_WALL_M) -> Verdict:
    """a (a door, window or object) is on ``wall``: a wall id, or a cardinal name of a side
    of ``room`` (default: the door's or window's first room, the object's room); the hole
    segment or footprint is within ``max_gap_m`` metres of the wall. Measured to the solid
    part of each side, as nothing hangs on an empty (invisible) wall of an open floor plan
    (naming one, or a wholly open side, gives False).

    Value: that gap, metres.
    """
    limit = threshold("on_wall", "max_gap_m", max_gap_m)
    index, (ea,) = resolve(scene, "on_wall", {"a": a}, {"a": ("door", "window", "object")})
    targets = _wall_targets(index, scene, "on_wall", ea, room, wall)
    if all(t.is_open for t in targets):
        return _open_verdict("on", ea, targets, {"max_gap_m": limit})
    fits = sorted((float(shapely.distance(ea.shape, t.solid)), t.label) for t in targets if not t.is_open)
    gap, label = fits[0]
    holds = gap <= limit
    return Verdict(
        holds,
        gap,
        f"{a} is {metres(gap)} from {label}: {'on' if holds else 'not on'} it (<= {metres(limit)})",
        {"gap_m": gap, "wall": label, "max_gap_m": limit},
    )


def connects(scene: Scene, opening: str, room_a: str, room_b: str | None = None) -> Verdict:
    """A door or window connects ``room_a`` with ``room_b`` (its ``room0``/``room1`` in any
    order; ``room_b`` may be ``"exterior"``); with ``room_b`` None, it opens from ``room_a``.

    Value: 1.0 when it holds, else 0.0.
    """
    _, (eo,) = resolve(scene, "connects", {"opening": opening}, {"opening": ("door", "window")})
    item = next(o for o in scene.openings() if o.id == opening)
    for r in (room_a, room_b):
        if r is not None and r != "exterior":
            resolve(scene, "connects", {"room": r}, {"room": ("room",)})
    rooms = {item.room0, item.room1}
    holds = room_a in rooms and (room_b is None or {room_a, room_b} == rooms or (room_a == room_b and len(rooms) == 1))
    between_words = f"{item.room0} and {item.room1}" if item.room0 != item.room1 else f"{item.room0} (to outside)"
    target = room_a if room_b is None else f"{room_a} with {room_b}"
    return Verdict(
        holds,
        float(holds),
        f"{opening} joins {between_words}: {'it connects' if holds else 'it does not connect'} {target}",
        {"rooms": [item.room0, item.room1], "kind": eo.kind},
    )


def adjacent_rooms(scene: Scene, room_a: str, room_b: str, *, min_shared_m: float = ADJACENT_MIN_SHARED_M,
                   require_door: bool = False) -> Verdict:
    """Two rooms are adjacent: their floor polygons share at least ``min_shared_m`` metres
    of boundary (within 5 cm); with ``require_door`` a door must also join them, or an
    empty (invisible) wall between them (an open floor plan: the rooms are one space).

    Value: the shared boundary length, metres.
    """
    limit = threshold("adjacent_rooms", "min_shared_m", min_shared_m)
    resolve(scene, "adjacent_rooms", {"a": room_a, "b": room_b}, {"a": ("room",), "b": ("room",)})
    index = index_of(scene)
    shared = shared_boundary_m(index.rooms[room_a], index.rooms[room_b])
    doors = [d.id for d in scene.doors if {d.room0, d.room1} == {room_a, room_b}]
    open_walls = open_walls_between(scene, index, room_a, room_b)
    holds = shared >= limit and (bool(doors) or bool(open_walls) or not require_door)
    why = "adjacent" if holds else "not adjacent"
    if shared >= limit and not holds:
        why += " (no door joins them)"
    door_words = f"; doors: {', '.join(doors)}" if doors else "; no door between them"
    if open_walls:
        door_words += f"; open to each other through empty walls {', '.join(open_walls)}"
    return Verdict(
        holds,
        shared,
        f"{room_a} and {room_b} share {metres(shared)} of wall (>= {metres(limit)} needed){door_words}: {why}",
        {"shared_m": shared, "doors": doors, "open_walls": open_walls, "min_shared_m": limit},
    )


def shared_boundary_m(a: RoomGeometry, b: RoomGeometry, tol_m: float = _SHARED_TOL_M) -> float:
    """Length, metres, of the boundary two rooms share: overlaps of parallel sides lying
    within ``tol_m`` of one another (summed; a wall split by a third room counts in parts)."""
    total = 0.0
    for sa in a.sides:
        ax, az = sa.start
        ux, uz = sa.end[0] - ax, sa.end[1] - az
        length = math.hypot(ux, uz)
        ux, uz = ux / length, uz / length
        for sb in b.sides:
            # both endpoints of b's side must lie on a's line (parallel and within tol)
            offsets = [abs((px - ax) * uz - (pz - az) * ux) for px, pz in (sb.start, sb.end)]
            if max(offsets) > tol_m:
                continue
            t0, t1 = sorted((px - ax) * ux + (pz - az) * uz for px, pz in (sb.start, sb.end))
            total += max(0.0, min(t1, length) - max(t0, 0.0))
    return total


def larger_room(scene: Scene, room_a: str, room_b: str, *, margin_m2: float = 0.0) -> Verdict:
    """``room_a`` is larger than ``room_b``: its floor area exceeds b's by more than
    ``margin_m2`` square metres.

    Value: the area difference a - b, m².
    """
    margin = threshold("larger_room", "margin_m2", margin_m2)
    _, (ra, rb) = resolve(scene, "larger_room", {"a": room_a, "b": room_b}, {"a": ("room",), "b": ("room",)})
    area_a, area_b = float(ra.shape.area), float(rb.shape.area)
    holds = area_a - area_b > margin
    return Verdict(
        holds,
        area_a - area_b,
        f"{room_a} is {area_a:.2f} m² and {room_b} is {area_b:.2f} m²: {room_a} is "
        f"{'larger' if holds else 'not larger'}" + (f" (margin {margin:.2f} m²)" if margin else ""),
        {"area_a_m2": area_a, "area_b_m2": area_b, "margin_m2": margin},
    )


def room_area(scene: Scene, room: str, *, min_m2: float | None = None, max_m2: float | None = None) -> Verdict:
    """The floor area of ``room`` lies within ``[min_m2, max_m2]`` (either bound optional).

    Value: the area, m².
    """
    _, (er,) = resolve(scene, "room_area", {"room": room}, {"room": ("room",)})
    lo = None if min_m2 is None else threshold("room_area", "min_m2", min_m2)
    hi = None if max_m2 is None else threshold("room_area", "max_m2", max_m2)
    area = float(er.shape.area)
    holds = (lo is None or area >= lo) and (hi is None or area <= hi)
    bounds = f"[{'-' if lo is None else f'{lo:.2f}'}, {'-' if hi is None else f'{hi:.2f}'}] m²"
    return Verdict(holds, area, f"{room} has {area:.2f} m² of floor: {'within' if holds else 'outside'} {bounds}",
                   {"area_m2": area, "min_m2": lo, "max_m2": hi})


def _same_category(category: str, wanted: str) -> bool:
    def norm(s: str) -> str:
        return " ".join(s.lower().replace("_", " ").replace("-", " ").split())

    c, w = norm(category), norm(wanted)
    plurals = {c, c + "s", c + "es"}
    if c.endswith("y"):
        plurals.add(c[:-1] + "ies")
    if c.endswith("f") or c.endswith("fe"):
        plurals.add(c.rsplit("f", 1)[0] + "ves")
    return w in plurals


def _attribute_matches(value: Any, wanted: Any) -> bool:
    if isinstance(value, list | tuple | set):
        return any(_attribute_matches(v, wanted) for v in value)
    if isinstance(value, str) and isinstance(wanted, str):
        return value.strip().lower() == wanted.strip().lower()
    return bool(value == wanted)


def count(scene: Scene, category: str, room: str | None = None, *, attributes: dict[str, Any] | None = None,
          expected: int | None = None, op: str = "==") -> Verdict:
    """How many objects of ``category`` (case, ``_``/``-`` and the plurals ``s``, ``es``,
    ``y -> ies`` and ``f(e) -> ves`` ignored) are in ``room`` (their room, or all rooms when None), optionally only those
    whose ``attributes`` all match (strings case-insensitively; a list attribute matches
    if any member does). Holds when ``count op expected`` (``==``, ``!=``, ``>=``, ``<=``,
    ``>``, ``<``); with ``expected`` None, when there is at least one.

    Value: the count.
    """
    if op not in _COMPARISONS:
        raise RelationError(f"count: op must be one of {', '.join(_COMPARISONS)}, got {op!r}")
    index = index_of(scene)
    if room is not None:
        resolve(scene, "count", {"room": room}, {"room": ("room",)})
    wanted = attributes or {}
    ids = [
        o.id for i, o in enumerate(scene.objects)
        if _same_category(o.category, category)
        and (room is None or index.object_rooms[i] == room)
        and all(k in o.attributes and _attribute_matches(o.attributes[k], v) for k, v in wanted.items())
    ]
    n = len(ids)
    holds = n >= 1 if expected is None else _COMPARISONS[op](n, int(expected))
    what = category + "".join(f" {k}={v}" for k, v in wanted.items())
    where = f" in {room}" if room else ""
    goal = "at least 1" if expected is None else f"{op} {expected}"
    listed = f" ({', '.join(ids[:10])}{' …' if n > 10 else ''})" if ids else ""
    return Verdict(holds, float(n), f"{n} {what}{where}{listed}: {'meets' if holds else 'fails'} {goal}",
                   {"count": n, "ids": ids, "expected": expected, "op": op})
