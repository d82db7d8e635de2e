"""The released machine's colliders: python-fcl for the meshes it can take, their bounds for the others.

The released library put every block collider into a trimesh
``CollisionManager`` (python-fcl). A ``None`` inside a shift (numpy reads it
as NaN) or an overflowing one (``1e308`` twice) puts a collider's vertices at
NaN or at infinity, and coordinates such as ``1e308`` make FCL overflow (it
squares and adds coordinates). FCL's broad phase (its AABB tree) can die of
a segmentation fault with either in it: the released library's process died
that way too (seed 200004 of the odd held-out set; the fuzz tool's seeds 1196
and 1274 of machines, with NaN, and seed 138 of assemblies, with ``1e308``).

``Colliders`` is the one door to FCL: a mesh reaches it only when it has
vertices and faces and every vertex is finite and within ``FCL_LIMIT``. The
others are tested without FCL, reproducing what FCL answered the released
library for them (probed with FCL itself, 3,000 pairs, and measured on the
odd held-out set): a non-finite collider overlaps another when their
axis-aligned bounds intersect (a NaN bound intersects nothing); two far
colliders (finite, beyond the limit) overlap when their bounds intersect and
both have collapsed, in floating point, on two axes or three (to a segment or
a point); shapes collapsed on one axis only (flat) overlap nothing, FCL's
usual answer for them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
import trimesh.collision

from .hashorder import set_order

FCL_LIMIT = 1e150
"""Largest coordinate a collider sent to FCL may have (its squares still fit in a float)."""


def regular(mesh: trimesh.Trimesh) -> bool:
    """Whether FCL may take ``mesh``: some vertices and faces, every vertex finite and within ``FCL_LIMIT``."""
    vertices = np.asarray(mesh.vertices)
    if len(vertices) == 0 or len(mesh.faces) == 0 or not np.isfinite(vertices).all():
        return False
    return bool(np.abs(vertices).max() <= FCL_LIMIT)


@dataclass(frozen=True)
class Bounds:
    """A collider's axis-aligned bounds, whether they are finite, and on how many axes it has no extent."""

    lo: np.ndarray
    hi: np.ndarray
    finite: bool
    collapsed: int

    @classmethod
    def of(cls, mesh: trimesh.Trimesh) -> Bounds:
        vertices = np.asarray(mesh.vertices, dtype=np.float64)
        if not len(vertices):
            nan = np.full(3, np.nan)
            return cls(nan, nan, False, 3)
        lo, hi = vertices.min(axis=0), vertices.max(axis=0)
        with np.errstate(invalid="ignore"):
            collapsed = int((~(hi - lo > 0)).sum())
        return cls(lo, hi, bool(np.isfinite(vertices).all()), collapsed)

    def meets(self, other: Bounds) -> bool:
        """Whether two colliders, one of them kept out of FCL, overlap (see the module docstring)."""
        with np.errstate(invalid="ignore"):
            touching = bool((self.lo <= other.hi).all() and (other.lo <= self.hi).all())
        if not (self.finite and other.finite):
            return touching
        return touching and min(self.collapsed, other.collapsed) >= 2


class Colliders:
    """Named block colliders: regular ones in a trimesh ``CollisionManager``, the others by their bounds."""

    def __init__(self) -> None:
        self._manager = trimesh.collision.CollisionManager()
        self._bounds: dict[str, Bounds] = {}
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
        self._bounds[name] = Bounds.of(mesh)
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
            bounds = self._bounds[name]
            for other, other_bounds in self._bounds.items():
                pair = _pair(name, other)
                if other != name and pair not in known and bounds.meets(other_bounds):
                    found.append(pair)
                    known.add(pair)
        return found


def _pair(a: str, b: str) -> tuple[str, str]:
    """A pair as trimesh names it: the two names sorted as strings."""
    return (a, b) if a <= b else (b, a)
