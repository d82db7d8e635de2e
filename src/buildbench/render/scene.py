"""Batch boxes and triangle meshes into one flat-shaded, indexed vertex array, ready for one draw call.

Every vertex carries its face's normal and the item colour, so shading is exactly flat. A box
face's two triangles share its four corners (24 vertices and 36 indices per box, instead of
36 vertices): the rasterizer sees the same triangles with the same corner values in the same
order, so images are unchanged, and the vertex stage, a good part of each view's cost on a
CPU, shades a third fewer vertices. Mesh triangles keep their own three vertices.
Construction is numpy-vectorised over all boxes at once; there is no per-box Python loop.

Closed solids (all boxes, and meshes marked ``closed``) come first in the vertex array, wound
counter-clockwise seen from outside, so the renderer can skip their back faces: that halves
the triangles the rasterizer has to set up, which is most of the cost on a CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from buildbench.render import fixed
from buildbench.render.camera import Bounds, cross3
from buildbench.render.errors import RenderInputError

#: Interleaved vertex layout: position relative to ``Scene.origin_m`` (metres, float32), unit
#: world normal (float32) and RGBA colour (uint8, straight alpha).
VERTEX_DTYPE = np.dtype([("position", "<f4", (3,)), ("normal", "<f4", (3,)), ("color", "u1", (4,))])
#: The same layout in moderngl's buffer-format notation ("f1" is a normalised unsigned byte).
VERTEX_FORMAT = "3f 3f 4f1"
VERTEX_ATTRIBUTES = ("in_position", "in_normal", "in_color")


class TriangleGeometry(NamedTuple):
    """Indexed triangles: three entries of ``indices`` per triangle."""

    positions_m: np.ndarray
    """World positions, shape (m, 3), float64."""
    normals: np.ndarray
    """Unit normal of the face each vertex belongs to, shape (m, 3), float64."""
    indices: np.ndarray
    """Vertex rows of each triangle's corners in drawing order, shape (3k,), int64."""

    def triangles_m(self) -> np.ndarray:
        """World positions of every triangle's corners, shape (3k, 3) (the unindexed soup)."""
        return self.positions_m[self.indices]


class _CubeTemplate(NamedTuple):
    positions: np.ndarray
    """Corners (24, 3) of the cube [-0.5, 0.5]^3, four per face."""
    face_of_vertex: np.ndarray
    """Index (24,) of each vertex's face into the 6 axis normals of ``_CUBE_NORMALS``."""
    indices: np.ndarray
    """Corners (36,) of the 12 outward-facing triangles, two per face."""


def _unit_cube() -> _CubeTemplate:
    positions, face_of_vertex, indices = [], [], []
    for face, (axis, sign) in enumerate((a, s) for a in range(3) for s in (1.0, -1.0)):
        u, v = (axis + 1) % 3, (axis + 2) % 3  # e_u × e_v = e_axis, so (u, v) order is CCW seen from +axis
        quad = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
        if sign < 0:
            quad.reverse()
        corners = []
        for a, b in quad:
            p = [0.0, 0.0, 0.0]
            p[axis], p[u], p[v] = 0.5 * sign, a, b
            corners.append(p)
        indices += [4 * face + i for i in (0, 1, 2, 0, 2, 3)]
        positions += corners
        face_of_vertex += [face] * 4
    return _CubeTemplate(np.array(positions), np.array(face_of_vertex), np.array(indices))


_CUBE_POSITIONS, _CUBE_FACE_OF_VERTEX, _CUBE_INDICES = _unit_cube()
_CUBE_NORMALS = np.array([[s if i == a else 0.0 for i in range(3)] for a in range(3) for s in (1.0, -1.0)])
#: The cube's 8 corners as signs per axis, and the corner of each of its 24 vertices.
_CORNER_SIGNS = [(s0, s1, s2) for s0 in (-1, 1) for s1 in (-1, 1) for s2 in (-1, 1)]
_CUBE_CORNER_OF_VERTEX = ((_CUBE_POSITIONS > 0) * np.array([4, 2, 1])).sum(axis=1)


