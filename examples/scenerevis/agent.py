"""A hand-written SceneReVis agent, run with::

    buildbench run scenerevis --agent examples/scenerevis/agent.py:make --split demo --limit 1

The factory gets the task, the run's model (None here: no --model) and the run's parsed ``-o``
options (``SceneReVisOptions``), and returns an object whose ``act(observation, ctx)`` returns an
:class:`Action`. This one reads the request from ``task.inputs`` and answers each turn in the
suite's text protocol, using the rules of the sibling ``model.py``; with ``--model`` it asks that
model instead, showing how an agent drives a model itself (its calls are recorded and replayed
like any other).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from buildbench.harness import Action, AgentError, EpisodeContext, Observation, Task
from buildbench.llm import ChatModel, ChatRequest, Message
from buildbench.suites.scenerevis.options import SceneReVisOptions


def _rules() -> Any:
    """The sibling model.py, loaded by path (examples are not a package)."""
    spec = importlib.util.spec_from_file_location("scenerevis_example_rules", Path(__file__).with_name("model.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


class RoomAgent:
    """Creates the room, furnishes it, stops."""

    name = "example-room-agent"

    def __init__(self, task: Task, model: ChatModel | None) -> None:
        self.request = str(task.inputs["instruction"])
        self.model = model
        self.turn = 0
        self.rules = _rules()

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        turn, self.turn = self.turn, self.turn + 1
        if self.model is None:
            return Action(text=self.rules.reply(self.request, turn))
        response = await self.model.generate(ChatRequest(messages=(Message.user(observation.text),)))
        if response.error is not None:
            return Action(error=AgentError.from_api(response.error), usage=response.usage.to_dict())
        return Action(text=response.text, usage=response.usage.to_dict())


def make(task: Task, model: ChatModel | None, options: SceneReVisOptions) -> RoomAgent:
    """The agent factory ``--agent examples/scenerevis/agent.py:make`` names."""
    return RoomAgent(task, model)
