"""Normalising member transforms to rigid ones: scale stripped, mirrors made proper, rounding
snapped to the nearest rotation (what :class:`~.structure.Structure` stores)."""

from __future__ import annotations

import numpy as np

#: Largest |R^T R - I| of a member's normalised rotation that rounding can explain (6 decimals
#: on a 38 mm section give ~1e-4); beyond it the transform is a real shear.
_ROUNDING_SHEAR = 1e-3


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


def _rigid_rotations(rot: np.ndarray) -> np.ndarray:
    """:func:`rigid` for the 3x3 parts ``rot``, shape ``(n, 3, 3)``, each on its own."""
    with np.errstate(all="ignore"):
        scaled = rot / np.linalg.norm(rot, axis=1, keepdims=True)
    ok = np.isfinite(scaled).all(axis=(1, 2))
    # A mirrored transform (negative scale) describes the same box as a proper rotation
    # with one axis flipped; keep rotations proper so they convert to geometry.Boxes.
    proper = np.where(ok[:, None, None], scaled, np.eye(3))
    det = np.einsum("ni,ni->n", proper[:, :, 0], np.cross(proper[:, :, 1], proper[:, :, 2]))
    scaled[:, :, 0] *= np.where(det < 0, -1.0, 1.0)[:, None]
    # Submissions round matrix_world (rotation times size) to 6 decimals: divided by a 38-89 mm
    # section that leaves columns up to ~1e-4 off orthogonal (a diagonal brace is then no
    # rotation at all). Snap such near-rotations to the nearest one (polar decomposition);
    # a real shear, far beyond rounding, is kept for the validator to report.
    proper = np.where(ok[:, None, None], scaled, np.eye(3))
    err = np.abs(np.swapaxes(proper, 1, 2) @ proper - np.eye(3)).max(axis=(1, 2))
    near = ok & (err > 0) & (err < _ROUNDING_SHEAR)
    if near.any():
        scaled[near] = _nearest_rotations(proper[near])
    return np.where(ok[:, None, None], scaled, rot)


def _nearest_rotations(mats: np.ndarray) -> np.ndarray:
    """``U Vᵀ`` of each 3x3 matrix's SVD, decomposing each distinct matrix once.

    A house repeats a handful of rafter orientations a hundred times, and the SVD is most of
    :func:`rigid`'s cost. Matrices are grouped by their exact bytes, so each result is the
    one its own SVD gives (LAPACK runs matrix by matrix).
    """
    rows = np.ascontiguousarray(mats).reshape(len(mats), 9).view(np.dtype((np.void, 72))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    u, _, vt = np.linalg.svd(mats[first])
    return (u @ vt)[inverse.ravel()]
