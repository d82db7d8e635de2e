"""Objects drawn as their asset meshes (:mod:`buildbench.scenes.assets`) instead of boxes.

At the ``box`` level the views draw every object as its oriented box, as they always have
(the released tools' look, and what the earlier view tests pin). At the
``procedural`` and ``mesh`` levels each object becomes the mesh its asset level gives,
placed exactly as the physics places it (``R @ v + centre``), with its per-face colours. A
texture is baked into the face colours (each face takes the mean of the texture at four
points of its UV triangle), so one flat-shaded vertex format serves every source and the
renderer stays a single draw path; a finely tessellated 3D-FUTURE model keeps the look of
its texture, a coarse one its average colour.

The boxes stay in :class:`~buildbench.scenes.views.geometry.SceneGeometry` alongside the
meshes: overlays (SceneReVis's wireframes, labels), line-of-sight tests and framing keep
reading them, so cameras and image sizes are the same at every level.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from buildbench.geometry import rotation_from_quat_xyzw
from buildbench.render import TriangleMesh
from buildbench.scenes.model import Scene, SceneObject
from buildbench.scenes.views.frame import FloatArray, Frame, ViewInputError

if TYPE_CHECKING:
    from buildbench.scenes.assets import AssetLibrary, ObjectMesh

#: The levels a view accepts (``-o geometry=…``), the fast box level first.
LEVELS: tuple[str, ...] = ("box", "procedural", "mesh")
# Where in a face's UV triangle its texture is sampled: the centroid and half-way from it
# to each corner (barycentric weights), averaged.
_UV_WEIGHTS = np.array([[1 / 3, 1 / 3, 1 / 3], [2 / 3, 1 / 6, 1 / 6], [1 / 6, 2 / 3, 1 / 6], [1 / 6, 1 / 6, 2 / 3]])


def check_level(level: Any, where: str) -> str:
    """The geometry level, checked against :data:`LEVELS`."""
    if not isinstance(level, str) or level not in LEVELS:
        raise ViewInputError(f"{where}: geometry must be one of {', '.join(LEVELS)}, got {level!r}")
    return level


class PlacedMesh(NamedTuple):
    """One object's mesh in the scene frame (y up), ready to map into the render world."""

    owner: str
    vertices: FloatArray
    """``(n, 3)`` scene-frame positions, metres."""
    faces: NDArray[np.int64]
    """``(m, 3)`` vertex indices, counter-clockwise seen from outside."""
    colors: NDArray[np.uint8]
    """``(m, 4)`` RGBA per face (texture baked in)."""
    closed: bool
    """Every edge is shared by exactly two faces wound oppositely: back faces may be culled."""


class MeshSource:
    """The objects of a scene at a geometry level, meshed on demand (only those a view
    draws) and remembered, so views that keep a few objects never mesh the whole house."""

    def __init__(self, scene: Scene, level: str, library: AssetLibrary | None = None):
        self.level = check_level(level, "views")
        if level == "mesh":
            library = library if library is not None else default_library()
            if not library.configured:
                raise ViewInputError("geometry=mesh needs an asset folder (BUILDBENCH_3DFUTURE_DIR or "
                                     "BUILDBENCH_OBJAVERSE_DIR); use geometry=procedural without one")
        self.library = library
        self._objects = {o.id: o for o in scene.objects}
        self._placed: dict[str, PlacedMesh] = {}

    def placed(self, ids: Collection[str]) -> list[PlacedMesh]:
        """The placed meshes of the objects ``ids`` (ids of other elements are ignored), in
        scene order.

        Raises:
            ViewInputError: for an asset the level cannot produce (the asset layer's
                one-line message, naming the object).
        """
        wanted = set(ids)
        missing = [o for o in self._objects.values() if o.id in wanted and o.id not in self._placed]
        if missing:
            # one vectorised conversion instead of a quaternion-to-matrix call per object
            rotations = rotation_from_quat_xyzw(np.array([o.rotation_xyzw for o in missing], float))
            for obj, rotation in zip(missing, rotations.reshape(-1, 3, 3), strict=True):
                self._placed[obj.id] = _local_mesh(obj, self.level, self.library).placed(obj, rotation)
        return [self._placed[oid] for oid in self._objects if oid in wanted]


class LocalMesh(NamedTuple):
    """An object's mesh in its own frame, colours baked, ready to place."""

    vertices: FloatArray
    faces: NDArray[np.int64]
    colors: NDArray[np.uint8]
    closed: bool

    def placed(self, obj: SceneObject, rotation: FloatArray) -> PlacedMesh:
        """At the object: ``R @ v + centre`` (``rotation``: the object's ``R``)."""
        world = self.vertices @ rotation.T + np.asarray(obj.center, np.float64)
        return PlacedMesh(obj.id, world, self.faces, self.colors, self.closed)


#: Faces the process keeps meshed between views (about 40 bytes each): a run's views of one
#: house, and the objects a SceneReVis episode moves, are meshed once.
MAX_CACHED_FACES = 2_000_000
_cache: OrderedDict[str, LocalMesh] = OrderedDict()
_cached_faces = [0]
_cache_lock = threading.Lock()


