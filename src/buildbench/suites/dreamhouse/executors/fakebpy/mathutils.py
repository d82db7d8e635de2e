"""A pure-Python stand-in for Blender's ``mathutils``: Vector, Matrix, Euler, Quaternion.

Values are stored as 32-bit floats (``array('f')``) because Blender's mathutils and its
object transforms are single precision: storing the same way makes the numbers a script
sees, and the ones exported, agree with real Blender to the last float32 digit in most
cases. Arithmetic is done in double and rounded on store (for a single + - * / that gives
the same float32 as C float arithmetic).

Semantics follow Blender 4.x/5.x: ``@`` is the matrix/dot product, ``*`` is element-wise,
a 4x4 matrix times a 3D vector treats it as a point (w = 1), ``Matrix[i]`` is a row that
writes back, Euler angles are radians with rotation order ``XYZ`` meaning X first.
Anything not modelled raises :class:`UnsupportedAPIError` naming it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from buildbench.suites.dreamhouse.executors.fakebpy._errors import public_names, unsupported
from buildbench.suites.dreamhouse.executors.fakebpy._linalg import (
    compose_rows,
    decompose_rows,
    det,
    embed,
    euler_xyz_to_rows,
    identity,
    inverse,
    matrix_to_euler_xyz,
    matrix_to_quat,
)
from buildbench.suites.dreamhouse.executors.fakebpy._vector import Vector, rotation_matrix3, to_floats

__all__ = ["Euler", "Matrix", "Quaternion", "Vector"]

_AXES = {"X": 0, "Y": 1, "Z": 2}


class Matrix:
    """A row-major 2x2 to 4x4 float32 matrix; ``m[i]`` is row i and writes back."""

    __slots__ = ("_rows", "_owner")

    def __init__(self, rows: Iterable[Iterable[Any]] | None = None) -> None:
        """Build from rows (default: the 4x4 identity)."""
        data = identity(4) if rows is None else [to_floats(r, "Matrix()") for r in rows]
        if not 2 <= len(data) <= 4 or any(len(r) != len(data[0]) or not 2 <= len(r) <= 4 for r in data):
            raise ValueError("Matrix(): expects 2 to 4 rows of 2 to 4 numbers each, all the same length")
        self._owner: Any = None
        self._rows = [Vector._wrap(array("f", r), self) for r in data]

    def _touch(self) -> None:
        if self._owner is not None:
            self._owner._matrix_changed(self)

    def _lists(self) -> list[list[float]]:
        return [list(r._d) for r in self._rows]

    @property
    def _shape(self) -> tuple[int, int]:
        return len(self._rows), len(self._rows[0])

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def Identity(cls, size: int) -> Matrix:  # noqa: N802 - Blender's name
        """The ``size`` x ``size`` identity."""
        return cls(identity(size))

    @classmethod
    def Translation(cls, vector: Iterable[Any]) -> Matrix:  # noqa: N802
        """A 4x4 translation."""
        t = to_floats(vector, "Matrix.Translation()")
        m = identity(4)
        for i, v in enumerate(t[:3]):
            m[i][3] = v
        return cls(m)

    @classmethod
    def Diagonal(cls, vector: Iterable[Any]) -> Matrix:  # noqa: N802
        """A square matrix with ``vector`` on its diagonal."""
        d = to_floats(vector, "Matrix.Diagonal()")
        return cls([[d[i] if i == j else 0.0 for j in range(len(d))] for i in range(len(d))])

    @classmethod
    def Scale(cls, factor: float, size: int, axis: Iterable[Any] | None = None) -> Matrix:  # noqa: N802
        """Uniform scale, or scale by ``factor`` along ``axis`` only."""
        m = identity(size)
        if axis is None:
            for i in range(min(size, 3)):
                m[i][i] = float(factor)
            return cls(m)
        a = Vector(axis).normalized()._d
        for i in range(min(size, 3)):
            for j in range(min(size, 3)):
                m[i][j] += (factor - 1.0) * a[i] * a[j]
        return cls(m)

    @classmethod
    def Rotation(cls, angle: float, size: int, axis: Any) -> Matrix:  # noqa: N802
        """Rotation by ``angle`` radians about ``'X'``, ``'Y'``, ``'Z'`` or a vector axis."""
        c, s = math.cos(angle), math.sin(angle)
        r: list[list[float]]
        if isinstance(axis, str):
            if axis not in _AXES:
                raise ValueError(f"Matrix.Rotation(): axis must be 'X', 'Y', 'Z' or a vector, got {axis!r}")
            r = {
                "X": [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
                "Y": [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
                "Z": [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            }[axis]
        else:
            x, y, z = Vector(axis).normalized()._d
            t = 1.0 - c
            r = [
                [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
                [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
                [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
            ]
        return cls(embed(r, size))

    @classmethod
    def LocRotScale(cls, location: Any, rotation: Any, scale: Any) -> Matrix:  # noqa: N802
        """``T @ R @ S`` from a location, a rotation (Euler/Quaternion/Matrix) and a scale; any may be None."""
        r = identity(3) if rotation is None else rotation_matrix3(rotation, "Matrix.LocRotScale()")._lists()
        s = [1.0, 1.0, 1.0] if scale is None else to_floats(scale, "Matrix.LocRotScale() scale")
        loc = [0.0, 0.0, 0.0] if location is None else to_floats(location, "Matrix.LocRotScale() location")
        return cls(compose_rows(loc, r, s))

    # -- container protocol ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Vector]:
        return iter(self._rows)

    def __getitem__(self, i: int | slice) -> Any:
        return tuple(self._rows[i]) if isinstance(i, slice) else self._rows[i]

    def __setitem__(self, i: int, value: Any) -> None:
        self._rows[i][:] = value

    def __getattr__(self, name: str) -> Any:
        raise unsupported(f"mathutils.Matrix.{name}", public_names(Matrix))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Matrix) and self._lists() == other._lists()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Matrix((" + ", ".join("(" + ", ".join(repr(v) for v in r._d) + ")" for r in self._rows) + "))"

    # -- arithmetic -----------------------------------------------------------------
    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, Matrix):
            a, b = self._lists(), other._lists()
            if len(a[0]) != len(b):
                raise ValueError(
                    f"Matrix multiplication: shapes {self._shape} and {other._shape} do not match"
                )
            cols = list(zip(*b, strict=True))
            return Matrix([[sum(x * y for x, y in zip(row, col, strict=True)) for col in cols] for row in a])
        if isinstance(other, Vector):
            return self._vector_product(other)
        if isinstance(other, Quaternion | Euler):
            raise TypeError(f"Matrix multiplication: not supported between Matrix and {type(other).__name__}")
        return NotImplemented

    def _vector_product(self, v: Vector) -> Vector:
        rows, cols = self._shape
        vals = list(v._d)
        if cols == 4 and len(vals) == 3:
            # Blender treats a 3D vector as a point (w = 1) and drops w from the result.
            vals.append(1.0)
            return Vector([sum(a * b for a, b in zip(r._d, vals, strict=True)) for r in self._rows[:3]])
        if cols != len(vals):
            raise ValueError(f"Matrix @ Vector: a {rows}x{cols} matrix cannot multiply a {len(vals)}D vector")
        return Vector([sum(a * b for a, b in zip(r._d, vals, strict=True)) for r in self._rows])

    def __rmatmul__(self, other: Any) -> Any:
        if isinstance(other, Vector):
            return self._row_vector_product(other)
        return NotImplemented

    def _row_vector_product(self, v: Vector) -> Vector:
        if len(v) != len(self._rows):
            raise ValueError("Vector @ Matrix: vector size must match the matrix row count")
        cols = list(zip(*self._lists(), strict=True))
        return Vector([sum(a * b for a, b in zip(v._d, col, strict=True)) for col in cols])

    def _elementwise(self, other: Any, fn: Callable[[float, float], float], op: str) -> Matrix:
        if isinstance(other, Matrix):
            if other._shape != self._shape:
                raise ValueError(f"Matrix {op}: matrices must have the same shape")
            return Matrix(
                [
                    [fn(a, b) for a, b in zip(r1._d, r2._d, strict=True)]
                    for r1, r2 in zip(self._rows, other._rows, strict=True)
                ]
            )
        if isinstance(other, int | float) and op == "multiplication":
            return Matrix([[fn(a, other) for a in r._d] for r in self._rows])
        raise TypeError(f"Matrix {op}: expected a Matrix, got {type(other).__name__}")

    def __mul__(self, other: Any) -> Matrix:
        return self._elementwise(other, lambda a, b: a * b, "multiplication")

    __rmul__ = __mul__

    def __add__(self, other: Any) -> Matrix:
        return self._elementwise(other, lambda a, b: a + b, "addition")

    def __sub__(self, other: Any) -> Matrix:
        return self._elementwise(other, lambda a, b: a - b, "subtraction")

    # -- methods --------------------------------------------------------------------
    def copy(self) -> Matrix:
        """An independent copy."""
        return Matrix(self._lists())

    __copy__ = copy

    def _replace(self, rows: list[list[float]]) -> None:
        for r, values in zip(self._rows, rows, strict=True):
            r._d[:] = array("f", values)
        self._touch()

    def transposed(self) -> Matrix:
        """The transpose."""
        return Matrix([list(c) for c in zip(*self._lists(), strict=True)])

    def transpose(self) -> None:
        """Transpose in place (square matrices)."""
        self._replace(self.transposed()._lists())

    def determinant(self) -> float:
        """Determinant of a square matrix."""
        return det(self._lists())

    def inverted(self, fallback: Any = None) -> Any:
        """The inverse; ``fallback`` (or ValueError) when the matrix is singular."""
        inv = inverse(self._lists())
        if inv is None:
            if fallback is None:
                raise ValueError("Matrix.inverted(): matrix does not have an inverse")
            return fallback
        return Matrix(inv)

    def invert(self) -> None:
        """Invert in place."""
        self._replace(self.inverted()._lists())

    def identity(self) -> None:
        """Set to the identity in place."""
        self._replace(identity(len(self._rows)))

    def to_3x3(self) -> Matrix:
        """The upper-left 3x3 block."""
        return Matrix([r[:3] for r in embed(self._lists(), 3)])

    def _rotation_3x3(self) -> Matrix:
        return self.to_3x3()

    def to_4x4(self) -> Matrix:
        """Embedded in a 4x4 identity."""
        return Matrix(embed(self._lists(), 4))

    @property
    def translation(self) -> Vector:
        """The translation column (a copy)."""
        return Vector([r._d[3] for r in self._rows[:3]])

    @translation.setter
    def translation(self, value: Any) -> None:
        t = to_floats(value, "Matrix.translation")
        rows = self._lists()
        for i in range(3):
            rows[i][3] = t[i]
        self._replace(rows)

    def to_translation(self) -> Vector:
        """The translation column."""
        return self.translation

    def to_scale(self) -> Vector:
        """Scale per axis (column lengths of the 3x3 part, negated when mirrored)."""
        return Vector(decompose_rows(embed(self._lists(), 4)).scale)

    def to_euler(self, order: str = "XYZ", euler_compat: Any = None) -> Euler:
        """Euler angles of the (normalized) rotation part; only order ``XYZ``."""
        if euler_compat is not None:
            raise unsupported("mathutils.Matrix.to_euler(euler_compat=...)")
        rot = decompose_rows(embed(self._lists(), 4)).rotation
        return Euler(matrix_to_euler_xyz(rot) if order == "XYZ" else _unsupported_order(order))

    def to_quaternion(self) -> Quaternion:
        """The rotation part as a quaternion."""
        return Quaternion(matrix_to_quat(decompose_rows(embed(self._lists(), 4)).rotation))

    def decompose(self) -> tuple[Vector, Quaternion, Vector]:
        """(location, rotation quaternion, scale) of a 4x4 matrix, as Blender splits it."""
        parts = decompose_rows(embed(self._lists(), 4))
        return Vector(parts.location), Quaternion(matrix_to_quat(parts.rotation)), Vector(parts.scale)

    def normalized(self) -> Matrix:
        """A copy with unit-length 3x3 columns."""
        rows = self._lists()
        n = min(3, len(rows))
        for j in range(n):
            length = math.sqrt(sum(rows[i][j] ** 2 for i in range(n))) or 1.0
            for i in range(n):
                rows[i][j] /= length
        return Matrix(rows)

    @property
    def col(self) -> tuple[Vector, ...]:
        """The columns (copies)."""
        return tuple(Vector(c) for c in zip(*self._lists(), strict=True))

    @property
    def row(self) -> tuple[Vector, ...]:
        """The rows (they write back)."""
        return tuple(self._rows)

    @property
    def is_negative(self) -> bool:
        """True when the 3x3 part mirrors (negative determinant)."""
        return det([r[:3] for r in embed(self._lists(), 3)]) < 0


class Euler:
    """Rotation angles in radians with an axis order (``XYZ``: rotate about X, then Y, then Z)."""

    __slots__ = ("_d", "_owner", "order")

    def __init__(self, angles: Iterable[Any] = (0.0, 0.0, 0.0), order: str = "XYZ") -> None:
        """Build from three angles (radians) and an order (only ``XYZ`` is modelled)."""
        values = to_floats(angles, "Euler()")
        if len(values) != 3:
            raise ValueError(f"Euler(): expected 3 angles, got {len(values)}")
        if order != "XYZ":
            _unsupported_order(order)
        self._d = array("f", values)
        self._owner: Any = None
        self.order = order

    def _touch(self) -> None:
        if self._owner is not None:
            self._owner._touch()

    def __len__(self) -> int:
        return 3

    def __iter__(self) -> Iterator[float]:
        return iter(self._d)

    def __getitem__(self, i: int | slice) -> Any:
        return tuple(self._d[i]) if isinstance(i, slice) else self._d[i]

    def __setitem__(self, i: int | slice, value: Any) -> None:
        if isinstance(i, slice):
            self._d[i] = array("f", to_floats(value, "Euler slice assignment"))
        else:
            self._d[i] = float(value)
        self._touch()

    def __getattr__(self, name: str) -> Any:
        raise unsupported(f"mathutils.Euler.{name}", public_names(Euler))

    def _set_axis(self, axis: int, value: float) -> None:
        self._d[axis] = float(value)
        self._touch()

    x = property(
        lambda self: self._d[0], lambda self, v: self._set_axis(0, v), doc="Angle about X (radians)."
    )
    y = property(
        lambda self: self._d[1], lambda self, v: self._set_axis(1, v), doc="Angle about Y (radians)."
    )
    z = property(
        lambda self: self._d[2], lambda self, v: self._set_axis(2, v), doc="Angle about Z (radians)."
    )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Euler) and list(self._d) == list(other._d) and self.order == other.order

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Euler(({', '.join(repr(v) for v in self._d)}), '{self.order}')"

    def copy(self) -> Euler:
        """An independent copy."""
        return Euler(self._d, self.order)

    def _rotation_3x3(self) -> Matrix:
        return self.to_matrix()

    def to_matrix(self) -> Matrix:
        """The 3x3 rotation matrix."""
        return Matrix(euler_xyz_to_rows(self._d))

    def to_quaternion(self) -> Quaternion:
        """The rotation as a quaternion."""
        return Quaternion(matrix_to_quat(euler_xyz_to_rows(self._d)))

    def zero(self) -> None:
        """Set all angles to zero."""
        self[:] = (0.0, 0.0, 0.0)


class Quaternion:
    """A rotation quaternion (w, x, y, z), as returned by ``Matrix.decompose``."""

    __slots__ = ("_d",)

    def __init__(self, seq: Iterable[Any] = (1.0, 0.0, 0.0, 0.0), angle: float | None = None) -> None:
        """Build from (w, x, y, z), or from an axis and ``angle`` (radians)."""
        values = to_floats(seq, "Quaternion()")
        if angle is not None:
            axis = Vector(values).normalized()._d
            s = math.sin(angle / 2.0)
            values = [math.cos(angle / 2.0), axis[0] * s, axis[1] * s, axis[2] * s]
        if len(values) != 4:
            raise ValueError(f"Quaternion(): expected 4 values, got {len(values)}")
        self._d = array("f", values)

    def __getattr__(self, name: str) -> Any:
        raise unsupported(f"mathutils.Quaternion.{name}", public_names(Quaternion))

    def __len__(self) -> int:
        return 4

    def __iter__(self) -> Iterator[float]:
        return iter(self._d)

    def __getitem__(self, i: int) -> float:
        return self._d[i]

    w = property(lambda self: self._d[0], doc="Scalar part.")
    x = property(lambda self: self._d[1], doc="X of the vector part.")
    y = property(lambda self: self._d[2], doc="Y of the vector part.")
    z = property(lambda self: self._d[3], doc="Z of the vector part.")

    def __repr__(self) -> str:
        return f"Quaternion(({', '.join(repr(v) for v in self._d)}))"

    def _rotation_3x3(self) -> Matrix:
        return self.to_matrix()

    def to_matrix(self) -> Matrix:
        """The 3x3 rotation matrix."""
        w, x, y, z = self._d
        n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
        w, x, y, z = w / n, x / n, y / n, z / n
        return Matrix(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )

    def to_euler(self, order: str = "XYZ") -> Euler:
        """The rotation as XYZ Euler angles."""
        return self.to_matrix().to_euler(order)

    def copy(self) -> Quaternion:
        """An independent copy."""
        return Quaternion(self._d)


def _unsupported_order(order: str) -> list[float]:
    raise unsupported(f"mathutils.Euler order {order!r}", ["'XYZ'"])
