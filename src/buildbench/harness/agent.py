"""Agents: whatever turns an observation into an action.

An agent instance serves one episode (factories build a fresh one per episode), so it may
keep its conversation history in ``self``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence

from .context import EpisodeContext
from .env import Action, AgentError, Observation


class Agent(ABC):
    """Produces actions. ``act`` is async so model-backed agents can overlap their calls."""

    name: str = "agent"

    @abstractmethod
    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        """Return the next action for ``observation``."""


ActFn = Callable[[Observation, EpisodeContext], Action | Awaitable[Action]]


class ScriptedAgent(Agent):
    """An agent whose actions come from a function or a fixed list (reference designs,
    baselines, negative controls, tests).

    Args:
        policy: ``fn(observation, ctx) -> Action`` (sync or async), or a sequence of actions
            played in order; after the last one the agent repeats it.
        name: Label recorded with episodes.
        delay_s: Simulated thinking time per action (benchmarks of runner overhead).
    """

    def __init__(self, policy: ActFn | Sequence[Action], *, name: str = "scripted", delay_s: float = 0.0) -> None:
        self.name = name
        self.delay_s = float(delay_s)
        self._policy = policy
        self._turn = 0

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if self.delay_s > 0:
            await asyncio.sleep(self.delay_s)
        if callable(self._policy):
            produced = self._policy(observation, ctx)
            out = produced if isinstance(produced, Action) else await produced
        else:
            actions = list(self._policy)
            if not actions:
                return Action(error=AgentError("agent", "scripted agent has no actions"))
            out = actions[min(self._turn, len(actions) - 1)]
        self._turn += 1
        return out
