"""One LEGO-Eval episode's metrics (the suite's scorer): the per-task numbers of
:func:`.metrics.score`, from which every table is rebuilt by summing over episodes, with the
metrics an outcome leaves undefined (no verdict, no label) left out rather than stored.

:mod:`.metrics` holds the paper's measures (agreement, success rates, plan F1 and GED) and their
aggregation over episodes.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Task

from .metrics import score


def score_episode(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
    """The metrics of one episode (all floats; undefined ones left out).

    Raises:
        tasks.OutcomeError: the outcome does not have the documented shape.
    """
    return {k: v for k, v in score(task, outcome).items() if v is not None}


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``): every
    constraint unjudged and, for a labelled task, the holistic verdict counted wrong."""
    n = float(len(task.inputs.get("constraints") or ()))
    out = {"n_constraints": n, "partial_holds": 0.0, "partial_fails": 0.0, "partial_unknown": n}
    if task.target.get("labels") is not None:
        out.update({"valid_label": float(bool(task.target["valid"])), "holistic_correct": 0.0})
    return out
