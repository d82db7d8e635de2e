"""Plain-list linear algebra behind the fake ``mathutils`` (row-major 3x3/4x4 as nested lists).

Each function follows the Blender C routine named in its docstring, so the fake agrees
with real Blender on conventions (Euler order, which of two Euler solutions, how a
mirrored matrix is split into rotation and scale).
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def identity(n: int) -> list[list[float]]:
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def euler_xyz_to_rows(angles: Iterable[float]) -> list[list[float]]:
    """Row-major 3x3 matrix ``Rz @ Ry @ Rx`` of XYZ Euler angles (Blender's ``eul_to_mat3``)."""
    ax, ay, az = angles
    if ax == 0.0 and ay == 0.0 and az == 0.0:
        return identity(3)
    ci, cj, ch = math.cos(ax), math.cos(ay), math.cos(az)
    si, sj, sh = math.sin(ax), math.sin(ay), math.sin(az)
    cc, cs, sc, ss = ci * ch, ci * sh, si * ch, si * sh
    return [
        [cj * ch, sj * sc - cs, sj * cc + ss],
        [cj * sh, sj * ss + cc, sj * cs - sc],
        [-sj, cj * si, cj * ci],
    ]


def matrix_to_euler_xyz(r: list[list[float]]) -> list[float]:
    """XYZ Euler angles of a normalized rotation; of the two solutions, the smaller (Blender's rule)."""
    cy = math.hypot(r[0][0], r[1][0])
    if cy > 16 * 1.1920929e-07:
        e1 = [math.atan2(r[2][1], r[2][2]), math.atan2(-r[2][0], cy), math.atan2(r[1][0], r[0][0])]
        e2 = [math.atan2(-r[2][1], -r[2][2]), math.atan2(-r[2][0], -cy), math.atan2(-r[1][0], -r[0][0])]
        return e2 if sum(map(abs, e1)) > sum(map(abs, e2)) else e1
    return [math.atan2(-r[1][2], r[1][1]), math.atan2(-r[2][0], cy), 0.0]


def compose_rows(loc: list[float], rot: list[list[float]], scale: list[float]) -> list[list[float]]:
    """Row-major 4x4 ``T @ R @ diag(scale)`` (Blender's ``loc_rot_size_to_mat4``)."""
    rows = [[rot[i][j] * scale[j] for j in range(3)] + [loc[i]] for i in range(3)]
    return rows + [[0.0, 0.0, 0.0, 1.0]]


class Decomposed:
    """Location, normalized rotation rows and signed scale of a 4x4 matrix."""

    __slots__ = ("location", "rotation", "scale")

    def __init__(self, location: list[float], rotation: list[list[float]], scale: list[float]) -> None:
        """Store the parts."""
        self.location, self.rotation, self.scale = location, rotation, scale


def decompose_rows(m: list[list[float]]) -> Decomposed:
    """Split a 4x4 into location, rotation and scale as Blender's ``mat4_to_loc_rot_size``.

    Scale is the length of each basis column; a mirroring matrix gets all three scales
    negated (Blender's workaround for negative matrices), and a zero column keeps a unit axis.
    """
    cols = [[m[i][j] for i in range(3)] for j in range(3)]
    scale = [math.sqrt(sum(v * v for v in c)) for c in cols]
    if det([row[:3] for row in m[:3]]) < 0:
        scale = [-s for s in scale]
    unit = [
        [v / s for v in c] if s != 0 else [float(i == j) for i in range(3)]
        for j, (c, s) in enumerate(zip(cols, scale, strict=True))
    ]
    rotation = [[unit[j][i] for j in range(3)] for i in range(3)]
    return Decomposed([m[0][3], m[1][3], m[2][3]], rotation, scale)


def matrix_to_quat(r: list[list[float]]) -> list[float]:
    tr = r[0][0] + r[1][1] + r[2][2]
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s]
    elif r[0][0] > r[1][1] and r[0][0] > r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[0][0] - r[1][1] - r[2][2])
        q = [(r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s]
    elif r[1][1] > r[2][2]:
        s = 2.0 * math.sqrt(1.0 + r[1][1] - r[0][0] - r[2][2])
        q = [(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r[2][2] - r[0][0] - r[1][1])
        q = [(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s]
    return [-v for v in q] if q[0] < 0 else q


def embed(rows: list[list[float]], n: int) -> list[list[float]]:
    out = identity(n)
    for i, row in enumerate(rows[:n]):
        for j, v in enumerate(row[:n]):
            out[i][j] = v
    return out


def det(m: list[list[float]]) -> float:
    n = len(m)
    if n == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    return sum((-1) ** j * m[0][j] * det([row[:j] + row[j + 1 :] for row in m[1:]]) for j in range(n))


def inverse(m: list[list[float]]) -> list[list[float]] | None:
    """Gauss-Jordan inverse with partial pivoting; None when singular."""
    n = len(m)
    if any(len(r) != n for r in m):
        raise ValueError("Matrix.inverted(): only square matrices are supported")
    a = [list(r) + [1.0 if i == j else 0.0 for j in range(n)] for i, r in enumerate(m)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-30:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        p = a[col][col]
        a[col] = [v / p for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]
