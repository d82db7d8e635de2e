"""The diagnose-and-act loop (spec §2.1): create the room, then diagnose and edit until the
agent terminates or the env's turn budget (``-o max_turns``, turn 0 included) is spent."""

from __future__ import annotations

from typing import Any

from buildbench.harness import Agent, Env, EpisodeContext, Protocol, Task


class DiagnoseActLoop(Protocol):
    """Act, step, repeat until the env says the episode is over.

    The env owns the budget, so the loop has no step count of its own; ``max_actions`` only
    guards against an env that never ends.
    """

    def __init__(self, *, max_actions: int = 1000, name: str = "diagnose-act") -> None:
        self.max_actions = max_actions
        self.name = name

    async def run(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        observation, _ = await ctx.reset(env)
        for _ in range(self.max_actions):
            action = await agent.act(observation, ctx)
            if action.error:
                ctx.log(action, observation, terminated=True, info={"agent_error": action.error})
                ctx.notes["agent_error"] = action.error
                return
            result = await ctx.step(env, action)
            if result.terminated or result.truncated:
                return
            observation = result.observation


def diagnose_act(task: Task, options: dict[str, Any]) -> DiagnoseActLoop:
    return DiagnoseActLoop()
