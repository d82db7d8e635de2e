"""Point-set distances: Chamfer, F-score and Hausdorff from KD-tree nearest neighbours.

:func:`point_set_distances` runs the two nearest-neighbour queries once; the metrics
are cheap reductions of the result. ``a`` plays the prediction and ``b`` the reference
where that matters (precision is about ``a``, recall about ``b``).

Empty sets are defined, not errors: two empty sets agree perfectly (distance 0,
F-score 1); one empty set against a non-empty one is infinitely far (F-score 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import cKDTree

__all__ = ["PointSetDistances", "chamfer_distance", "nearest_distances", "point_set_distances"]

FloatArray = NDArray[np.float64]
Reduction = Literal["mean", "median"]
Combine = Literal["average", "sum", "concat"]


def nearest_distances(query: ArrayLike, reference: ArrayLike, workers: int = 1) -> FloatArray:
    """Distance from every query point to its nearest reference point, metres.

    Args:
        query: ``(n, d)`` points.
        reference: ``(m, d)`` points.
        workers: threads for the KD-tree query (``-1``: all cores).

    Returns:
        ``(n,)`` distances; all ``inf`` when ``reference`` is empty.
    """
    q = _as_points(query, "query")
    r = _as_points(reference, "reference", dim=q.shape[1])
    if len(q) == 0:
        return np.zeros(0)
    if len(r) == 0:
        return np.full(len(q), np.inf)
    dist, _ = cKDTree(r).query(q, k=1, workers=workers)
    return np.asarray(dist, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class PointSetDistances:
    """Nearest-neighbour distances between two point sets, both ways.

    Attributes:
        a_to_b: ``(n,)`` distance from each point of ``a`` to ``b``, metres.
        b_to_a: ``(m,)`` distance from each point of ``b`` to ``a``, metres.
    """

    a_to_b: FloatArray
    b_to_a: FloatArray

    def chamfer(self, reduction: Reduction = "mean", combine: Combine = "average") -> float:
        """Bidirectional Chamfer distance in metres (not squared).

        Args:
            reduction: ``"mean"`` or ``"median"`` of distances.
            combine: ``"average"``: ``(red(a_to_b) + red(b_to_a)) / 2``; ``"sum"``: their
                sum; ``"concat"``: ``red`` over both directions pooled (BIM-Edit's
                median Chamfer).

        Returns:
            0.0 for two empty sets, ``inf`` when exactly one is empty.
        """
        if reduction not in ("mean", "median"):
            raise ValueError(f"chamfer: reduction must be 'mean' or 'median', got {reduction!r}")
        if combine not in ("average", "sum", "concat"):
            raise ValueError(f"chamfer: combine must be 'average', 'sum' or 'concat', got {combine!r}")
        empty = self._empty_case(both=0.0, one=np.inf)
        if empty is not None:
            return empty
        reduce = np.median if reduction == "median" else np.mean
        if combine == "concat":
            return float(reduce(np.concatenate([self.a_to_b, self.b_to_a])))
        total = float(reduce(self.a_to_b)) + float(reduce(self.b_to_a))
        return total if combine == "sum" else total / 2

    def precision(self, threshold: float) -> float:
        """Share of ``a`` within ``threshold`` metres of ``b`` (1.0 if ``a`` is empty)."""
        _check_threshold(threshold)
        return float(np.mean(self.a_to_b <= threshold)) if len(self.a_to_b) else 1.0

    def recall(self, threshold: float) -> float:
        """Share of ``b`` within ``threshold`` metres of ``a`` (1.0 if ``b`` is empty)."""
        _check_threshold(threshold)
        return float(np.mean(self.b_to_a <= threshold)) if len(self.b_to_a) else 1.0

    def fscore(self, threshold: float) -> float:
        """Harmonic mean of precision and recall at ``threshold`` metres.

        Returns:
            1.0 for two empty sets, 0.0 when exactly one is empty or nothing is close.
        """
        empty = self._empty_case(both=1.0, one=0.0)
        if empty is not None:
            return empty
        p, r = self.precision(threshold), self.recall(threshold)
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def hausdorff(self) -> float:
        """Symmetric Hausdorff distance, metres (0.0 both empty, ``inf`` one empty)."""
        empty = self._empty_case(both=0.0, one=np.inf)
        if empty is not None:
            return empty
        return float(max(self.a_to_b.max(), self.b_to_a.max()))

    def _empty_case(self, both: float, one: float) -> float | None:
        n_a, n_b = len(self.a_to_b), len(self.b_to_a)
        if n_a == 0 and n_b == 0:
            return both
        if n_a == 0 or n_b == 0:
            return one
        return None


def point_set_distances(a: ArrayLike, b: ArrayLike, workers: int = 1) -> PointSetDistances:
    """Nearest-neighbour distances from ``a`` to ``b`` and from ``b`` to ``a``.

    Args:
        a: ``(n, d)`` points (the prediction).
        b: ``(m, d)`` points (the reference), same ``d``.
        workers: threads per KD-tree query (``-1``: all cores).
    """
    pa = _as_points(a, "a")
    pb = _as_points(b, "b", dim=pa.shape[1])
    return PointSetDistances(nearest_distances(pa, pb, workers), nearest_distances(pb, pa, workers))


def chamfer_distance(
    a: ArrayLike, b: ArrayLike, reduction: Reduction = "mean", combine: Combine = "average"
) -> float:
    """Shortcut for ``point_set_distances(a, b).chamfer(reduction, combine)``."""
    return point_set_distances(a, b).chamfer(reduction, combine)


def _as_points(points: ArrayLike, what: str, dim: int | None = None) -> FloatArray:
    p = np.asarray(points, dtype=np.float64)
    if p.size == 0:
        return p.reshape(0, dim if dim is not None else (p.shape[-1] if p.ndim == 2 else 3))
    if p.ndim != 2:
        raise ValueError(f"{what}: points must be a 2-D (n, d) array, got shape {p.shape}")
    if dim is not None and p.shape[1] != dim:
        raise ValueError(f"{what}: points have dimension {p.shape[1]}, expected {dim}")
    bad = np.flatnonzero(~np.all(np.isfinite(p), axis=1))
    if bad.size:
        raise ValueError(f"{what}: point {int(bad[0])} is not finite: {p[bad[0]].tolist()}")
    return p


def _check_threshold(threshold: float) -> None:
    if not np.isfinite(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a finite non-negative distance in metres, got {threshold}")
