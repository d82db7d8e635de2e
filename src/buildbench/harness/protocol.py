"""Protocols drive one episode: who acts when, what feedback flows back, when to stop."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from .agent import Agent
from .context import EpisodeContext
from .env import Env

#: The env a protocol drives: a suite's protocol names its env class (``Protocol[DreamHouseEnv]``)
#: and calls its controls as typed methods.
E = TypeVar("E", bound=Env)


class Protocol(ABC, Generic[E]):
    """Drives ``agent`` through ``env`` for ``ctx.task``; every transition goes through ``ctx``."""

    name: str = "protocol"

    @abstractmethod
    async def run(self, env: E, agent: Agent, ctx: EpisodeContext) -> None:
        """Play one episode. Raise nothing for agent mistakes: they are feedback."""


class StepLoop(Protocol[Env]):
    """The plain loop: reset, then act/step until the env terminates or ``max_steps`` pass.

    Args:
        max_steps: Actions allowed (1 gives a one-shot protocol).
        name: Label recorded with episodes.
    """

    def __init__(self, max_steps: int = 1, *, name: str = "step-loop") -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.max_steps = max_steps
        self.name = name

    async def run(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        observation, _ = await ctx.reset(env)
        for _ in range(self.max_steps):
            action = await agent.act(observation, ctx)
            if action.error is not None:
                ctx.fail(action.error, action, observation)
                return
            result = await ctx.step(env, action)
            if result.terminated or result.truncated:
                return
            observation = result.observation
