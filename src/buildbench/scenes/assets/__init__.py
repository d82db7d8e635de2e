"""Asset meshes for indoor scenes: each object's shape at a chosen geometry level.

Levels (``-o geometry=…``):

* ``box`` — the object's own box, 12 triangles (fast; what the released RL reward uses).
* ``procedural`` — our part-based furniture (:mod:`.procedural`), fitted to the box, coloured
  from the object's words, deterministic. The offline default for mesh-level work.
* ``mesh`` — the real asset: 3D-FUTURE by ``jid`` or Objaverse/objathor by ``uid`` / THOR
  ``assetId`` from the folders an :class:`AssetLibrary` is given, placed as the released
  SceneReVis code places a mesh; a missing or bad asset falls back to the procedural mesh
  with the reason in :attr:`ObjectMesh.source` (or raises :class:`AssetError` when strict).

Meshes are in the object's local frame (y up, front +z, centred on the box centre, spanning
``[-s/2, s/2]``); :func:`world_mesh` places one with ``R @ v + center``.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from buildbench.scenes.assets.colors import palette
from buildbench.scenes.assets.library import AssetLibrary
from buildbench.scenes.assets.mesh import GEOMETRY_LEVELS, AssetError, GeometryLevel, ObjectMesh, box_mesh
from buildbench.scenes.assets.procedural import procedural_mesh
from buildbench.scenes.model import SceneObject

if TYPE_CHECKING:
    import trimesh

__all__ = ["GeometryLevel", "GEOMETRY_LEVELS", "ObjectMesh", "AssetLibrary", "AssetError",
           "object_mesh", "world_mesh", "check_level", "clear_cache"]


def check_level(level: str) -> GeometryLevel:
    """``level`` as a GeometryLevel; AssetError naming the known levels otherwise."""
    for known in GEOMETRY_LEVELS:
        if level == known:
            return known
    raise AssetError(f"unknown geometry level {level!r} (known: {', '.join(GEOMETRY_LEVELS)})")


def object_mesh(obj: SceneObject, level: GeometryLevel, *, library: AssetLibrary | None = None) -> ObjectMesh:
    """The mesh of ``obj`` at ``level`` in its local frame.

    ``library``: where ``mesh`` finds real assets (default :meth:`AssetLibrary.from_env`);
    unused by the other levels. Raises AssetError for an unknown level, a size that is not
    finite and non-negative, a ``mesh`` level with no asset folder configured, or (strict
    libraries) a missing or bad asset."""
    level = check_level(level)
    if not all(math.isfinite(v) and v >= 0 for v in obj.size):
        raise AssetError(f"object {obj.id!r}: size {tuple(obj.size)} is not three finite, non-negative numbers")
    if level == "box":
        return box_mesh(obj.size, palette(obj).main)
    if level == "procedural":
        return _procedural_cached(obj)
    lib = library if library is not None else AssetLibrary.from_env()
    return lib.mesh_for(obj)


#: Procedural meshes already built in this process, by everything they depend on: an episode
#: asks for the same objects at every step.
_PROCEDURAL: OrderedDict[str, ObjectMesh] = OrderedDict()
_PROCEDURAL_MAX = 4096
#: LEGO-Eval's tools render from several threads at once; the cache's order must not tear.
_PROCEDURAL_LOCK = threading.Lock()


def _procedural_cached(obj: SceneObject) -> ObjectMesh:
    inputs: dict[str, Any] = {
        "asset": obj.asset_id, "category": obj.category, "size": list(obj.size),
        "attributes": {k: obj.attributes.get(k) for k in ("description", "shape", "color", "material")},
        "raw": {k: obj.raw.get(k) for k in ("desc", "color", "material", "materials")},
    }
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    with _PROCEDURAL_LOCK:
        mesh = _PROCEDURAL.get(key)
        if mesh is not None:
            _PROCEDURAL.move_to_end(key)
            return mesh
    mesh = procedural_mesh(obj)
    for array in (mesh.vertices, mesh.faces, mesh.face_colors):
        array.flags.writeable = False  # shared between callers: nobody may change it
    with _PROCEDURAL_LOCK:
        _PROCEDURAL[key] = mesh
        if len(_PROCEDURAL) > _PROCEDURAL_MAX:
            _PROCEDURAL.popitem(last=False)
    return mesh


def clear_cache() -> None:
    """Forget the procedural meshes built in this process (benchmarks time a cold start)."""
    with _PROCEDURAL_LOCK:
        _PROCEDURAL.clear()


def world_mesh(obj: SceneObject, level: GeometryLevel, *,
               library: AssetLibrary | None = None) -> trimesh.Trimesh:
    """The mesh of ``obj`` at ``level`` placed in the world (``R @ v + center``)."""
    return object_mesh(obj, level, library=library).placed(obj)
