"""A hand-written agent for the tower suite, run with::

    buildbench run example --agent examples/example/agent.py:make --split demo --limit 1

``make(task, model, options)`` is the agent factory: called once per episode with the run's
parsed ``-o`` options (``ExampleOptions``), it returns an object with ``act(observation, ctx) ->
Action`` (async or not). This agent works from the structured task instead of the prompt text:
it submits a column of blocks as ``Action.data`` (no text to parse), reads the checker's
feedback, and adds a block when the tower is short.
"""

from __future__ import annotations

import math
from typing import Any

from buildbench.harness import Action, EpisodeContext, Observation, Task
from buildbench.suites.example.options import ExampleOptions


class ColumnAgent:
    """Stacks equal blocks; one more block after each "too short" feedback."""

    name = "example-column"

    def __init__(self, task: Task) -> None:
        self.height_m = float(task.inputs["target_height_m"])
        self.half_width_m = float(task.inputs["lot_half_width_m"])
        self.max_blocks = int(task.inputs["max_blocks"])
        self.count = max(1, min(self.max_blocks, math.ceil(self.height_m)))

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if ctx.steps and "height" in observation.text.lower() and self.count < self.max_blocks:
            self.count += 1  # the checker said the tower falls short: try finer blocks
        block_m = self.height_m / self.count
        side_m = min(0.6, self.half_width_m)
        blocks = [{"center": [0.0, 0.0, k * block_m + block_m / 2], "size": [side_m, side_m, block_m]}
                  for k in range(self.count)]
        return Action(data={"blocks": blocks})


def make(task: Task, model: Any, options: ExampleOptions) -> ColumnAgent:
    """The agent factory ``--agent examples/example/agent.py:make`` names (``model`` is unused)."""
    return ColumnAgent(task)
