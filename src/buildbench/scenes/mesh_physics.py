"""Physics of placed triangle meshes, whatever produced them (boxes, procedural furniture,
asset files): FCL contacts, surface-sampled out-of-bounds shares, voxel overlaps.

The definitions are those of the released SceneReVis evaluation (``scenerevis.md`` §2.5),
so that our numbers and the release's agree on the same meshes:

* **contacts**: FCL's narrow phase on each pair, one model per mesh as trimesh's
  ``CollisionManager`` builds it: a convex mesh becomes an ``fcl.Convex`` (GJK/EPA: one
  contact, the minimum penetration depth), any other a BVH of its triangles (one contact
  per pair of crossing triangles, each with its own depth). A mesh wholly inside another
  crosses no triangle and so has no contact: FCL sees surfaces, not volumes;
* **outside share**: ``count`` points sampled on the surface (a face picked with
  probability proportional to its area, then a uniform point in it by the folded
  parallelogram, the scheme of ``trimesh.sample.sample_surface``: the same seed on the
  same mesh gives the same points), the share of them outside the floor polygon (grown
  by the caller) or outside the floor–ceiling slab;
* **voxel overlaps**: each mesh filled at a pitch on its own grid, as
  ``trimesh``'s ``voxelized(pitch).fill()`` does, the grids composed by the release's
  integer shifts (:func:`voxel_loss`);
* **resting surfaces**: the floor area of a mesh's upward faces near a height under a
  footprint (:func:`surface_contact_m2`), what support and "on top of" stand on.

Speed: a mesh's FCL model, surface samples and volume are computed once per distinct
mesh (keyed by its bytes) and reused at any pose; the broad phase is the sort-and-sweep
of :mod:`buildbench.geometry` on the placed meshes' bounds, so FCL only sees pairs whose
bounds meet. Voxel grids are trimesh's voxels computed face by face
(:func:`buildbench.geometry.voxels.mesh_surface_voxels`), cached per mesh and rotation; a
room whose walls run along x or z is drawn directly (:func:`fill_prism`).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from numpy.typing import NDArray

from buildbench.geometry import AABBs, aabb_pairs
from buildbench.geometry.voxels import DEFAULT_MAX_VOXELS, mesh_surface_voxels

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

#: The release's FCL request asks for at most this many contacts per pair.
MAX_CONTACTS_PER_PAIR = 100_000
#: Distinct meshes whose FCL models and samples are kept.
CACHE_SIZE = 4096


@dataclass(eq=False)
class SolidMesh:
    """A triangle mesh in its own frame, with what physics needs of it computed once.

    Use :func:`solid_mesh` (cached) rather than the constructor.
    """

    vertices: FloatArray
    faces: IntArray
    key: bytes
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def convex(self) -> bool:
        """Whether trimesh calls the mesh convex (then FCL treats it as a convex solid)."""
        if "convex" not in self._cache:
            self._cache["convex"] = bool(self._trimesh().is_convex) if len(self.faces) else False
        return bool(self._cache["convex"])

    @property
    def volume_m3(self) -> float:
        """The enclosed volume when positive, else the product of the extents (the
        release's out-of-bounds volume base)."""
        if "volume" not in self._cache:
            tri = self.vertices[self.faces]
            signed = float(np.einsum("ij,ij->i", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])).sum() / 6.0)
            extents = np.ptp(self.vertices, axis=0) if len(self.vertices) else np.zeros(3)
            self._cache["volume"] = signed if signed > 0 else float(np.prod(extents))
        return float(self._cache["volume"])

    def fcl_geometry(self) -> Any:
        if "fcl" not in self._cache:
            import fcl

            if self.convex:
                counts = np.full((len(self.faces), 1), 3, dtype=np.int64)
                flat = np.concatenate([counts, self.faces], axis=1).ravel()
                self._cache["fcl"] = fcl.Convex(self.vertices, len(self.faces), flat)
            else:
                bvh = fcl.BVHModel()
                bvh.beginModel(num_tris_=len(self.faces), num_vertices_=len(self.vertices))
                bvh.addSubModel(verts=self.vertices, triangles=self.faces)
                bvh.endModel()
                self._cache["fcl"] = bvh
        return self._cache["fcl"]

    def samples(self, count: int, seed: int) -> FloatArray:
        """``(count, 3)`` surface points in the mesh's frame (see the module docstring)."""
        key = ("samples", count, seed)
        if key not in self._cache:
            self._cache[key] = sample_surface(self.vertices, self.faces, count, np.random.default_rng(seed))
        out: FloatArray = self._cache[key]
        return out

    def _trimesh(self) -> Any:
        import trimesh

        return trimesh.Trimesh(vertices=self.vertices, faces=self.faces, process=True)


