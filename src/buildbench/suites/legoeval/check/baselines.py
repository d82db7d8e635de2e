"""Scripted evaluators as plain functions ``task -> outcome`` (the agents wrap them).

``always_valid`` and ``always_invalid`` are the constant predictors (on balanced data they
score macro F1 0.33, P 0.25, R 0.5, κ 0); ``deterministic`` is the typed-program checker
reading the task's scene and the constraint texts through the template grammar. A scene that cannot be read gives unknown verdicts (errors), never a score.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from buildbench.harness import Task
from buildbench.scenes import scene_warnings
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import SceneFormatError

from ..task_records import Verdict, holistic
from .evaluate import evaluate

Outcome = dict[str, Any]


def _constant(task: Task, holds: bool, why: str) -> Outcome:
    verdicts = [Verdict(str(c["id"]), holds, why).to_dict() for c in task.inputs["constraints"]]
    return {"verdicts": verdicts, "valid": holds}


def always_valid(task: Task) -> Outcome:
    """Every constraint holds; the scene is valid."""
    return _constant(task, True, "constant predictor: always valid")


def always_invalid(task: Task) -> Outcome:
    """No constraint holds; the scene is invalid."""
    return _constant(task, False, "constant predictor: always invalid")


def deterministic(task: Task) -> Outcome:
    """The deterministic evaluator: every constraint checked by the geometric tools."""
    try:
        with scene_warnings.dropped():  # given when the task came in (env.load_task_scene), not per episode
            scene = load_scene(dict(task.inputs["scene"]))
    except (SceneFormatError, KeyError, ValueError, TypeError) as exc:
        why = f"error: scene unreadable: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        unknown = [Verdict(str(c["id"]), None, why).to_dict() for c in task.inputs["constraints"]]
        return {"verdicts": unknown, "valid": None}
    # Only what an evaluator may see: the constraint *texts* (read by the template grammar),
    # never the programs stored in the task's target.
    verdicts = evaluate(scene, [{"id": c["id"], "text": c["text"]} for c in task.inputs["constraints"]])
    return {"verdicts": [v.to_dict() for v in verdicts], "valid": holistic(verdicts)}


#: Name -> baseline function, as the report lists them.
BASELINES: dict[str, Callable[[Task], Outcome]] = {
    "deterministic": deterministic,
    "always-valid": always_valid,
    "always-invalid": always_invalid,
}
