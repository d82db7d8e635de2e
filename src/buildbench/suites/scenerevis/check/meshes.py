"""SceneReVis physics at a mesh geometry level (``procedural`` or ``mesh``).

Each object of a :class:`.layout.RoomLayout` gets its mesh from
:mod:`buildbench.scenes.assets` (fitted to its box) and is placed as the release places a
mesh: scaled by ``size / (extents + 1e-6)`` (the release's guard against zero extents,
which leaves every object a micrometre short of its box: faces that touch exactly, common
in rooms written to the centimetre, end up apart rather than at FCL's mercy), its bounds'
bottom centre moved to ``pos``, then rotated about it. The checks are those of
:mod:`buildbench.scenes.mesh_physics`, with the thresholds of the variant
(:class:`.physics.PhysicsRules`):

* a pair collides when any FCL contact is deeper than ``min_depth_m`` (1 cm for the
  evaluation, any depth for the reward); the reported depth is the pair's deepest contact;
* an object is out of bounds when more than 1 % of its 500 seeded surface samples lie
  outside the floor polygon grown by 1 mm or outside [floor − 1 mm, ceiling + 1 mm]; its
  out-of-bounds volume is the mesh's volume (the product of its extents when that is not
  positive) times that share;
* the voxel loss fills each mesh at 0.05 m as ``eval/voxel_eval.py`` does.

The level ``box`` is :func:`.physics.check_physics`'s own exact box geometry.
"""

from __future__ import annotations

import numpy as np

from buildbench.scenes.assets import AssetLibrary, GeometryLevel, check_level, object_mesh
from buildbench.scenes.catalogue import category_of
from buildbench.scenes.mesh_physics import (
    SolidMesh,
    VoxelFigures,
    fill_prism,
    mesh_contacts,
    outside_shares,
    solid_mesh,
    voxel_loss,
)
from buildbench.scenes.model import SceneObject

from .bounds import room_polygon
from .layout import RoomLayout

#: The release scales a mesh by ``size / (extents + SCALE_GUARD)``.
SCALE_GUARD = 1e-6
#: Surface samples per object, and the default seed of their draw.
SAMPLES = 500
SAMPLE_SEED = 0


def layout_meshes(
    layout: RoomLayout, level: GeometryLevel, *, library: AssetLibrary | None = None,
    fallbacks: dict[int, str] | None = None,
) -> list[SolidMesh]:
    """The mesh of every object of ``layout`` at ``level``, in its local frame.

    ``fallbacks``, when given, receives object index -> mesh source of every object whose real
    asset was missing or bad at level ``mesh`` (it got its procedural mesh; the source says why),
    so a figure measured on stand-ins can say so."""
    level = check_level(level)
    if level == "mesh" and library is None:
        library = AssetLibrary.from_env()  # once per room, not once per object
    centers = layout.centers
    out = []
    for k in range(len(layout)):
        desc = layout.descs[k]
        obj = SceneObject(
            id=f"object_{k}",
            category=category_of(desc) or "object",
            asset_id=layout.ids[k],
            center=(float(centers[k, 0]), float(centers[k, 1]), float(centers[k, 2])),
            size=(float(layout.sizes[k, 0]), float(layout.sizes[k, 1]), float(layout.sizes[k, 2])),
            rotation_xyzw=tuple(float(q) for q in layout.quats_xyzw[k]),  # type: ignore[arg-type]
            attributes={"description": desc},
        )
        mesh = object_mesh(obj, level, library=library)
        if fallbacks is not None and "(fallback:" in mesh.source:
            fallbacks[k] = mesh.source
        out.append(solid_mesh(*_released_scale(mesh.vertices, layout.sizes[k]), mesh.faces))
    return out


def _released_scale(vertices: np.ndarray, size: np.ndarray) -> tuple[np.ndarray]:
    """The vertices scaled as the release scales a mesh to ``size``, centred on their bounds."""
    if not len(vertices):
        return (vertices,)
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    scaled = vertices * (size / (hi - lo + SCALE_GUARD))
    return (scaled - (scaled.min(axis=0) + scaled.max(axis=0)) / 2.0,)


def mesh_centers(layout: RoomLayout, meshes: list[SolidMesh]) -> np.ndarray:
    """``(n, 3)`` where each mesh's centre goes: its bottom centre at ``pos``, rotated about it."""
    heights = np.array([np.ptp(m.vertices[:, 1]) if len(m.vertices) else 0.0 for m in meshes]).reshape(-1)
    return layout.bottoms + layout.rotations[:, :, 1] * (heights[:, None] / 2.0)


def mesh_pairs(layout: RoomLayout, meshes: list[SolidMesh]) -> list[tuple[int, int, float]]:
    """``(a, b, deepest contact)`` of every pair FCL finds in contact, index order."""
    return [(c.a, c.b, c.depth_m) for c in mesh_contacts(meshes, layout.rotations, mesh_centers(layout, meshes))]


def mesh_outside_fractions(
    layout: RoomLayout, meshes: list[SolidMesh], *, buffer_m: float, height_tolerance_m: float,
    seed: int = SAMPLE_SEED,
) -> np.ndarray:
    """``(n,)`` share of each mesh's :data:`SAMPLES` surface samples outside the room."""
    if not len(layout):
        return np.zeros(0)
    poly = room_polygon(layout, buffer_m)
    y_range = (layout.floor_y - height_tolerance_m, layout.ceiling_y + height_tolerance_m)
    centers = mesh_centers(layout, meshes)
    return outside_shares(meshes, layout.rotations, centers, poly, y_range, count=SAMPLES, seed=seed)


def mesh_volumes(meshes: list[SolidMesh]) -> np.ndarray:
    return np.array([m.volume_m3 for m in meshes], dtype=float)


def mesh_voxel_figures(layout: RoomLayout, meshes: list[SolidMesh], pitch_m: float) -> VoxelFigures:
    """The release's voxel figures of ``layout``'s meshes (:func:`~buildbench.scenes.mesh_physics.voxel_loss`)."""
    if not len(layout):
        return VoxelFigures((), ())
    room = fill_prism(layout.floor_xz, layout.floor_y, layout.ceiling_y, pitch_m)
    return voxel_loss(meshes, layout.rotations, layout.bottoms, room, pitch_m)

