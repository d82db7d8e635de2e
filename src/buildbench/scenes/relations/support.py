"""Vertical relations and overlap: on top of, under, overlaps.

Boxes are bounding boxes, so a table's box runs from the floor to its top: something
under a table sits *inside* the table's box, below its top. The rules below are written
for that. At a mesh level (:func:`.shape.measured_with`) ``on_top_of`` needs a surface of
the lower mesh under the upper object, ``under`` also accepts an object that stands inside
the other's box without crossing its mesh (a chair pushed in under a desk, its back above
the top), and ``overlaps`` measures the meshes' contacts.
"""

from __future__ import annotations

from typing import Any

import shapely

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import Element, SceneIndex
from buildbench.scenes.relations.shape import DEPTH_ROUNDING_M, OVERLAP_DEPTH_M, current, level_evidence
from buildbench.scenes.relations.verdict import Verdict, metres, resolve, threshold

#: ``on_top_of(a, b)``: the largest gap, metres, between a's bottom and b's top (either way:
#: file positions are often a few centimetres sunk or floating).
ON_TOP_GAP_M = 0.05
#: ``on_top_of(a, b)``: the smallest share of a's footprint area that must lie over b's.
ON_TOP_MIN_OVERLAP = 0.5
#: ``under(a, b)``: the smallest share of the smaller footprint that the two must share.
UNDER_MIN_OVERLAP = 0.5


def _overlap_share(small: Element, other: Element) -> float:
    """Share of ``small``'s footprint area lying over ``other``'s (centre test if flat)."""
    area = small.shape.area
    if area <= 1e-12:
        return 1.0 if other.shape.covers(shapely.centroid(small.shape)) else 0.0
    return float(shapely.intersection(small.shape, other.shape).area / area)


def _smaller_share(ea: Element, eb: Element) -> float:
    small, big = (ea, eb) if ea.shape.area <= eb.shape.area else (eb, ea)
    return _overlap_share(small, big)


def _rests_on(
    scene: Scene, index: SceneIndex, ea: Element, eb: Element, gap_m: float, min_overlap: float
) -> tuple[bool, dict[str, Any]]:
    overlap = _overlap_share(ea, eb)
    gap = ea.bottom_y - eb.top_y
    parent = index.parents[index.object_pos[ea.id]] == eb.id
    # A receptacle child may stand on an inner shelf, anywhere within the parent's height.
    in_parent = parent and eb.bottom_y - gap_m <= ea.bottom_y <= eb.top_y + gap_m
    shapes = current()
    if shapes.level == "box":
        holds = overlap >= min_overlap and (abs(gap) <= gap_m or in_parent)
        return holds, {"gap_m": gap, "overlap": overlap, "receptacle_child": parent}
    # Standing on b lifts a's bottom above b's (a rug on the floor is not on the bed's legs)
    # unless b is as thin as the gap (a table on a rug).
    lifted = ea.bottom_y > eb.bottom_y + gap_m or abs(gap) <= gap_m
    surface = overlap >= min_overlap and lifted and shapes.surface_under(scene, index, ea.id, eb.id, gap_m)
    holds = overlap >= min_overlap and (surface or in_parent)
    return holds, {"gap_m": gap, "overlap": overlap, "receptacle_child": parent, "surface_contact": surface,
                   **level_evidence(shapes)}


def on_top_of(scene: Scene, a: str, b: str, *, gap_m: float = ON_TOP_GAP_M,
              min_overlap: float = ON_TOP_MIN_OVERLAP) -> Verdict:
    """a is on top of b: at least ``min_overlap`` of a's footprint area lies over b's, and
    a's bottom is within ``gap_m`` metres of b's top; a receptacle child of b (its
    ``parent_id``) counts wherever its bottom lies within b's height (inner shelves). At a
    mesh level the bottom must instead be within ``gap_m`` of a surface of b's mesh under a's
    footprint (a vase on a chair's seat, not on the top of the box its back makes).

    Value: a's bottom minus b's top, metres (0 when resting exactly).
    """
    gap_limit = threshold("on_top_of", "gap_m", gap_m)
    share = threshold("on_top_of", "min_overlap", min_overlap)
    index, (ea, eb) = resolve(scene, "on_top_of", {"a": a, "b": b}, {"a": ("object",), "b": ("object",)})
    holds, ev = _rests_on(scene, index, ea, eb, gap_limit, share)
    if holds:
        why = "on top of it" + (" (its receptacle child)" if ev["receptacle_child"] else "")
    elif ev["overlap"] < share:
        why = f"not on top of it (only {ev['overlap']:.0%} of its footprint over it < {share:.0%})"
    elif "surface_contact" in ev:
        why = f"not on top of it (no surface of its {ev['geometry']} mesh within ±{metres(gap_limit)} of its bottom)"
    else:
        why = f"not on top of it (gap {metres(ev['gap_m'])} beyond ±{metres(gap_limit)})"
    return Verdict(
        holds,
        ev["gap_m"],
        f"{a} (bottom {ea.bottom_y:.2f} m) over {b} (top {eb.top_y:.2f} m), "
        f"{ev['overlap']:.0%} of its footprint overlapping: {why}",
        {**ev, "gap_limit_m": gap_limit, "min_overlap": share},
    )


