"""The tower suite's protocols: the harness's plain act/step loop, once or with feedback."""

from __future__ import annotations

from typing import Any

from buildbench.harness import StepLoop, Task


def one_shot(task: Task, options: dict[str, Any]) -> StepLoop:
    """One submission."""
    return StepLoop(1, name="one-shot")


def refine(task: Task, options: dict[str, Any]) -> StepLoop:
    """Up to ``-o max_steps=N`` submissions (3 by default), each after the checker's feedback."""
    return StepLoop(int(options.get("max_steps", 3)), name="refine")
