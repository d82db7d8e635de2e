"""The mesh an asset level produces for one object, in the object's local frame.

Local frame (the scene model's): metres, y up, front +z, centred on the object's box
centre and fitted to ``obj.size`` (each axis spans ``[-s/2, s/2]``), so a world vertex is
``R @ v + obj.center``. Faces wind counter-clockwise seen from outside.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import PIL.Image
    import trimesh

    from buildbench.scenes.model import SceneObject

GeometryLevel = Literal["box", "procedural", "mesh"]
GEOMETRY_LEVELS: tuple[GeometryLevel, ...] = ("box", "procedural", "mesh")

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
ColorArray = NDArray[np.uint8]

#: The unit cube's corners and its 12 outward counter-clockwise triangles.
_CUBE_VERTICES = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)],
                          dtype=np.float64)
_CUBE_FACES = np.array([
    [0, 1, 3], [0, 3, 2],  # -x
    [4, 6, 7], [4, 7, 5],  # +x
    [0, 4, 5], [0, 5, 1],  # -y
    [2, 3, 7], [2, 7, 6],  # +y
    [0, 2, 6], [0, 6, 4],  # -z
    [1, 5, 7], [1, 7, 3],  # +z
], dtype=np.int64)


class AssetError(ValueError):
    """An asset could not be produced; the one-line message names the asset and the fault."""


@dataclass(frozen=True, eq=False)
class ObjectMesh:
    """One object's triangle mesh in its local frame (see the module docstring).

    Attributes:
        face_colors: ``(m, 4)`` RGBA, always present (from the description's colour and
            material words, THOR material fields, or the texture's mean where one exists).
        uv, texture: Texture coordinates and image where the source has a texture.
        source: What produced it: ``box``, ``procedural:<category>``, ``3d-future:<jid>``,
            ``objaverse:<uid>`` or ``procedural:<category> (fallback: <reason>)``.
    """

    vertices: FloatArray
    faces: IntArray
    face_colors: ColorArray
    uv: FloatArray | None = None
    texture: PIL.Image.Image | None = None
    source: str = "box"

    def to_trimesh(self) -> trimesh.Trimesh:
        """A trimesh in the local frame (unprocessed: vertex order kept); textured where a
        texture exists, face-coloured otherwise."""
        return _trimesh(self.vertices, self.faces, self)

    def placed(self, obj: SceneObject) -> trimesh.Trimesh:
        """The mesh in world coordinates: ``R @ v + obj.center``."""
        world = self.vertices @ obj.rotation.T + np.asarray(obj.center, dtype=np.float64)
        return _trimesh(world, self.faces, self)


def _trimesh(vertices: FloatArray, faces: IntArray, mesh: ObjectMesh) -> trimesh.Trimesh:
    import trimesh
    from trimesh.visual import ColorVisuals, TextureVisuals

    visual: ColorVisuals | TextureVisuals
    if mesh.texture is not None and mesh.uv is not None:
        visual = TextureVisuals(uv=mesh.uv, image=mesh.texture)
    else:
        visual = ColorVisuals(face_colors=mesh.face_colors)
    return trimesh.Trimesh(vertices=vertices, faces=faces, visual=visual, process=False)


def box_arrays(lo: FloatArray | tuple[float, float, float],
               hi: FloatArray | tuple[float, float, float]) -> tuple[FloatArray, IntArray]:
    """The 8 vertices and 12 outward triangles of the axis-aligned box ``[lo, hi]``."""
    lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    return lo_a + (_CUBE_VERTICES + 0.5) * (hi_a - lo_a), _CUBE_FACES.copy()


def box_mesh(size: tuple[float, float, float], rgba: tuple[int, int, int, int]) -> ObjectMesh:
    """The object's own box: 12 triangles spanning ``[-s/2, s/2]``."""
    half = np.asarray(size, dtype=np.float64) / 2.0
    vertices, faces = box_arrays(-half, half)
    colors = np.tile(np.asarray(rgba, dtype=np.uint8), (len(faces), 1))
    return ObjectMesh(vertices, faces, colors, source="box")
