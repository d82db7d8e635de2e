"""Quaternion arithmetic with the released library's floating-point behaviour.

The released code kept every orientation twice, as a quaternion (w, x, y, z)
and a rotation matrix, and converted between them with numpy-quaternion
2024.0.13. The tiny rounding differences of those conversions reach the
answers (signs of zeros, ``2.22e-16`` in raw array prints), so this module
reproduces the same formulas in the same order: the matrix of a unit
quaternion without division, the matrix-to-quaternion step as the dominant
eigenvector of Bar-Itzhack's symmetric 4x4 matrix (scipy ``eigh``), the
exponential map for axis-angle turns. Quaternions are plain 4-tuples.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg

Quat = tuple[float, float, float, float]
IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)
UNIT_TOLERANCE = 1e-14
"""numpy-quaternion's ``_eps``: squared norms this close to 1 count as unit, and its exponential turns a
vector no longer than this into the identity (so twists below about 1.1e-12 degrees do nothing)."""


def squared_norm(q: Quat) -> float:
    """w² + x² + y² + z²."""
    w, x, y, z = q
    return w * w + x * x + y * y + z * z


def normalized(q: Quat) -> Quat:
    """``q`` divided by its length."""
    length = math.sqrt(squared_norm(q))
    return (q[0] / length, q[1] / length, q[2] / length, q[3] / length)


def to_matrix(q: Quat) -> np.ndarray:
    """Rotation matrix of ``q`` (divided by the squared norm unless ``q`` is a unit quaternion)."""
    w, x, y, z = q
    n = squared_norm(q)
    if n == 0.0:
        raise ZeroDivisionError("quaternion of zero norm")
    if abs(n - 1.0) < UNIT_TOLERANCE:
        return np.array([
            [1 - 2 * (y**2 + z**2), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x**2 + z**2), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x**2 + y**2)],
        ])
    return np.array([
        [1 - 2 * (y**2 + z**2) / n, 2 * (x * y - z * w) / n, 2 * (x * z + y * w) / n],
        [2 * (x * y + z * w) / n, 1 - 2 * (x**2 + z**2) / n, 2 * (y * z - x * w) / n],
        [2 * (x * z - y * w) / n, 2 * (y * z + x * w) / n, 1 - 2 * (x**2 + y**2) / n],
    ])


def from_matrix(rot: np.ndarray) -> Quat:
    """Unit quaternion nearest to ``rot`` (Bar-Itzhack: top eigenvector of a symmetric 4x4 matrix)."""
    r = np.asarray(rot, dtype=float)
    k = np.empty((4, 4))
    k[0, 0] = (r[0, 0] - r[1, 1] - r[2, 2]) / 3.0
    k[0, 1] = (r[1, 0] + r[0, 1]) / 3.0
    k[0, 2] = (r[2, 0] + r[0, 2]) / 3.0
    k[0, 3] = (r[1, 2] - r[2, 1]) / 3.0
    k[1, 1] = (r[1, 1] - r[0, 0] - r[2, 2]) / 3.0
    k[1, 2] = (r[2, 1] + r[1, 2]) / 3.0
    k[1, 3] = (r[2, 0] - r[0, 2]) / 3.0
    k[2, 2] = (r[2, 2] - r[0, 0] - r[1, 1]) / 3.0
    k[2, 3] = (r[0, 1] - r[1, 0]) / 3.0
    k[3, 3] = (r[0, 0] + r[1, 1] + r[2, 2]) / 3.0
    for i, j in ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)):
        k[i, j] = k[j, i]
    # The transposed (Fortran-ordered) matrix is what was decomposed; LAPACK's bits follow the layout.
    _, vectors = linalg.eigh(k.T, subset_by_index=(3, 3))
    return (float(vectors[-1, 0]), float(-vectors[0, 0]), float(-vectors[1, 0]), float(-vectors[2, 0]))


def from_rotation_vector(v: np.ndarray) -> Quat:
    """exp(v/2) for a rotation vector ``v`` (axis times angle in radians)."""
    half = np.asarray(v, dtype=float) / 2
    x, y, z = float(half[0]), float(half[1]), float(half[2])
    length = math.sqrt(x * x + y * y + z * z)
    # numpy-quaternion's exp reads a vector this short (its _eps) as no turn; its test is `norm > _eps`,
    # so a NaN vector (a twist by NaN or ±inf degrees, NaN once wrapped) is no turn either
    if not length > UNIT_TOLERANCE:
        return IDENTITY
    s = math.sin(length) / length
    return (math.cos(length), s * x, s * y, s * z)


def shortest_arc(base: np.ndarray, target: np.ndarray) -> Quat:
    """Unit quaternion turning unit vector ``base`` onto unit vector ``target``.

    Opposite vectors turn 180° about x (or y when ``base`` is nearly along x),
    made perpendicular to ``base``; a zero ``target`` gives the identity.
    """
    if np.allclose(target, 0):
        return IDENTITY
    dot = np.dot(base, target)
    if np.isclose(dot, -1.0):
        axis = np.array([1, 0, 0]) if np.abs(base[0]) < 0.1 else np.array([0, 1, 0])
        axis = axis - np.dot(axis, base) * base
        axis /= np.linalg.norm(axis)
        return normalized((0.0, float(axis[0]), float(axis[1]), float(axis[2])))
    cross = np.cross(base, target)
    return normalized((float(1 + dot), float(cross[0]), float(cross[1]), float(cross[2])))


def euler_degrees(q: Quat) -> np.ndarray:
    """z-y-z Euler angles of ``q`` in degrees, plus 270° on the first (the released ``.bsg`` rotations)."""
    w, x, y, z = q
    n = squared_norm(q)
    alpha = math.atan2(z, w) + math.atan2(-x, y)
    beta = 2 * math.acos(math.sqrt((w**2 + z**2) / n))
    gamma = math.atan2(z, w) - math.atan2(-x, y)
    return np.degrees(np.array([alpha, beta, gamma])) + [270, 0, 0]
