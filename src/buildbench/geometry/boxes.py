"""A batch of oriented boxes stored as plain arrays.

A box is a centre, three half extents along its local axes and a rotation whose
*columns* are those local axes in the world frame. An axis-aligned box is the special
case ``rotation = I``. All lengths are metres.

Corner ``k`` of a box (``0 <= k < 8``) sits at local offset ``(sx*hx, sy*hy, sz*hz)``
with ``sx = +1`` if bit 0 of ``k`` is set else ``-1``, ``sy`` from bit 1 and ``sz`` from
bit 2. :data:`BOX_EDGES` lists the 12 edges as pairs of corner indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from buildbench.geometry.transforms import decompose

__all__ = ["AABBs", "BOX_CORNER_SIGNS", "BOX_EDGES", "Boxes"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

BOX_CORNER_SIGNS: FloatArray = np.array(
    [[1.0 if k & (1 << axis) else -1.0 for axis in range(3)] for k in range(8)]
)
"""``(8, 3)`` signs of each corner's local offset, in corner order."""

BOX_EDGES: IntArray = np.array(
    [(k, k | (1 << axis)) for axis in range(3) for k in range(8) if not k & (1 << axis)],
    dtype=np.int64,
)
"""``(12, 2)`` corner-index pairs, four edges parallel to local x, then y, then z."""

# How far R^T R may stray from I before a rotation is rejected; loose enough for
# float32 round trips through file formats, tight enough to catch scale or shear.
_ORTHONORMAL_TOL = 1e-5


class AABBs(NamedTuple):
    """Axis-aligned bounds of a batch: ``mins`` and ``maxs``, each ``(n, 3)`` metres."""

    mins: FloatArray
    maxs: FloatArray


