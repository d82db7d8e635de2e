"""Distance relations on floor plans: near, far, closer than, between, aligned.

Distances are between floor-plan shapes, not centres: an object's footprint (its box
projected on the floor), a wall's segment, a door's or window's hole segment. Two
touching sofas are 0 m apart however large they are. Between two objects at a mesh level
(:func:`.shape.measured_with`) the distance is between their placed meshes instead.
"""

from __future__ import annotations

import math

import shapely

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import Element, SceneIndex
from buildbench.scenes.relations.shape import current, level_evidence
from buildbench.scenes.relations.verdict import Verdict, metres, resolve, threshold

#: ``near(a, b)`` holds when the floor-plan distance between a and b is at most this, metres.
#: Midway in the 0.5–1.5 m band the LEGO-Eval spec suggests: a coffee table 0.4 m from a
#: sofa is near it, a chair across a 3 m room is not.
NEAR_M = 1.0
#: ``far(a, b)`` holds when the floor-plan distance is at least this, metres. Between
#: :data:`NEAR_M` and :data:`FAR_M` a pair is neither near nor far.
FAR_M = 1.5
#: ``between(a, b, c)``: the largest distance, metres, of a's centre from the segment
#: joining b's and c's centres.
BETWEEN_OFFSET_M = 0.5
#: ``aligned(a, b)``: the largest offset, metres, of the two centres across a common line.
ALIGNED_M = 0.1
#: ``closer_than(a, b, c)``: by how much, metres, a must be closer to b than to c.
CLOSER_MARGIN_M = 0.0

_SPATIAL = ("object", "door", "window", "wall")


def footprint_distance(scene: Scene, a: str, b: str, relation: str = "distance") -> float:
    """Floor-plan distance in metres between two objects, doors, windows or walls (between
    two objects' meshes at a mesh level)."""
    index, (ea, eb) = resolve(scene, relation, {"a": a, "b": b}, {"a": _SPATIAL, "b": _SPATIAL})
    return _distance(scene, index, ea, eb)


def _distance(scene: Scene, index: SceneIndex, ea: Element, eb: Element) -> float:
    if ea.kind == "object" and eb.kind == "object":
        return current().distance_m(scene, index, ea.id, eb.id)
    return float(shapely.distance(ea.shape, eb.shape))


def near(scene: Scene, a: str, b: str, *, max_m: float = NEAR_M) -> Verdict:
    """a is near b: the floor-plan distance between them is at most ``max_m`` metres.

    Value: the distance, metres. Takes objects, doors, windows and walls.
    """
    limit = threshold("near", "max_m", max_m)
    d = footprint_distance(scene, a, b, "near")
    holds = d <= limit
    verdict = f"near (<= {metres(limit)})" if holds else f"not near (> {metres(limit)})"
    return Verdict(holds, d, f"{a} is {metres(d)} from {b}: {verdict}",
                   {"distance_m": d, "max_m": limit, **level_evidence(current())})


def far(scene: Scene, a: str, b: str, *, min_m: float = FAR_M) -> Verdict:
    """a is far from b: the floor-plan distance between them is at least ``min_m`` metres.

    Value: the distance, metres. Takes objects, doors, windows and walls.
    """
    limit = threshold("far", "min_m", min_m)
    d = footprint_distance(scene, a, b, "far")
    holds = d >= limit
    verdict = f"far (>= {metres(limit)})" if holds else f"not far (< {metres(limit)})"
    return Verdict(holds, d, f"{a} is {metres(d)} from {b}: {verdict}",
                   {"distance_m": d, "min_m": limit, **level_evidence(current())})


def closer_than(scene: Scene, a: str, b: str, c: str, *, margin_m: float = CLOSER_MARGIN_M) -> Verdict:
    """a is closer to b than to c: ``d(a, b) + margin_m < d(a, c)`` (floor-plan distances).

    Value: ``d(a, b) - d(a, c)``, metres (negative when a is closer to b).
    """
    margin = threshold("closer_than", "margin_m", margin_m)
    kinds = {"a": _SPATIAL, "b": _SPATIAL, "c": _SPATIAL}
    index, (ea, eb, ec) = resolve(scene, "closer_than", {"a": a, "b": b, "c": c}, kinds)
    d_ab = _distance(scene, index, ea, eb)
    d_ac = _distance(scene, index, ea, ec)
    holds = d_ab + margin < d_ac
    word = "closer to" if holds else "not closer to"
    return Verdict(
        holds,
        d_ab - d_ac,
        f"{a} is {metres(d_ab)} from {b} and {metres(d_ac)} from {c}: {word} {b} than to {c}"
        + (f" (margin {metres(margin)})" if margin else ""),
        {"distance_ab_m": d_ab, "distance_ac_m": d_ac, "margin_m": margin, **level_evidence(current())},
    )


