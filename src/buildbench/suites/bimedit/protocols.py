"""The BIM-Edit tool loop (spec 1.4): act, run the tool calls, repeat until the agent answers
without a tool call or asks for one past the budget.

An inference call that fails is retried once per episode after ``retry_delay_s`` (paper:
"retries once after a 30-second delay, giving at most two inference attempts per task");
a second failure ends the episode with failure class ``api`` (or ``timeout`` when the model
call timed out). Either way the last committed model is scored.
"""

from __future__ import annotations

import asyncio

from buildbench.harness import Agent, AgentError, Env, EpisodeContext, Protocol, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import OptionsArg

#: Seconds before the one inference retry (paper App. G: 30 s).
RETRY_DELAY_S = 30.0
#: Error kinds of ``buildbench.llm.ApiError`` worth the retry, and their failure classes.
_RETRYABLE = {"api_error": "api", "timeout": "timeout"}
_NOT_RETRIED = {"budget": "budget", "replay_miss": "other"}


def failure_class(error: AgentError) -> str:
    """The runtime failure class (spec 3.7) of an agent error."""
    return _RETRYABLE.get(error.kind) or _NOT_RETRIED.get(error.kind, "other")


class ToolLoop(Protocol):
    """The paper's agent loop.

    Args:
        retries: Inference retries per episode (paper: 1).
        retry_delay_s: Wait before a retry, seconds (paper: 30; tests use ~0).
        name: Label recorded with episodes.
    """

    def __init__(self, *, retries: int = 1, retry_delay_s: float = RETRY_DELAY_S, name: str = "tool-loop") -> None:
        if retries < 0 or retry_delay_s < 0:
            raise ConfigError(f"retries and retry_delay_s must be >= 0, got {retries}, {retry_delay_s}")
        self.retries = retries
        self.retry_delay_s = retry_delay_s
        self.name = name

    async def run(self, env: Env, agent: Agent, ctx: EpisodeContext) -> None:
        if ctx.artifact_dir is not None and "keep_model_in" in env.controls:
            await ctx.control(env, "keep_model_in", {"folder": str(ctx.artifact_dir)}, role="protocol")
        observation, _ = await ctx.reset(env)
        retries_left = self.retries
        while True:
            action = await agent.act(observation, ctx)
            if action.error is not None:
                kind = failure_class(action.error)
                if kind in _RETRYABLE.values() and retries_left > 0:
                    retries_left -= 1
                    ctx.log(action, observation, info={"inference_error": action.error.to_dict(),
                                                       "retry_in_s": self.retry_delay_s})
                    await asyncio.sleep(self.retry_delay_s)
                    continue
                ctx.fail(action.error, action, observation, info={"failure": kind})
                if "record_failure" in env.controls:
                    await ctx.control(env, "record_failure", {"kind": kind, "detail": str(action.error)},
                                      role="protocol")
                return
            result = await ctx.step(env, action)
            if result.truncated and result.info.get("failure") == "budget":
                ctx.agent_error = AgentError("budget", "the tool-call budget is spent")
                return
            if result.terminated or result.truncated:
                return
            observation = result.observation


def tool_loop(task: Task, options: OptionsArg) -> ToolLoop:
    """Factory: ``-o retries=N -o retry_delay_s=S``."""
    try:
        return ToolLoop(retries=int(options.get("retries", 1)),
                        retry_delay_s=float(options.get("retry_delay_s", RETRY_DELAY_S)))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"tool-loop option: {exc}") from exc
