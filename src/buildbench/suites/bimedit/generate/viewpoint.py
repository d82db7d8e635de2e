"""Egocentric descriptions: the element straight ahead, on the left, on the right or behind an
observer who stands in a room.

The observer stands at the room's centre, facing an axis or one of its doors, or in one of its
doors, facing into the room; the target is the element of the room (or storey) on one side.
Conventions, all in plan (x, y; z ignored): with facing direction f and the vector v from
the observer to the element, ``dot = f·v`` is positive ahead and ``cross = f_x v_y - f_y v_x``
is positive on the left (x to the right of y, as seen from above); the side is the one
whose sign dominates, i.e. the 90-degree sector around ahead/left/behind/right that holds
v. A wall's point is the point of its plan axis nearest the observer (the part of it you
see), any other element's point is its centre.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from buildbench.suites.bimedit.generate.facts import AXES, Description, DescriptionIndex, ElementFacts

#: Viewpoint sides: the direction of each sector's centre, degrees anticlockwise from facing.
SIDES = {"ahead": 0.0, "left": 90.0, "behind": 180.0, "right": -90.0}
#: A viewpoint query counts elements up to this far (degrees) outside a side's 90-degree sector
#: as candidates, and a description is only offered for a target this far inside it, so an
#: element near the diagonal never decides uniqueness one way or the other.
SECTOR_SLACK_DEG = 15.0
#: Elements closer than this to the observer in plan (metres) have no side (the wall you stand in).
NEAR_M = 0.3
_SIDE_TEXT = {"ahead": "straight ahead", "left": "on your left", "right": "on your right", "behind": "behind you"}


class Observer(NamedTuple):
    """Where a viewer stands in plan and which way they face.

    Attributes:
        position_m: (x, y) in metres.
        facing: unit (x, y) direction.
    """

    position_m: np.ndarray
    facing: np.ndarray


def observer(index: DescriptionIndex, view: dict[str, Any]) -> Observer:
    """The observer of a viewpoint: ``{"room": R}`` plus one of ``"facing"`` (an axis, at the
    room's centre), ``"facing_door"`` (a door, looked at from the room's centre) or
    ``"through_door"`` (standing in that door, facing into the room, square to its wall).

    Raises:
        ValueError: the viewpoint names no way to face, its door has no host wall, or the door
            it faces sits at the room's centre.
    """
    room = index.get(view["room"]).centre[:2]
    if "facing" in view:
        axis, sign = AXES[view["facing"]]
        f = np.zeros(2)
        f[axis] = sign
        return Observer(room, f)
    if "facing_door" in view:
        f = index.get(view["facing_door"]).centre[:2] - room
        if np.linalg.norm(f) < NEAR_M:
            raise ValueError(f"door {view['facing_door']} is at the centre of room {view['room']}: no way to face it")
        return Observer(room, f / np.linalg.norm(f))
    if "through_door" in view:
        door = index.get(view["through_door"])
        at = door.centre[:2]
        seg = index.segment(door.host) if door.host is not None else None
        run = None if seg is None else seg.end_m - seg.start_m
        if run is None or not np.linalg.norm(run):
            raise ValueError(f"door {door.guid} has no host wall to walk through")
        normal = np.array([-run[1], run[0]]) / np.linalg.norm(run)
        return Observer(at, normal if normal @ (room - at) >= 0 else -normal)
    raise ValueError(f"viewpoint {view} names neither 'facing', 'facing_door' nor 'through_door'")


def bearing_deg(index: DescriptionIndex, obs: Observer, e: ElementFacts) -> float | None:
    """Angle of element ``e`` from the observer's facing direction, degrees anticlockwise (left
    positive), from the 2-D dot and cross products; None when it is within :data:`NEAR_M`."""
    wall = index.model.file.by_guid(e.guid).is_a("IfcWall")
    point = index.segment(e.guid).nearest(obs.position_m) if wall else e.centre[:2]
    v = point - obs.position_m
    if np.linalg.norm(v) < NEAR_M:
        return None
    dot = float(obs.facing @ v)
    cross = float(obs.facing[0] * v[1] - obs.facing[1] * v[0])
    return float(np.degrees(np.arctan2(cross, dot)))


def _off_side_deg(bearing: float, side: str) -> float:
    """How far (degrees, >= 0) ``bearing`` is from the centre of ``side``'s sector."""
    return abs((bearing - SIDES[side] + 180.0) % 360.0 - 180.0)


