"""Triangle meshes of boxes, mesh areas, and seeded area-weighted surface sampling.

Sampling is deterministic for a given ``numpy.random.Generator`` state: the same seed
gives the same points, byte for byte, which scoring relies on (two identical meshes
must score exactly 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from buildbench.geometry.boxes import Boxes

__all__ = ["SurfaceSamples", "TriangleMesh", "allocate_samples", "box_mesh", "sample_surface"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Two counter-clockwise (seen from outside) triangles per face, over the corner
# numbering of buildbench.geometry.boxes (bit 0: +x, bit 1: +y, bit 2: +z).
_BOX_TRIANGLES = np.array(
    [
        [0, 4, 6], [0, 6, 2],  # -x
        [1, 3, 7], [1, 7, 5],  # +x
        [0, 1, 5], [0, 5, 4],  # -y
        [2, 6, 7], [2, 7, 3],  # +y
        [0, 2, 3], [0, 3, 1],  # -z
        [4, 5, 7], [4, 7, 6],  # +z
    ],
    dtype=np.int64,
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """An indexed triangle mesh.

    Attributes:
        vertices: ``(v, 3)`` positions, metres.
        faces: ``(f, 3)`` vertex indices, counter-clockwise seen from outside.
    """

    vertices: FloatArray
    faces: IntArray

    def __post_init__(self) -> None:
        v = np.asarray(self.vertices, dtype=np.float64)
        f = np.asarray(self.faces, dtype=np.int64)
        v = v.reshape(0, 3) if v.size == 0 else v
        f = f.reshape(0, 3) if f.size == 0 else f
        if v.ndim != 2 or v.shape[1] != 3:
            raise ValueError(f"TriangleMesh: vertices must have shape (v, 3), got {v.shape}")
        if f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(f"TriangleMesh: faces must have shape (f, 3), got {f.shape}")
        if f.size and (f.min() < 0 or f.max() >= len(v)):
            raise ValueError(
                f"TriangleMesh: face indices must lie in [0, {len(v)}), got {f.min()}..{f.max()}"
            )
        bad = np.flatnonzero(~np.all(np.isfinite(v), axis=1))
        if bad.size:
            raise ValueError(f"TriangleMesh: vertex {int(bad[0])} is not finite: {v[bad[0]].tolist()}")
        object.__setattr__(self, "vertices", v)
        object.__setattr__(self, "faces", f)

    def triangles(self) -> FloatArray:
        """``(f, 3, 3)`` corner positions of every triangle."""
        return self.vertices[self.faces]

    def face_normals(self) -> FloatArray:
        """``(f, 3)`` unit outward normals (zero for degenerate triangles)."""
        tri = self.triangles()
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        length = np.linalg.norm(n, axis=1, keepdims=True)
        return np.divide(n, length, out=np.zeros_like(n), where=length > 0)

    def face_areas(self) -> FloatArray:
        """``(f,)`` triangle areas, square metres."""
        tri = self.triangles()
        return 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)

    def area(self) -> float:
        """Total surface area, square metres."""
        return float(self.face_areas().sum())


@dataclass(frozen=True, eq=False)
class SurfaceSamples:
    """Points sampled on a mesh surface.

    Attributes:
        points: ``(k, 3)`` positions, metres.
        face_index: ``(k,)`` the triangle each point lies on.
    """

    points: FloatArray
    face_index: IntArray


def box_mesh(boxes: Boxes) -> TriangleMesh:
    """A closed triangle mesh of each box: 8 vertices and 12 triangles per box.

    Box ``i`` owns vertices ``8*i .. 8*i+7`` (in corner order) and triangles
    ``12*i .. 12*i+11``, so ``face // 12`` maps a triangle back to its box.
    """
    n = len(boxes)
    faces = (_BOX_TRIANGLES[None, :, :] + 8 * np.arange(n)[:, None, None]).reshape(-1, 3)
    return TriangleMesh(boxes.corners().reshape(-1, 3), faces)


def sample_surface(mesh: TriangleMesh, count: int, rng: np.random.Generator) -> SurfaceSamples:
    """Uniform samples over the mesh surface (triangles picked by area).

    Uses the square-root barycentric mapping, which is uniform within a triangle. When
    every triangle has zero area the triangles are picked uniformly instead, so a
    degenerate object still yields points where it is.

    Args:
        mesh: the surface.
        count: number of points (>= 0).
        rng: the random source; its state advances.

    Raises:
        ValueError: negative count, or points requested from a mesh without triangles.
    """
    if count < 0:
        raise ValueError(f"sample_surface: count must be >= 0, got {count}")
    if count > 0 and len(mesh.faces) == 0:
        raise ValueError(f"sample_surface: cannot draw {count} points from a mesh with no triangles")
    if count == 0:
        return SurfaceSamples(np.zeros((0, 3)), np.zeros(0, dtype=np.int64))
    areas = mesh.face_areas()
    weights = areas if areas.sum() > 0 else np.ones_like(areas)
    cumulative = np.cumsum(weights)
    # Searching uniform draws in the cumulative area is the inverse-CDF pick; the clip
    # guards the last bin against rounding at the top end.
    face = np.minimum(
        np.searchsorted(cumulative, rng.random(count) * cumulative[-1], side="right"), len(areas) - 1
    )
    u, v = rng.random(count), rng.random(count)
    root = np.sqrt(u)
    tri = mesh.triangles()[face]
    points = (
        (1 - root)[:, None] * tri[:, 0]
        + (root * (1 - v))[:, None] * tri[:, 1]
        + (root * v)[:, None] * tri[:, 2]
    )
    return SurfaceSamples(points, face.astype(np.int64))


def allocate_samples(
    areas: ArrayLike,
    total: int,
    per_object_min: int = 0,
    per_object_max: int | None = None,
    redistribute: bool = True,
) -> IntArray:
    """Split a point budget across objects in proportion to their surface area.

    With ``redistribute=True`` object ``i`` gets ``clip(lam * areas[i], per_object_min,
    per_object_max)`` points, with the one scale ``lam`` that makes the counts add up to
    ``total`` (points a capped object cannot take go to the others); the real counts are
    then rounded by largest remainder (ties to the lower index). The minimum wins over
    ``total`` when ``n * per_object_min > total``, and the result sums to less than
    ``total`` when every object is at its maximum.

    With ``redistribute=False`` it is the plain rule ``clip(rint(total * areas[i] /
    sum(areas)), per_object_min, per_object_max)``: proportional first, clamped after,
    so the sum may fall short of or exceed ``total``. That is how BIM-Edit reads its
    budget (``total=16384, per_object_min=256, per_object_max=4096``).

    Areas below 1e-12 of the largest count as zero (such objects get the minimum); if
    all areas are zero the objects share equally.

    Args:
        areas: ``(n,)`` non-negative areas, square metres.
        total: point budget.
        per_object_min: fewest points per object.
        per_object_max: most points per object (unbounded if None).
        redistribute: spend what clamping frees or takes on the other objects.

    Returns:
        ``(n,)`` int64 counts.
    """
    a = np.asarray(areas, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(a) | (a < 0))
    if bad.size:
        raise ValueError(
            f"allocate_samples: area of object {int(bad[0])} must be finite and >= 0, got {a[bad[0]]}"
        )
    lo = float(per_object_min)
    hi = np.inf if per_object_max is None else float(per_object_max)
    if total < 0 or lo < 0 or hi < lo:
        raise ValueError(
            f"allocate_samples: need total >= 0 and 0 <= per_object_min <= per_object_max,"
            f" got total={total}, min={per_object_min}, max={per_object_max}"
        )
    n = len(a)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # Areas below 1e-12 of the largest count as zero: their share is nil at any budget,
    # and dropping them keeps the scale search below in floating-point range.
    a = np.where(a >= 1e-12 * a.max(), a, 0.0)
    weights = a / a.sum() if a.sum() > 0 else np.full(n, 1.0 / n)
    if not redistribute:
        return np.clip(np.rint(total * weights), lo, hi).astype(np.int64)
    # Zero-area objects stay at the minimum even when every other object is full.
    ceiling = np.where(weights > 0, hi, lo)
    if n * lo >= total:
        share = np.full(n, lo)
    elif ceiling.sum() <= total:
        share = ceiling
    else:
        share = _scaled_shares(weights, float(total), lo, hi)
    counts = np.floor(share).astype(np.int64)
    leftover = int(round(share.sum())) - int(counts.sum())
    if leftover > 0:
        remainder = np.where(counts < hi, share - counts, -1.0)
        order = np.argsort(-remainder, kind="stable")[:leftover]
        counts[order] += 1
    return counts


def _scaled_shares(weights: FloatArray, total: float, lo: float, hi: float) -> FloatArray:
    """``clip(lam * weights, lo, hi)`` with ``lam`` found by bisection so the sum is ``total``.

    The sum is continuous and non-decreasing in ``lam``; callers guarantee
    ``n * lo < total < n * hi``, so a root exists in ``[0, upper]``.
    """
    positive = weights[weights > 0]
    # With every positive weight at or above hi, the sum exceeds total (zero weights sit at lo).
    upper = max(total, hi if np.isfinite(hi) else total) / positive.min() if positive.size else 0.0
    lower = 0.0
    for _ in range(200):
        mid = 0.5 * (lower + upper)
        if np.clip(mid * weights, lo, hi).sum() < total:
            lower = mid
        else:
            upper = mid
        if upper - lower <= 1e-15 * upper:
            break
    return np.clip(upper * weights, lo, hi)