def clear_mesh_cache() -> None:
    """Forget every cached mesh (for timing cold renders)."""
    with _cache_lock:
        _cache.clear()
        _cached_faces[0] = 0


def _local_mesh(obj: SceneObject, level: str, library: AssetLibrary | None) -> LocalMesh:
    """The object's mesh at ``level``, from the cache when the same object (everything the
    asset layer reads of it but its placement) was meshed before."""
    from buildbench.scenes.assets import AssetError, object_mesh

    where = None if library is None else (str(library.future_dir), str(library.objaverse_dir), library.strict)
    key = json.dumps([level, where, obj.id, obj.asset_id, obj.category, list(obj.size), obj.attributes, obj.raw],
                     sort_keys=True, default=str)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    try:
        mesh = object_mesh(obj, level, library=library)  # type: ignore[arg-type]
    except AssetError as exc:
        raise ViewInputError(f"object {obj.id!r}: {exc}") from None
    vertices, faces = np.asarray(mesh.vertices, np.float64), np.asarray(mesh.faces, np.int64)
    closed = is_closed(faces)
    if closed and _signed_volume(vertices, faces) < 0:  # wound inward: culling would hide its outside
        faces = faces[:, ::-1]
    local = LocalMesh(vertices, faces, face_colors(mesh), closed)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = local
            _cached_faces[0] += len(faces)
        while _cached_faces[0] > MAX_CACHED_FACES and len(_cache) > 1:
            _cached_faces[0] -= len(_cache.popitem(last=False)[1].faces)
    return local


def default_library() -> AssetLibrary:
    """The asset library the environment names, made once per distinct environment so its
    in-memory cache serves every view of a run."""
    from buildbench.scenes.assets.library import CACHE_ENV, FUTURE_ENV, OBJAVERSE_ENV

    return _library_for(tuple(os.environ.get(v, "") for v in (FUTURE_ENV, OBJAVERSE_ENV, CACHE_ENV,
                                                               "XDG_CACHE_HOME")))


@lru_cache(maxsize=4)
def _library_for(environment: tuple[str, ...]) -> AssetLibrary:
    from buildbench.scenes.assets import AssetError, AssetLibrary

    try:
        return AssetLibrary.from_env()
    except AssetError as exc:
        raise ViewInputError(str(exc)) from None


def mesh_source(scene: Scene, level: str, library: AssetLibrary | None = None) -> MeshSource | None:
    """A :class:`MeshSource` at ``level``; None at the ``box`` level (objects stay boxes)."""
    return None if check_level(level, "views") == "box" else MeshSource(scene, level, library)


def face_colors(mesh: ObjectMesh) -> NDArray[np.uint8]:
    """``(m, 4)`` RGBA per face: sampled from the texture where the mesh has one, else its
    own face colours."""
    colors = np.asarray(mesh.face_colors, np.uint8)
    if mesh.texture is None or mesh.uv is None or len(mesh.faces) == 0:
        return colors
    texture = np.asarray(mesh.texture.convert("RGB"), np.uint8)
    h, w = texture.shape[:2]
    uv = np.asarray(mesh.uv, np.float64)[np.asarray(mesh.faces, np.int64)]        # (m, 3, 2)
    samples = np.einsum("sk,mkd->msd", _UV_WEIGHTS, uv)                             # (m, 4, 2)
    samples = np.where(np.isfinite(samples), samples, 0.0) % 1.0                   # repeat-wrap
    cols = np.minimum((samples[..., 0] * w).astype(np.int64), w - 1)
    rows = np.minimum(((1.0 - samples[..., 1]) * h).astype(np.int64), h - 1)      # v runs up the image
    rgb = texture[rows, cols].astype(np.float64).mean(axis=1)
    out = colors.copy()
    out[:, :3] = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    return out


def is_closed(faces: NDArray[np.int64]) -> bool:
    """True when every directed edge appears once and its reverse once (a closed, consistently
    wound surface, possibly of several parts)."""
    if len(faces) == 0:
        return False
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    forward = np.unique(edges, axis=0)
    if len(forward) != len(edges):
        return False
    backward = np.unique(edges[:, ::-1], axis=0)
    return bool(np.array_equal(forward, backward))


def _signed_volume(vertices: FloatArray, faces: NDArray[np.int64]) -> float:
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def to_render(meshes: Sequence[PlacedMesh], frame: Frame) -> list[TriangleMesh]:
    """The meshes in the render world, merged into at most one closed and one open mesh (two
    arrays to copy instead of one per object). A mirroring frame reverses each face's
    corners so closed meshes stay wound outward for back-face culling."""
    mirrored = np.linalg.det(frame.matrix) < 0
    out = []
    for closed in (True, False):
        group = [m for m in meshes if m.closed == closed and len(m.faces)]
        if not group:
            continue
        offsets = np.cumsum([0] + [len(m.vertices) for m in group[:-1]])
        faces = np.concatenate([m.faces + k for m, k in zip(group, offsets, strict=True)])
        if mirrored:
            faces = faces[:, [0, 2, 1]]
        vertices = frame.points(np.concatenate([m.vertices for m in group]))
        out.append(TriangleMesh(vertices, faces, np.concatenate([m.colors for m in group]), closed=closed))
    return out
