"""Directional relations in an anchor's own frame, and facing.

The **second** argument is the anchor, and sides are the anchor's own as it faces its
front: ``left_of(scene, lamp, sofa)`` means the lamp is on the sofa's left-hand side for
someone sitting on the sofa. With the scene conventions (y up, front (sin θ, cos θ) at
yaw θ, north = +z, east = +x, as in AI2-THOR's left-handed Unity frame) an anchor facing
north has east on its right: its right is ``(f_z, -f_x)`` for front ``(f_x, f_z)``.

The *bearing* of a from b is the angle of the vector from b's centre to a's centre
measured clockwise from b's front seen from above: 0° in front, 90° right, ±180° behind,
-90° left. Each side is a cone of :data:`SIDE_HALF_ANGLE_DEG` about its axis, so with the
default 45° the four cones tile the plane (a bearing of exactly ±45° or ±135° is on both
sides). A side also needs a within :data:`SIDE_MAX_M` metres of the anchor (floor-plan
distance), so a lamp in another room is not "left of" the sofa.
"""

from __future__ import annotations

import math

import shapely
from shapely.geometry import LineString

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import Element
from buildbench.scenes.relations.verdict import Verdict, degrees, metres, resolve, threshold

#: Half-angle, degrees, of each side's cone about the anchor's front/right/back/left axis.
SIDE_HALF_ANGLE_DEG = 45.0
#: Largest floor-plan distance, metres, for a side relation (None in a call: no limit).
SIDE_MAX_M = 3.0
#: ``facing(a, b)``: the largest angle, degrees, between a's front and the direction from
#: a's centre to b's centre, when a's front ray misses b's footprint.
FACING_CONE_DEG = 30.0
#: ``same_direction(a, b)``: the largest angle, degrees, between the two fronts.
SAME_DIRECTION_DEG = 15.0

# A front ray is cast this far, metres: longer than any house.
_RAY_M = 1000.0
_SIDE_AXES = {"in_front_of": 0.0, "right_of": 90.0, "behind": 180.0, "left_of": -90.0}
_SIDE_WORDS = {"in_front_of": "in front of", "right_of": "right of", "behind": "behind", "left_of": "left of"}


def bearing_deg(target: Element, anchor: Element) -> float:
    """Bearing of ``target``'s centre from ``anchor``'s, clockwise from its front, in (-180, 180]."""
    assert anchor.front_xz is not None
    fx, fz = anchor.front_xz
    dx, dz = target.center_xz[0] - anchor.center_xz[0], target.center_xz[1] - anchor.center_xz[1]
    forward, right = dx * fx + dz * fz, dx * fz - dz * fx
    return math.degrees(math.atan2(right, forward))


def _side(relation: str, scene: Scene, a: str, b: str, half_angle_deg: float, max_m: float | None) -> Verdict:
    cone = threshold(relation, "half_angle_deg", half_angle_deg)
    limit = None if max_m is None else threshold(relation, "max_m", max_m)
    kinds = {"a": ("object", "door", "window"), "b": ("object",)}
    _, (ea, eb) = resolve(scene, relation, {"a": a, "b": b}, kinds)
    bearing = bearing_deg(ea, eb)
    deviation = abs((bearing - _SIDE_AXES[relation] + 180.0) % 360.0 - 180.0)
    distance = float(shapely.distance(ea.shape, eb.shape))
    within_cone = deviation <= cone + 1e-9
    close = limit is None or distance <= limit
    holds = within_cone and close
    word = _SIDE_WORDS[relation]
    if holds:
        why = f"{word} it (within {degrees(cone)} of its {_axis_name(relation)})"
    elif not within_cone:
        why = f"not {word} it ({degrees(deviation)} off its {_axis_name(relation)} > {degrees(cone)})"
    else:
        why = f"not {word} it (too far: {metres(distance)} > {metres(limit or 0.0)})"
    return Verdict(
        holds,
        deviation,
        f"{a} is at bearing {degrees(bearing)} from {b} (facing {_heading(eb)}), "
        f"{metres(distance)} away: {why}",
        {"bearing_deg": bearing, "deviation_deg": deviation, "distance_m": distance,
         "half_angle_deg": cone, "max_m": limit, "anchor_yaw_deg": _yaw(eb)},
    )


def _axis_name(relation: str) -> str:
    return {"in_front_of": "front", "right_of": "right", "behind": "back", "left_of": "left"}[relation]


def left_of(scene: Scene, a: str, b: str, *, half_angle_deg: float = SIDE_HALF_ANGLE_DEG,
            max_m: float | None = SIDE_MAX_M) -> Verdict:
    """a is on b's left (b's own left as b faces its front): a's bearing from b is within
    ``half_angle_deg`` of -90° and a is within ``max_m`` metres of b.

    Value: the bearing's deviation from b's left axis, degrees.
    """
    return _side("left_of", scene, a, b, half_angle_deg, max_m)


def right_of(scene: Scene, a: str, b: str, *, half_angle_deg: float = SIDE_HALF_ANGLE_DEG,
             max_m: float | None = SIDE_MAX_M) -> Verdict:
    """a is on b's right: bearing within ``half_angle_deg`` of +90°, within ``max_m`` metres.

    Value: the deviation from b's right axis, degrees.
    """
    return _side("right_of", scene, a, b, half_angle_deg, max_m)


