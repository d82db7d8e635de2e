"""The BIM-Edit tool loop (spec 1.4): act, run the tool calls, repeat until the agent answers
without a tool call or asks for one past the budget.

An inference call that fails is retried ``-o retries`` times per episode after ``retry_delay_s``
(paper: "retries once after a 30-second delay, giving at most two inference attempts per task");
a failure past the retries ends the episode with failure class ``api`` (or ``timeout`` when the
model call timed out). Either way the last committed model is scored.
"""

from __future__ import annotations

import asyncio

from buildbench.harness import Agent, AgentError, EpisodeContext, Protocol, Task

from .env import BimEditEnv
from .options import BimEditOptions

#: Error kinds of ``buildbench.llm.ApiError`` worth the retry, and their failure classes.
_RETRYABLE = {"api_error": "api", "timeout": "timeout"}
_NOT_RETRIED = {"budget": "budget", "replay_miss": "other", "context_length": "api"}


def failure_class(error: AgentError) -> str:
    """The runtime failure class (spec 3.7) of an agent error."""
    return _RETRYABLE.get(error.kind) or _NOT_RETRIED.get(error.kind, "other")


class ToolLoop(Protocol[BimEditEnv]):
    """The paper's agent loop.

    Args:
        options: The run's options: ``retries`` (inference retries per episode, paper: 1) and
            ``retry_delay_s`` (wait before a retry, paper: 30 s; tests use ~0).
        name: Label recorded with episodes.
    """

    def __init__(self, options: BimEditOptions, *, name: str = "tool-loop") -> None:
        self.retries = options.retries
        self.retry_delay_s = options.retry_delay_s
        self.name = name

    async def run(self, env: BimEditEnv, agent: Agent, ctx: EpisodeContext) -> None:
        if ctx.artifact_dir is not None:
            await ctx.control(env.keep_model_in, str(ctx.artifact_dir))
        observation, _ = await ctx.reset(env)
        retries_left = self.retries
        while True:
            action = await agent.act(observation, ctx)
            if action.error is not None:
                kind = failure_class(action.error)
                if action.error.kind in _RETRYABLE and retries_left > 0:
                    retries_left -= 1
                    ctx.log(action, observation, info={"inference_error": action.error.to_dict(),
                                                       "retry_in_s": self.retry_delay_s})
                    await asyncio.sleep(self.retry_delay_s)
                    continue
                ctx.fail(action.error, action, observation, info={"failure": kind})
                await ctx.control(env.record_failure, kind, str(action.error))
                return
            result = await ctx.step(env, action)
            if result.truncated and result.info.get("failure") == "budget":
                ctx.agent_error = AgentError("budget", "the tool-call budget is spent")
                return
            if result.terminated or result.truncated:
                return
            observation = result.observation


def tool_loop(task: Task, options: BimEditOptions) -> ToolLoop:
    """Factory: ``-o retries=N -o retry_delay_s=S``."""
    return ToolLoop(options)
