"""A hand-written BIM-Edit agent, run with::

    buildbench run bimedit --agent examples/bimedit/agent.py:make --split demo --limit 1

``make(task, model, options)`` returns the agent of one episode (``options``: the run's parsed
``-o`` options, ``BimEditOptions``). This one acts through the env's tool directly: each
:class:`Action` carries a :class:`ToolCall` of ``execute_ifc_code`` (the env answers it in
``observation.tool_results``), and an action with text and no tool call ends the episode. It
inspects the model, reads the answer, and deletes a wall when the instruction names one by id;
the IfcOpenShell code comes from the sibling ``model.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from buildbench.harness import Action, EpisodeContext, Observation, Task
from buildbench.llm import ToolCall
from buildbench.suites.bimedit.options import BimEditOptions


def _rules() -> Any:
    """The sibling model.py, loaded by path (examples are not a package)."""
    spec = importlib.util.spec_from_file_location("bimedit_example_rules", Path(__file__).with_name("model.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class WallAgent:
    """Inspect, then delete the named wall (or stop when no rule applies)."""

    name = "example-wall-agent"

    def __init__(self, task: Task) -> None:
        self.instruction = str(task.inputs["instruction"])
        self.rules = _rules()
        self.calls = 0
        self.seen: list[str] = []

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        self.seen.extend(text for _, text in observation.tool_results)  # what the tool answered
        code = self.rules.INSPECT if self.calls == 0 else self.rules.edit_code(self.instruction)
        if self.calls >= 2 or code is None:
            return Action(text=f"Finished after {self.calls} tool call(s).")
        call = ToolCall.parse(f"call_{self.calls}", "execute_ifc_code", json.dumps({"code": code}))
        self.calls += 1
        return Action(tool_calls=[call])


def make(task: Task, model: Any, options: BimEditOptions) -> WallAgent:
    """The agent factory ``--agent examples/bimedit/agent.py:make`` names (``model`` is unused)."""
    return WallAgent(task)
