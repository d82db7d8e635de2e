"""One tower episode's metrics (the suite's scorer)."""

from __future__ import annotations

from buildbench.harness import Task

from .check import check_tower
from .model import parse_blocks
from .outcome import TowerOutcome


def score(task: Task, outcome: TowerOutcome) -> dict[str, float]:
    """Re-check the final design from scratch (the scorer trusts nothing the env reported)."""
    blocks = parse_blocks({"blocks": outcome.blocks}, max_blocks=10**6)
    report = check_tower(blocks, target_height_m=float(task.target["target_height_m"]),
                         footprint_half_m=float(task.inputs["lot_half_width_m"]))
    target = float(task.target["target_height_m"])
    return {
        "passed": float(report.passed),
        "height_ratio": min(report.height_m / target, 1.0) if target > 0 else 0.0,
        "blocks": float(blocks.count),
        "attempts": float(outcome.attempts),
        "invalid_actions": float(outcome.invalid_actions),
    }


def failure_metrics(task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed by its own output (``AgentFailure``)."""
    return {"passed": 0.0, "height_ratio": 0.0}
