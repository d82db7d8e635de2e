"""Small float64 vector and matrix products summed in a fixed order: the same bits on every CPU.

``@``, ``np.dot``, ``np.linalg.norm`` of a vector, ``inv`` and ``det`` on float64 call OpenBLAS or
LAPACK, which pick their kernel by CPU at run time (FMA or not, vector accumulators, blocking),
so the last bits of a render's vertex positions, scene bounds and camera matrices depended on
the machine: through the framing and the clip planes, a pixel could too. Here every output
element is ``(a0·b0 + a1·b1) + a2·b2 …``, summed left to right by elementwise numpy multiplies
and adds of whole arrays (each element rounds once per operation whatever the SIMD width; numpy
never fuses a multiply with an add across two ufunc calls), never a reduction or a BLAS call.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def apply(points: npt.ArrayLike, m: npt.ArrayLike) -> np.ndarray:
    """``points @ m.T`` (each point times each matrix, as ``m @ p``): points ``(..., k)``,
    matrices ``(..., j, k)`` broadcast against them, result ``(..., j)``."""
    p = np.asarray(points, dtype=np.float64)
    mm = np.asarray(m, dtype=np.float64)
    out = p[..., None, 0] * mm[..., :, 0]
    for k in range(1, p.shape[-1]):
        out = out + p[..., None, k] * mm[..., :, k]
    return out


def dot3(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """``a · b`` along the last axis (length 3), broadcast."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    return (x[..., 0] * y[..., 0] + x[..., 1] * y[..., 1]) + x[..., 2] * y[..., 2]


def length3(v: npt.ArrayLike) -> np.ndarray:
    """Euclidean length along the last axis (length 3)."""
    return np.sqrt(dot3(v, v))


def length(v: npt.ArrayLike) -> float:
    """Length of one float64 3-vector, as a Python float (scalar arithmetic: a camera's vectors
    are single 3-vectors, for which numpy calls cost more than the sums)."""
    x, y, z = np.asarray(v, dtype=np.float64).tolist()  # the same floats, 3x faster than float() of each
    return math.sqrt((x * x + y * y) + z * z)


def matmul4(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for (stacks of) 4×4 float64 matrices: entry (i, j) is
    ``((a[i,0]·b[0,j] + a[i,1]·b[1,j]) + a[i,2]·b[2,j]) + a[i,3]·b[3,j]``, elementwise (so a
    stack gives each matrix the bits it gets alone)."""
    return (((a[..., :, 0:1] * b[..., 0:1, :] + a[..., :, 1:2] * b[..., 1:2, :]) + a[..., :, 2:3] * b[..., 2:3, :])
            + a[..., :, 3:4] * b[..., 3:4, :])


def column_cross(m: np.ndarray, i: int, j: int) -> np.ndarray:
    """``column i × column j`` of each 3×3 matrix of ``m`` ``(n, 3, 3)``, shape ``(n, 3)``."""
    a, b = m[:, :, i], m[:, :, j]
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)  # fmt: skip


def det3(m: np.ndarray) -> np.ndarray:
    """Determinant of each 3×3 matrix of ``m`` ``(n, 3, 3)`` as ``c0 · (c1 × c2)`` of its columns."""
    return dot3(m[:, :, 0], column_cross(m, 1, 2))
