"""Scene data of the fake ``bpy``: meshes and objects (collections: ``_collections``).

Behaviour copied from Blender (measured on ``bpy`` 5.0.1; the conformance corpus checks it):

- Transforms are float32. ``matrix_world`` is the *evaluated* matrix: setting
  ``location``/``rotation_euler``/``scale`` leaves it (and ``dimensions``) stale until
  the next depsgraph evaluation, which happens after every operator call and on
  ``view_layer.update()``. Assigning ``matrix_world`` stores the matrix as given and
  decomposes it into location/rotation/scale; a nested list (not a ``Matrix``) is read
  column-major, as Blender does.
- ``dimensions`` is the mesh bounding-box extent times the column lengths of the
  evaluated matrix; setting it sets ``scale = value / extent`` keeping the scale's sign.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from buildbench.suites.dreamhouse.executors.fakebpy._errors import public_names, unsupported
from buildbench.suites.dreamhouse.executors.fakebpy._linalg import (
    compose_rows,
    decompose_rows,
    euler_xyz_to_rows,
    matrix_to_euler_xyz,
)
from buildbench.suites.dreamhouse.executors.fakebpy._names import NameRegistry
from buildbench.suites.dreamhouse.executors.fakebpy.mathutils import Euler, Matrix, Vector

if TYPE_CHECKING:
    from buildbench.suites.dreamhouse.executors.fakebpy._collections import Collection
    from buildbench.suites.dreamhouse.executors.fakebpy._state import State

_IDENTITY16 = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)
# Blender's bound_box corner order (x, y, z picks of min=0 / max=1).
BOUND_BOX_ORDER = ((0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0), (1, 0, 0), (1, 0, 1), (1, 1, 1), (1, 1, 0))


class _Strict:
    """Attribute access outside the modelled API raises a clear error naming it."""

    _api_name = "bpy.types.ID"
    _instance_attrs: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise unsupported(f"{self._api_name}.{name}", public_names(type(self)))

    def __setattr__(self, name: str, value: Any) -> None:
        # Blender refuses unknown attributes too; a silent instance attribute would hide the gap.
        if name[0] == "_" or name in _settable(type(self)):
            object.__setattr__(self, name, value)
        else:
            raise unsupported(f"{self._api_name}.{name}", public_names(type(self)))


_SETTABLE: dict[type, frozenset[str]] = {}


def _settable(cls: type[_Strict]) -> frozenset[str]:
    """Public names a class lets scripts assign: its properties and declared instance attributes."""
    names = _SETTABLE.get(cls)
    if names is None:
        names = frozenset(n for n in dir(cls) if not n.startswith("_")) | frozenset(cls._instance_attrs)
        _SETTABLE[cls] = names
    return names


class ID(_Strict):
    """Common part of named data blocks: name with Blender's uniqueness rule, custom properties."""

    _registry_attr = ""
    _state: State
    _props: dict[str, Any]
    _name: str

    def __init__(self, state: State, name: str) -> None:
        """Register a new ID under a unique version of ``name``."""
        registry: NameRegistry = getattr(state, self._registry_attr)
        unique = registry.unique(str(name))
        # Private fields go straight into __dict__: the guarded __setattr__ is for scripts.
        self.__dict__.update(_state=state, _props={}, _name=unique)
        registry.add(self, unique)

    @property
    def _registry(self) -> NameRegistry:
        return getattr(self._state, self._registry_attr)

    @property
    def name(self) -> str:
        """The unique name; setting a taken name gives ``name.001`` and so on."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"bpy_struct: item.attr = val: {type(self).__name__}.name expected a string type")
        if value == self._name:
            return
        registry = self._registry
        registry.discard(self, self._name)
        self._name = registry.unique(value)
        registry.add(self, self._name)

    def __getitem__(self, key: str) -> Any:
        return self._props[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._props[key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._props

    def get(self, key: str, default: Any = None) -> Any:
        """A custom property, or ``default``."""
        return self._props.get(key, default)

    def keys(self) -> list[str]:
        """Custom property names."""
        return list(self._props)

    def __repr__(self) -> str:
        return f"bpy.data.{self._registry_attr}['{self._name}']"


class MeshVertex:
    """One vertex of a mesh; ``co`` is a copy (editing it does not move the vertex)."""

    __slots__ = ("co",)

    def __init__(self, co: Vector) -> None:
        """Wrap a coordinate vector."""
        self.co = co


class Mesh(ID):
    """Mesh data: only vertex positions matter (members are judged by their bounding boxes)."""

    _registry_attr = "meshes"
    _api_name = "bpy.types.Mesh"
    _co: array
    _bounds: tuple[list[float], list[float]] | None
    _users: int

    def __init__(self, state: State, name: str, coords: Iterable[float] = ()) -> None:
        """A mesh named ``name`` with flat xyz ``coords``."""
        super().__init__(state, name)
        self.__dict__.update(_co=array("f", coords), _bounds=None, _users=0)

    @property
    def users(self) -> int:
        """Number of objects using this mesh."""
        return self._users

    @property
    def vertices(self) -> list[MeshVertex]:
        """The vertices, for reading positions."""
        co = self._co
        return [MeshVertex(Vector._wrap(co[i : i + 3])) for i in range(0, len(co), 3)]

    def bounds(self) -> tuple[list[float], list[float]]:
        """(min xyz, max xyz) of the vertices; zeros for an empty mesh (cached until the vertices change)."""
        if self._bounds is None:
            co = self._co
            if not co:
                self._bounds = ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
            else:
                xs, ys, zs = co[0::3], co[1::3], co[2::3]
                self._bounds = ([min(xs), min(ys), min(zs)], [max(xs), max(ys), max(zs)])
        return self._bounds

    def from_pydata(self, vertices: Iterable[Iterable[float]], edges: Any, faces: Any) -> None:
        """Set the vertices (edges and faces are accepted and not kept: only extents matter)."""
        flat: list[float] = []
        for v in vertices:
            xyz = [float(c) for c in v]
            if len(xyz) != 3:
                raise ValueError("Mesh.from_pydata(): each vertex needs 3 coordinates")
            flat.extend(xyz)
        self._co = array("f", flat)
        self._bounds = None

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Accepted for compatibility; the mesh has no derived data to rebuild."""

    def transform(self, matrix: Matrix | list[list[float]]) -> None:
        """Transform every vertex by a 4x4 matrix (a ``Matrix`` or row lists)."""
        rows: list[list[float]] = [list(r)[:4] for r in matrix][:3]
        (a, b, c, d), (e, f, g, h), (i, j, k, m) = rows
        co = self._co
        out: list[float] = []
        put = out.extend
        for n in range(0, len(co), 3):
            x, y, z = co[n], co[n + 1], co[n + 2]
            put((a * x + b * y + c * z + d, e * x + f * y + g * z + h, i * x + j * y + k * z + m))
        self._co = array("f", out)
        self._bounds = None

    def copy(self) -> Mesh:
        """A new mesh with the same vertices (named ``<name>.001``…)."""
        return Mesh(self._state, self._name, self._co)


