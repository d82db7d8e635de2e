"""Exact intersection volume and IoU of oriented boxes.

The intersection of two boxes is a convex polyhedron. Each of its vertices is where
three of the twelve face planes meet, and therefore either a corner of one box inside
the other or the point where an edge of one box crosses a face of the other. Clipping
all 24 edges of the pair against the other box's three slabs yields every such vertex;
the volume is that of their convex hull (Qhull). Pairs whose relative rotation is a
signed axis permutation (e.g. two axis-aligned boxes) take a closed-form path instead.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import ConvexHull, QhullError

from buildbench.geometry.boxes import BOX_EDGES, Boxes
from buildbench.geometry.overlap import sat_separation

__all__ = ["obb_intersection_volume", "obb_iou", "obb_iou_matrix"]

FloatArray = NDArray[np.float64]

# A relative rotation within this of a signed permutation is treated as aligned.
_ALIGNED_TOL = 1e-9


def obb_intersection_volume(a: Boxes, b: Boxes) -> FloatArray:
    """Exact volume of ``a[i] ∩ b[i]`` for every ``i``, in cubic metres.

    Args:
        a: ``n`` boxes.
        b: ``n`` boxes.

    Returns:
        ``(n,)`` volumes (0 for disjoint, touching or flat intersections).
    """
    sep = sat_separation(a, b)
    out = np.zeros(len(a))
    live = np.flatnonzero(sep < 0)
    if live.size == 0:
        return out
    a, b = a.subset(live), b.subset(live)
    rel = np.einsum("nki,nkj->nij", a.rotations, b.rotations)
    t = np.einsum("nki,nk->ni", a.rotations, b.centers - a.centers)
    abs_rel = np.abs(rel)
    aligned = np.all((abs_rel < _ALIGNED_TOL) | (abs_rel > 1 - _ALIGNED_TOL), axis=(1, 2))

    if aligned.any():
        # b is axis-aligned in a's frame: intersect the two intervals per axis.
        reach = np.einsum("nij,nj->ni", abs_rel[aligned], b.half_extents[aligned])
        ha, tc = a.half_extents[aligned], t[aligned]
        lo = np.maximum(-ha, tc - reach)
        hi = np.minimum(ha, tc + reach)
        out[live[aligned]] = np.prod(np.maximum(hi - lo, 0.0), axis=1)

    rest = np.flatnonzero(~aligned)
    if rest.size:
        points, valid = _polytope_vertices(a.subset(rest), b.subset(rest))
        out[live[rest]] = [_hull_volume(p[v]) for p, v in zip(points, valid, strict=True)]
    return out


def obb_iou(a: Boxes, b: Boxes) -> FloatArray:
    """Exact volumetric intersection over union of box pairs.

    Args:
        a: ``n`` boxes.
        b: ``n`` boxes.

    Returns:
        ``(n,)`` IoU in ``[0, 1]``; 0 where the union has zero volume (two flat boxes).
    """
    inter = obb_intersection_volume(a, b)
    union = a.volumes() + b.volumes() - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def obb_iou_matrix(a: Boxes, b: Boxes) -> FloatArray:
    """IoU of every box of ``a`` against every box of ``b``.

    Only pairs whose axis-aligned bounds overlap are evaluated exactly; the rest are 0.

    Args:
        a: ``n`` boxes.
        b: ``m`` boxes.

    Returns:
        ``(n, m)`` IoU matrix, ready for :func:`buildbench.geometry.match_max_score`.
    """
    out = np.zeros((len(a), len(b)))
    if len(a) == 0 or len(b) == 0:
        return out
    amin, amax = a.aabbs()
    bmin, bmax = b.aabbs()
    touching = np.all((amin[:, None, :] < bmax[None, :, :]) & (bmin[None, :, :] < amax[:, None, :]), axis=2)
    rows, cols = np.nonzero(touching)
    out[rows, cols] = obb_iou(a.subset(rows), b.subset(cols))
    return out


def _polytope_vertices(a: Boxes, b: Boxes) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Candidate vertices ``(n, 48, 3)`` of each intersection and which are valid."""
    ca, cb = a.corners(), b.corners()
    pa, va = _clip_edges(ca[:, BOX_EDGES[:, 0]], ca[:, BOX_EDGES[:, 1]], b)
    pb, vb = _clip_edges(cb[:, BOX_EDGES[:, 0]], cb[:, BOX_EDGES[:, 1]], a)
    return np.concatenate([pa, pb], axis=1), np.concatenate([va, vb], axis=1)


def _clip_edges(start: FloatArray, end: FloatArray, boxes: Boxes) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Clip segments ``(n, k, 3)`` to solid box ``i`` (slab by slab).

    Returns both endpoints of each clipped segment, ``(n, 2k, 3)``, with a mask that is
    False where the segment misses the box.
    """
    local0 = np.einsum("nji,nkj->nki", boxes.rotations, start - boxes.centers[:, None, :])
    local1 = np.einsum("nji,nkj->nki", boxes.rotations, end - boxes.centers[:, None, :])
    step = local1 - local0
    half = boxes.half_extents[:, None, :]
    # Slack so that points on a shared face are kept despite rounding.
    slack = 1e-12 * (1.0 + np.abs(local0).max(axis=(1, 2), keepdims=True))
    flat = np.abs(step) <= 1e-15
    safe = np.where(flat, 1.0, step)
    s_a = (-half - slack - local0) / safe
    s_b = (half + slack - local0) / safe
    enter = np.where(flat, -np.inf, np.minimum(s_a, s_b)).max(axis=2)
    leave = np.where(flat, np.inf, np.maximum(s_a, s_b)).min(axis=2)
    inside_flat = np.all(~flat | (np.abs(local0) <= half + slack), axis=2)
    s0 = np.maximum(enter, 0.0)
    s1 = np.minimum(leave, 1.0)
    valid = inside_flat & (s0 <= s1)
    d = end - start
    p0 = start + s0[..., None] * d
    p1 = start + s1[..., None] * d
    return np.concatenate([p0, p1], axis=1), np.concatenate([valid, valid], axis=1)


def _hull_volume(points: FloatArray) -> float:
    if len(points) < 4:
        return 0.0
    try:
        return float(ConvexHull(points).volume)
    except QhullError:
        # Qhull rejects coplanar or collinear input: the intersection is flat.
        return 0.0
