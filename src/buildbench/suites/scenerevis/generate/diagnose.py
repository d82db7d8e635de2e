"""Box-level scene diagnosis for the data pipeline: what is wrong with a scene, in the three
families of the §3.4 bug taxonomy, fast enough to run on every turn of every chain.

These are the pipeline's own checks on yaw-only boxes, not the evaluation metric (the
physics package owns OBR/CNR): collisions by a separating-axis test in x/z plus the y
interval (depth = the smallest overlap, 1 cm tolerance as the evaluator's); out of bounds
when a footprint corner lies more than 1 cm outside the floor polygon (fraction = corners
outside / 4) or the box leaves the floor–ceiling range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .assets import CATEGORIES, ESSENTIALS, category_of, normalize_room_type
from .flat import Obj, Scene, footprint_xz, quat_yaw_deg, room_heights, room_polygon_xz

COLLISION_TOLERANCE_M = 0.01
OUTSIDE_TOLERANCE_M = 0.01
#: A yaw this far (degrees) from a multiple of 90° reads as "askew" in the reasoning.
ASKEW_DEG = 5.0
#: A floor object whose bottom is this high above the floor, with nothing under it, floats.
FLOAT_M = 0.05


@dataclass
class Diagnosis:
    """Problems found in one scene; object handles are instance ids.

    Attributes:
        collisions: ``(id_a, id_b, depth_m)``, deepest first.
        outside: ``(id, fraction of footprint corners outside the walls)``, worst first.
        through: ids of objects that poke through the floor or the ceiling.
        floating: ids of objects hanging in the air.
        missing: essential categories of the room type not present.
        askew: ids whose yaw is off the room's 90° grid.
        crowded: True when furniture covers more than 60 % of the floor.
        empty_share: share of the floor's quarters with no object centre (0, 0.25, … 1).
    """

    collisions: list[tuple[str, str, float]] = field(default_factory=list)
    outside: list[tuple[str, float]] = field(default_factory=list)
    through: list[str] = field(default_factory=list)
    floating: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    askew: list[str] = field(default_factory=list)
    crowded: bool = False
    empty_share: float = 0.0


def _axes(corners: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for (x0, z0), (x1, z1) in ((corners[0], corners[1]), (corners[1], corners[2])):
        n = math.hypot(x1 - x0, z1 - z0) or 1.0
        out.append(((x1 - x0) / n, (z1 - z0) / n))
    return out


def overlap_depth_xz(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    depth = math.inf
    for ax, az in _axes(a) + _axes(b):
        pa = [x * ax + z * az for x, z in a]
        pb = [x * ax + z * az for x, z in b]
        d = min(max(pa), max(pb)) - max(min(pa), min(pb))
        if d <= 0:
            return 0.0
        depth = min(depth, d)
    return depth


def collisions(scene: Scene, tolerance_m: float = COLLISION_TOLERANCE_M) -> list[tuple[str, str, float]]:
    """Pairs whose boxes interpenetrate deeper than ``tolerance_m``, deepest first."""
    objs = scene["objects"]
    prints = [footprint_xz(o) for o in objs]
    boxes = [(min(x for x, _ in p), max(x for x, _ in p), min(z for _, z in p), max(z for _, z in p)) for p in prints]
    out = []
    for i in range(len(objs)):
        bi = boxes[i]
        yi0 = objs[i]["pos"][1]
        yi1 = yi0 + objs[i]["size"][1]
        for j in range(i + 1, len(objs)):
            bj = boxes[j]
            if bi[1] <= bj[0] or bj[1] <= bi[0] or bi[3] <= bj[2] or bj[3] <= bi[2]:
                continue
            yj0 = objs[j]["pos"][1]
            dy = min(yi1, yj0 + objs[j]["size"][1]) - max(yi0, yj0)
            if dy <= tolerance_m:
                continue
            depth = min(overlap_depth_xz(prints[i], prints[j]), dy)
            if depth > tolerance_m:
                out.append((objs[i]["id"], objs[j]["id"], round(depth, 3)))
    return sorted(out, key=lambda c: -c[2])


def point_in_polygon(poly: list[tuple[float, float]], x: float, z: float) -> bool:
    inside = False
    n = len(poly)
    for k in range(n):
        (x0, z0), (x1, z1) = poly[k], poly[(k + 1) % n]
        if (z0 > z) != (z1 > z) and x < x0 + (z - z0) * (x1 - x0) / (z1 - z0):
            inside = not inside
    return inside


def _distance_to_edges(poly: list[tuple[float, float]], x: float, z: float) -> float:
    best = math.inf
    n = len(poly)
    for k in range(n):
        (x0, z0), (x1, z1) = poly[k], poly[(k + 1) % n]
        dx, dz = x1 - x0, z1 - z0
        t = max(0.0, min(1.0, ((x - x0) * dx + (z - z0) * dz) / (dx * dx + dz * dz or 1.0)))
        best = min(best, math.hypot(x - x0 - t * dx, z - z0 - t * dz))
    return best


def outside(scene: Scene, tolerance_m: float = OUTSIDE_TOLERANCE_M) -> list[tuple[str, float]]:
    """Objects crossing the walls: the share of footprint corners more than
    ``tolerance_m`` outside the floor polygon, worst first."""
    poly = room_polygon_xz(scene)
    out = []
    for o in scene["objects"]:
        bad = sum(1 for x, z in footprint_xz(o)
                  if not point_in_polygon(poly, x, z) and _distance_to_edges(poly, x, z) > tolerance_m)
        if bad:
            out.append((o["id"], bad / 4.0))
    return sorted(out, key=lambda c: -c[1])


def through_floor_or_ceiling(scene: Scene, tolerance_m: float = OUTSIDE_TOLERANCE_M) -> list[str]:
    floor, ceiling = room_heights(scene)
    return [o["id"] for o in scene["objects"]
            if o["pos"][1] < floor - tolerance_m or o["pos"][1] + o["size"][1] > ceiling + tolerance_m]


def _supported(o: Obj, objs: list[Obj], floor: float) -> bool:
    bottom = o["pos"][1]
    if bottom - floor <= FLOAT_M:
        return True
    for other in objs:
        if other is o:
            continue
        top = other["pos"][1] + other["size"][1]
        if abs(top - bottom) <= FLOAT_M and overlap_depth_xz(footprint_xz(o), footprint_xz(other)) > 0:
            return True
    spec = CATEGORIES.get(category_of(o["desc"]))
    return spec is not None and spec.name in ("mirror", "whiteboard")


def missing_essentials(scene: Scene) -> list[str]:
    needs = ESSENTIALS.get(normalize_room_type(scene.get("room_type", "")), {})
    text = " | ".join(o["desc"].lower() for o in scene["objects"])
    return [name for name, words in needs.items() if not any(w in text for w in words)]


def diagnose(scene: Scene) -> Diagnosis:
    objs = scene["objects"]
    floor, _ = room_heights(scene)
    d = Diagnosis(collisions=collisions(scene), outside=outside(scene), through=through_floor_or_ceiling(scene))
    d.floating = [o["id"] for o in objs if not _supported(o, objs, floor)]
    d.missing = missing_essentials(scene)
    for o in objs:
        yaw = quat_yaw_deg(o["rot"])
        if min(yaw % 90.0, 90.0 - yaw % 90.0) > ASKEW_DEG:
            d.askew.append(o["id"])
    poly = room_polygon_xz(scene)
    xs, zs = [p[0] for p in poly], [p[1] for p in poly]
    area = max((max(xs) - min(xs)) * (max(zs) - min(zs)), 1e-6)
    d.crowded = sum(o["size"][0] * o["size"][2] for o in objs if o["size"][1] > 0.05) / area > 0.6
    cx, cz = (max(xs) + min(xs)) / 2, (max(zs) + min(zs)) / 2
    quarters = {(o["pos"][0] >= cx, o["pos"][2] >= cz) for o in objs}
    d.empty_share = 1.0 - len(quarters) / 4.0
    return d


def passes_source_filter(scene: Scene, geometry: str = "box") -> bool:
    """The §3.1 rule a source room must pass to be reverse-engineered: (collision rate
    < 10 % and out-of-bounds rate < 30 % and more than 4 objects) or at least 20 objects or
    (no collision and more than 5 objects). Rates are shares of objects. At the ``box``
    level by this module's box checks (out of bounds = crossing a wall, the floor or the
    ceiling); at ``procedural`` or ``mesh`` by the evaluation physics on the objects' meshes
    (contacts deeper than 1 cm, more than 1 % of the surface outside)."""
    n = len(scene["objects"])
    if n == 0:
        return False
    if geometry != "box":
        from ..check.layout import parse_layout
        from ..check.physics import EVALUATION, check_physics

        report = check_physics(parse_layout(scene), EVALUATION, geometry=geometry)  # type: ignore[arg-type]
        col, oob = len(report.colliding) / n, len(report.out_of_bounds) / n
        return (col < 0.10 and oob < 0.30 and n > 4) or n >= 20 or (col == 0 and n > 5)
    col = len({i for a, b, _ in collisions(scene) for i in (a, b)}) / n
    oob = len({i for i, _ in outside(scene)} | set(through_floor_or_ceiling(scene))) / n
    return (col < 0.10 and oob < 0.30 and n > 4) or n >= 20 or (col == 0 and n > 5)