_MESHES: OrderedDict[bytes, SolidMesh] = OrderedDict()


def solid_mesh(vertices: FloatArray, faces: IntArray) -> SolidMesh:
    """The :class:`SolidMesh` of ``vertices`` / ``faces``, shared by every equal mesh.

    Raises:
        ValueError: vertices that are not finite ``(n, 3)``, or faces indexing past them.
    """
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    if v.ndim != 2 or v.shape[1] != 3 or not np.isfinite(v).all():
        raise ValueError(f"mesh: vertices must be finite (n, 3) metres, got shape {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or (len(f) and (f.min() < 0 or f.max() >= len(v))):
        raise ValueError(f"mesh: faces must be (m, 3) indices below {len(v)}, got shape {f.shape}")
    key = hashlib.blake2b(v.tobytes() + b"|" + f.tobytes(), digest_size=20).digest()
    found = _MESHES.get(key)
    if found is not None:
        _MESHES.move_to_end(key)
        return found
    mesh = SolidMesh(v, f, key)
    _MESHES[key] = mesh
    if len(_MESHES) > CACHE_SIZE:
        _MESHES.popitem(last=False)
    return mesh


def sample_surface(vertices: FloatArray, faces: IntArray, count: int, rng: np.random.Generator) -> FloatArray:
    """``count`` points on the triangles, area-weighted, in trimesh's scheme: one uniform
    draw per point picks the face (inverse CDF of the cumulative areas), two more give
    the point in the parallelogram spanned from the face's first vertex, folded back into
    the triangle when their sum exceeds 1. An empty or zero-area mesh yields its first
    vertex (or the origin) ``count`` times."""
    if count <= 0:
        return np.zeros((0, 3))
    if not len(faces):
        return np.tile(vertices[0] if len(vertices) else np.zeros(3), (count, 1))
    origins = vertices[faces[:, 0]]
    edges = vertices[faces[:, 1:]] - origins[:, None, :]
    cumulative = np.cumsum(0.5 * np.linalg.norm(np.cross(edges[:, 0], edges[:, 1]), axis=1))
    if cumulative[-1] <= 0:
        return np.tile(origins[0], (count, 1))
    picks = np.searchsorted(cumulative, rng.random(count) * cumulative[-1])
    picks = np.minimum(picks, len(faces) - 1)
    lengths = rng.random((count, 2, 1))
    folded = lengths.sum(axis=1).reshape(-1) > 1.0
    lengths[folded] -= 1.0
    lengths = np.abs(lengths)
    out: FloatArray = origins[picks] + (edges[picks] * lengths).sum(axis=1)
    return out


def placed_bounds(meshes: Sequence[SolidMesh], rotations: FloatArray, centers: FloatArray) -> AABBs:
    """World axis-aligned bounds of each mesh at ``R @ v + c``."""
    n = len(meshes)
    lo, hi = np.zeros((n, 3)), np.zeros((n, 3))
    for i, mesh in enumerate(meshes):
        world = mesh.vertices @ rotations[i].T + centers[i] if len(mesh.vertices) else centers[i][None]
        lo[i], hi[i] = world.min(axis=0), world.max(axis=0)
    return AABBs(lo, hi)


@dataclass(frozen=True)
class MeshContact:
    """FCL's contacts between meshes ``a < b``: one depth per contact, metres."""

    a: int
    b: int
    depths: tuple[float, ...]

    @property
    def depth_m(self) -> float:
        """The deepest contact."""
        return max(self.depths)


def mesh_contacts(meshes: Sequence[SolidMesh], rotations: FloatArray, centers: FloatArray) -> list[MeshContact]:
    """Every pair of placed meshes FCL finds in contact, ``a < b`` in index order.

    Depths are as FCL reports them (see the module docstring); a pair is listed when FCL
    returns any contact, whatever its depth, so callers apply their own threshold.
    """
    import fcl

    n = len(meshes)
    if n < 2:
        return []
    bounds = placed_bounds(meshes, rotations, centers)
    pad = 1e-9 * (1.0 + float(np.abs(np.concatenate([bounds.mins, bounds.maxs])).max()))
    pairs = aabb_pairs(AABBs(bounds.mins - pad, bounds.maxs + pad))
    if not len(pairs):
        return []
    objects: dict[int, Any] = {}

    def obj(i: int) -> Any:
        if i not in objects:
            objects[i] = fcl.CollisionObject(meshes[i].fcl_geometry(), fcl.Transform(rotations[i], centers[i]))
        return objects[i]

    out = []
    for a, b in pairs.tolist():
        if not len(meshes[a].faces) or not len(meshes[b].faces):
            continue
        request = fcl.CollisionRequest(num_max_contacts=MAX_CONTACTS_PER_PAIR, enable_contact=True)
        result = fcl.CollisionResult()
        if fcl.collide(obj(a), obj(b), request, result):
            depths = tuple(float(c.penetration_depth) for c in result.contacts)
            if depths:
                out.append(MeshContact(a, b, depths))
    return out


def outside_shares(
    meshes: Sequence[SolidMesh],
    rotations: FloatArray,
    centers: FloatArray,
    floor: shapely.Geometry,
    y_range: tuple[float, float],
    *,
    count: int = 500,
    seed: int = 0,
) -> FloatArray:
    """``(n,)`` share of each mesh's ``count`` surface samples (drawn with ``seed``, the
    same points for every placement of a mesh) strictly outside ``floor`` in ``(x, z)``
    or outside ``y_range`` (inclusive)."""
    out = np.zeros(len(meshes))
    shapely.prepare(floor)
    y0, y1 = y_range
    for i, mesh in enumerate(meshes):
        world = mesh.samples(count, seed) @ rotations[i].T + centers[i]
        inside = shapely.contains_xy(floor, world[:, 0], world[:, 2]) & (world[:, 1] >= y0) & (world[:, 1] <= y1)
        out[i] = 1.0 - inside.sum() / len(inside) if len(inside) else 0.0
    return out


#: A face carries things when its normal's upward component is at least this (about 45°).
UPWARD_MIN = 0.7
#: ... and its floor projection shares more than this with the footprint, m² (1 cm²).
CONTACT_MIN_AREA_M2 = 1e-4


def surface_contact_m2(
    mesh: SolidMesh, rotation: FloatArray, center: FloatArray, footprint: shapely.Geometry, bottom_y: float,
    tolerance_m: float,
) -> float:
    """Floor area, m², that the upward faces of ``mesh`` placed at ``R @ v + c`` share with
    ``footprint`` (an (x, z) polygon) where they pass within ``tolerance_m`` of ``bottom_y``
    (strictly): what an object standing there can rest on. A table's top or a shelf board
    counts; a leg's sides and the top of the box a chair's back makes over its seat do not.
    Faces are counted one by one (stacked coplanar faces count twice; callers compare with
    a small threshold)."""
    if not len(mesh.faces):
        return 0.0
    tri = (mesh.vertices @ rotation.T + center)[mesh.faces]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    up = normal[:, 1] >= UPWARD_MIN * np.maximum(np.linalg.norm(normal, axis=1), 1e-300)
    heights = tri[:, :, 1]
    up &= (heights.min(axis=1) < bottom_y + tolerance_m) & (heights.max(axis=1) > bottom_y - tolerance_m)
    if not up.any():
        return 0.0
    return float(shapely.area(shapely.intersection(shapely.polygons(tri[up][:, :, [0, 2]]), footprint)).sum())


@dataclass(frozen=True)
class VoxelFigures:
    """Voxel out-of-bounds and collision volumes of one room, m³ (see :func:`voxel_loss`).

    Attributes:
        oob_m3: Per object, its filled voxels not in the room's.
        collision_m3: Per pair ``(a, b, m³)`` with shared voxels, ``a < b``.
    """

    oob_m3: tuple[float, ...]
    collision_m3: tuple[tuple[int, int, float], ...]

    @property
    def total_oob_m3(self) -> float:
        return float(sum(self.oob_m3))

    @property
    def total_collision_m3(self) -> float:
        return float(sum(v for _, _, v in self.collision_m3))

    @property
    def loss_m3(self) -> float:
        return self.total_oob_m3 + self.total_collision_m3


def fill_voxels(vertices: FloatArray, faces: IntArray, pitch: float) -> tuple[BoolArray, FloatArray]:
    """The filled voxel matrix of a mesh at ``pitch`` and the position of voxel (0, 0, 0)'s
    centre: trimesh's surface voxelisation (subdivide until edges are below ``pitch / 2``,
    each vertex marks its nearest voxel centre; :func:`~buildbench.geometry.voxels.mesh_surface_voxels`
    computes the same voxels) with the enclosed holes filled (``fill()``)."""
    from scipy import ndimage

    surface, low = mesh_surface_voxels(vertices, faces, pitch)
    filled: BoolArray = np.asarray(ndimage.binary_fill_holes(surface), dtype=bool)
    origin: FloatArray = low.astype(np.float64) * pitch  # trimesh's ``origin_index * pitch``
    return filled, origin


def fill_prism(floor_xz: FloatArray, floor_y: float, ceiling_y: float, pitch: float) -> tuple[BoolArray, FloatArray]:
    """:func:`fill_voxels` of :func:`room_prism`, drawn directly when every wall runs along
    x or z (all the shared real rooms do), else by voxelising the prism.

    For such a prism the surface points trimesh makes on a wall keep the wall's coordinate
    exactly (midpoints of equal values) and lie at most ``pitch / 2`` apart along it, so a
    wall marks the voxels at its rounded coordinate from its ends' rounded extents; the
    floor and the ceiling mark every voxel whose centre they cover, and the fill takes the
    voxels enclosed. The result is the footprint — centres strictly inside the floor polygon
    plus the walls' voxels — at every level from the floor's voxel to the ceiling's. (Only
    a coordinate exactly halfway between voxel centres, where rounding ties, could tell the
    two computations apart.)

    Raises:
        ValueError: a room of more voxels than ``DEFAULT_MAX_VOXELS``.
    """
    poly = _valid_polygon(floor_xz)
    rings = [np.asarray(r.coords) for r in _rings(poly)]
    edges = np.concatenate([np.stack([r[:-1], r[1:]], axis=1) for r in rings]) if rings else np.zeros((0, 2, 2))
    along = (edges[:, 0, 0] == edges[:, 1, 0]) | (edges[:, 0, 1] == edges[:, 1, 1])
    if not len(edges) or not along.all():
        return fill_voxels(*room_prism(floor_xz, floor_y, ceiling_y), pitch)
    index = np.round(edges / pitch).astype(np.int64)
    low = index.reshape(-1, 2).min(axis=0)
    shape = index.reshape(-1, 2).max(axis=0) - low + 1
    levels = int(np.round(ceiling_y / pitch)) - int(np.round(floor_y / pitch)) + 1
    if float(np.prod(shape, dtype=np.float64)) * max(levels, 1) > DEFAULT_MAX_VOXELS:
        raise ValueError(f"room voxels: {shape[0]} x {levels} x {shape[1]} at pitch {pitch} m exceed "
                         f"{DEFAULT_MAX_VOXELS:,}")
    xs, zs = [(low[k] + np.arange(shape[k])) * pitch for k in range(2)]
    footprint = shapely.contains_xy(poly, xs[:, None], zs[None, :])
    for (i0, k0), (i1, k1) in index - low:
        footprint[min(i0, i1) : max(i0, i1) + 1, min(k0, k1) : max(k0, k1) + 1] = True
    y0, y1 = (int(np.round(y / pitch)) for y in (floor_y, ceiling_y))
    matrix = np.repeat(footprint[:, None, :], y1 - y0 + 1, axis=1)
    return matrix, np.array([low[0], y0, low[1]], dtype=np.float64) * pitch


#: Filled voxel grids kept (tens of kilobytes each at 0.05 m), by mesh, rotation and pitch.
GRID_CACHE_SIZE = 1024
_GRIDS: OrderedDict[bytes, tuple[BoolArray, FloatArray]] = OrderedDict()


def pivoted_voxels(mesh: SolidMesh, rotation: FloatArray, pitch: float) -> tuple[BoolArray, FloatArray]:
    """:func:`fill_voxels` of ``mesh`` moved so its bounds' bottom centre is at the origin,
    then rotated (as the release voxelises an object), cached: the grid depends on the
    rotated vertices to the last bit, so the key is the mesh, the rotation's bytes and the
    pitch."""
    key = mesh.key + np.ascontiguousarray(rotation, dtype=np.float64).tobytes() + np.float64(pitch).tobytes()
    found = _GRIDS.get(key)
    if found is not None:
        _GRIDS.move_to_end(key)
        return found
    v = mesh.vertices
    lo, hi = v.min(axis=0), v.max(axis=0)
    pivot = np.array([(lo[0] + hi[0]) / 2, lo[1], (lo[2] + hi[2]) / 2])
    grid = fill_voxels((v - pivot) @ rotation.T, mesh.faces, pitch)
    _GRIDS[key] = grid
    if len(_GRIDS) > GRID_CACHE_SIZE:
        _GRIDS.popitem(last=False)
    return grid


def voxel_loss(
    meshes: Sequence[SolidMesh],
    rotations: FloatArray,
    bottoms: FloatArray,
    room: tuple[BoolArray, FloatArray],
    pitch: float = 0.05,
) -> VoxelFigures:
    """Voxel figures as the release composes them (``eval/voxel_eval.py``).

    Each mesh is moved so the bottom centre of its bounds is at the origin, rotated and
    filled at ``pitch`` on its own grid (:func:`pivoted_voxels`); its voxel ``(0, 0, 0)``
    lands at the integer index ``floor((bottom + origin) / pitch)``. ``room`` is the room's
    filled matrix and origin (:func:`fill_prism`). An object's out-of-bounds volume is its
    voxels that land on no room voxel; a pair's collision volume is the voxels both fill,
    at the offset ``floor(shift_b - shift_a)``.
    """
    room_matrix, room_origin = room
    room_shift = -room_origin / pitch
    cell = pitch**3
    grids: list[tuple[BoolArray, FloatArray]] = []
    for mesh, rot, bottom in zip(meshes, rotations, bottoms, strict=True):
        matrix, origin = pivoted_voxels(mesh, rot, pitch)
        grids.append((matrix, np.floor((bottom + origin) / pitch)))
    oob = []
    for matrix, shift in grids:
        offset = np.floor(room_shift + shift).astype(np.int64)
        oob.append(float(matrix.sum() - _overlap(room_matrix, matrix, offset)) * cell)
    lows = np.array([s for _, s in grids]).reshape(-1, 3)
    highs = lows + np.array([m.shape for m, _ in grids]).reshape(-1, 3) - 1
    pairs = aabb_pairs(AABBs(lows, highs)) if len(grids) > 1 else np.zeros((0, 2), dtype=np.int64)
    collisions = []
    for a, b in pairs.tolist():
        offset = np.floor(grids[b][1] - grids[a][1]).astype(np.int64)
        shared = _overlap(grids[a][0], grids[b][0], offset)
        if shared:
            collisions.append((a, b, shared * cell))
    return VoxelFigures(tuple(max(0.0, v) for v in oob), tuple(collisions))


def _overlap(base: BoolArray, other: BoolArray, offset: IntArray) -> int:
    """Voxels set in both ``other`` and ``base`` when ``other``'s index ``k`` sits at
    ``base``'s ``k + offset`` (what falls outside ``base`` counts for nothing)."""
    src, dst = [], []
    for k in range(3):
        start = max(0, -int(offset[k]))
        stop = min(other.shape[k], base.shape[k] - int(offset[k]))
        if stop <= start:
            return 0
        src.append(slice(start, stop))
        dst.append(slice(start + int(offset[k]), stop + int(offset[k])))
    return int(np.count_nonzero(other[tuple(src)] & base[tuple(dst)]))


def room_prism(floor_xz: FloatArray, floor_y: float, ceiling_y: float) -> tuple[FloatArray, IntArray]:
    """A closed mesh of the room: the floor polygon (made valid) triangulated, extruded from
    ``floor_y`` to ``ceiling_y``."""
    poly = _valid_polygon(floor_xz)
    vertices: list[FloatArray] = []
    faces: list[IntArray] = []
    count = 0
    # Winding is irrelevant here: the prism is only voxelised and filled.
    for part in shapely.get_parts(shapely.constrained_delaunay_triangles(poly)):
        tri = np.asarray(part.exterior.coords)[:3]
        for y in (floor_y, ceiling_y):
            vertices += [np.array([x, y, z]) for x, z in tri]
            faces.append(np.arange(count, count + 3))
            count += 3
    for ring in _rings(poly):
        pts = np.asarray(ring.coords)[:-1]
        for k in range(len(pts)):
            (x0, z0), (x1, z1) = pts[k], pts[(k + 1) % len(pts)]
            quad = [[x0, floor_y, z0], [x1, floor_y, z1], [x1, ceiling_y, z1], [x0, ceiling_y, z0]]
            vertices += [np.array(q, dtype=float) for q in quad]
            faces += [np.array([count, count + 1, count + 2]), np.array([count, count + 2, count + 3])]
            count += 4
    return np.array(vertices, dtype=float).reshape(-1, 3), np.array(faces, dtype=np.int64).reshape(-1, 3)


def _valid_polygon(floor_xz: FloatArray) -> shapely.Geometry:
    poly = shapely.Polygon(floor_xz)
    return poly if poly.is_valid else shapely.make_valid(poly)


def _rings(poly: shapely.Geometry) -> list[shapely.LinearRing]:
    return [r for p in shapely.get_parts(poly) if isinstance(p, shapely.Polygon) for r in (p.exterior, *p.interiors)]
