"""Rigid 4x4 homogeneous transforms, rotation conventions and TRS decomposition.

Conventions used throughout :mod:`buildbench.geometry`:

* A transform ``T`` is a ``(4, 4)`` float array (or a batch ``(..., 4, 4)``) that maps
  column vectors: ``p_world = T @ [p_local, 1]``. Translations are in metres.
* A rotation matrix ``R`` is ``(3, 3)``; its *columns* are the local axes seen in the
  world frame.
* Quaternions come in two layouts. SciPy uses scalar-last ``(x, y, z, w)``; MuJoCo and
  Blender use scalar-first ``(w, x, y, z)``. Every function that takes a quaternion
  names its layout; convert with :func:`quat_wxyz_to_xyzw` / :func:`quat_xyzw_to_wxyz`.
* Euler angles follow Blender's ``rotation_euler`` with mode ``'XYZ'``: rotate about the
  world X axis, then world Y, then world Z (extrinsic), i.e. ``R = Rz @ Ry @ Rx``.
  Angles are in radians.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from scipy.spatial.transform import Rotation

__all__ = [
    "TRS",
    "apply_to_points",
    "apply_to_vectors",
    "compose",
    "decompose",
    "invert_rigid",
    "make_transform",
    "quat_wxyz_to_xyzw",
    "quat_xyzw_to_wxyz",
    "rotation_from_euler_xyz",
    "rotation_from_quat_wxyz",
    "rotation_from_quat_xyzw",
    "rotation_to_euler_xyz",
    "rotation_to_quat_wxyz",
]

FloatArray = NDArray[np.float64]


@cache
def _rotation() -> type[Rotation]:
    # SciPy's spatial package takes a third of a second to import; a command that never
    # turns a quaternion (``buildbench --help``) should not pay for it.
    from scipy.spatial.transform import Rotation

    return Rotation


def _is_rotation(value: object) -> bool:
    """Whether ``value`` is a SciPy ``Rotation`` (never one when SciPy is not yet loaded)."""
    module = sys.modules.get("scipy.spatial.transform")
    return module is not None and isinstance(value, module.Rotation)


def quat_wxyz_to_xyzw(quat: ArrayLike) -> FloatArray:
    """Reorder scalar-first quaternions (MuJoCo, Blender) to scalar-last (SciPy).

    Args:
        quat: ``(..., 4)`` quaternions laid out ``(w, x, y, z)``.

    Returns:
        ``(..., 4)`` quaternions laid out ``(x, y, z, w)``.
    """
    q = _as_quat(quat)
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def quat_xyzw_to_wxyz(quat: ArrayLike) -> FloatArray:
    """Reorder scalar-last quaternions (SciPy) to scalar-first (MuJoCo, Blender).

    Args:
        quat: ``(..., 4)`` quaternions laid out ``(x, y, z, w)``.

    Returns:
        ``(..., 4)`` quaternions laid out ``(w, x, y, z)``.
    """
    q = _as_quat(quat)
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


def rotation_from_quat_xyzw(quat: ArrayLike) -> FloatArray:
    """Rotation matrices from scalar-last ``(x, y, z, w)`` quaternions (normalised first).

    Args:
        quat: ``(4,)`` or ``(n, 4)``.

    Returns:
        ``(3, 3)`` or ``(n, 3, 3)``.
    """
    q = _as_quat(quat)
    norms = np.linalg.norm(q, axis=-1)
    if np.any(~np.isfinite(norms) | (norms == 0)):
        bad = int(np.flatnonzero(np.atleast_1d(~np.isfinite(norms) | (norms == 0)))[0])
        raise ValueError(f"quaternion {bad} is zero or not finite; cannot make a rotation")
    return _rotation().from_quat(q).as_matrix()


def rotation_from_quat_wxyz(quat: ArrayLike) -> FloatArray:
    """Rotation matrices from scalar-first ``(w, x, y, z)`` quaternions (MuJoCo, Blender).

    Args:
        quat: ``(4,)`` or ``(n, 4)``.

    Returns:
        ``(3, 3)`` or ``(n, 3, 3)``.
    """
    return rotation_from_quat_xyzw(quat_wxyz_to_xyzw(quat))


def rotation_to_quat_wxyz(rotation: ArrayLike) -> FloatArray:
    """Scalar-first ``(w, x, y, z)`` unit quaternions with ``w >= 0`` from rotation matrices.

    Args:
        rotation: ``(3, 3)`` or ``(n, 3, 3)`` proper rotation matrices.

    Returns:
        ``(4,)`` or ``(n, 4)``.
    """
    q = _rotation().from_matrix(np.asarray(rotation, dtype=np.float64)).as_quat(canonical=True)
    return quat_xyzw_to_wxyz(q)


def rotation_from_euler_xyz(angles: ArrayLike) -> FloatArray:
    """Rotation matrices from Blender ``rotation_euler`` angles in mode ``'XYZ'``.

    Blender's ``'XYZ'`` applies X first, then Y, then Z about the fixed world axes, so
    ``R = Rz(z) @ Ry(y) @ Rx(x)``. That is SciPy's extrinsic ``'xyz'`` (lower case).

    Args:
        angles: ``(3,)`` or ``(n, 3)`` radians ``(x, y, z)``.

    Returns:
        ``(3, 3)`` or ``(n, 3, 3)``.
    """
    a = np.asarray(angles, dtype=np.float64)
    if a.shape[-1:] != (3,) or a.ndim > 2:
        raise ValueError(f"Euler angles must have shape (3,) or (n, 3), got {a.shape}")
    return _rotation().from_euler("xyz", a).as_matrix()


def rotation_to_euler_xyz(rotation: ArrayLike) -> FloatArray:
    """Blender ``'XYZ'`` Euler angles (radians) of rotation matrices; inverse of
    :func:`rotation_from_euler_xyz` up to the usual Euler ambiguity.

    Args:
        rotation: ``(3, 3)`` or ``(n, 3, 3)``.

    Returns:
        ``(3,)`` or ``(n, 3)``.
    """
    return _rotation().from_matrix(np.asarray(rotation, dtype=np.float64)).as_euler("xyz")


def make_transform(
    translation: ArrayLike | None = None,
    rotation: ArrayLike | Rotation | None = None,
    scale: ArrayLike | None = None,
) -> FloatArray:
    """Build homogeneous transforms ``T = [R @ diag(scale) | t]``.

    Quaternions and Euler angles are deliberately not accepted here because their
    layout is ambiguous; convert them first with :func:`rotation_from_quat_wxyz`,
    :func:`rotation_from_quat_xyzw` or :func:`rotation_from_euler_xyz`.

    Args:
        translation: ``(3,)`` or ``(n, 3)`` metres; zero when omitted.
        rotation: ``(3, 3)`` / ``(n, 3, 3)`` matrices or a SciPy ``Rotation``; identity
            when omitted.
        scale: ``(3,)`` or ``(n, 3)`` per-axis scale factors; ones when omitted.

    Returns:
        ``(4, 4)``, or ``(n, 4, 4)`` when any input is batched.
    """
    t = np.zeros(3) if translation is None else np.asarray(translation, dtype=np.float64)
    if _is_rotation(rotation):
        r = rotation.as_matrix()  # type: ignore[union-attr]
    else:
        r = np.eye(3) if rotation is None else np.asarray(rotation, dtype=np.float64)
    s = np.ones(3) if scale is None else np.asarray(scale, dtype=np.float64)
    if t.shape[-1:] != (3,) or t.ndim > 2:
        raise ValueError(f"translation must have shape (3,) or (n, 3), got {t.shape}")
    if r.shape[-2:] != (3, 3) or r.ndim > 3:
        raise ValueError(f"rotation must have shape (3, 3) or (n, 3, 3), got {r.shape}")
    if s.shape[-1:] != (3,) or s.ndim > 2:
        raise ValueError(f"scale must have shape (3,) or (n, 3), got {s.shape}")
    batch = np.broadcast_shapes(t.shape[:-1], r.shape[:-2], s.shape[:-1])
    out = np.zeros((*batch, 4, 4))
    out[..., :3, :3] = r * s[..., None, :]
    out[..., :3, 3] = t
    out[..., 3, 3] = 1.0
    return out


def compose(*transforms: ArrayLike) -> FloatArray:
    """Compose transforms left to right as matrices: ``compose(A, B) = A @ B``.

    ``compose(parent_world, child_local)`` therefore gives the child's world matrix.
    Batched ``(n, 4, 4)`` inputs broadcast against single ``(4, 4)`` ones.

    Args:
        *transforms: one or more ``(..., 4, 4)`` arrays.

    Returns:
        The ``(..., 4, 4)`` product.
    """
    if not transforms:
        raise ValueError("compose needs at least one transform")
    mats = [_as_transform(t) for t in transforms]
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def invert_rigid(transform: ArrayLike) -> FloatArray:
    """Invert rigid transforms (rotation + translation only) without a general inverse.

    Uses ``R^-1 = R^T``, which is exact and stable for rigid transforms; for matrices with
    scale use ``numpy.linalg.inv``.

    Args:
        transform: ``(..., 4, 4)`` rigid transforms.

    Returns:
        ``(..., 4, 4)`` inverses.
    """
    t = _as_transform(transform)
    r_t = np.swapaxes(t[..., :3, :3], -1, -2)
    out = np.zeros_like(t)
    out[..., :3, :3] = r_t
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", r_t, t[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def apply_to_points(transform: ArrayLike, points: ArrayLike) -> FloatArray:
    """Map points (rotation, scale and translation) through transforms.

    Shapes broadcast NumPy-style: a ``(4, 4)`` with ``(m, 3)`` points maps every point;
    ``(n, 4, 4)`` with ``(n, 3)`` maps point ``i`` by transform ``i``; ``(n, 1, 4, 4)``
    with ``(m, 3)`` gives every point under every transform, ``(n, m, 3)``.

    Args:
        transform: ``(..., 4, 4)``.
        points: ``(..., 3)`` metres.

    Returns:
        ``(..., 3)`` transformed points.
    """
    t = _as_transform(transform)
    p = _as_vectors(points, "points")
    return np.einsum("...ij,...j->...i", t[..., :3, :3], p) + t[..., :3, 3]


def apply_to_vectors(transform: ArrayLike, vectors: ArrayLike) -> FloatArray:
    """Map direction vectors (rotation and scale, no translation) through transforms.

    Broadcasting is as in :func:`apply_to_points`. Normals under non-uniform scale need
    the inverse transpose instead; this function does not do that.

    Args:
        transform: ``(..., 4, 4)``.
        vectors: ``(..., 3)``.

    Returns:
        ``(..., 3)`` transformed vectors.
    """
    t = _as_transform(transform)
    v = _as_vectors(vectors, "vectors")
    return np.einsum("...ij,...j->...i", t[..., :3, :3], v)


@dataclass(frozen=True, eq=False)
class TRS:
    """A transform split as ``T = translate(translation) @ rotate(rotation) @ scale(scale)``.

    Attributes:
        translation: ``(..., 3)`` metres.
        rotation: ``(..., 3, 3)`` proper rotations (determinant +1).
        scale: ``(..., 3)`` per-local-axis factors; negative on local z when the input
            mirrors space (a reflection cannot be a proper rotation). A zero factor
            leaves that axis's direction free; it is chosen to keep the rotation proper.
    """

    translation: FloatArray
    rotation: FloatArray
    scale: FloatArray


def decompose(transform: ArrayLike, shear_tol: float = 1e-6) -> TRS:
    """Split affine transforms into translation, rotation and per-axis scale.

    The rotation is the orthogonal polar factor of the linear part (via SVD), which
    stays well defined when a scale factor is zero (a flat or degenerate object).

    Args:
        transform: ``(..., 4, 4)`` affine transforms (last row ``0 0 0 1``).
        shear_tol: largest accepted off-diagonal of ``R^T M`` relative to the largest
            scale; beyond it the matrix is sheared (e.g. a rotated child under a
            non-uniformly scaled parent) and no TRS split exists.

    Returns:
        A :class:`TRS` with matching batch shape.

    Raises:
        ValueError: non-finite entries, or shear beyond ``shear_tol`` (the message names
            the first offending matrix index).
    """
    t = _as_transform(transform)
    if not np.all(np.isfinite(t)):
        flat = t.reshape(-1, 16)
        bad = int(np.flatnonzero(~np.all(np.isfinite(flat), axis=1))[0])
        raise ValueError(f"transform {bad} has non-finite entries")
    m = t[..., :3, :3]
    u, _, vt = np.linalg.svd(m)
    rot = u @ vt
    # The polar factor has det -1 for a mirror, or when a zero scale leaves the sign of
    # that axis free. Flip one local axis to make it proper: the zero-scale axis if there
    # is one (nothing is lost), else z, so a mirror shows up as a negative z scale.
    magnitude = np.abs(np.diagonal(np.swapaxes(rot, -1, -2) @ m, axis1=-2, axis2=-1))
    flat = magnitude.min(axis=-1) <= 1e-12 * magnitude.max(axis=-1)
    axis = np.where(flat, magnitude.argmin(axis=-1), 2)
    flip = np.where((np.linalg.det(rot) < 0)[..., None] & (np.arange(3) == axis[..., None]), -1.0, 1.0)
    rot = rot * flip[..., None, :]
    local = np.swapaxes(rot, -1, -2) @ m
    scale = np.diagonal(local, axis1=-2, axis2=-1).copy()
    off = local - scale[..., None, :] * np.eye(3)
    ref = np.maximum(np.abs(scale).max(axis=-1), 1e-300)
    shear = np.abs(off).max(axis=(-2, -1)) / ref
    if np.any(shear > shear_tol):
        bad = int(np.flatnonzero(np.atleast_1d(shear > shear_tol).ravel())[0])
        raise ValueError(
            f"transform {bad} is sheared (relative off-diagonal {float(np.ravel(shear)[bad]):.3g}"
            f" > shear_tol {shear_tol:g}); it has no translation/rotation/scale split"
        )
    return TRS(translation=t[..., :3, 3].copy(), rotation=rot, scale=scale)


def _as_transform(transform: ArrayLike) -> FloatArray:
    t = np.asarray(transform, dtype=np.float64)
    if t.shape[-2:] != (4, 4):
        raise ValueError(f"transforms must have shape (..., 4, 4), got {t.shape}")
    return t


def _as_vectors(values: ArrayLike, what: str) -> FloatArray:
    v = np.asarray(values, dtype=np.float64)
    if v.shape[-1:] != (3,):
        raise ValueError(f"{what} must have shape (..., 3), got {v.shape}")
    return v


def _as_quat(quat: ArrayLike) -> FloatArray:
    q = np.asarray(quat, dtype=np.float64)
    if q.shape[-1:] != (4,):
        raise ValueError(f"quaternions must have shape (..., 4), got {q.shape}")
    return q
