"""Optimal one-to-one matching (Hungarian algorithm) with thresholds and missing entries.

Two objectives, because "leave it unmatched" means different things for costs and
scores:

* :func:`match_min_cost` (distances, errors): match as many rows as possible using only
  allowed entries (finite and ``<= max_cost``), and among those matchings pick the one
  of least total cost.
* :func:`match_max_score` (IoU, similarity): pick the partial matching of greatest
  total score using only allowed entries (finite, ``> 0`` and ``>= min_score``);
  leaving a pair unmatched scores 0, so non-positive scores are never matched.

Both solve with SciPy's ``linear_sum_assignment`` and accept rectangular matrices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Assignment", "match_max_score", "match_min_cost"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class Assignment:
    """A partial one-to-one matching between the rows and columns of a matrix.

    Attributes:
        rows: ``(k,)`` matched row indices, ascending.
        cols: ``(k,)`` the column matched to each row.
        values: ``(k,)`` the matrix entry of each matched pair (cost or score).
        unmatched_rows: rows left without a partner, ascending.
        unmatched_cols: columns left without a partner, ascending.
    """

    rows: IntArray
    cols: IntArray
    values: FloatArray
    unmatched_rows: IntArray
    unmatched_cols: IntArray

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def total(self) -> float:
        """Sum of the matched entries."""
        return float(self.values.sum())


def match_min_cost(cost: ArrayLike, max_cost: float | None = None) -> Assignment:
    """Minimum-cost matching of maximum size over the allowed entries.

    Args:
        cost: ``(n, m)`` matrix; NaN and infinity mark forbidden pairs.
        max_cost: pairs costing more than this are forbidden too.

    Returns:
        The matching; forbidden pairs never appear in it.
    """
    c = _as_matrix(cost, "cost")
    allowed = np.isfinite(c)
    if max_cost is not None:
        allowed &= c <= max_cost
    if not allowed.any():
        return _assemble(c, np.zeros(0, np.int64), np.zeros(0, np.int64))
    lowest = c[allowed].min()
    span = float(c[allowed].max() - lowest)
    # Shift allowed costs to [0, span] and price forbidden pairs above any total of
    # allowed ones, so every extra allowed pair beats any saving in cost. The shift is
    # harmless among matchings of equal size, which is where cost decides.
    penalty = span * min(c.shape) + 1.0
    work = np.where(allowed, c - lowest, penalty)
    from scipy.optimize import linear_sum_assignment  # SciPy's optimize is slow to import

    rows, cols = linear_sum_assignment(work)
    keep = allowed[rows, cols]
    return _assemble(c, rows[keep], cols[keep])


def match_max_score(score: ArrayLike, min_score: float | None = None) -> Assignment:
    """Maximum-total-score partial matching over the allowed entries.

    Args:
        score: ``(n, m)`` matrix, e.g. IoU; NaN marks forbidden pairs, non-positive
            scores are never matched.
        min_score: pairs scoring less than this are forbidden (e.g. 0.05 IoU).

    Returns:
        The matching; forbidden pairs never appear in it.
    """
    s = _as_matrix(score, "score")
    if np.any(np.isposinf(s)):
        r, c = np.argwhere(np.isposinf(s))[0]
        raise ValueError(f"match_max_score: score[{r}, {c}] is +inf; scores must be finite or NaN")
    allowed = np.isfinite(s) & (s > 0)
    if min_score is not None:
        allowed &= s >= min_score
    if not allowed.any():
        return _assemble(s, np.zeros(0, np.int64), np.zeros(0, np.int64))
    # Forbidden pairs weigh 0, the same as leaving both ends unmatched, so the optimum
    # of the full assignment restricted to allowed pairs is an optimal partial matching.
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(np.where(allowed, s, 0.0), maximize=True)
    keep = allowed[rows, cols]
    return _assemble(s, rows[keep], cols[keep])


def _assemble(matrix: FloatArray, rows: IntArray, cols: IntArray) -> Assignment:
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    rows, cols = rows[order], cols[order]
    n, m = matrix.shape
    return Assignment(
        rows=rows,
        cols=cols,
        values=matrix[rows, cols].astype(np.float64),
        unmatched_rows=np.setdiff1d(np.arange(n, dtype=np.int64), rows),
        unmatched_cols=np.setdiff1d(np.arange(m, dtype=np.int64), cols),
    )


def _as_matrix(values: ArrayLike, what: str) -> FloatArray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{what} matrix must be 2-D (rows x columns), got shape {a.shape}")
    return a
