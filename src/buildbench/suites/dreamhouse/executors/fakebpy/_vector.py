"""``mathutils.Vector`` of the fake Blender: 2D-4D, float32 storage, optional write-back owner."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from buildbench.suites.dreamhouse.executors.fakebpy._errors import public_names, unsupported

_SWIZZLE = "xyzw"


def to_floats(values: Iterable[Any], what: str) -> list[float]:
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: expected a sequence of numbers ({exc})") from None


def rotation_matrix3(rotation: Any, where: str) -> Any:
    """The 3x3 matrix of an Euler, Quaternion or Matrix (a ``mathutils.Matrix``).

    Each of those classes says how it becomes one (``_rotation_3x3``), so this module, which
    ``mathutils`` imports, needs none of them.
    """
    as_3x3 = getattr(rotation, "_rotation_3x3", None)
    if as_3x3 is None:
        raise TypeError(f"{where}: expected an Euler, Quaternion or Matrix, got {type(rotation).__name__}")
    return as_3x3()


class Vector:
    """A 2D-4D vector of float32 values; may be owned by an object or matrix it writes back to."""

    __slots__ = ("_d", "_owner")

    def __init__(self, seq: Iterable[Any] = (0.0, 0.0, 0.0)) -> None:
        """Build from any sequence of 2 to 4 numbers (default: the 3D zero vector)."""
        values = to_floats(seq, "Vector()")
        if not 2 <= len(values) <= 4:
            raise ValueError(f"Vector(): expected 2 to 4 values, got {len(values)}")
        self._d = array("f", values)
        self._owner: Any = None

    @classmethod
    def _wrap(cls, data: array, owner: Any = None) -> Vector:
        v = cls.__new__(cls)
        v._d = data
        v._owner = owner
        return v

    @classmethod
    def Fill(cls, size: int, fill: float = 0.0) -> Vector:  # noqa: N802 - Blender's name
        """A vector of ``size`` copies of ``fill``."""
        return cls([fill] * size)

    def _touch(self) -> None:
        if self._owner is not None:
            self._owner._touch()

    # -- container protocol ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self) -> Iterator[float]:
        return iter(self._d)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return tuple(self._d[i])
        return self._d[i]

    def __setitem__(self, i: int | slice, value: Any) -> None:
        if isinstance(i, slice):
            values = to_floats(value, "Vector slice assignment")
            if len(values) != len(range(*i.indices(len(self._d)))):
                raise ValueError("Vector slice assignment: size mismatch")
            self._d[i] = array("f", values)
        else:
            self._d[i] = float(value)
        self._touch()

    def __getattr__(self, name: str) -> Any:
        if 2 <= len(name) <= 4 and all(c in _SWIZZLE[: len(self._d)] for c in name):
            return Vector([self._d[_SWIZZLE.index(c)] for c in name])
        raise unsupported(f"mathutils.Vector.{name}", public_names(Vector))

    def _set_axis(self, axis: int, value: float) -> None:
        if axis >= len(self._d):
            raise AttributeError(f"Vector has no axis {_SWIZZLE[axis]!r} (size {len(self._d)})")
        self._d[axis] = float(value)
        self._touch()

    x = property(lambda self: self._d[0], lambda self, v: self._set_axis(0, v), doc="First component.")
    y = property(lambda self: self._d[1], lambda self, v: self._set_axis(1, v), doc="Second component.")
    z = property(lambda self: self._d[2], lambda self, v: self._set_axis(2, v), doc="Third component.")
    w = property(lambda self: self._d[3], lambda self, v: self._set_axis(3, v), doc="Fourth component.")

    # -- arithmetic -----------------------------------------------------------------
    def _same(self, other: Any, op: str) -> Vector:
        if not isinstance(other, Vector):
            # Blender raises AttributeError here, with this wording.
            raise AttributeError(
                f"Vector {op}: (Vector, {type(other).__name__}) invalid type for this operation"
            )
        if len(other) != len(self):
            raise ValueError(f"Vector {op}: vectors must have the same size ({len(self)} vs {len(other)})")
        return other

    def __add__(self, other: Any) -> Vector:
        o = self._same(other, "addition")
        return Vector([a + b for a, b in zip(self._d, o._d, strict=True)])

    def __sub__(self, other: Any) -> Vector:
        o = self._same(other, "subtraction")
        return Vector([a - b for a, b in zip(self._d, o._d, strict=True)])

    def __iadd__(self, other: Any) -> Vector:
        self[:] = self + other
        return self

    def __isub__(self, other: Any) -> Vector:
        self[:] = self - other
        return self

    def __mul__(self, other: Any) -> Vector:
        if isinstance(other, Vector):
            o = self._same(other, "element-wise multiplication")
            return Vector([a * b for a, b in zip(self._d, o._d, strict=True)])
        if isinstance(other, int | float):
            return Vector([a * other for a in self._d])
        return NotImplemented

    __rmul__ = __mul__

    def __imul__(self, other: Any) -> Vector:
        self[:] = self * other
        return self

    def __truediv__(self, other: Any) -> Vector:
        if not isinstance(other, int | float):
            return NotImplemented
        if other == 0:
            raise ZeroDivisionError("Vector division: divide by zero error")
        return Vector([a / other for a in self._d])

    def __itruediv__(self, other: Any) -> Vector:
        self[:] = self / other
        return self

    def __neg__(self) -> Vector:
        return Vector([-a for a in self._d])

    def __pos__(self) -> Vector:
        return self.copy()

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, Vector):
            return self.dot(other)
        return NotImplemented  # Vector @ Matrix is Matrix.__rmatmul__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vector) and list(self._d) == list(other._d)

    __hash__ = None  # type: ignore[assignment]  # mutable, like Blender's unfrozen vectors

    def __repr__(self) -> str:
        return f"Vector(({', '.join(repr(v) for v in self._d)}))"

    def __str__(self) -> str:
        return f"<Vector ({', '.join(f'{v:.4f}' for v in self._d)})>"

    # -- methods --------------------------------------------------------------------
    @property
    def length(self) -> float:
        """Euclidean length."""
        return math.sqrt(sum(a * a for a in self._d))

    magnitude = length

    @property
    def length_squared(self) -> float:
        """Squared Euclidean length."""
        return sum(a * a for a in self._d)

    def dot(self, other: Any) -> float:
        """Dot product."""
        o = self._same(Vector(other) if not isinstance(other, Vector) else other, "dot")
        return sum(a * b for a, b in zip(self._d, o._d, strict=True))

    def cross(self, other: Any) -> Vector:
        """Cross product of two 3D vectors."""
        o = Vector(other) if not isinstance(other, Vector) else other
        if len(self) != 3 or len(o) != 3:
            raise ValueError("Vector.cross(): expects 3D vectors")
        ax, ay, az = self._d
        bx, by, bz = o._d
        return Vector((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx))

    def normalized(self) -> Vector:
        """A unit-length copy (the zero vector stays zero, as in Blender)."""
        n = self.length
        return self.copy() if n == 0 else Vector([a / n for a in self._d])

    def normalize(self) -> None:
        """Scale to unit length in place."""
        self[:] = self.normalized()

    def copy(self) -> Vector:
        """An independent copy."""
        return Vector(self._d)

    __copy__ = copy

    def to_tuple(self, precision: int = -1) -> tuple[float, ...]:
        """The values as a tuple, rounded to ``precision`` digits when it is not -1."""
        return tuple(self._d) if precision == -1 else tuple(round(v, precision) for v in self._d)

    def resized(self, size: int) -> Vector:
        """A copy padded with zeros or cut to ``size``."""
        return Vector((list(self._d) + [0.0] * size)[:size])

    def to_2d(self) -> Vector:
        """The first two components."""
        return self.resized(2)

    def to_3d(self) -> Vector:
        """The first three components (zero padded)."""
        return self.resized(3)

    def to_4d(self) -> Vector:
        """A 4D copy with w = 1 when the vector was shorter."""
        return Vector(list(self._d) + [0.0] * (3 - len(self._d)) + [1.0]) if len(self._d) < 4 else self.copy()

    def lerp(self, other: Any, factor: float) -> Vector:
        """Linear interpolation towards ``other``."""
        o = self._same(other, "lerp")
        return Vector([a + (b - a) * factor for a, b in zip(self._d, o._d, strict=True)])

    def angle(self, other: Any, fallback: Any = None) -> Any:
        """Angle to ``other`` in radians; ``fallback`` (or ValueError) for a zero vector."""
        o = self._same(other, "angle")
        n = self.length * o.length
        if n == 0:
            if fallback is None:
                raise ValueError("Vector.angle(other): zero length vectors have no valid angle")
            return fallback
        return math.acos(max(-1.0, min(1.0, self.dot(o) / n)))

    def negate(self) -> None:
        """Flip the sign in place."""
        self[:] = -self

    def zero(self) -> None:
        """Set every component to zero in place."""
        self[:] = [0.0] * len(self._d)

    def rotate(self, rotation: Any) -> None:
        """Rotate in place by an Euler, Quaternion or 3x3 Matrix."""
        self[:] = rotation_matrix3(rotation, "Vector.rotate()") @ self

    def project(self, other: Any) -> Vector:
        """Projection of this vector onto ``other``."""
        o = self._same(other, "project")
        return o * (self.dot(o) / o.dot(o))

    def freeze(self) -> Vector:
        """Blender makes the vector hashable; here it returns the vector unchanged."""
        return self
