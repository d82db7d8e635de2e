"""The tower suite's protocols: the harness's plain act/step loop, once or with feedback."""

from __future__ import annotations

from buildbench.harness import StepLoop, Task

from .options import ExampleOptions


def one_shot(task: Task, options: ExampleOptions) -> StepLoop:
    """One submission."""
    return StepLoop(1, name="one-shot")


def refine(task: Task, options: ExampleOptions) -> StepLoop:
    """Up to ``-o max_steps=N`` submissions (3 by default), each after the checker's feedback."""
    return StepLoop(options.max_steps, name="refine")
