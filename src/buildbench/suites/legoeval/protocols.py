"""The LEGO-Eval episode driver: act until a verdict is submitted or the step budget ends."""

from __future__ import annotations

from buildbench.harness import StepLoop, Task

from .options import LegoEvalOptions


def evaluate(task: Task, options: LegoEvalOptions) -> StepLoop:
    """Factory: ``-o max_steps=N`` (tool calls plus the verdict)."""
    return StepLoop(options.max_steps, name="evaluate")
