"""The LEGO-Eval episode driver: act until a verdict is submitted or the step budget ends."""

from __future__ import annotations

from buildbench.harness import StepLoop, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import OptionsArg

#: Actions per episode by default: one verdict for pipeline agents, room for a tool-driving model.
DEFAULT_MAX_STEPS = 40


def evaluate(task: Task, options: OptionsArg) -> StepLoop:
    """Factory: ``-o max_steps=N`` (tool calls plus the verdict)."""
    try:
        steps = int(options.get("max_steps", DEFAULT_MAX_STEPS))
    except (TypeError, ValueError):
        raise ConfigError(f"-o max_steps: expected an integer, got {options.get('max_steps')!r}") from None
    if steps < 1:
        raise ConfigError(f"-o max_steps: must be >= 1, got {steps}")
    return StepLoop(steps, name="evaluate")
