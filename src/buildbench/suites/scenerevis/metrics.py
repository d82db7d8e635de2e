"""SceneReVis evaluation metrics of rooms: per scene, then over a set of scenes (spec §5.2).

Per scene, under the :data:`~.check.physics.EVALUATION` rules (penetration > 1 cm; more
than 1 % of the surface outside the 1 mm-buffered floor polygon or the floor–ceiling
range):

* ``collision_rate`` = colliding objects / objects × 100 and ``oob_rate`` = out-of-bounds
  objects / objects × 100: per-object shares *within* the scene (0 for an empty room);
* ``collision_free`` / ``valid_placement``: 100 when no pair collides / no object is out;
* the voxel loss at 0.05 m (``voxel_*``, m³) and the support check (``floating``);
* navigability (neither original reports it; :mod:`.check.navigation`): ``free_connected_pct``,
  the share of the free floor in the room's largest free area, ``reachable_pct``, the share of
  the floor furniture a walker can reach from there, and the ``unreachable`` objects.

Objects are shaped at a geometry level (``box``, the default: exact box tests;
``procedural`` or ``mesh``: meshes checked as the released ``eval/myeval.py`` and
``eval/voxel_eval.py`` check them, see :mod:`.check.meshes`). Every scene's metrics and the
aggregate carry it as ``geometry``. The support check follows the level too: at a mesh
level an object rests on another's upward mesh faces, not on the top of its box
(:mod:`.check.support`).

Over scenes, every figure is the plain mean of the per-scene values: ``CNR`` is the mean
``collision_rate`` and ``OBR`` the mean ``oob_rate`` (so each scene weighs the same, not
each object), ``VBL`` the mean voxel loss × 10³, ``Phy`` the mean of OBR and CNR,
``free_connected_rate`` and ``reachable_rate`` the means of the navigability shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from buildbench.scenes.assets import GeometryLevel, check_level

from .check.layout import RoomLayout, parse_layout
from .check.meshes import layout_meshes, mesh_voxel_figures
from .check.navigation import navigation_fields
from .check.physics import EVALUATION, PhysicsRules, physics_of
from .check.support import check_support
from .check.voxels import VALID_LOSS_M3, VBL_SCALE, VOXEL_PITCH_M, voxel_loss

#: Aggregate name → per-scene field it averages.
AGGREGATES = {
    "OBR": "oob_rate",
    "CNR": "collision_rate",
    "collision_free_rate": "collision_free",
    "valid_placement_rate": "valid_placement",
    "mean_penetration_m": "mean_penetration_m",
    "mean_oob_volume_m3": "mean_oob_volume_m3",
    "voxel_loss_m3": "voxel_loss_m3",
    "voxel_valid_rate": "voxel_valid",
    "unsupported_rate": "unsupported_rate",
    "free_connected_rate": "free_connected_pct",
    "reachable_rate": "reachable_pct",
    "n_objects": "n_objects",
    "latency_s": "latency_s",
}


def scene_metrics(
    scene: Mapping[str, Any] | RoomLayout,
    *,
    rules: PhysicsRules = EVALUATION,
    voxels: bool = True,
    latency_s: float | None = None,
    geometry: GeometryLevel = "box",
    navigation: bool = True,
) -> dict[str, Any]:
    """Metrics of one room (a scene dict, a record holding one, or a parsed layout).

    Returns a JSON-ready dict: ``n_objects``, ``colliding`` and ``out_of_bounds`` (object
    indices), ``pairs`` (``{"a", "b", "depth_m"}``, deepest first), the rates, penetration
    and out-of-bounds volumes, ``outside_fraction`` per object, ``floating`` and
    ``unsupported`` indices, the voxel loss when ``voxels``, ``latency_s`` when given, and
    the ``geometry`` level the objects had, and the navigability fields when ``navigation``
    (footprints of the boxes at every level). At level ``mesh``, ``mesh_fallbacks`` lists the
    objects measured on their procedural mesh because their asset was missing or bad
    (``{"object": index, "source": why}``).
    """
    geometry = check_level(geometry)
    layout = scene if isinstance(scene, RoomLayout) else parse_layout(scene)
    fallbacks: dict[int, str] = {}
    meshes = layout_meshes(layout, geometry, fallbacks=fallbacks) if geometry != "box" else None
    # check_physics's own choice (the released box rules ignore the level), meshes made once.
    out = physics_of(layout, rules, None if rules.mesh_contacts else meshes, geometry).to_dict()
    support = check_support(layout, geometry=geometry, meshes=meshes)
    if geometry == "mesh":  # objects measured on their procedural stand-in, never silently
        out["mesh_fallbacks"] = [{"object": k, "source": src} for k, src in sorted(fallbacks.items())]
    out["floating"] = list(support.floating)
    out["unsupported"] = list(support.unsupported)
    out["unsupported_rate"] = support.unsupported_pct
    if voxels and meshes is not None:
        figures = mesh_voxel_figures(layout, meshes, VOXEL_PITCH_M)
        out.update(
            voxel_oob_m3=figures.total_oob_m3,
            voxel_collision_m3=figures.total_collision_m3,
            voxel_loss_m3=figures.loss_m3,
            voxel_valid=100.0 if figures.loss_m3 <= VALID_LOSS_M3 else 0.0,
        )
    elif voxels:
        loss = voxel_loss(layout)
        out.update(
            voxel_oob_m3=loss.oob_m3,
            voxel_collision_m3=loss.collision_m3,
            voxel_loss_m3=loss.loss_m3,
            voxel_valid=100.0 if loss.valid else 0.0,
        )
    if navigation:
        out.update(navigation_fields(layout))
    if latency_s is not None:
        out["latency_s"] = float(latency_s)
    return out


def aggregate(scenes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means over per-scene metrics (see the module docstring); a field no scene has is
    left out. ``VBL`` is the mean voxel loss × 10³ and ``Phy`` the mean of OBR and CNR."""
    out: dict[str, Any] = {"n_scenes": len(scenes)}
    levels = sorted({str(s["geometry"]) for s in scenes if "geometry" in s})
    if levels:
        out["geometry"] = levels[0] if len(levels) == 1 else levels
    for name, key in AGGREGATES.items():
        values = [float(s[key]) for s in scenes if key in s and s[key] is not None]
        if values:
            out[name] = float(np.mean(values))
    if "voxel_loss_m3" in out:
        out["VBL"] = out["voxel_loss_m3"] * VBL_SCALE
    if "OBR" in out and "CNR" in out:
        out["Phy"] = (out["OBR"] + out["CNR"]) / 2.0
    return out


def metrics_of(scenes: Iterable[Mapping[str, Any]], **options: Any) -> dict[str, Any]:
    """``{"scenes": [per-scene metrics], **aggregate}`` for an iterable of scenes."""
    rows = [scene_metrics(s, **options) for s in scenes]
    return {"scenes": rows, **aggregate(rows)}