class Object(ID):
    """A scene object: a mesh (``type == 'MESH'``) or an empty, with a float32 transform."""

    _registry_attr = "objects"
    _api_name = "bpy.types.Object"
    _mesh: Mesh | None
    _loc: Vector
    _rot: Euler
    _scale: Vector
    _eval: array
    _collections: list[Collection]
    _dirty: bool

    def __init__(self, state: State, name: str, mesh: Mesh | None) -> None:
        """A new object using ``mesh`` (None for an empty); its evaluated matrix starts as identity."""
        super().__init__(state, name)
        if mesh is not None:
            mesh._users += 1
        rot = Euler()
        rot._owner = self
        self.__dict__.update(
            _mesh=mesh,
            _loc=Vector._wrap(array("f", (0.0, 0.0, 0.0)), self),
            _rot=rot,
            _scale=Vector._wrap(array("f", (1.0, 1.0, 1.0)), self),
            _eval=array("f", _IDENTITY16),
            _collections=[],
            _dirty=False,
        )

    def _touch(self) -> None:
        d = self.__dict__
        if not d["_dirty"]:
            d["_dirty"] = True
            d["_state"].dirty.append(self)

    def _evaluate(self) -> None:
        (x, y, z), (sx, sy, sz) = self._loc._d, self._scale._d
        if not any(self._rot._d):
            # Unrotated members (most of a frame): skip the trigonometry.
            flat: list[float] = [sx, 0.0, 0.0, x, 0.0, sy, 0.0, y, 0.0, 0.0, sz, z, 0.0, 0.0, 0.0, 1.0]
        else:
            flat = [v for row in self.basis_rows() for v in row]
        self.__dict__.update(_eval=array("f", flat), _dirty=False)

    def basis_rows(self) -> list[list[float]]:
        """Row-major 4x4 from the current location, rotation and scale (not the evaluated matrix)."""
        return compose_rows(list(self._loc._d), euler_xyz_to_rows(self._rot._d), list(self._scale._d))

    # -- plain properties -----------------------------------------------------------
    @property
    def type(self) -> str:
        """``'MESH'`` or ``'EMPTY'``."""
        return "EMPTY" if self._mesh is None else "MESH"

    @property
    def data(self) -> Mesh | None:
        """The mesh (None for an empty)."""
        return self._mesh

    @data.setter
    def data(self, mesh: Mesh) -> None:
        if not isinstance(mesh, Mesh) or self._mesh is None:
            raise unsupported("bpy.types.Object.data assignment other than mesh to a mesh object")
        self._mesh._users -= 1
        mesh._users += 1
        self._mesh = mesh

    @property
    def location(self) -> Vector:
        """Location (metres); the returned vector writes back."""
        return self._loc

    @location.setter
    def location(self, value: Iterable[float]) -> None:
        self._loc[:] = _three(value, "location")

    @property
    def scale(self) -> Vector:
        """Scale per local axis; the returned vector writes back."""
        return self._scale

    @scale.setter
    def scale(self, value: Iterable[float]) -> None:
        self._scale[:] = _three(value, "scale")

    @property
    def rotation_euler(self) -> Euler:
        """XYZ Euler rotation (radians); the returned Euler writes back."""
        return self._rot

    @rotation_euler.setter
    def rotation_euler(self, value: Iterable[float]) -> None:
        self._rot[:] = _three(value, "rotation_euler")

    @property
    def rotation_mode(self) -> str:
        """Always ``'XYZ'``; other modes are not modelled."""
        return "XYZ"

    @rotation_mode.setter
    def rotation_mode(self, value: str) -> None:
        if value != "XYZ":
            raise unsupported(f"bpy.types.Object.rotation_mode = {value!r}", ["'XYZ'"])

    @property
    def matrix_world(self) -> Matrix:
        """The evaluated world matrix (stale until the next evaluation, as in Blender)."""
        e = self._eval
        m = Matrix([e[0:4], e[4:8], e[8:12], e[12:16]])
        m._owner = self
        return m

    @matrix_world.setter
    def matrix_world(self, value: Any) -> None:
        if isinstance(value, Matrix):
            rows = [list(r) for r in value.to_4x4()]
        else:
            # Blender reads a plain nested sequence column by column.
            cols = [[float(v) for v in c] for c in value]
            if len(cols) != 4 or any(len(c) != 4 for c in cols):
                raise ValueError("Object.matrix_world: expected a 4x4 matrix")
            rows = [[cols[j][i] for j in range(4)] for i in range(4)]
        self._set_world(rows)

    def _matrix_changed(self, matrix: Matrix) -> None:
        self._set_world([list(r) for r in matrix])

    def _set_world(self, rows: list[list[float]]) -> None:
        parts = decompose_rows(rows)
        self._loc[:] = parts.location
        self._rot[:] = matrix_to_euler_xyz(parts.rotation)
        self._scale[:] = parts.scale
        self._eval = array("f", [v for row in rows for v in row])

    matrix_basis = matrix_world

    @property
    def bound_box(self) -> list[list[float]]:
        """The 8 local bounding-box corners in Blender's order."""
        if self._mesh is None:
            lo, hi = [-1.0] * 3, [1.0] * 3
        else:
            lo, hi = self._mesh.bounds()
        pick = (lo, hi)
        return [[pick[a][0], pick[b][1], pick[c][2]] for a, b, c in BOUND_BOX_ORDER]

    @property
    def dimensions(self) -> Vector:
        """Bounding-box extent times the evaluated matrix's axis lengths (a copy)."""
        return Vector(dimensions_of(self))

    @dimensions.setter
    def dimensions(self, value: Iterable[float]) -> None:
        target = _three(value, "dimensions")
        lo, hi = self._mesh.bounds() if self._mesh is not None else ([0.0] * 3, [0.0] * 3)
        for i in range(3):
            extent = hi[i] - lo[i]
            if extent > 0:
                s = math.copysign(target[i] / extent, self._scale._d[i])
                if math.isfinite(s):
                    self._scale._d[i] = s
        self._touch()

    @property
    def users_collection(self) -> tuple[Collection, ...]:
        """Collections this object is linked to."""
        return tuple(self._collections)

    # -- selection ------------------------------------------------------------------
    def select_set(self, state: bool) -> None:
        """Select or deselect (only objects in the view layer can be selected)."""
        if not self._state.in_view_layer(self):
            raise RuntimeError(
                f"Error: Object '{self._name}' can't be selected because it is not in View Layer 'ViewLayer'!"
            )
        self._state.select(self, bool(state))

    def select_get(self) -> bool:
        """True when selected."""
        return self in self._state.selected

    def copy(self) -> Object:
        """An unlinked duplicate sharing the same mesh."""
        dup = Object(self._state, self._name, self._mesh)
        dup._loc[:] = self._loc
        dup._rot[:] = self._rot
        dup._scale[:] = self._scale
        dup._eval = array("f", self._eval)
        return dup


def dimensions_of(obj: Object) -> list[float]:
    """Blender's ``dimensions``: mesh bounding-box extent times the evaluated matrix's column lengths."""
    lo, hi = obj._mesh.bounds() if obj._mesh is not None else ([0.0] * 3, [0.0] * 3)
    e = obj._eval
    return [
        (hi[q] - lo[q]) * math.sqrt(e[q] * e[q] + e[4 + q] * e[4 + q] + e[8 + q] * e[8 + q]) for q in range(3)
    ]


def _three(value: Iterable[float], what: str) -> list[float]:
    try:
        values = [float(v) for v in value]
    except TypeError:
        raise TypeError(
            f"bpy_struct: item.attr = val: Object.{what} expected a sequence of 3 numbers"
        ) from None
    if len(values) != 3:
        raise ValueError(f"bpy_struct: item.attr = val: Object.{what} expected 3 values, got {len(values)}")
    return values
