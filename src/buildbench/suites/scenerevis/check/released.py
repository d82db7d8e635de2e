"""The released reward's physics where it departs from ours: FCL contacts.

The released RL environment (``utils/RL_utils.py::TrimeshPhysicsMetrics``) builds a mesh per
object; with no asset mesh at hand it uses a ``trimesh`` box of the object's size, scaled by
``size / (extents + 1e-6)``, its bottom centre moved to the origin, then rotated by ``rot``
and moved to ``pos``. trimesh's ``CollisionManager`` asks FCL for one contact per pair of
meshes whose triangles intersect. FCL's depth is that of a triangle pair: for rotated or deep
overlaps it is not the minimum translation distance that :func:`.physics.penetrations`
measures, and a box wholly inside another (no triangles cross) has no contact at all.
:data:`.physics.REWARD_RELEASED` uses these contacts, so that under ``-o address=jid`` the
physics hint's depths and the reward's summed penetration are the released ones
(``tests/scenerevis/test_original_agreement_scoring.py`` compares them with recorded answers).

R_support by the released rules is a reward term (:mod:`..reward.released`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .layout import RoomLayout

#: The released scale guard: each box is scaled by ``size / (extents + 1e-6)``.
_SCALE_GUARD = 1e-6


@lru_cache(maxsize=1024)  # ~13 KiB a mesh with its trimesh caches
def _box_mesh_of(pose: bytes) -> Any:
    """The box mesh of one object's size, bottom and rotation (15 float64 values as bytes).

    Cached: an env step, its hint and its reward check the same scene, and an editing chain keeps
    most objects where they were; the mesh is never changed after this, so trimesh keeps its
    cached convexity test (most of the cost of adding a mesh to a collision manager)."""
    values = np.frombuffer(pose, dtype=np.float64)
    return _box_mesh(values[:3].copy(), values[3:6].copy(), values[6:].reshape(3, 3).copy())


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
    if len(layout) < 2:
        return []
    poses = np.concatenate([np.asarray(a, dtype=np.float64).reshape(len(layout), -1)
                            for a in (layout.sizes, layout.bottoms, layout.rotations)], axis=1)
    return list(_contacts_of(tuple(row.tobytes() for row in poses)))


@lru_cache(maxsize=512)
def _contacts_of(poses: tuple[bytes, ...]) -> tuple[tuple[int, int, float], ...]:
    """`released_contacts` of the objects' poses (as `_box_mesh_of` takes them); cached by
    content, as the same scene is checked for the observation, the hint and the reward."""
    from trimesh.collision import CollisionManager

    manager = CollisionManager()
    for i, pose in enumerate(poses):
        manager.add_object(f"obj_{i}", _box_mesh_of(pose))
    _, data = manager.in_collision_internal(return_data=True)
    contacts = []
    for contact in data:
        a, b = sorted(int(name.split("_")[1]) for name in contact.names)
        if contact.depth > 0:
            contacts.append((a, b, float(contact.depth)))
    return tuple(contacts)
