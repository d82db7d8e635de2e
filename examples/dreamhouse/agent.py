"""A hand-written DreamHouse agent, run with::

    buildbench run dreamhouse --agent examples/dreamhouse/agent.py:make --split demo --limit 1

The Planner protocols first ask for a construction plan (``observation.state["request"] ==
"plan"``; the plan may be sent as ``Action.data``, a dict, instead of text), then for the frame
(text in the run's action format: a Blender Python script by default). This agent reads the
house's context from ``task.inputs`` — no prompt parsing — and reuses the plan and frame
builders of the sibling ``model.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from buildbench.harness import Action, EpisodeContext, Observation, Task
from buildbench.suites.dreamhouse.options import DreamHouseOptions


def _rules() -> Any:
    """The sibling model.py, loaded by path (examples are not a package)."""
    spec = importlib.util.spec_from_file_location("dreamhouse_example_rules", Path(__file__).with_name("model.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class FrameAgent:
    """Plans one section, then submits the same rectangular frame on every build request."""

    name = "example-frame-agent"

    def __init__(self, task: Task) -> None:
        self.rules = _rules()
        inputs = task.inputs
        lot = {key: float(inputs["lot_size"][key]) for key in ("width", "depth", "area")}
        self.context = self.rules.Context(lot, float(inputs["footprint"]["x"]), float(inputs["footprint"]["y"]),
                                          int(inputs["stories"]), str(inputs["collection"]))

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if observation.state.get("request") == "plan":
            plan_text = self.rules.plan(self.context)
            return Action(data=json.loads(plan_text.removeprefix("```json\n").removesuffix("\n```")))
        return Action(text=self.rules.frame_script(self.context))


def make(task: Task, model: Any, options: DreamHouseOptions) -> FrameAgent:
    """The agent factory ``--agent examples/dreamhouse/agent.py:make`` names (``model`` is unused)."""
    return FrameAgent(task)
