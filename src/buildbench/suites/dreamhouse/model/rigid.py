"""Normalising member transforms to rigid ones: scale stripped, mirrors made proper, rounding
snapped to the nearest rotation (what :class:`~.structure.Structure` stores).

Every step is written as elementwise numpy arithmetic in a fixed order (products and sums of
3x3 entries spelled out, a fixed number of polar iterations). Elementwise ``+ - * / sqrt`` are
correctly rounded IEEE operations, so the stored bits are the same on every CPU: LAPACK's SVD
and BLAS's matrix products (what ``np.linalg.svd`` and ``@`` on float64 call) pick kernels
by CPU, with other summation orders and fused multiply-adds, and changed the last bit of a
rafter's rotation between machines.
"""

from __future__ import annotations

import numpy as np

#: Largest |R^T R - I| of a member's normalised rotation that rounding can explain (6 decimals
#: on a 38 mm section give ~1e-4); beyond it the transform is a real shear.
_ROUNDING_SHEAR = 1e-3

#: Newton-Schulz steps of :func:`_nearest_rotations`. The error |R^T R - I| squares with each
#: step (1e-3, 1e-6, 1e-12, then rounding), so 4 reach the polar factor to about an ulp from
#: anywhere below ``_ROUNDING_SHEAR``; a fixed count keeps the result the same everywhere.
_POLAR_STEPS = 4

#: Column lengths within this of 1 and ``|R^T R - I|`` within it are taken as exact: such a
#: matrix is already a rotation to rounding and is kept as given (dividing by a length of
#: ``1 ± ulp`` or iterating again would move it by ulps). What :func:`rigid` returns passes both
#: (a normalised column is within ~3 eps of unit length, a polar factor orthogonal within ~4 eps),
#: so ``rigid(rigid(m)) == rigid(m)`` bit for bit: a structure re-made from another's arrays
#: (subset, concatenation, a file written and read) keeps its bits.
_EXACT = 8 * float(np.finfo(np.float64).eps)


def rigid(matrices: np.ndarray) -> np.ndarray:
    """Strip scale from the 3x3 part: Blender's ``dimensions`` already include it (spec §2.2).

    Matrices that cannot be normalized (zero, huge or non-finite columns) are kept as given
    for the validator to report.
    """
    out = matrices.copy()
    # Most members of a frame are axis-aligned: an identity rotation is already rigid.
    moved = ~(out[:, :3, :3] == np.eye(3)).all(axis=(1, 2))
    if moved.all():
        out[:, :3, :3] = _rigid_rotations(out[:, :3, :3])
    elif moved.any():
        out[moved, :3, :3] = _rigid_rotations(out[moved, :3, :3])
    return out


def gram(m: np.ndarray) -> np.ndarray:
    """``Mᵀ M`` of each 3x3 matrix, shape ``(n, 3, 3)``, summed row by row in a fixed order.

    The same bits on every CPU (``@`` calls BLAS, whose kernel depends on the CPU); exactly
    symmetric.
    """
    g = m[:, 0, :, None] * m[:, 0, None, :]
    g += m[:, 1, :, None] * m[:, 1, None, :]
    g += m[:, 2, :, None] * m[:, 2, None, :]
    return g


def orthogonality_error(rot: np.ndarray) -> np.ndarray:
    """``max |Rᵀ R - I|`` of each 3x3 matrix, shape ``(n,)``; NaN rows give NaN."""
    return np.abs(gram(rot) - np.eye(3)).max(axis=(1, 2))


def _matmul3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A B`` of each pair of 3x3 matrices, summed over the inner index in a fixed order."""
    c = a[:, :, 0, None] * b[:, 0, None, :]
    c += a[:, :, 1, None] * b[:, 1, None, :]
    c += a[:, :, 2, None] * b[:, 2, None, :]
    return c


def _columns_det(m: np.ndarray) -> np.ndarray:
    """Determinant of each 3x3 matrix as ``c0 · (c1 × c2)`` of its columns, shape ``(n,)``."""
    c0, c1, c2 = m[:, :, 0], m[:, :, 1], m[:, :, 2]
    cross = np.stack([c1[:, 1] * c2[:, 2] - c1[:, 2] * c2[:, 1],
                      c1[:, 2] * c2[:, 0] - c1[:, 0] * c2[:, 2],
                      c1[:, 0] * c2[:, 1] - c1[:, 1] * c2[:, 0]], axis=1)  # fmt: skip
    return (c0[:, 0] * cross[:, 0] + c0[:, 1] * cross[:, 1]) + c0[:, 2] * cross[:, 2]


def _rigid_rotations(rot: np.ndarray) -> np.ndarray:
    """:func:`rigid` for the 3x3 parts ``rot``, shape ``(n, 3, 3)``, each on its own."""
    with np.errstate(all="ignore"):
        # Column lengths: the squares summed over the rows, first to last.
        norms = np.sqrt((rot[:, 0, :] * rot[:, 0, :] + rot[:, 1, :] * rot[:, 1, :]) + rot[:, 2, :] * rot[:, 2, :])
        norms[np.abs(norms - 1.0) <= _EXACT] = 1.0  # unit to rounding: dividing would only move bits
        scaled = rot / norms[:, None, :]
    ok = np.isfinite(scaled).all(axis=(1, 2))
    # A mirrored transform (negative scale) describes the same box as a proper rotation
    # with one axis flipped; keep rotations proper so they convert to geometry.Boxes.
    proper = np.where(ok[:, None, None], scaled, np.eye(3))
    scaled[:, :, 0] *= np.where(_columns_det(proper) < 0, -1.0, 1.0)[:, None]
    # Submissions round matrix_world (rotation times size) to 6 decimals: divided by a 38-89 mm
    # section that leaves columns up to ~1e-4 off orthogonal (a diagonal brace is then no
    # rotation at all). Snap such near-rotations to the nearest one (polar decomposition);
    # a real shear, far beyond rounding, is kept for the validator to report.
    proper = np.where(ok[:, None, None], scaled, np.eye(3))
    err = orthogonality_error(proper)
    near = ok & (err > _EXACT) & (err < _ROUNDING_SHEAR)
    if near.any():
        scaled[near] = _nearest_rotations(proper[near])
    return np.where(ok[:, None, None], scaled, rot)


def _nearest_rotations(mats: np.ndarray) -> np.ndarray:
    """The orthogonal polar factor (``U Vᵀ`` of the SVD) of each near-orthogonal 3x3 matrix.

    Newton-Schulz iteration ``X <- X + X (I - XᵀX) / 2``, a fixed number of steps: it converges
    quadratically for ``|XᵀX - I| < 1`` (callers pass less than ``_ROUNDING_SHEAR``), and in
    this correction form the last steps only add an update far below an ulp of ``X``, so the
    result is the polar factor to about an ulp. Vectorised over the matrices; each result
    depends on its own matrix only.
    """
    x = np.array(mats, dtype=np.float64)
    for _ in range(_POLAR_STEPS):
        x += 0.5 * _matmul3(x, np.eye(3) - gram(x))
    return x