#: Largest condition number (2-norm) of a box's 3x3 transform that is not taken for singular.
MAX_CONDITION = 1e12


def well_conditioned(linear: np.ndarray, limit: float = MAX_CONDITION) -> np.ndarray:
    """``np.linalg.cond(linear) < limit`` for finite matrices of shape (n, 3, 3), with an SVD only
    for the few matrices a cheap bound does not clear.

    The bound is the Frobenius condition number ``‖A‖ ‖adj A‖ / |det A|``, never below the
    2-norm one; clearing it ten times under the limit leaves room for rounding in both, so the
    verdict is the SVD's whichever way the bound rounds.
    """
    a = np.asarray(linear, dtype=np.float64)
    # Each column's components as contiguous (n,) arrays: elementwise products of those run
    # several times faster than cross products of (n, 3) rows.
    c0, c1, c2 = np.ascontiguousarray(a.transpose(2, 1, 0))
    with np.errstate(all="ignore"):  # overflow, underflow or det 0: inf or nan, left to the SVD
        adjugate = np.array([_cross_parts(c1, c2), _cross_parts(c2, c0), _cross_parts(c0, c1)])
        det = c0[0] * adjugate[0, 0] + c0[1] * adjugate[0, 1] + c0[2] * adjugate[0, 2]
        frobenius_sq = (c0 * c0).sum(axis=0) + (c1 * c1).sum(axis=0) + (c2 * c2).sum(axis=0)
        bound = np.sqrt(frobenius_sq * (adjugate * adjugate).sum(axis=(0, 1))) / np.abs(det)
    ok = bound < limit / 10
    unsure = np.flatnonzero(~ok)
    if unsure.size:
        ok[unsure] = np.linalg.cond(a[unsure]) < limit
    return ok