def under(scene: Scene, a: str, b: str, *, gap_m: float = ON_TOP_GAP_M,
          min_overlap: float = UNDER_MIN_OVERLAP) -> Verdict:
    """a is under b, by any of three rules (footprint overlap is the share of the smaller
    footprint the two share, at least ``min_overlap``):

    * **supports** — b is on top of a (:func:`on_top_of` ``(b, a)``): the table under the
      vase, the rug under the coffee table (a table stands on a rug: its bottom is within
      ``gap_m`` of the rug's top);
    * **below** — a's top is at most ``gap_m`` above b's bottom (a bed under a hanging lamp);
    * **tucked** — a stands within ``gap_m`` of b's bottom and its top is more than
      ``gap_m`` below b's top (a stool under a desk, a box under a table, a rug under a bed:
      inside the bounding box of b, below its top); at a mesh level also when a reaches above
      b's top but the meshes cross by no more than :data:`.shape.OVERLAP_DEPTH_M` (a chair
      pushed in under a table: its seat below the top, its back above it).

    Value: b's bottom minus a's top, metres (negative when a reaches into b's box).
    """
    gap_limit = threshold("under", "gap_m", gap_m)
    share = threshold("under", "min_overlap", min_overlap)
    index, (ea, eb) = resolve(scene, "under", {"a": a, "b": b}, {"a": ("object",), "b": ("object",)})
    clearance = eb.bottom_y - ea.top_y
    overlap = _smaller_share(ea, eb)
    supports, _ = _rests_on(scene, index, eb, ea, gap_limit, ON_TOP_MIN_OVERLAP)
    below = overlap >= share and clearance >= -gap_limit
    standing = overlap >= share and ea.bottom_y <= eb.bottom_y + gap_limit
    shapes = current()
    # The mesh alternative needs b to rise above a's bottom (a table over a chair, not a rug
    # under a table) and the meshes not to cross.
    tucked = standing and (ea.top_y < eb.top_y - gap_limit or (
        shapes.level != "box" and eb.top_y > ea.bottom_y + gap_limit
        and shapes.penetration_m(scene, index, a, b) <= OVERLAP_DEPTH_M + DEPTH_ROUNDING_M))
    rule = "supports" if supports else "below" if below else "tucked" if tucked else None
    if rule == "supports":
        why = f"under it ({b} rests on it)"
    elif rule == "below":
        why = f"under it (entirely below its bottom, {metres(clearance)} clear)"
    elif rule == "tucked" and ea.top_y < eb.top_y - gap_limit:
        why = "under it (standing below its top, inside its box)"
    elif rule == "tucked":
        why = f"under it (standing inside its box, the {shapes.level} meshes not crossing)"
    elif overlap < share:
        why = f"not under it (footprints share {overlap:.0%} < {share:.0%})"
    else:
        why = f"not under it (its top {ea.top_y:.2f} m is not below {b}'s top {eb.top_y:.2f} m)"
    return Verdict(
        rule is not None,
        clearance,
        f"{a} (top {ea.top_y:.2f} m) and {b} (bottom {eb.bottom_y:.2f} m) share {overlap:.0%}"
        f" of the smaller footprint: {why}",
        {"clearance_m": clearance, "overlap": overlap, "rule": rule, "gap_m": gap_limit, "min_overlap": share,
         **level_evidence(shapes)},
    )


def overlaps(scene: Scene, a: str, b: str, *, depth_m: float = OVERLAP_DEPTH_M) -> Verdict:
    """a and b overlap (collide): they interpenetrate by more than ``depth_m`` metres, and
    neither rests on the other (as :func:`buildbench.scenes.collision.collisions` rules: a
    receptacle child and its parent, or an upper bottom at most :data:`ON_TOP_GAP_M` below
    the lower top: FCL reports a TV standing on its stand, face on face, 9 cm deep).

    With boxes, the boxes' penetration depth; at a mesh level, the deepest contact between
    the placed meshes (so a chair under a table overlaps its box but not its mesh).

    Value: the penetration depth, metres (0 when apart or touching).
    """
    limit = threshold("overlaps", "depth_m", depth_m)
    index, (ea, eb) = resolve(scene, "overlaps", {"a": a, "b": b}, {"a": ("object",), "b": ("object",)})
    shapes = current()
    depth = shapes.penetration_m(scene, index, a, b)
    parents = index.parents
    rests = (parents[index.object_pos[a]] == b or parents[index.object_pos[b]] == a
             or ea.bottom_y >= eb.top_y - ON_TOP_GAP_M or eb.bottom_y >= ea.top_y - ON_TOP_GAP_M)
    holds = depth > limit + DEPTH_ROUNDING_M and not rests
    word = "overlap" if holds else "do not overlap" + (" (one rests on the other)" if rests else "")
    return Verdict(
        holds,
        depth,
        f"{a} and {b} interpenetrate by {metres(depth)} ({shapes.level} shapes): {word} "
        f"({'>' if depth > limit + DEPTH_ROUNDING_M else '<='} {metres(limit)})",
        {"depth_m": depth, "max_depth_m": limit, "rests": rests, "geometry": shapes.level},
    )
