"""The released reward's physics where it departs from ours: FCL contacts, support rules.

The released RL environment (``utils/RL_utils.py::TrimeshPhysicsMetrics``) builds a mesh per
object; with no asset mesh at hand it uses a ``trimesh`` box of the object's size, scaled by
``size / (extents + 1e-6)``, its bottom centre moved to the origin, then rotated by ``rot``
and moved to ``pos``. trimesh's ``CollisionManager`` asks FCL for one contact per pair of
meshes whose triangles intersect. FCL's depth is that of a triangle pair: for rotated or deep
overlaps it is not the minimum translation distance that :func:`.physics.penetrations`
measures, and a box wholly inside another (no triangles cross) has no contact at all.
:data:`.physics.REWARD_RELEASED` uses these contacts, so that under ``-o address=jid`` the
physics hint's depths and the reward's summed penetration are the released ones
(``tests/scenerevis/test_original_agreement.py`` compares them with recorded answers).

:func:`released_support_reward` is R_support by the released rules, which :mod:`.support`
departs from on purpose (see there); the released mode's reward uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .layout import RoomLayout, scene_objects
from .support import (
    CARRIER_WORDS,
    CEILING_MIN_SHARE,
    CEILING_WORDS,
    FLOOR_WORDS,
    SUPPORT_TOLERANCE_M,
    SURFACE_MAX_HEIGHT_M,
    SURFACE_MIN_AREA_M2,
    SURFACE_WORDS,
    WALL_TOLERANCE_M,
    WALL_WORDS,
)

#: The released scale guard: each box is scaled by ``size / (extents + 1e-6)``.
_SCALE_GUARD = 1e-6


def _box_mesh(size: np.ndarray, bottom: np.ndarray, rotation: np.ndarray) -> Any:
    import trimesh

    mesh = trimesh.creation.box(extents=size)
    mesh.apply_scale(size / (mesh.extents + _SCALE_GUARD))
    lo, hi = mesh.bounds
    to_origin = np.eye(4)
    to_origin[:3, 3] = -np.array([(lo[0] + hi[0]) / 2, lo[1], (lo[2] + hi[2]) / 2])
    pose = np.eye(4)
    pose[:3, :3] = rotation
    pose[:3, 3] = bottom
    # Two transforms, in the released order, so the vertices round as the release's do.
    mesh.apply_transform(to_origin)
    mesh.apply_transform(pose)
    return mesh


def released_contacts(layout: RoomLayout) -> list[tuple[int, int, float]]:
    """``(a, b, depth_m)`` with ``a < b``: one contact per pair of box meshes FCL finds
    intersecting with positive depth, in FCL's order (the release sorts its hint by depth,
    stably, so equal depths keep this order)."""
    from trimesh.collision import CollisionManager

    if len(layout) < 2:
        return []
    manager = CollisionManager()
    for i in range(len(layout)):
        manager.add_object(f"obj_{i}", _box_mesh(layout.sizes[i], layout.bottoms[i], layout.rotations[i]))
    _, data = manager.in_collision_internal(return_data=True)
    contacts = []
    for contact in data:
        a, b = sorted(int(name.split("_")[1]) for name in contact.names)
        if contact.depth > 0:
            contacts.append((a, b, float(contact.depth)))
    return contacts


#: The release's support classes: substring keywords tried ceiling → wall → surface → floor
#: (:mod:`.support` lists the same words, less the bare "frame" and plus "ceiling fan").
RELEASED_SUPPORT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ceiling", tuple(w for w in CEILING_WORDS if w != "ceiling fan")),
    ("wall", (*WALL_WORDS, "frame")),
    ("surface", SURFACE_WORDS),
    ("floor", FLOOR_WORDS),
)


def released_support_kind(desc: str) -> str:
    """The release's support class of a description; "floor" when no keyword occurs anywhere in
    it (the release then asks its judge model, and answers "floor" when it cannot)."""
    text = desc.lower()
    return next((kind for kind, words in RELEASED_SUPPORT_WORDS if any(w in text for w in words)), "floor")


def released_support_reward(scene: Mapping[str, Any]) -> float:
    """R_support as the release computes it (``_calculate_support_reward``): unrotated boxes
    ``pos ± size / 2``; floor and ceiling heights of the *first* bound vertices; the ceiling
    rule ``0.8 · ceiling_y ≤ top ≤ ceiling_y + 0.05``; "near a wall" within 0.15 m of the
    floor's bounding rectangle; 0 for a room without objects."""
    inner = scene.get("room_envelope")
    envelope: Mapping[str, Any] = inner if isinstance(inner, Mapping) else scene
    bottom, top = np.asarray(envelope["bounds_bottom"], float), np.asarray(envelope["bounds_top"], float)
    floor_y, ceiling_y = bottom[0][1], top[0][1]
    objects = [o for _, o in scene_objects(scene)]
    if not objects:
        return 0.0
    pos = np.array([o["pos"] for o in objects], float)
    size = np.array([o["size"] for o in objects], float)
    descs = [str(o.get("desc", "")).lower() for o in objects]
    lo, hi = pos - size / 2, pos + size / 2
    carriers = [i for i, d in enumerate(descs) if any(w in d for w in CARRIER_WORDS)
                or (size[i, 1] < SURFACE_MAX_HEIGHT_M and size[i, 0] * size[i, 2] > SURFACE_MIN_AREA_M2)]
    unsupported = 0
    for i, desc in enumerate(descs):
        kind, base, cap = released_support_kind(desc), pos[i, 1], pos[i, 1] + size[i, 1]
        if kind == "floor":
            ok = abs(base - floor_y) < SUPPORT_TOLERANCE_M
        elif kind == "surface":
            ok = any(abs(base - (pos[j, 1] + size[j, 1])) < SUPPORT_TOLERANCE_M
                     and not (hi[i, 0] < lo[j, 0] or lo[i, 0] > hi[j, 0])
                     and not (hi[i, 2] < lo[j, 2] or lo[i, 2] > hi[j, 2]) for j in carriers)
        elif kind == "ceiling":
            ok = CEILING_MIN_SHARE * ceiling_y <= cap <= ceiling_y + SUPPORT_TOLERANCE_M
        else:
            ok = bool(min(abs(pos[i, 0] - bottom[:, 0].min()), abs(pos[i, 0] - bottom[:, 0].max()),
                          abs(pos[i, 2] - bottom[:, 2].min()), abs(pos[i, 2] - bottom[:, 2].max()))
                      < WALL_TOLERANCE_M)
        unsupported += not ok
    rate_pct = 100.0 * unsupported / len(objects)
    if rate_pct == 0:
        return 1.0
    return 1.0 - rate_pct / 10.0 if rate_pct <= 10 else -(rate_pct - 10.0) / 90.0