def _cross_parts(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``u × v`` for vectors given as their three component arrays."""
    return u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]


@dataclass(frozen=True)
class Boxes:
    """Oriented boxes, one colour each.

    Attributes:
        matrices: World transforms, shape (n, 4, 4), affine (last row 0 0 0 1); may include
            scale. The box is the cube of side ``sizes_m`` centred on the local origin.
        sizes_m: Full local edge lengths, shape (n, 3), metres, >= 0.
        colors: RGBA, shape (n, 4), uint8 (straight alpha).
    """

    matrices: np.ndarray
    sizes_m: np.ndarray
    colors: np.ndarray

    def __post_init__(self) -> None:
        m = np.asarray(self.matrices, dtype=np.float64)
        if m.ndim != 3 or m.shape[1:] != (4, 4):
            raise RenderInputError(f"Boxes.matrices must have shape (n, 4, 4), got {m.shape}")
        n = m.shape[0]
        bad = np.flatnonzero(~np.all(np.isfinite(m), axis=(1, 2)))
        if bad.size:
            raise RenderInputError(f"Boxes.matrices[{bad[0]}] has non-finite entries")
        bad = np.flatnonzero(np.any(np.abs(m[:, 3] - [0.0, 0.0, 0.0, 1.0]) > 1e-9, axis=1))
        if bad.size:
            raise RenderInputError(f"Boxes.matrices[{bad[0]}] is not affine: last row {m[bad[0], 3].tolist()}")
        # Relative test (condition number), so millimetre-scale transforms are not flagged.
        bad = np.flatnonzero(~well_conditioned(m[:, :3, :3]))
        if bad.size:
            raise RenderInputError(f"Boxes.matrices[{bad[0]}] has a singular 3x3 part (zero scale?)")
        sizes = np.asarray(self.sizes_m, dtype=np.float64)
        if sizes.shape != (n, 3):
            raise RenderInputError(f"Boxes.sizes_m must have shape ({n}, 3), got {sizes.shape}")
        bad = np.flatnonzero(~np.all(np.isfinite(sizes) & (sizes >= 0), axis=1))
        if bad.size:
            raise RenderInputError(f"Boxes.sizes_m[{bad[0]}] = {sizes[bad[0]].tolist()} must be finite and >= 0")
        object.__setattr__(self, "matrices", m)
        object.__setattr__(self, "sizes_m", sizes)
        object.__setattr__(self, "colors", as_rgba8(self.colors, n, "Boxes.colors"))

    def __len__(self) -> int:
        return self.matrices.shape[0]

    @classmethod
    def of_checked(cls, matrices: np.ndarray, sizes_m: np.ndarray, colors: np.ndarray | Sequence[float]) -> Boxes:
        """Boxes from float64 arrays that already meet every condition of construction (finite
        affine well-conditioned ``(n, 4, 4)`` matrices, finite ``(n, 3)`` sizes >= 0), as the
        members :func:`buildbench.suites.dreamhouse.views_basis.drawable` keeps do: only the colours
        are converted. Checking them again cost a house's two batches ~0.35 ms, as much as
        finding the drawable members did."""
        boxes = object.__new__(cls)
        object.__setattr__(boxes, "matrices", matrices)
        object.__setattr__(boxes, "sizes_m", sizes_m)
        object.__setattr__(boxes, "colors", as_rgba8(colors, matrices.shape[0], "Boxes.colors"))
        return boxes

    @classmethod
    def from_centres(
        cls,
        centres_m: np.ndarray,
        half_extents_m: np.ndarray,
        colors: np.ndarray | Sequence[float],
        rotations: np.ndarray | None = None,
    ) -> Boxes:
        """Boxes from centres (n, 3), half-extents (n, 3) and optional rotations (n, 3, 3).

        ``colors`` is one RGBA/RGB colour for all boxes or one per box (see :func:`as_rgba8`).
        """
        centres = np.asarray(centres_m, dtype=np.float64)
        half = np.asarray(half_extents_m, dtype=np.float64)
        if centres.ndim != 2 or centres.shape[1] != 3:
            raise RenderInputError(f"centres_m must have shape (n, 3), got {centres.shape}")
        n = centres.shape[0]
        m = np.tile(np.eye(4), (n, 1, 1))
        if rotations is not None:
            rot = np.asarray(rotations, dtype=np.float64)
            if rot.shape != (n, 3, 3):
                raise RenderInputError(f"rotations must have shape ({n}, 3, 3), got {rot.shape}")
            m[:, :3, :3] = rot
        m[:, :3, 3] = centres
        return cls(matrices=m, sizes_m=2.0 * half, colors=as_rgba8(colors, n, "colors"))


@dataclass(frozen=True)
class TriangleMesh:
    """A triangle mesh with one colour, or one colour per face.

    Attributes:
        vertices_m: World positions, shape (m, 3), metres.
        faces: Vertex indices, shape (k, 3), integers in [0, m).
        colors: RGBA, shape (k, 4), uint8 (a single colour is broadcast on construction).
        closed: True only if the mesh is watertight with every face wound counter-clockwise
            seen from outside; its back faces are then culled. Leave False when unsure: an
            open or inconsistently wound mesh marked closed renders with holes.
    """

    vertices_m: np.ndarray
    faces: np.ndarray
    colors: np.ndarray
    closed: bool = False

    def __post_init__(self) -> None:
        v = np.asarray(self.vertices_m, dtype=np.float64)
        if v.ndim != 2 or v.shape[1] != 3 or not np.all(np.isfinite(v)):
            raise RenderInputError(f"TriangleMesh.vertices_m must be finite with shape (m, 3), got {v.shape}")
        f = np.asarray(self.faces)
        if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
            raise RenderInputError(f"TriangleMesh.faces must be integers with shape (k, 3), got {f.shape} {f.dtype}")
        if f.size and (f.min() < 0 or f.max() >= v.shape[0]):
            raise RenderInputError(
                f"TriangleMesh.faces index range [{f.min()}, {f.max()}] is outside the {v.shape[0]} vertices"
            )
        object.__setattr__(self, "vertices_m", v)
        object.__setattr__(self, "faces", f.astype(np.int64))
        object.__setattr__(self, "colors", as_rgba8(self.colors, f.shape[0], "TriangleMesh.colors"))


@dataclass(frozen=True)
class Scene:
    """Everything to draw, as one interleaved vertex array.

    Attributes:
        vertices: Structured array of :data:`VERTEX_DTYPE`.
        indices: uint32 vertex indices, three per triangle, in drawing order.
        origin_m: World point the float32 positions are relative to (float64, shape (3,)),
            so large world coordinates keep full precision near the scene.
        bounds: Axis-aligned world bounds of all vertices, or None for an empty scene.
        closed_vertex_count: The first this many vertices drawn (entries of ``indices``) make
            the triangles of closed, outward-wound solids whose back faces may be culled; the
            rest are drawn two-sided.
    """

    vertices: np.ndarray
    indices: np.ndarray
    origin_m: np.ndarray
    bounds: Bounds | None
    closed_vertex_count: int = 0

    @property
    def triangle_count(self) -> int:
        """Number of triangles."""
        return self.indices.shape[0] // 3


def as_rgba8(colors: np.ndarray | Sequence[float], n: int, where: str) -> np.ndarray:
    """Normalise colours to uint8 RGBA of shape (n, 4).

    Accepts one colour (shape (3,) or (4,)) for all n items or one per item ((n, 3) or
    (n, 4)); floats must lie in [0, 1], integer arrays in [0, 255]. RGB gets alpha 1.
    """
    c = np.asarray(colors)
    if c.ndim == 1:
        c = np.broadcast_to(c, (n, c.shape[0]))
    if c.ndim != 2 or c.shape[0] != n or c.shape[1] not in (3, 4):
        raise RenderInputError(f"{where} must have shape (3,), (4,), ({n}, 3) or ({n}, 4), got {np.shape(colors)}")
    if np.issubdtype(c.dtype, np.integer):
        if c.size and (c.min() < 0 or c.max() > 255):
            raise RenderInputError(f"{where}: integer colours must lie in [0, 255]")
        c8 = c.astype(np.uint8)
    elif np.issubdtype(c.dtype, np.floating):
        if c.size and not (np.all(np.isfinite(c)) and c.min() >= 0.0 and c.max() <= 1.0):
            raise RenderInputError(f"{where}: float colours must lie in [0, 1]")
        c8 = np.rint(c * 255.0).astype(np.uint8)
    else:
        raise RenderInputError(f"{where}: colours must be numeric, got dtype {c.dtype}")
    if c8.shape[1] == 3:
        c8 = np.concatenate([c8, np.full((n, 1), 255, np.uint8)], axis=1)
    return np.ascontiguousarray(c8)


def _box_corners(linear: np.ndarray, sizes_m: np.ndarray, origins_m: np.ndarray) -> np.ndarray:
    """The 8 world corners of each box, shape (n, 8, 3), in ``_CORNER_SIGNS`` order.

    Corner ``(s0, s1, s2)`` is ``((s0·h0 + s1·h1) + s2·h2) + t`` with ``h_k`` the k-th column of the
    box's 3x3 part times half its k-th size: the local corner times the matrix, summed over the
    axes in a fixed order by elementwise operations (not ``@``: BLAS's bits depend on the CPU's
    kernel; see ``fixed``). The signs and the halving are exact, so this is that product
    exactly; eight corners of (n, 3) columns cost less than 24 vertices of (n, 3, 3) products.
    """
    h = linear * (0.5 * sizes_m)[:, None, :]
    cols = [(h[:, :, k], -h[:, :, k]) for k in range(3)]
    corners = np.empty((len(linear), len(_CORNER_SIGNS), 3))
    pairs = {(s0, s1): cols[0][s0 < 0] + cols[1][s1 < 0] for s0 in (-1, 1) for s1 in (-1, 1)}
    for i, (s0, s1, s2) in enumerate(_CORNER_SIGNS):
        corners[:, i] = (pairs[s0, s1] + cols[2][s2 < 0]) + origins_m
    return corners


def box_world_geometry(boxes: Boxes) -> TriangleGeometry:
    """The boxes' 12·n triangles in world space, box by box (24 vertices per box)."""
    n = len(boxes)
    linear = boxes.matrices[:, :3, :3]
    with np.errstate(over="ignore", invalid="ignore"):  # finite sizes and poses whose corners are not: refused below
        positions = np.take(_box_corners(linear, boxes.sizes_m, boxes.matrices[:, :3, 3]), _CUBE_CORNER_OF_VERTEX, axis=1)
    if not np.isfinite(positions).all():
        bad = int(np.flatnonzero(~np.isfinite(positions).reshape(n, -1).all(axis=1))[0])
        raise RenderInputError(f"box {bad}: its corners lie beyond the range of finite numbers (size and pose too large)")
    # Normals and winding depend on the 3x3 part alone, and a house has a handful of distinct
    # ones among hundreds of boxes: each distinct part (same bytes) is inverted once, by the
    # same per-matrix routines, so every box gets the values it would get on its own.
    keys = np.ascontiguousarray(linear).reshape(n, 9).view(np.dtype((np.void, 72))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    distinct = linear[first]
    # Normals transform by the inverse transpose so scaled or sheared boxes shade correctly: the
    # normal of face ±e_a is ±(row a of A⁻¹), i.e. ±(c_{a+1} × c_{a+2}) / det A for A's columns c,
    # whose direction needs no division by det, only its sign (no LAPACK inverse: its bits
    # depend on the CPU's BLAS kernel).
    det = fixed.det3(distinct)
    rows = np.stack([fixed.column_cross(distinct, 1, 2), fixed.column_cross(distinct, 2, 0),
                     fixed.column_cross(distinct, 0, 1)], axis=1) * np.where(det < 0, -1.0, 1.0)[:, None, None]
    rows /= fixed.length3(rows)[..., None]
    face_normals = np.stack([rows, -rows], axis=2).reshape(len(distinct), len(_CUBE_NORMALS), 3)
    # Per distinct part its 24 vertex normals, then one contiguous row of them per box.
    normals = np.take(np.ascontiguousarray(face_normals[:, _CUBE_FACE_OF_VERTEX, :]), inverse.reshape(-1), axis=0)
    indices = _CUBE_INDICES[None, :] + len(_CUBE_POSITIONS) * np.arange(n)[:, None]
    # A mirroring transform turns outward counter-clockwise triangles clockwise; swap two
    # corners of each of its triangles to keep them front-facing for culling.
    mirrored = (det < 0)[inverse.reshape(-1)]
    if mirrored.any():
        indices[mirrored] = indices[mirrored].reshape(-1, 12, 3)[:, :, [0, 2, 1]].reshape(-1, 36)
    return TriangleGeometry(positions.reshape(-1, 3), normals.reshape(-1, 3), indices.reshape(-1))


def mesh_world_geometry(mesh: TriangleMesh) -> TriangleGeometry:
    """The mesh's triangles with their face normals.

    Degenerate faces get a zero normal (they cover no pixels anyway).
    """
    tri = mesh.vertices_m[mesh.faces]
    normals = cross3(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = fixed.length3(normals)[:, None]
    normals = np.divide(normals, length, out=np.zeros_like(normals), where=length > 0)
    return TriangleGeometry(tri.reshape(-1, 3), np.repeat(normals, 3, axis=0), np.arange(3 * len(tri)))


@dataclass(frozen=True)
class ScenePart:
    """One batch's triangles, ready to be put in a :class:`Scene` (see :func:`assemble_scene`).

    Attributes:
        geometry: World triangles and their normals.
        colors: RGBA uint8 per vertex of ``geometry``, shape (m, 4).
        closed: Whether back faces may be culled.
    """

    geometry: TriangleGeometry
    colors: np.ndarray
    closed: bool

    @cached_property
    def positions_by_axis_m(self) -> np.ndarray:
        """The world positions as a contiguous (3, m) array: numpy reduces and broadcasts over its
        long axis many times faster than over the 3 of an (m, 3) array (same values)."""
        return np.ascontiguousarray(self.geometry.positions_m.T)

    @cached_property
    def extent_m(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Minimum and maximum world corner of the geometry's vertices; None when it has none."""
        if len(self.geometry.positions_m) == 0:
            return None
        return self.positions_by_axis_m.min(axis=1), self.positions_by_axis_m.max(axis=1)


def box_part(boxes: Boxes) -> ScenePart:
    """The scene part of a batch of boxes (closed solids)."""
    return ScenePart(box_world_geometry(boxes), np.repeat(boxes.colors, len(_CUBE_POSITIONS), axis=0), True)


def mesh_part(mesh: TriangleMesh) -> ScenePart:
    """The scene part of a triangle mesh."""
    return ScenePart(mesh_world_geometry(mesh), np.repeat(mesh.colors, 3, axis=0), mesh.closed)


def build_scene(boxes: Boxes | Sequence[Boxes] = (), meshes: Sequence[TriangleMesh] = ()) -> Scene:
    """Flatten boxes and meshes into one :class:`Scene` (one vertex array).

    Args:
        boxes: One :class:`Boxes` batch or several.
        meshes: Triangle meshes; closed ones are placed with the boxes.
    """
    box_batches = [boxes] if isinstance(boxes, Boxes) else list(boxes)
    return assemble_scene([box_part(b) for b in box_batches] + [mesh_part(m) for m in meshes])


def assemble_scene(parts: Sequence[ScenePart]) -> Scene:
    """One :class:`Scene` of several parts: the closed ones first, each group in the given order.

    A part may go into several scenes (e.g. a frame drawn alone and clad in its skin), so its
    geometry and bounds are computed once; the scene is the same as :func:`build_scene` of
    the batches. Each part is written straight into the interleaved array (no concatenated
    copies).
    """
    ordered = [p for p in parts if p.closed] + [p for p in parts if not p.closed]
    closed_count = sum(len(p.geometry.indices) for p in ordered if p.closed)
    vertex_count = sum(len(p.geometry.positions_m) for p in ordered)
    vertices = np.empty(vertex_count, dtype=VERTEX_DTYPE)
    if vertex_count == 0:
        return Scene(vertices=vertices, indices=np.zeros(0, np.uint32), origin_m=np.zeros(3), bounds=None)
    extents = [p.extent_m for p in ordered if p.extent_m is not None]
    bounds = Bounds(np.min([lo for lo, _ in extents], axis=0), np.max([hi for _, hi in extents], axis=0))
    origin = bounds.centre_m
    indices = np.empty(sum(len(p.geometry.indices) for p in ordered), dtype=np.uint32)
    rows = vertices.view(np.float32).reshape(vertex_count, -1)
    v = i = 0
    for p in ordered:
        m, k = len(p.geometry.positions_m), len(p.geometry.indices)
        # Subtracted in float64 and rounded to float32 once, as assigning the difference would;
        # along the long axis of both (see ScenePart.positions_by_axis_m).
        np.subtract(p.positions_by_axis_m, origin[:, None], out=rows[v : v + m, 0:3].T, casting="same_kind")
        rows[v : v + m, 3:6] = p.geometry.normals
        rows[v : v + m, 6:7] = np.ascontiguousarray(p.colors, dtype=np.uint8).view(np.float32)  # the 4 bytes as they are
        np.add(p.geometry.indices, v, out=indices[i : i + k], casting="unsafe")
        v, i = v + m, i + k
    return Scene(vertices=vertices, indices=indices, origin_m=origin, bounds=bounds, closed_vertex_count=closed_count)
