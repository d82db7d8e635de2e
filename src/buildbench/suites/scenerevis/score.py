"""Episode scoring: the final scene's physics metrics, recomputed from the scene itself.

:func:`score` trusts nothing the environment reported: it reads ``outcome["scene"]`` (the
final SceneReVis scene JSON), re-runs the evaluation physics, the voxel loss and the
support check, and counts the room type's essentials. A missing or unreadable scene
raises ``ValueError`` naming what was wrong: an episode that cannot be scored is an error,
not a zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from buildbench.harness import Task

from .check.layout import parse_layout
from .check.rooms import essentials_of, missing_essentials
from .metrics import scene_metrics

#: Per-scene metric fields copied into the score, all floats.
SCORED_FIELDS = (
    "n_objects",
    "collision_rate",
    "oob_rate",
    "collision_free",
    "valid_placement",
    "n_colliding_pairs",
    "total_penetration_m",
    "mean_penetration_m",
    "total_oob_volume_m3",
    "voxel_oob_m3",
    "voxel_collision_m3",
    "voxel_loss_m3",
    "voxel_valid",
    "unsupported_rate",
)


def score(task: Task, outcome: Mapping[str, Any]) -> dict[str, float]:
    """Metrics of the episode's final scene (``outcome["scene"]``), all floats.

    Besides the per-scene physics (:func:`.metrics.scene_metrics`): ``n_floating``, the
    share of the room type's essentials present (``essentials_present``, 1 when the room
    type has none) and, when the outcome reports them, ``latency_s`` and ``turns``.
    """
    scene = outcome.get("scene") if isinstance(outcome, Mapping) else None
    if not isinstance(scene, Mapping):
        raise ValueError(f"task {task.id}: outcome has no final scene under 'scene'")
    try:
        layout = parse_layout(scene)
    except ValueError as exc:
        raise ValueError(f"task {task.id}: final scene unreadable: {exc}") from exc
    row = scene_metrics(layout)
    out = {key: float(row[key]) for key in SCORED_FIELDS}
    out["n_floating"] = float(len(row["floating"]))
    room_type = str(
        scene.get("room_type") or task.inputs.get("room_type") or task.inputs.get("instruction") or ""
    )
    essentials = essentials_of(room_type)
    missing = missing_essentials(room_type, layout.descs)
    out["essentials_present"] = 1.0 - len(missing) / len(essentials) if essentials else 1.0
    for key in ("latency_s", "turns"):
        value = outcome.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = float(value)
    return out