def in_front_of(scene: Scene, a: str, b: str, *, half_angle_deg: float = SIDE_HALF_ANGLE_DEG,
                max_m: float | None = SIDE_MAX_M) -> Verdict:
    """a is in front of b: bearing within ``half_angle_deg`` of 0° (b's front), within ``max_m``.

    Value: the deviation from b's front axis, degrees.
    """
    return _side("in_front_of", scene, a, b, half_angle_deg, max_m)


def behind(scene: Scene, a: str, b: str, *, half_angle_deg: float = SIDE_HALF_ANGLE_DEG,
           max_m: float | None = SIDE_MAX_M) -> Verdict:
    """a is behind b: bearing within ``half_angle_deg`` of 180° (b's back), within ``max_m``.

    Value: the deviation from b's back axis, degrees.
    """
    return _side("behind", scene, a, b, half_angle_deg, max_m)


def facing(scene: Scene, a: str, b: str, *, cone_deg: float = FACING_CONE_DEG) -> Verdict:
    """a faces b ("the sofa faces the TV"): the ray from a's centre along a's front hits b's
    floor-plan shape, or the angle between a's front and the direction from a's centre to
    b's centre is at most ``cone_deg`` degrees. Here the *first* argument's orientation
    counts; b may be an object, door, window or wall.

    Value: the angle between a's front and the direction to b's centre, degrees.
    """
    cone = threshold("facing", "cone_deg", cone_deg)
    kinds = {"a": ("object",), "b": ("object", "door", "window", "wall")}
    _, (ea, eb) = resolve(scene, "facing", {"a": a, "b": b}, kinds)
    angle, hit = _facing_angle(ea, eb)
    holds = hit or angle <= cone + 1e-9
    if hit:
        why = "faces it (its front ray hits it)"
    elif holds:
        why = f"faces it (<= {degrees(cone)})"
    else:
        why = f"does not face it (front ray misses, > {degrees(cone)})"
    return Verdict(
        holds,
        angle,
        f"{a} (facing {_heading(ea)}) points {degrees(angle)} away from {b}: {why}",
        {"angle_deg": angle, "ray_hits": hit, "cone_deg": cone, "yaw_deg": _yaw(ea)},
    )


def facing_each_other(scene: Scene, a: str, b: str, *, cone_deg: float = FACING_CONE_DEG) -> Verdict:
    """a and b face each other: :func:`facing` holds both ways (two objects).

    Value: the larger of the two angles, degrees.
    """
    for role, element_id in (("a", a), ("b", b)):
        resolve(scene, "facing_each_other", {role: element_id}, {role: ("object",)})
    ab, ba = facing(scene, a, b, cone_deg=cone_deg), facing(scene, b, a, cone_deg=cone_deg)
    holds = ab.holds and ba.holds
    return Verdict(
        holds,
        max(ab.value, ba.value),
        f"{ab.explanation}; {ba.explanation}: {'they face' if holds else 'they do not face'} each other",
        {"a_to_b": ab.evidence, "b_to_a": ba.evidence},
    )


def same_direction(scene: Scene, a: str, b: str, *, tolerance_deg: float = SAME_DIRECTION_DEG) -> Verdict:
    """a and b face the same way: the angle between their fronts is at most ``tolerance_deg``.

    Value: that angle, degrees in [0, 180].
    """
    tol = threshold("same_direction", "tolerance_deg", tolerance_deg)
    kinds = {"a": ("object",), "b": ("object",)}
    _, (ea, eb) = resolve(scene, "same_direction", {"a": a, "b": b}, kinds)
    diff = abs((_yaw(ea) - _yaw(eb) + 180.0) % 360.0 - 180.0)
    holds = diff <= tol + 1e-9
    word = f"same direction (<= {degrees(tol)})" if holds else f"different directions (> {degrees(tol)})"
    return Verdict(
        holds,
        diff,
        f"{a} faces {_heading(ea)} and {b} faces {_heading(eb)}, {degrees(diff)} apart: {word}",
        {"angle_deg": diff, "yaw_a_deg": _yaw(ea), "yaw_b_deg": _yaw(eb), "tolerance_deg": tol},
    )


def _facing_angle(ea: Element, eb: Element) -> tuple[float, bool]:
    assert ea.front_xz is not None
    fx, fz = ea.front_xz
    (ax, az), (bx, bz) = ea.center_xz, eb.center_xz
    dx, dz = bx - ax, bz - az
    if math.hypot(dx, dz) < 1e-12:
        angle = 0.0
    else:
        angle = math.degrees(math.acos(max(-1.0, min(1.0, (dx * fx + dz * fz) / math.hypot(dx, dz)))))
    ray = LineString([(ax, az), (ax + fx * _RAY_M, az + fz * _RAY_M)])
    return angle, bool(ray.intersects(eb.shape))


def _yaw(e: Element) -> float:
    assert e.front_xz is not None
    return math.degrees(math.atan2(e.front_xz[0], e.front_xz[1])) % 360.0


def _heading(e: Element) -> str:
    """``"yaw 90°, east"``: the yaw with the nearest compass word."""
    yaw = _yaw(e)
    names = ["north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west"]
    return f"yaw {yaw:.0f}°, {names[round(yaw / 45.0) % 8]}"
