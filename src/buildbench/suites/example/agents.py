"""Reference, negative-control and model-backed agents for the tower suite."""

from __future__ import annotations

import math
from typing import Any

from buildbench.harness import Action, Agent, EpisodeContext, Observation, ScriptedAgent, Task

from .options import ExampleOptions


def tower_design(task: Task, *, fraction: float = 1.0, gap_m: float = 0.0) -> list[dict[str, Any]]:
    """A column of equal blocks reaching ``fraction`` of the target height.

    ``gap_m`` lifts every block after the first, leaving it floating (a negative control).
    """
    target = float(task.inputs["target_height_m"]) * fraction
    count = max(1, min(int(task.inputs["max_blocks"]), math.ceil(target / 1.0)))
    h = target / count
    width = min(0.6, float(task.inputs["lot_half_width_m"]))
    blocks = []
    for k in range(count):
        z = k * h + h / 2 + (gap_m if k > 0 else 0.0)
        blocks.append({"center": [0.0, 0.0, round(z, 6)], "size": [width, width, round(h, 6)]})
    return blocks


def _design_agent(name: str, **kw: Any) -> Any:
    def factory(task: Task, model: Any, options: ExampleOptions) -> Agent:
        design = tower_design(task, **kw)
        return ScriptedAgent([Action(data={"blocks": design})], name=name, delay_s=options.delay_s)

    return factory


reference = _design_agent("reference")
short = _design_agent("short", fraction=0.5)
floating = _design_agent("floating", gap_m=0.05)


class EchoFeedbackAgent(Agent):
    """Submits a floating tower first, then repairs it after reading the feedback.

    Shows (and tests) that refinement protocols carry feedback back to the agent.
    """

    name = "repairing"

    def __init__(self, task: Task) -> None:
        self.task = task

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        broken = "no path of support" in observation.text
        if ctx.steps and broken:
            return Action(data={"blocks": tower_design(self.task)})
        return Action(data={"blocks": tower_design(self.task, gap_m=0.05)})


def repairing(task: Task, model: Any, options: ExampleOptions) -> Agent:
    return EchoFeedbackAgent(task)


def llm(task: Task, model: Any, options: ExampleOptions) -> Agent:
    from buildbench.harness.llm_agent import LLMAgent, llm_agent_options

    settings = {"max_tokens": 1024, "temperature": 0.0, **llm_agent_options(options)}
    from .env import PROMPTS

    return LLMAgent(model, system_prompt=PROMPTS.read("system.md").strip(), **settings)
