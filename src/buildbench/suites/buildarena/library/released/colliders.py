"""The released machine's colliders: python-fcl for finite meshes, box bounds for the others.

The released library put every block collider into a trimesh
``CollisionManager`` (python-fcl). A ``None`` inside a shift (numpy reads it
as NaN) or an overflowing one (``1e308`` twice) puts a collider's vertices at
NaN or at infinity, and FCL's broad phase (its AABB tree) can die of a
segmentation fault once such a bound is in it: the released library's
process died that way too (seed 200004 of the fresh held-out set, and the
fuzz tool's seed 1196). A finite mesh is safe there, however far out (1e308
included, shapes collapsed to a point included; probed and fuzzed), and FCL's
answers for those are the released library's answers, so they go to FCL.

``Colliders`` is the one door to FCL: a mesh reaches it only when it has
vertices and faces and every vertex is finite. Any other mesh stays out and
is tested by its axis-aligned bounds: two colliders overlap when their
bounds intersect, which reads a NaN collider as overlapping nothing and
colliders at the same infinity as overlapping (what the released library
answered in those cases where it answered at all).
"""

from __future__ import annotations

import numpy as np
import trimesh
import trimesh.collision

from .hashorder import set_order


def regular(mesh: trimesh.Trimesh) -> bool:
    """Whether FCL may take ``mesh``: some vertices and faces, every vertex finite."""
    vertices = np.asarray(mesh.vertices)
    return len(vertices) > 0 and len(mesh.faces) > 0 and bool(np.isfinite(vertices).all())


class Colliders:
    """Named block colliders: regular ones in a trimesh ``CollisionManager``, the others by their bounds."""

    def __init__(self) -> None:
        self._manager = trimesh.collision.CollisionManager()
        self._bounds: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """Bounds of every collider (regular ones too, to test them against the others)."""
        self._irregular: list[str] = []

    def __contains__(self, name: str) -> bool:
        return name in self._bounds

    def names(self) -> list[str]:
        """Every collider's name."""
        return list(self._bounds)

    def add(self, name: str, mesh: trimesh.Trimesh) -> None:
        """Add (or replace) ``name``'s collider."""
        if name in self._bounds:
            self.remove(name)
        vertices = np.asarray(mesh.vertices, dtype=np.float64)
        if len(vertices):
            lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        else:
            lo = hi = np.full(3, np.nan)
        self._bounds[name] = (lo, hi)
        if regular(mesh):
            self._manager.add_object(name, mesh)
        else:
            self._irregular.append(name)

    def remove(self, name: str) -> None:
        """Remove ``name``'s collider (it must be there)."""
        del self._bounds[name]
        if name in self._irregular:
            self._irregular.remove(name)
        else:
            self._manager.remove_object(name)

    def clear(self) -> None:
        """Remove every collider."""
        for name in self.names():
            self.remove(name)

    def overlapping(self) -> list[tuple[str, str]]:
        """Every overlapping pair, each ``(smaller name, larger name)``, in the order the released library
        listed them: trimesh's set of FCL's pairs (see ``hashorder``), then the pairs of bounds that
        involve an irregular collider."""
        _, _, contacts = self._manager.in_collision_internal(return_names=True, return_data=True)
        found = [(a, b) for a, b in set_order([_pair(*contact.names) for contact in contacts])]
        known = set(found)
        for name in self._irregular:
            lo, hi = self._bounds[name]
            for other, (olo, ohi) in self._bounds.items():
                pair = _pair(name, other)
                if other == name or pair in known:
                    continue
                with np.errstate(invalid="ignore"):
                    if bool((lo <= ohi).all() and (olo <= hi).all()):
                        found.append(pair)
                        known.add(pair)
        return found


def _pair(a: str, b: str) -> tuple[str, str]:
    """A pair as trimesh names it: the two names sorted as strings."""
    return (a, b) if a <= b else (b, a)
