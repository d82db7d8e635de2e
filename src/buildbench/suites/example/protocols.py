"""The tower suite's protocols: the harness's plain act/step loop, once or with feedback."""

from __future__ import annotations

from buildbench.harness import StepLoop, Task
from buildbench.harness.option_model import OptionsArg


def one_shot(task: Task, options: OptionsArg) -> StepLoop:
    """One submission."""
    return StepLoop(1, name="one-shot")


def refine(task: Task, options: OptionsArg) -> StepLoop:
    """Up to ``-o max_steps=N`` submissions (3 by default), each after the checker's feedback."""
    return StepLoop(int(options.get("max_steps", 3)), name="refine")
