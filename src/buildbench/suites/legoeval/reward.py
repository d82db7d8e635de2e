"""LEGO-Eval's RL reward: how far an evaluator's verdicts agree with a labelled task's labels.

The env gives it on the verdict action (tool calls earn 0): the fraction of the task's
constraints whose verdict agrees with its label (the paper's partial agreement, with an unjudged
constraint counted as a disagreement so that abstaining is never rewarded), plus 1 when the
holistic verdict agrees with the task's validity, halved: a reward in [0, 1].
"""

from __future__ import annotations

from buildbench.harness import Task


def verdict_reward(task: Task, holds: list[bool | None], valid: bool | None) -> float | None:
    """Agreement of the verdicts with a labelled task's labels, in [0, 1] (see the module
    docstring); None for an unlabelled task."""
    labels = task.target.get("labels")
    if labels is None or "valid" not in task.target:
        return None
    partial = sum(h is not None and h == bool(label) for h, label in zip(holds, labels, strict=True))
    partial_rate = partial / len(holds) if holds else 0.0
    holistic_hit = float(valid is not None and valid == bool(task.target["valid"]))
    return 0.5 * (partial_rate + holistic_hit)
