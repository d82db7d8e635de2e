"""Broad-phase contact pairs for many boxes by sort-and-sweep, with an exact narrow phase.

The sweep runs along the world axis of greatest spread of the box centres. A plain
1-D sweep degrades when boxes are scattered in 3-D (every box overlaps a slab of the
whole scene along the sweep axis), so the boxes are first bucketed into a coarse 2-D grid
of columns over the other two axes and the sweep runs inside each column: one sort of
``(column, lower bound)`` keys and one ``searchsorted`` give each box its run of
candidates. The other two axes then filter the candidates, a pair seen in several
columns is kept only in the column holding the lower corner of its overlap, and the
separating-axis test confirms it. Cost is ``O(e log e + c)`` for ``e`` box-column
entries (kept below ``8 n``) and ``c`` candidates; nothing is ``n x n``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from buildbench.geometry.boxes import AABBs, Boxes
from buildbench.geometry.overlap import pair_overlaps

__all__ = ["aabb_pairs", "contact_pairs"]

IntArray = NDArray[np.int64]


def contact_pairs(boxes: Boxes, tol: float = 0.0, exact: bool = True) -> IntArray:
    """Index pairs of boxes that overlap or touch within ``tol``.

    Args:
        boxes: ``n`` boxes (a :class:`Boxes` is validated at construction, so NaN or
            negative sizes were already rejected there with the box index).
        tol: non-negative contact tolerance in metres; both boxes grow by ``tol / 2`` on
            every face (see :func:`buildbench.geometry.obb_overlaps`).
        exact: when False, return the broad-phase pairs (bounds within ``tol``) without
            the separating-axis test.

    Returns:
        ``(m, 2)`` int64 array of pairs ``i < j``, sorted lexicographically.
    """
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"contact_pairs: tol must be a finite non-negative distance in metres, got {tol}")
    grown = boxes.inflated(tol / 2) if tol > 0 else boxes
    mins, maxs = grown.aabbs()
    if exact and len(grown):
        # Pad by a few ulps so rounding in the bounds never drops a pair that the
        # separating-axis test (computed differently) finds exactly touching.
        pad = 1e-12 * (1.0 + max(np.abs(mins).max(), np.abs(maxs).max()))
        mins, maxs = mins - pad, maxs + pad
    pairs = aabb_pairs(AABBs(mins, maxs))
    if exact and len(pairs):
        pairs = pairs[pair_overlaps(grown, pairs)]
    return pairs


def aabb_pairs(bounds: AABBs) -> IntArray:
    """Index pairs whose closed axis-aligned bounds intersect (touching counts).

    Args:
        bounds: ``(n, 3)`` mins and maxs in metres, e.g. from :meth:`Boxes.aabbs`.

    Returns:
        ``(m, 2)`` int64 array of pairs ``i < j``, sorted lexicographically.
    """
    mins = np.asarray(bounds.mins, dtype=np.float64).reshape(-1, 3)
    maxs = np.asarray(bounds.maxs, dtype=np.float64).reshape(-1, 3)
    if mins.shape != maxs.shape:
        raise ValueError(f"aabb_pairs: mins {mins.shape} and maxs {maxs.shape} differ in shape")
    bad = np.flatnonzero(~np.all(np.isfinite(mins) & np.isfinite(maxs) & (maxs >= mins), axis=1))
    if bad.size:
        first_bad = int(bad[0])
        raise ValueError(
            f"aabb_pairs: box {first_bad} has invalid bounds mins={mins[first_bad].tolist()}"
            f" maxs={maxs[first_bad].tolist()}"
            " (non-finite or max < min)"
        )
    n = len(mins)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)

    spread = np.var((mins + maxs) / 2, axis=0)
    axis = int(np.argmax(spread))
    across = [k for k in range(3) if k != axis]
    entry_box, entry_cell, (entry_u, entry_v), (lo_cu, lo_cv) = _grid_columns(mins[:, across], maxs[:, across])

    # Exact integer ranks of all bounds along the sweep axis (equal values share a rank), so
    # that one int64 key can order entries by (cell, lower bound) without float offsets
    # blurring touching ties.
    bounds_along = np.concatenate([mins[:, axis], maxs[:, axis]])
    by_value = bounds_along.argsort()
    ordered = bounds_along[by_value]
    rank = np.empty(2 * n, dtype=np.int64)
    rank[by_value] = np.concatenate([[0], (ordered[1:] != ordered[:-1]).cumsum()])
    rank_lo, rank_hi = rank[:n], rank[n:]
    stride = np.int64(rank[by_value[-1]] + 1)
    key_lo = entry_cell * stride + rank_lo[entry_box]
    key_hi = entry_cell * stride + rank_hi[entry_box]
    order = np.argsort(key_lo, kind="stable")
    sorted_lo = key_lo[order]
    end = np.searchsorted(sorted_lo, key_hi[order], side="right")
    counts = end - np.arange(len(order)) - 1

    # Every entry pairs with the run of later entries in its cell that start within it:
    # sorted entry ``first`` with ``second = first + 1 + (position within first's run)``.
    sorted_entries = np.arange(len(order))
    run_start = np.cumsum(counts) - counts
    first = np.repeat(sorted_entries, counts)
    second = np.arange(int(counts.sum())) + np.repeat(sorted_entries + 1 - run_start, counts)
    sorted_box = entry_box[order]
    i, j = sorted_box[first], sorted_box[second]

    lo_u, hi_u = mins[:, across[0]].copy(), maxs[:, across[0]].copy()
    lo_v, hi_v = mins[:, across[1]].copy(), maxs[:, across[1]].copy()
    keep = (lo_u[i] <= hi_u[j]) & (lo_u[j] <= hi_u[i]) & (lo_v[i] <= hi_v[j]) & (lo_v[j] <= hi_v[i])
    i, j, first = i[keep], j[keep], first[keep]
    # A pair sharing several cells is reported only by the cell holding the lower corner
    # of the two boxes' overlap, which both boxes are guaranteed to reach. Cell indices are
    # floors of a monotone map, so the corner's cell is the larger of the two lower cells.
    cell_u, cell_v = entry_u[order][first], entry_v[order][first]
    owner = (cell_u == np.maximum(lo_cu[i], lo_cu[j])) & (cell_v == np.maximum(lo_cv[i], lo_cv[j]))
    i, j = i[owner], j[owner]
    # One int64 key (low * n + high) sorts the pairs lexicographically.
    key = np.sort(np.minimum(i, j) * np.int64(n) + np.maximum(i, j))
    return np.stack([key // n, key % n], axis=1).astype(np.int64)


def _grid_columns(
    mins: NDArray[np.float64], maxs: NDArray[np.float64]
) -> tuple[IntArray, IntArray, tuple[IntArray, IntArray], tuple[IntArray, IntArray]]:
    """Bucket boxes into a 2-D grid over the two cross axes.

    The cell edge is twice the median box size (at least ``span / sqrt(n)`` so the grid has
    at most about ``n`` cells), doubled while boxes would occupy more than ``8 n`` cells in
    total (long members crossing many cells).

    Returns:
        ``(box, cell)`` index pairs, one per cell a box overlaps, each entry's cell as grid
        coordinates ``(u, v)``, and each box's lowest cell ``(u, v)``.
    """
    n = len(mins)
    origin = mins.min(axis=0)
    span = maxs.max(axis=0) - origin
    typical = _median_rows(maxs - mins)
    size = np.maximum(2 * typical, span / np.sqrt(n))
    size = np.where(size > 0, size, np.inf)
    while True:
        lo_cell, hi_cell = _cell_index(mins, origin, size), _cell_index(maxs, origin, size)
        spans = hi_cell - lo_cell + 1
        if int(np.prod(spans, axis=1).sum()) <= 8 * n or np.all(size >= span):
            break
        size = np.where(size < span, size * 2, size)
    width = int(_cell_index(maxs.max(axis=0, keepdims=True), origin, size)[0, 1]) + 1

    per_box = np.prod(spans, axis=1)
    box = np.repeat(np.arange(n), per_box)
    offset = np.arange(int(per_box.sum())) - np.repeat(np.cumsum(per_box) - per_box, per_box)
    lo_u, lo_v = lo_cell[:, 0].copy(), lo_cell[:, 1].copy()
    cu = lo_u[box] + offset // spans[box, 1]
    cv = lo_v[box] + offset % spans[box, 1]
    return box, cu * width + cv, (cu, cv), (lo_u, lo_v)


def _median_rows(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.median(values, axis=0)`` (the same numbers) by one partial sort, without its overhead."""
    k = len(values) // 2
    if len(values) % 2:
        return np.partition(values, k, axis=0)[k]
    part = np.partition(values, (k - 1, k), axis=0)
    return (part[k - 1] + part[k]) / 2.0


def _cell_index(
    points: NDArray[np.float64], origin: NDArray[np.float64], size: NDArray[np.float64]
) -> IntArray:
    return np.floor((points - origin) / size).astype(np.int64)