def between(scene: Scene, a: str, b: str, c: str, *, max_offset_m: float = BETWEEN_OFFSET_M) -> Verdict:
    """a is between b and c: a's centre projects strictly inside the segment from b's centre
    to c's centre (``0 < t < 1``) and lies at most ``max_offset_m`` metres from it.

    Value: a's centre's distance to that segment, metres.
    """
    limit = threshold("between", "max_offset_m", max_offset_m)
    kinds = {"a": ("object", "door", "window"), "b": _SPATIAL, "c": _SPATIAL}
    _, (ea, eb, ec) = resolve(scene, "between", {"a": a, "b": b, "c": c}, kinds)
    (px, pz), (bx, bz), (cx, cz) = ea.center_xz, eb.center_xz, ec.center_xz
    ux, uz = cx - bx, cz - bz
    length_sq = ux * ux + uz * uz
    t = ((px - bx) * ux + (pz - bz) * uz) / length_sq if length_sq > 0 else 0.0
    tc = min(max(t, 0.0), 1.0)
    offset = math.hypot(px - (bx + tc * ux), pz - (bz + tc * uz))
    inside = 0.0 < t < 1.0
    holds = inside and offset <= limit
    if holds:
        why = f"between (offset {metres(offset)} <= {metres(limit)}, at {t:.0%} of the way)"
    elif not inside:
        why = f"not between (its centre projects {'before' if t <= 0 else 'past'} the segment, t = {t:.2f})"
    else:
        why = f"not between (offset {metres(offset)} > {metres(limit)})"
    return Verdict(
        holds,
        offset,
        f"{a} is {metres(offset)} from the line {b} - {c}: {why}",
        {"offset_m": offset, "t": t, "max_offset_m": limit},
    )


def aligned(
    scene: Scene, a: str, b: str, *, tolerance_m: float = ALIGNED_M, axis: str | None = None,
    frame: str = "world",
) -> Verdict:
    """a and b are aligned: their centres lie on a common line along an axis, to within
    ``tolerance_m`` metres across it.

    ``axis="x"``: a line along x (east-west), so ``|dz| <= tolerance_m``; ``axis="z"``: along
    z (north-south), ``|dx| <= tolerance_m``; None: either. With ``frame="anchor"`` the axes
    are b's own (``x`` = b's left-right axis, ``z`` = b's front-back axis), so "the chair is
    aligned with the desk" can mean straight in front of or beside it.

    Value: the smaller cross offset among the axes tested, metres.
    """
    limit = threshold("aligned", "tolerance_m", tolerance_m)
    if axis not in (None, "x", "z"):
        raise ValueError(f"aligned: axis must be 'x', 'z' or None, got {axis!r}")
    if frame not in ("world", "anchor"):
        raise ValueError(f"aligned: frame must be 'world' or 'anchor', got {frame!r}")
    b_kinds = ("object",) if frame == "anchor" else ("object", "door", "window")
    kinds = {"a": ("object", "door", "window"), "b": b_kinds}
    _, (ea, eb) = resolve(scene, "aligned", {"a": a, "b": b}, kinds)
    dx, dz = ea.center_xz[0] - eb.center_xz[0], ea.center_xz[1] - eb.center_xz[1]
    if frame == "anchor":
        assert eb.front_xz is not None
        fx, fz = eb.front_xz
        dx, dz = dx * fz - dz * fx, dx * fx + dz * fz  # right and forward components
    offsets = {"x": abs(dz), "z": abs(dx)}
    tested = [axis] if axis else ["x", "z"]
    best = min(tested, key=lambda k: offsets[k])
    value = offsets[best]
    holds = value <= limit
    line = {"world": {"x": "an east-west line", "z": "a north-south line"},
            "anchor": {"x": f"{b}'s left-right axis", "z": f"{b}'s front-back axis"}}[frame][best]
    word = f"aligned (<= {metres(limit)})" if holds else f"not aligned (> {metres(limit)})"
    return Verdict(
        holds,
        value,
        f"{a} is {metres(value)} off {line} through {b}: {word}",
        {"offset_m": value, "axis": best, "frame": frame, "offsets_m": offsets, "tolerance_m": limit},
    )
