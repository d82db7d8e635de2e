"""Frames, rotations and number formatting shared by the library.

All rotation math happens in the virtual (Unity, y-up) frame with
right-handed formulas, as in the released code (spec 1.2, 2.2); captions
convert to the real ``[east, north, up]`` frame.
"""

from __future__ import annotations

import math

import numpy as np

_SWAP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
_SWAPPED_AXES = np.array([0, 2, 1])


def to_real(v: np.ndarray) -> np.ndarray:
    """Virtual ``[east, up, north]`` → real ``[east, north, up]`` (also the inverse)."""
    return np.asarray(v, dtype=float).take(_SWAPPED_AXES, axis=-1)


def to_virtual(v: np.ndarray) -> np.ndarray:
    """Real → virtual; the swap is its own inverse."""
    return np.asarray(v, dtype=float).take(_SWAPPED_AXES, axis=-1)


def rotation_to_real(rot: np.ndarray) -> np.ndarray:
    """A virtual-frame rotation expressed in the real frame (still proper: ``P R P``)."""
    return _SWAP @ rot @ _SWAP


def quat_to_matrix(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Unit quaternion (normalised here) → 3x3 rotation matrix."""
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quat(rot: np.ndarray) -> tuple[float, float, float, float]:
    """3x3 rotation → unit quaternion ``(w, x, y, z)`` with ``w >= 0``."""
    m = rot
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    sign = -1.0 if q[0] < 0 else 1.0
    w, x, y, z = (float(sign * c) + 0.0 for c in q)
    return (w, x, y, z)


def shortest_arc(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotation taking unit vector ``u`` onto ``v`` along the shortest arc.

    Quaternion ``(1 + u·v, u × v)`` normalised; for opposite vectors a 180°
    turn about an axis perpendicular to ``u`` chosen as in the released code
    (``x`` unless ``u`` is nearly along x, then ``y``; Gram-Schmidt'ed).
    """
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    d = float(u @ v)
    if d < -1.0 + 1e-9:
        axis = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.1 else np.array([0.0, 1.0, 0.0])
        axis = axis - (axis @ u) * u
        axis /= np.linalg.norm(axis)
        return quat_to_matrix(0.0, *axis)
    c = np.cross(u, v)
    return quat_to_matrix(1.0 + d, *c)


def axis_angle(axis: np.ndarray, degrees: float) -> np.ndarray:
    """Right-handed rotation by ``degrees`` about unit ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    t = math.radians(degrees)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(t) * k + (1.0 - math.cos(t)) * (k @ k)


def start_rotation(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Virtual-frame rotation for ``start``'s ``[yaw, pitch, roll]`` degrees.

    Released code: x-rotation = pitch, y-rotation (vertical) = yaw,
    z-rotation = -roll, composed ``Rx · Ry · Rz``.
    """
    rx = axis_angle(np.array([1.0, 0.0, 0.0]), pitch)
    ry = axis_angle(np.array([0.0, 1.0, 0.0]), yaw)
    rz = axis_angle(np.array([0.0, 0.0, 1.0]), -roll)
    return rx @ ry @ rz


def wrap_angle(degrees: float) -> float:
    """Wrap to ``(-180, 180]``."""
    w = math.fmod(degrees, 360.0)
    if w > 180.0:
        w -= 360.0
    elif w <= -180.0:
        w += 360.0
    return w


def _clean(values: np.ndarray, decimals: int = 2) -> np.ndarray:
    # Adding 0.0 turns -0.0 into 0.0: models should not read sign noise.
    return np.round(np.asarray(values, dtype=float), decimals) + 0.0


def _array_text(values: np.ndarray, separator: str) -> str:
    """``np.array2string(values, separator=...)`` for short rounded vectors, without its overhead.

    Reproduces numpy's default float layout (shortest digits, integer parts
    right-aligned, fractions left-aligned and padded with spaces, ``1.`` for
    integral values); falls back to numpy whenever it would switch to
    scientific notation.
    """
    finite = [abs(float(v)) for v in values if v != 0.0]
    if not finite or (max(finite) < 1e8 and min(finite) >= 1e-4 and max(finite) / min(finite) <= 1e3):
        parts = [repr(float(v)).split(".") for v in values]
        if all(len(p) == 2 and p[1].isdigit() for p in parts):
            fracs = [p[1].rstrip("0") for p in parts]
            left = max(len(p[0]) for p in parts)
            right = max(len(f) for f in fracs)
            cells = [p[0].rjust(left) + "." + f.ljust(right) for p, f in zip(parts, fracs, strict=True)]
            return "[" + separator.join(cells) + "]"
    return np.array2string(np.asarray(values, dtype=float), separator=separator)


def fmt_position(v: np.ndarray) -> str:
    """``Position:`` style, e.g. ``[1.5,2. ,0. ]`` (numpy, comma separator)."""
    return _array_text(_clean(v), ",")


def fmt_face(v: np.ndarray) -> str:
    """Face-centre style, rounded to 0.001, e.g. ``[0.5, 1. , 0. ]``."""
    return _array_text(_clean(v, 3), ", ")


def fmt_plain(v: np.ndarray) -> str:
    """Connector endpoint style, e.g. ``[ 0.  -1.   0.5]`` (numpy ``str``)."""
    return _array_text(_clean(v), " ")


def fmt_fixed(v: np.ndarray) -> str:
    """Two-decimal style, e.g. ``[0.00, 0.25, 2.00]``."""
    return "[" + ", ".join(f"{x:.2f}" for x in _clean(v)) + "]"
