"""Rule-based physics repair (SceneReVis Algorithm 2, spec §2.6), seeded.

For up to K = 5 steps, under the :data:`~.physics.OPTIMIZER` rules (depth > 1 cm; any
rotated footprint corner off the floor):

1. check; stop when nothing collides and nothing is out of bounds;
2. move every out-of-bounds object 0.2 m in x/z toward the room centre (the mean of the
   floor vertices);
3. for each colliding pair, deepest first, whose objects are not marked for deletion:
   take the smaller box (by size product; the second of the pair on a tie), unless it was
   already tried this step, and try up to 10 random x/z offsets uniform in ±0.1 m, then up
   to 10 random turns about its own up axis uniform in ±5°, keeping the first pose that
   penetrates none of the other objects; if none does, mark it for deletion;
4. delete the marked objects.

Differences from the released ``RuleBasedSceneOptimizer``: candidate poses are tested
against the other objects' *current* poses (the released manager still holds the
pre-move poses of step 2), pairs are visited deepest first rather than in FCL's order,
the random draws come from ``numpy.random.default_rng([seed, step])``, and "penetrates
none" means no depth above 1 nm (FCL's boolean test also rejects touching faces).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from buildbench.geometry import sat_separation
from buildbench.scenes.assets import AssetLibrary, GeometryLevel, check_level
from buildbench.scenes.mesh_physics import SolidMesh

from .layout import RoomLayout, parse_layout, scene_of
from .meshes import layout_meshes, mesh_pairs
from .physics import DEPTH_SLACK_M, OPTIMIZER, physics_of

MAX_STEPS = 5
OOB_STEP_M = 0.2
OFFSET_TRIES = 10
OFFSET_RANGE_M = 0.1
YAW_TRIES = 10
YAW_RANGE_DEG = 5.0


@dataclass
class OptimizeResult:
    """The repaired scene and what was done to it.

    Attributes:
        scene: A new scene dict (same format as the input); the input is not modified.
        removed: Indices (into the *input* objects) of deleted objects, ascending.
        removed_descs: Their descriptions, for the model's feedback.
        steps: Check-and-repair rounds run.
        clean: Whether the last check found nothing to repair.
        mesh_fallbacks: Input index -> mesh source of each object repaired on its procedural
            stand-in at level ``mesh`` because its asset was missing or bad (the source says why).
    """

    scene: dict[str, Any]
    removed: list[int] = field(default_factory=list)
    removed_descs: list[str] = field(default_factory=list)
    steps: int = 0
    clean: bool = False
    mesh_fallbacks: dict[int, str] = field(default_factory=dict)

    def feedback(self) -> str:
        if not self.removed_descs:
            return ""
        return (
            "[Physics Optimization] The following objects were removed due to collision/out-of-bounds: "
            f"{', '.join(self.removed_descs)}. Consider adding them back in better positions."
        )


def optimize_scene(scene: Mapping[str, Any], seed: int = 0, max_steps: int = MAX_STEPS, *,
                   geometry: GeometryLevel = "box", library: AssetLibrary | None = None) -> OptimizeResult:
    """Repair ``scene`` (flat, grouped, or a record with ``"scene"``) by Algorithm 2.

    ``geometry`` shapes the objects whose collisions are repaired (``box``, as the release;
    ``procedural``/``mesh``: a chair tucked under a table is left where it is); the
    out-of-bounds rule looks at footprint corners at every level.
    """
    original = parse_layout(scene)
    layout = original
    fallbacks: dict[int, str] = {}
    meshes = None if check_level(geometry) == "box" else \
        layout_meshes(layout, geometry, library=library, fallbacks=fallbacks)
    alive = list(range(len(layout)))  # input index of each object still present
    steps, clean = 0, False
    for step in range(max_steps):
        report = physics_of(layout, OPTIMIZER, meshes, geometry)
        if report.clean:
            clean = True
            break
        steps += 1
        rng = np.random.default_rng([seed, step])
        for i in report.out_of_bounds:
            layout = _toward_center(layout, i)
        doomed: set[int] = set()
        tried: set[int] = set()
        for c in report.contacts:
            if c.a in doomed or c.b in doomed:
                continue
            target = c.a if layout.volumes_m3[c.a] < layout.volumes_m3[c.b] else c.b
            if target in tried:
                continue
            tried.add(target)
            moved = _free_pose(layout, target, rng, meshes)
            if moved is None:
                doomed.add(target)
            else:
                layout = moved
        keep = [k for k in range(len(layout)) if k not in doomed]
        alive = [alive[k] for k in keep]
        layout = layout.subset(keep)
        meshes = None if meshes is None else [meshes[k] for k in keep]
    else:
        clean = physics_of(layout, OPTIMIZER, meshes, geometry).clean
    removed = sorted(set(range(len(original))) - set(alive))
    return OptimizeResult(
        _write_back(scene, original, layout, alive),
        removed,
        [original.descs[i] for i in removed],
        steps,
        clean,
        fallbacks,
    )


def _toward_center(layout: RoomLayout, i: int) -> RoomLayout:
    pos = layout.bottoms[i].copy()
    step = layout.room_center_xz - pos[[0, 2]]
    norm = float(np.hypot(*step))
    if norm < 1e-9:
        return layout
    pos[[0, 2]] += OOB_STEP_M * step / norm
    return layout.moved(i, pos, layout.quats_xyzw[i])


def _free_pose(layout: RoomLayout, i: int, rng: np.random.Generator,
               meshes: list[SolidMesh] | None = None) -> RoomLayout | None:
    """The layout with object ``i`` at the first sampled pose clear of the others, or None."""
    others = [k for k in range(len(layout)) if k != i]
    for _ in range(OFFSET_TRIES):
        offset = rng.uniform(-OFFSET_RANGE_M, OFFSET_RANGE_M, 2)
        pos = layout.bottoms[i] + np.array([offset[0], 0.0, offset[1]])
        candidate = layout.moved(i, pos, layout.quats_xyzw[i])
        if _clear(candidate, i, others, meshes):
            return candidate
    base = Rotation.from_quat(layout.quats_xyzw[i])
    for _ in range(YAW_TRIES):
        turn = Rotation.from_euler("y", rng.uniform(-YAW_RANGE_DEG, YAW_RANGE_DEG), degrees=True)
        candidate = layout.moved(i, layout.bottoms[i], (base * turn).as_quat())
        if _clear(candidate, i, others, meshes):
            return candidate
    return None


def _clear(layout: RoomLayout, i: int, others: list[int], meshes: list[SolidMesh] | None = None) -> bool:
    if not others:
        return True
    if meshes is not None:
        # The meshes are in each object's own frame: a moved pose needs no new mesh.
        return not any(i in (a, b) and depth > DEPTH_SLACK_M for a, b, depth in mesh_pairs(layout, meshes))
    boxes = layout.boxes
    one = boxes.subset(np.full(len(others), i))
    sep = sat_separation(one, boxes.subset(others))
    return bool(np.all(-sep <= DEPTH_SLACK_M))


def _write_back(
    scene: Mapping[str, Any], original: RoomLayout, layout: RoomLayout, alive: list[int]
) -> dict[str, Any]:
    """A copy of ``scene`` holding the surviving objects; only moved objects get new values."""
    out = copy.deepcopy(dict(scene))
    target = out["scene"] if isinstance(scene_of(scene), Mapping) and scene_of(scene) is not scene else out
    pose = {src: k for k, src in enumerate(alive)}
    counter = 0

    def renew(objs: list[Any]) -> list[Any]:
        nonlocal counter
        kept = []
        for obj in objs:
            k = pose.get(counter)
            counter += 1
            if k is None:
                continue
            src = counter - 1
            if not np.array_equal(layout.bottoms[k], original.bottoms[src]):
                obj["pos"] = [round(float(v), 6) for v in layout.bottoms[k]]
            if not np.array_equal(layout.quats_xyzw[k], original.quats_xyzw[src]):
                obj["rot"] = [round(float(v), 6) for v in layout.quats_xyzw[k]]
            kept.append(obj)
        return kept

    if target.get("groups"):
        for group in target["groups"]:
            group["objects"] = renew(group.get("objects") or [])
    else:
        target["objects"] = renew(target.get("objects") or [])
    return out
