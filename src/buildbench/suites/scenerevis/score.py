"""Episode scoring: the final scene's physics metrics, recomputed from the scene itself.

:func:`score` trusts nothing the environment reported: it reads the outcome's ``scene`` (the
final SceneReVis scene JSON), re-runs the evaluation physics and the voxel loss at the
outcome's geometry level (``geometry``, as the episode played), the support check, and counts the room type's essentials. A missing or unreadable scene
is the agent's doing (a model that never sends ``<create_scene>``, or a scene that does not
read): `AgentFailure` naming what was wrong, a scored failure with `failure_metrics`.

Evaluation judge scores (spec §5.2: ``Ra``, ``Spa``, ``Ac`` on 1–10 and ``Avg`` their mean)
follow the outcome's ``eval_judge`` record (set by the protocol, see :mod:`.protocols`):

* ``rule``, or no record: the rule judge scores the final scene here (deterministic, pure),
  with ``judge_comparable`` = 0, meaning not comparable with the paper's GPT-5 scores;
* ``none``: no judge fields;
* a model judge: its scores are copied (checked) with ``judge_comparable`` = 1 and
  ``judge_failed`` = 0, or, when its call failed, only ``judge_failed`` = 1 (and
  ``judge_latency_s``, the judge call's time in s, either way): the judge fields
  stay absent so the failure never becomes a score, and the physics is scored as usual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from buildbench.harness import Task
from buildbench.harness.errors import AgentFailure
from buildbench.limits import limit
from buildbench.scenes.assets import AssetError, check_level

from .check.layout import RoomLayout, parse_layout, scene_objects
from .check.rooms import essentials_of, missing_essentials
from .judge.evaluation import SCORE_KEYS, RuleEvalJudge
from .metrics import scene_metrics
from .outcome import SceneReVisOutcome

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

#: Navigability fields copied when the scene has them (``reachable_pct`` is absent when nothing on
#: the floor needs reaching; see :mod:`.check.navigation`).
NAVIGATION_FIELDS = ("free_connected_pct", "reachable_pct")

#: What a final scene without objects scores instead of the per-scene figures (issue 23): the
#: released evaluation (and :func:`.metrics.scene_metrics`, which agrees with it) gives an empty
#: room 0 % collisions and out-of-bounds and so a valid placement; here nothing placed is no valid
#: placement (the pass flags fail) and shares, means and totals over no object are n/a (NaN, left out of
#: every mean and counted by the report as missing).
EMPTY_SCENE: dict[str, float] = {
    "collision_free": 0.0, "valid_placement": 0.0, "voxel_valid": 0.0,
    **dict.fromkeys(("collision_rate", "oob_rate", "unsupported_rate", "mean_penetration_m", "total_penetration_m",
                     "total_oob_volume_m3", "voxel_oob_m3", "voxel_collision_m3", "voxel_loss_m3"), math.nan),
}


def score(task: Task, outcome: SceneReVisOutcome) -> dict[str, float]:
    """Metrics of the episode's final scene (``outcome.scene``), all floats.

    Besides the per-scene physics (:func:`.metrics.scene_metrics`): ``n_floating``,
    ``mesh_fallbacks`` at ``geometry=mesh`` (objects whose asset was missing or bad, measured and
    judged on their procedural stand-in), the
    share of the room type's essentials present (``essentials_present``, NaN when the room
    type has none), the evaluation judge's fields (module docstring) and, when the outcome
    reports them, ``latency_s`` (generation time per scene, s) and ``turns``, and the
    navigability shares (:data:`NAVIGATION_FIELDS`). A scene without
    objects scores :data:`EMPTY_SCENE` in place of the per-scene physics.
    """
    scene = outcome.scene
    if not isinstance(scene, Mapping):
        raise AgentFailure(f"task {task.id}: the agent left no final scene (outcome has no 'scene')")
    try:
        n_objects = len(scene_objects(scene))
    except ValueError as exc:
        raise AgentFailure(f"task {task.id}: the agent's final scene is unreadable: {exc}") from exc
    if n_objects > limit("scene_objects"):  # checked before any physics runs
        raise AgentFailure(f"task {task.id}: the final scene has {n_objects:,} objects, over the cap of "
                           f"{limit('scene_objects'):,} (BUILDBENCH_LIMIT_SCENE_OBJECTS)")
    try:
        layout = parse_layout(scene)
    except ValueError as exc:
        raise AgentFailure(f"task {task.id}: the agent's final scene is unreadable: {exc}") from exc
    try:
        row = scene_metrics(layout, geometry=check_level(outcome.geometry))
    except AssetError as exc:
        raise ValueError(f"task {task.id}: {exc}") from exc
    out = {key: float(row[key]) for key in SCORED_FIELDS}
    out.update({key: float(row[key]) for key in NAVIGATION_FIELDS if key in row})
    out["n_floating"] = float(len(row["floating"]))
    if "mesh_fallbacks" in row:  # geometry=mesh: objects measured (and judged) on procedural stand-ins
        out["mesh_fallbacks"] = float(len(row["mesh_fallbacks"]))
    if n_objects == 0:
        out.update(EMPTY_SCENE)
    room_type = str(
        scene.get("room_type") or task.inputs.get("room_type") or task.inputs.get("instruction") or ""
    )
    essentials = essentials_of(room_type)
    missing = missing_essentials(room_type, layout.descs)
    # A room type without listed essentials has nothing to check: n/a, not a pass.
    out["essentials_present"] = 1.0 - len(missing) / len(essentials) if essentials else math.nan
    out.update(judge_scores(task, outcome, layout))
    for value, key in ((outcome.latency_s, "latency_s"), (outcome.turns, "turns")):
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = float(value)
    return out


def judge_scores(task: Task, outcome: SceneReVisOutcome, layout: RoomLayout) -> dict[str, float]:
    """The evaluation judge's fields of one episode (see the module docstring)."""
    record = outcome.eval_judge
    if record is None:
        record = {"judge": "rule"}
    if not isinstance(record, Mapping):
        raise ValueError(f"task {task.id}: outcome 'eval_judge' is not a record: {record!r:.80}")
    kind = str(record.get("judge", ""))
    if kind == "none":
        return {}
    if kind == "rule":
        instruction = str(outcome.instruction or task.inputs.get("instruction") or "")
        rule = RuleEvalJudge(check_level(outcome.geometry)).judge(layout, instruction)
        return {**rule.scores(), "judge_comparable": 0.0}
    timing = record.get("latency_s")
    out = {"judge_latency_s": float(timing)} if isinstance(timing, int | float) and not isinstance(timing, bool) else {}
    if record.get("status") != "ok":
        return {**out, "judge_failed": 1.0}
    values: list[float] = []
    for key in SCORE_KEYS:
        value = record.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 10:
            raise ValueError(f"task {task.id}: eval_judge {key}={value!r}: expected a score from 1 to 10")
        values.append(float(value))
    ra, spa, ac = values
    return {**out, "Ra": ra, "Spa": spa, "Ac": ac, "Avg": (ra + spa + ac) / 3.0, "judge_comparable": 1.0,
            "judge_failed": 0.0}


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``): no valid
    placement, no essentials."""
    return {"collision_free": 0.0, "valid_placement": 0.0, "voxel_valid": 0.0, "essentials_present": 0.0}
