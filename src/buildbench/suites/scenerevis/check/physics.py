"""Collision and out-of-bounds checks of a SceneReVis room, in the spec's three variants.

At the ``box`` geometry level (the default) objects are oriented boxes with their true 3-D
rotation; at ``procedural`` and ``mesh`` they are the meshes of :mod:`buildbench.scenes.assets`,
checked as the released evaluation checks meshes (:mod:`.meshes`; every report names its
level). At the box level the
penetration depth of two boxes is their minimum translation distance, from the exact
15-axis separating-axis test of :mod:`buildbench.geometry` (for boxes this is what
trimesh + FCL report as ``depth``; the benchmark compares the two). Unlike FCL on
meshes, which only sees surfaces, a box wholly inside another counts as penetrating.

The variants (SceneReVis spec §2.5, kept apart as :class:`PhysicsRules`):

* :data:`EVALUATION` (paper C.6, ``eval/myeval.py``): a pair collides when its depth
  exceeds 1 cm; an object is out of bounds when more than 1 % of its surface lies outside
  the floor polygon buffered by 1 mm or outside [floor − 1 mm, ceiling + 1 mm].
* :data:`REWARD` (RL ``TrimeshPhysicsMetrics``): the same, but any penetration counts.
  :data:`REWARD_RELEASED` also takes the release's FCL contacts and depths (:mod:`.released`).
* :data:`OPTIMIZER` (inference ``RuleBasedSceneOptimizer``, Algorithm 2): depth > 1 cm;
  out of bounds when any corner of the box's floor footprint lies outside the polygon.
  The released code takes the corners as ``pos ± size / 2`` and ignores rotation; we use
  the rotated corners (and the 1 mm buffer, so flush objects are not pushed around).

Out-of-bounds volume, as the released metric defines it, is the box volume times the
outside share of its surface (:mod:`.bounds` computes that share exactly).

Depths are compared with a 1 nm slack (:data:`DEPTH_SLACK_M`): scene files round to the
centimetre, so pairs overlapping by exactly 1 cm are common, and float rounding must not
decide them (FCL, in float32, happens to report 0.99999 cm for them). An overlap past the
slack but under float32's resolution at room coordinates (1e-9 m into a box at x = 10 m) is a
contact here and none to the release's FCL on float32 meshes.

FCL on box meshes agrees with these collision sets on all 500 shared real rooms except
such exact-1 cm pairs; its *depth* for deep overlaps is a triangle-pair depth that can
exceed the minimum translation distance (1.10 m against 0.63 m for a nightstand sunk
into a bed), so summed depths (the reward's R_pen) differ there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import shapely
from numpy.typing import NDArray

from buildbench.geometry import contact_pairs, sat_separation
from buildbench.scenes.assets import AssetLibrary, GeometryLevel, check_level
from buildbench.scenes.mesh_physics import SolidMesh

from .bounds import FLOOR_BUFFER_M, HEIGHT_TOLERANCE_M, outside_fractions, room_polygon
from .layout import RoomLayout
from .meshes import layout_meshes, mesh_outside_fractions, mesh_pairs, mesh_volumes
from .released import released_contacts

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PhysicsRules:
    """Thresholds of one variant.

    Attributes:
        name: ``evaluation``, ``reward`` or ``optimizer``.
        min_depth_m: A pair collides when its penetration depth exceeds this (plus
            :data:`DEPTH_SLACK_M`).
        max_outside_fraction: An object is out of bounds when more than this share of its
            surface is outside (surface rule); unused by the corner rule.
        corner_rule: Out of bounds when any footprint corner is outside (optimizer).
        floor_buffer_m: Growth of the floor polygon before testing.
        height_tolerance_m: Slack below the floor and above the ceiling.
        mesh_contacts: Take contacts from FCL on box meshes, as the release does
            (:mod:`.released`), in place of the exact box test.
    """

    name: str
    min_depth_m: float
    max_outside_fraction: float = 0.01
    corner_rule: bool = False
    floor_buffer_m: float = FLOOR_BUFFER_M
    height_tolerance_m: float = HEIGHT_TOLERANCE_M
    mesh_contacts: bool = False


#: Depth comparisons ignore differences below this (float rounding), metres.
DEPTH_SLACK_M = 1e-9

EVALUATION = PhysicsRules("evaluation", min_depth_m=0.01)
REWARD = PhysicsRules("reward", min_depth_m=0.0)
#: :data:`REWARD` with the released FCL contacts (``-o address=jid``, the released behaviour).
REWARD_RELEASED = PhysicsRules("reward-released", min_depth_m=0.0, mesh_contacts=True)
OPTIMIZER = PhysicsRules("optimizer", min_depth_m=0.01, corner_rule=True)
RULES = {r.name: r for r in (EVALUATION, REWARD, OPTIMIZER)}


@dataclass(frozen=True)
class Contact:
    """Objects ``a < b`` penetrate by ``depth_m`` metres (minimum translation distance)."""

    a: int
    b: int
    depth_m: float

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "depth_m": round(self.depth_m, 6)}


@dataclass(frozen=True)
class PhysicsReport:
    """One room checked under one variant. Indices are object indices of the layout.

    Attributes:
        contacts: Colliding pairs, deepest first (ties by index); at a mesh level a pair's
            depth is its deepest FCL contact.
        colliding: Objects in any colliding pair, ascending.
        outside_fraction: ``(n,)`` outside share of each object's surface.
        out_of_bounds: Out-of-bounds objects, ascending.
        oob_volume_m3: ``(n,)`` volume × outside share for out-of-bounds objects, else 0.
        geometry: The geometry level the objects had (``box``, ``procedural``, ``mesh``).
        mesh_fallbacks: ``(index, source)`` of each object measured on its procedural stand-in
            at level ``mesh`` because its asset was missing or bad (the source says why); filled
            where the meshes were made here (`check_physics`), so no stand-in goes unsaid.
    """

    rules: PhysicsRules
    n_objects: int
    contacts: tuple[Contact, ...]
    colliding: tuple[int, ...]
    outside_fraction: FloatArray = field(repr=False)
    out_of_bounds: tuple[int, ...]
    oob_volume_m3: FloatArray = field(repr=False)
    geometry: str = "box"
    mesh_fallbacks: tuple[tuple[int, str], ...] = ()

    @property
    def collision_rate_pct(self) -> float:
        return 100.0 * len(self.colliding) / self.n_objects if self.n_objects else 0.0

    @property
    def oob_rate_pct(self) -> float:
        return 100.0 * len(self.out_of_bounds) / self.n_objects if self.n_objects else 0.0

    @property
    def total_penetration_m(self) -> float:
        return float(sum(c.depth_m for c in self.contacts))

    @property
    def mean_penetration_m(self) -> float:
        return self.total_penetration_m / len(self.contacts) if self.contacts else 0.0

    @property
    def total_oob_volume_m3(self) -> float:
        return float(self.oob_volume_m3.sum())

    @property
    def mean_oob_volume_m3(self) -> float:
        return self.total_oob_volume_m3 / len(self.out_of_bounds) if self.out_of_bounds else 0.0

    @property
    def clean(self) -> bool:
        return not self.contacts and not self.out_of_bounds

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.name,
            "geometry": self.geometry,
            "n_objects": self.n_objects,
            "colliding": list(self.colliding),
            "out_of_bounds": list(self.out_of_bounds),
            "pairs": [c.to_dict() for c in self.contacts],
            "collision_rate": self.collision_rate_pct,
            "oob_rate": self.oob_rate_pct,
            "collision_free": 100.0 if not self.contacts else 0.0,
            "valid_placement": 100.0 if not self.out_of_bounds else 0.0,
            "n_colliding_pairs": len(self.contacts),
            "total_penetration_m": self.total_penetration_m,
            "mean_penetration_m": self.mean_penetration_m,
            "total_oob_volume_m3": self.total_oob_volume_m3,
            "mean_oob_volume_m3": self.mean_oob_volume_m3,
            "outside_fraction": [round(float(f), 6) for f in self.outside_fraction],
        }


def penetrations(layout: RoomLayout) -> list[Contact]:
    """Every pair of boxes that overlaps with positive depth, in index order."""
    if len(layout) < 2:
        return []
    boxes = layout.boxes
    pairs = contact_pairs(boxes, tol=0.0)
    if not len(pairs):
        return []
    depth = -sat_separation(boxes.subset(pairs[:, 0]), boxes.subset(pairs[:, 1]))
    return [Contact(int(a), int(b), float(d)) for (a, b), d in zip(pairs, depth, strict=True) if d > 0.0]


def check_physics(
    layout: RoomLayout, rules: PhysicsRules = EVALUATION, *, geometry: GeometryLevel = "box",
    library: AssetLibrary | None = None,
) -> PhysicsReport:
    """Collisions and out-of-bounds objects of ``layout`` under ``rules``, the objects
    shaped at ``geometry`` (``box``: the exact box tests of this module; ``procedural`` or
    ``mesh``: :mod:`.meshes`, ``library`` giving the real assets of ``mesh``). The corner
    rule (out of bounds) and the released box contacts are box rules and ignore ``geometry``."""
    geometry = check_level(geometry)
    fallbacks: dict[int, str] = {}
    meshes = None if geometry == "box" or rules.mesh_contacts else \
        layout_meshes(layout, geometry, library=library, fallbacks=fallbacks)
    return replace(physics_of(layout, rules, meshes, geometry), mesh_fallbacks=tuple(sorted(fallbacks.items())))


def physics_of(layout: RoomLayout, rules: PhysicsRules, meshes: list[SolidMesh] | None,
               geometry: GeometryLevel = "box") -> PhysicsReport:
    """`check_physics` with the objects' meshes already made (None: boxes); the optimizer moves
    objects between checks and keeps their meshes, which do not change with the pose."""
    if meshes is not None:
        found = [Contact(*c) for c in mesh_pairs(layout, meshes)]
    elif rules.mesh_contacts:
        found = [Contact(*c) for c in released_contacts(layout)]
    else:
        found = penetrations(layout)
    kept = [c for c in found if c.depth_m > rules.min_depth_m + DEPTH_SLACK_M]
    kept.sort(key=(lambda c: -c.depth_m) if rules.mesh_contacts else (lambda c: (-c.depth_m, c.a, c.b)))
    colliding = tuple(sorted({c.a for c in kept} | {c.b for c in kept}))
    if meshes is not None:
        fractions = mesh_outside_fractions(
            layout, meshes, buffer_m=rules.floor_buffer_m, height_tolerance_m=rules.height_tolerance_m)
        volumes_m3 = mesh_volumes(meshes)
    else:
        fractions = outside_fractions(
            layout, buffer_m=rules.floor_buffer_m, height_tolerance_m=rules.height_tolerance_m
        )
        volumes_m3 = layout.volumes_m3
    if rules.corner_rule:
        # The optimizer's out-of-bounds rule looks at footprint corners: a box rule at every level.
        oob_mask = corners_outside(layout, rules.floor_buffer_m)
    else:
        oob_mask = fractions > rules.max_outside_fraction
    volumes = np.where(oob_mask, volumes_m3 * fractions, 0.0)
    return PhysicsReport(
        rules,
        len(layout),
        tuple(kept),
        colliding,
        fractions,
        tuple(int(i) for i in np.flatnonzero(oob_mask)),
        volumes,
        "box" if meshes is None else geometry,
    )


def corners_outside(layout: RoomLayout, buffer_m: float = FLOOR_BUFFER_M) -> NDArray[np.bool_]:
    """``(n,)`` whether any corner of each box's (rotated) floor footprint is off the floor."""
    if len(layout) == 0:
        return np.zeros(0, dtype=bool)
    poly = room_polygon(layout, buffer_m)
    corners = layout.corners()[:, :, [0, 2]]
    covered = shapely.intersects_xy(poly, corners[..., 0], corners[..., 1])  # a point: intersects == covers
    return ~np.all(covered, axis=1)


def feedback_text(report: PhysicsReport, names: list[str], top_k: int = 3) -> str:
    """The RL environment's physics hint: the ``top_k`` deepest collisions (cm) and the
    ``top_k`` objects most outside (% of surface), named by ``names[index]``, each list ending
    "and N more" when it was cut; "" when clean."""
    parts = []
    if report.contacts:
        listed = [f"'{names[c.a]}' and '{names[c.b]}' (depth: {100 * c.depth_m:.1f}cm)"
                  for c in report.contacts[:top_k]]
        parts.append(f"Collisions: {_cut(listed, len(report.contacts))}. Separate these objects to avoid overlap.")
    if report.out_of_bounds:
        worst = sorted(report.out_of_bounds, key=lambda i: (-report.outside_fraction[i], i))[:top_k]
        listed = [f"'{names[i]}' ({100 * report.outside_fraction[i]:.0f}% outside)" for i in worst]
        parts.append(f"Out of bounds: {_cut(listed, len(report.out_of_bounds))}. "
                     "Move these objects inside the room boundaries.")
    return "[Physics] " + " ".join(parts) if parts else ""


def _cut(listed: list[str], total: int) -> str:
    return "; ".join([*listed, f"and {total - len(listed)} more"] if total > len(listed) else listed)