def _nearest_side(bearing: float) -> str:
    """The side whose sector centre is nearest ``bearing`` (degrees)."""
    return min(SIDES, key=lambda s: _off_side_deg(bearing, s))



def in_sector(index: DescriptionIndex, view: dict[str, Any], found: list[ElementFacts]) -> list[ElementFacts]:
    """The elements of ``found`` on ``view["side"]`` of the viewpoint's observer, up to
    :data:`SECTOR_SLACK_DEG` outside that side's sector (the viewpoint's room left out)."""
    obs = observer(index, view)
    half = 45.0 + SECTOR_SLACK_DEG
    return [e for e in found if e.guid != view["room"]
            and (b := bearing_deg(index, obs, e)) is not None and _off_side_deg(b, view["side"]) <= half]


def viewpoints(index: DescriptionIndex, me: ElementFacts, cls: str, noun: str) -> list[Description]:
    """Egocentric descriptions of ``me`` from the rooms it belongs to (or, for columns and
    rooms, the rooms near or next to it); see the module docstring for the conventions."""
    rooms = index.facts("IfcSpace")
    if cls in ("IfcWall", "IfcWallStandardCase", "IfcDoor", "IfcWindow"):
        own = sorted(me.host_rooms or () if cls in ("IfcDoor", "IfcWindow") else me.bounds)
        scope: dict[str, Any] = {}
    elif cls == "IfcSpace":
        own = [r.guid for r in rooms if r.guid != me.guid and r.bounded_by & me.bounded_by]
        scope = {"storey": me.storey}
    elif cls == "IfcColumn":
        near = sorted((float(np.linalg.norm(r.centre[:2] - me.centre[:2])), r.guid) for r in rooms
                      if r.storey == me.storey)
        own = [g for _, g in near[:2]]
        scope = {"storey": me.storey}
    else:
        return []
    out = []
    for room in own:
        doors = [d.guid for d in index.facts("IfcDoor") if d.host_rooms is not None and room in d.host_rooms]
        views: list[dict[str, Any]] = [{"room": room, "facing": a} for a in AXES]
        views += [{"room": room, "facing_door": d} for d in doors]
        views += [{"room": room, "through_door": d} for d in doors]
        facts = {"class": cls, **scope} if scope else {"class": cls, "of_room": room}
        for view in views:
            if me.guid in view.values():
                continue
            try:
                bearing = bearing_deg(index, observer(index, view), me)
            except ValueError:  # a door this viewpoint cannot face or walk through
                continue
            if bearing is None:
                continue
            side = _nearest_side(bearing)
            if _off_side_deg(bearing, side) > 45.0 - SECTOR_SLACK_DEG:
                continue
            out.append(Description("spatial", _viewpoint_text(noun, view, side, own_room=not scope),
                                   {**facts, "viewpoint": {**view, "side": side}}))
    return out


def _viewpoint_text(noun: str, view: dict[str, Any], side: str, own_room: bool) -> str:
    room = f"room ({view['room']})"
    subject, ref = (f"the {noun} of {room}", "it") if own_room else (f"the {noun}", room)
    if "through_door" in view:
        how = f"when you walk into {ref} through the door ({view['through_door']})"
    elif "facing_door" in view:
        how = f"when you stand in the middle of {ref} looking towards the door ({view['facing_door']})"
    else:
        how = f"when you stand in the middle of {ref} facing the {view['facing']} direction"
    return f"{subject} {_SIDE_TEXT[side]} {how}"
