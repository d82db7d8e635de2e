"""A hand-written BuildArena agent, run with::

    buildbench run buildarena --agent examples/buildarena/agent.py:make --split demo --limit 1

The workflow protocol asks one agent to play every role in turn; ``observation.state`` says
which (``{"role": "planner" | "drafter" | "reviewer" | "builder" | "guidance" | "controller",
"thread", "tools"}``), and the builder acts through tool calls answered in
``observation.tool_results``. This agent answers each role with the texts of the sibling
``model.py`` and builds by calling the library directly: ``start``, then
``get_machine_summary``. (An agent with ``plays_script = True`` is instead given the stage
switches and library calls as ``Action.data``: see the suite's ``DesignAgent``.)
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from buildbench.harness import Action, EpisodeContext, Observation, Task
from buildbench.llm import ToolCall
from buildbench.suites.buildarena.options import BuildArenaOptions


def _rules() -> Any:
    """The sibling model.py, loaded by path (examples are not a package)."""
    spec = importlib.util.spec_from_file_location("buildarena_example_rules", Path(__file__).with_name("model.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class RoleAgent:
    """Plays each workflow role by rule."""

    name = "example-role-agent"

    def __init__(self) -> None:
        self.rules = _rules()
        self.builder_calls = 0
        self.guidance_turns = 0

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        role = str(observation.state.get("role", ""))
        if role == "planner":
            return Action(text=self.rules.PLAN)
        if role == "drafter":
            return Action(text=self.rules.BLUEPRINT)
        if role == "reviewer":
            return Action(text="Approved. TERMINATE")
        if role == "builder":
            name = "start" if self.builder_calls == 0 else "get_machine_summary"
            self.builder_calls += 1
            return Action(tool_calls=[ToolCall.parse(f"call_{self.builder_calls}", name, {})])
        if role == "guidance":
            self.guidance_turns += 1
            return Action(text="Call get_machine_summary." if self.guidance_turns == 1 else "Done. TERMINATE")
        if role == "controller":
            return Action(text="```json\n" + json.dumps(self.rules.CONTROL) + "\n```")
        return Action(text="TERMINATE")


def make(task: Task, model: Any, options: BuildArenaOptions) -> RoleAgent:
    """The agent factory ``--agent examples/buildarena/agent.py:make`` names (``model`` and the run's
    parsed ``-o`` options, ``BuildArenaOptions``, are unused)."""
    return RoleAgent()