@dataclass(frozen=True, eq=False)
class Boxes:
    """A batch of ``n`` oriented boxes.

    Construction validates and copies the inputs into read-only contiguous float64
    arrays, so a ``Boxes`` never holds NaN, negative extents or non-rotations: a bad box
    raises ``ValueError`` naming its index.

    Attributes:
        centers: ``(n, 3)`` box centres in metres.
        half_extents: ``(n, 3)`` non-negative half sizes along the local axes, metres.
            Zero is allowed (flat, line or point boxes).
        rotations: ``(n, 3, 3)`` proper rotations; column ``k`` is local axis ``k``.
    """

    centers: FloatArray
    half_extents: FloatArray
    rotations: FloatArray

    def __post_init__(self) -> None:
        centers = np.array(self.centers, dtype=np.float64, copy=True)
        if centers.size == 0:
            centers = centers.reshape(0, 3)
        if centers.ndim != 2 or centers.shape[1] != 3:
            raise ValueError(f"Boxes: centers must have shape (n, 3), got {centers.shape}")
        n = len(centers)
        half = np.array(self.half_extents, dtype=np.float64, copy=True)
        rot = np.array(self.rotations, dtype=np.float64, copy=True)
        if n == 0 and half.size == 0 and rot.size == 0:
            half, rot = half.reshape(0, 3), rot.reshape(0, 3, 3)
        if half.shape != (n, 3):
            raise ValueError(f"Boxes: half_extents must have shape ({n}, 3), got {half.shape}")
        if rot.shape != (n, 3, 3):
            raise ValueError(f"Boxes: rotations must have shape ({n}, 3, 3), got {rot.shape}")
        _check_finite(centers, "centers")
        _check_finite(half, "half_extents")
        _check_finite(rot.reshape(n, 9), "rotations")
        negative = np.flatnonzero(np.any(half < 0, axis=1))
        if negative.size:
            i = int(negative[0])
            raise ValueError(f"Boxes: box {i} has a negative half extent {half[i].tolist()}")
        if n:
            err = np.abs(_gram(rot) - np.eye(3)).max(axis=(1, 2))
            det = np.einsum("ni,ni->n", rot[:, :, 0], np.cross(rot[:, :, 1], rot[:, :, 2]))
            bad = np.flatnonzero((err > _ORTHONORMAL_TOL) | (det < 0))
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"Boxes: rotations[{i}] is not a proper rotation (|R^T R - I| = {err[i]:.3g},"
                    f" det = {det[i]:.3g}); pass scale in half_extents instead"
                )
        object.__setattr__(self, "centers", _frozen(centers))
        object.__setattr__(self, "half_extents", _frozen(half))
        object.__setattr__(self, "rotations", _frozen(rot))

    @classmethod
    def _trusted(cls, centers: FloatArray, half_extents: FloatArray, rotations: FloatArray) -> Boxes:
        """Wrap arrays derived from an already validated batch without re-checking them."""
        out = object.__new__(cls)
        object.__setattr__(out, "centers", _frozen(centers))
        object.__setattr__(out, "half_extents", _frozen(half_extents))
        object.__setattr__(out, "rotations", _frozen(rotations))
        return out

    @classmethod
    def empty(cls) -> Boxes:
        """A batch of zero boxes."""
        return cls(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3, 3)))

    @classmethod
    def from_aabbs(cls, mins: ArrayLike, maxs: ArrayLike) -> Boxes:
        """Axis-aligned boxes from corner bounds.

        Args:
            mins: ``(n, 3)`` lower corners, metres.
            maxs: ``(n, 3)`` upper corners, metres; must be ``>= mins``.
        """
        lo = np.asarray(mins, dtype=np.float64).reshape(-1, 3)
        hi = np.asarray(maxs, dtype=np.float64).reshape(-1, 3)
        if lo.shape != hi.shape:
            raise ValueError(f"Boxes.from_aabbs: mins {lo.shape} and maxs {hi.shape} differ in shape")
        _check_finite(lo, "mins")
        _check_finite(hi, "maxs")
        inverted = np.flatnonzero(np.any(hi < lo, axis=1))
        if inverted.size:
            i = int(inverted[0])
            raise ValueError(f"Boxes.from_aabbs: box {i} has maxs {hi[i].tolist()} < mins {lo[i].tolist()}")
        n = len(lo)
        return cls((lo + hi) / 2, (hi - lo) / 2, np.broadcast_to(np.eye(3), (n, 3, 3)))

    @classmethod
    def from_matrices(cls, matrices: ArrayLike, sizes: ArrayLike) -> Boxes:
        """Boxes from world matrices and local full sizes (a unit-cube mesh scaled by them).

        This is how a DCC object is described: ``matrices[i]`` is the object's world
        matrix (may include scale, even negative) and ``sizes[i]`` the full size of the
        mesh's local bounding box, centred at the local origin, *before* scale. (Blender's
        ``obj.dimensions`` already includes the object's scale; pair it with an unscaled
        matrix, or pass the mesh's own bound-box size with ``matrix_world``.)

        Args:
            matrices: ``(n, 4, 4)`` world matrices.
            sizes: ``(n, 3)`` non-negative full sizes along local x, y, z, metres.

        Raises:
            ValueError: sheared or non-finite matrices, bad sizes (naming the box index).
        """
        mats = np.asarray(matrices, dtype=np.float64).reshape(-1, 4, 4)
        size = np.asarray(sizes, dtype=np.float64).reshape(-1, 3)
        if len(mats) != len(size):
            raise ValueError(f"Boxes.from_matrices: {len(mats)} matrices but {len(size)} sizes")
        _check_finite(size, "sizes")
        trs = decompose(mats)
        return cls(trs.translation, np.abs(trs.scale) * size / 2, trs.rotation)

    @classmethod
    def concatenate(cls, batches: Sequence[Boxes]) -> Boxes:
        """One batch holding every box of ``batches`` in order."""
        if not batches:
            return cls.empty()
        return cls(
            np.concatenate([b.centers for b in batches]),
            np.concatenate([b.half_extents for b in batches]),
            np.concatenate([b.rotations for b in batches]),
        )

    def __len__(self) -> int:
        return len(self.centers)

    def subset(self, index: ArrayLike) -> Boxes:
        """The boxes at ``index`` (integer indices, may repeat, or a boolean mask)."""
        idx = np.asarray(index)
        if idx.dtype != bool:
            idx = idx.astype(np.int64).reshape(-1)
        return Boxes._trusted(self.centers[idx], self.half_extents[idx], self.rotations[idx])

    def inflated(self, margin: float) -> Boxes:
        """The same boxes grown by ``margin`` metres on every face (shrunk if negative,
        clamped at zero size)."""
        if not np.isfinite(margin):
            raise ValueError(f"Boxes.inflated: margin must be finite, got {margin}")
        return Boxes._trusted(self.centers, np.maximum(self.half_extents + margin, 0.0), self.rotations)

    def corners(self) -> FloatArray:
        """``(n, 8, 3)`` world corners in the order documented in the module docstring."""
        local = BOX_CORNER_SIGNS[None, :, :] * self.half_extents[:, None, :]
        return np.einsum("nij,nkj->nki", self.rotations, local) + self.centers[:, None, :]

    def aabbs(self) -> AABBs:
        """Tight world axis-aligned bounds of every box."""
        reach = np.einsum("nij,nj->ni", np.abs(self.rotations), self.half_extents)
        return AABBs(self.centers - reach, self.centers + reach)

    def volumes(self) -> FloatArray:
        """``(n,)`` volumes in cubic metres."""
        return 8.0 * np.prod(self.half_extents, axis=1)

    def matrices(self) -> FloatArray:
        """``(n, 4, 4)`` rigid box-to-world transforms (no scale)."""
        out = np.zeros((len(self), 4, 4))
        out[:, :3, :3] = self.rotations
        out[:, :3, 3] = self.centers
        out[:, 3, 3] = 1.0
        return out

    def to_local(self, points: ArrayLike) -> FloatArray:
        """Express world points in every box's local frame.

        Args:
            points: ``(m, 3)`` world points, metres.

        Returns:
            ``(n, m, 3)``: entry ``[i, j]`` is point ``j`` relative to box ``i``'s
            centre, along box ``i``'s axes.
        """
        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        return np.einsum("nji,nmj->nmi", self.rotations, p[None, :, :] - self.centers[:, None, :])

    def contains_points(self, points: ArrayLike, tol: float = 0.0) -> NDArray[np.bool_]:
        """Which points lie inside (or on the surface of) which boxes.

        Memory is ``O(n * m)``; for large grids use :func:`buildbench.geometry.voxelize_boxes`.

        Args:
            points: ``(m, 3)`` world points, metres.
            tol: a point up to ``tol`` metres outside a face (per local axis) still counts.

        Returns:
            ``(n, m)`` boolean matrix.
        """
        local = self.to_local(points)
        return np.all(np.abs(local) <= self.half_extents[:, None, :] + tol, axis=2)


