"""A hand-written LEGO-Eval agent, run with::

    buildbench run legoeval --agent examples/legoeval/agent.py:make --split demo --limit 1

The task gives a house and a list of constraints; the agent inspects the house with the env's
tools (each :class:`Action` may carry tool calls; the answers come back in
``observation.tool_results``) and ends by submitting one verdict per constraint as
``Action.data``. This one lists the rooms, then judges a constraint as holding when every
room type it mentions is in the house — a deliberately simple rule to replace with your own.
"""

from __future__ import annotations

from typing import Any

from buildbench.harness import Action, EpisodeContext, Observation, Task
from buildbench.llm import ToolCall
from buildbench.suites.legoeval.options import LegoEvalOptions

ROOM_WORDS = ("bedroom", "bathroom", "kitchen", "living room", "dining room", "office", "hallway")


class RoomListJudge:
    """One ``get_room_list`` call, then the verdicts."""

    name = "example-room-list-judge"

    def __init__(self, task: Task) -> None:
        self.constraints = [dict(c) for c in task.inputs["constraints"]]
        self.asked = False

    def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if not self.asked:
            self.asked = True
            return Action(tool_calls=[ToolCall.parse("call_0", "get_room_list", {})])
        rooms = " ".join(text for _, text in observation.tool_results).lower().replace("_", " ")
        verdicts = []
        for c in self.constraints:
            named = [w for w in ROOM_WORDS if w in str(c["text"]).lower()]
            holds = all(w.split()[0] in rooms for w in named)
            verdicts.append({"id": c["id"], "holds": holds,
                             "explanation": f"rooms named: {', '.join(named) or 'none'}; listed: {rooms[:200]}"})
        return Action(data={"verdicts": verdicts, "valid": all(v["holds"] for v in verdicts)})


def make(task: Task, model: Any, options: LegoEvalOptions) -> RoomListJudge:
    """The agent factory ``--agent examples/legoeval/agent.py:make`` names (``model`` is unused;
    ``options`` are the run's, typed: ``options.max_steps``…)."""
    return RoomListJudge(task)