def _gram(rot: FloatArray) -> FloatArray:
    """``Rᵀ R`` of each 3x3 matrix, summed row by row in a fixed order.

    Not ``@``: numpy hands a float64 matmul to BLAS, whose kernel (and its fused multiply-adds)
    depends on the CPU, so a rotation whose error lies at the tolerance would be accepted on one
    machine and refused on another.
    """
    g = rot[:, 0, :, None] * rot[:, 0, None, :]
    g += rot[:, 1, :, None] * rot[:, 1, None, :]
    g += rot[:, 2, :, None] * rot[:, 2, None, :]
    return g


def _frozen(values: FloatArray) -> FloatArray:
    """A contiguous read-only array, so a validated batch cannot be edited in place."""
    out = np.ascontiguousarray(values)
    if out.flags.writeable and out.base is not None:
        out = out.copy()  # never freeze a caller's array through a view of it
    out.flags.writeable = False
    return out


def _check_finite(values: FloatArray, what: str) -> None:
    """Raise naming the first row of ``values`` that holds NaN or infinity."""
    rows = values.reshape(len(values), -1) if len(values) else values.reshape(0, 1)
    bad = np.flatnonzero(~np.all(np.isfinite(rows), axis=1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"Boxes: box {i} has non-finite {what}: {rows[i].tolist()}")
