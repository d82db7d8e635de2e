"""The environment contract: Gymnasium-shaped ``reset``/``step`` over construction tasks.

``reset`` and ``step`` return NamedTuples, so RL code can unpack them like Gymnasium's
tuples (``obs, info = env.reset(task)``; ``obs, reward, terminated, truncated, info =
env.step(action)``) while harness code reads fields by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .task import Task

if TYPE_CHECKING:
    from buildbench.llm import Tool, ToolCall


@dataclass
class Observation:
    """What the agent sees after a reset or a step.

    Attributes:
        text: Instructions or feedback, as the model will read it.
        images: RGBA/RGB uint8 arrays (H, W, C) or PNG bytes, in the order they are described.
        tool_results: For tool-call actions, ``(tool_call_id, text)`` for each call answered.
        state: Structured, JSON-serialisable state for scripted agents and logs.
    """

    text: str = ""
    images: list[np.ndarray | bytes] = field(default_factory=list)
    tool_results: list[tuple[str, str]] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)


@dataclass
class Action:
    """What the agent does: model text (code, JSON), tool calls, or structured data.

    Attributes:
        text: Free text as the model produced it (the env parses it).
        tool_calls: Function calls, when the env offers tools.
        data: Structured payload from scripted agents (skips text parsing).
        error: Set when the agent could not produce an action (e.g. ``api_error: …``);
            protocols end the episode on it.
        usage: Tokens/requests spent producing this action, as a plain dict.
    """

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    data: Any = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


class ResetResult(NamedTuple):
    observation: Observation
    info: dict[str, Any]


class StepResult(NamedTuple):
    """One transition. ``terminated``: the build is complete or has failed for good.
    ``truncated``: a budget (steps, tokens, time) cut it short."""

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


class Env(ABC):
    """A construction environment for one task at a time.

    Cheap to construct; all per-episode state is created in ``reset``. Same task + seed +
    actions → same observations and outcome.
    """

    #: Tools offered to agents that act by function calling (empty when text-only).
    tools: list[Tool] = []

    @abstractmethod
    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        """Start an episode on ``task``."""

    @abstractmethod
    def step(self, action: Action) -> StepResult:
        """Apply one action. Bad actions give feedback and leave the built state intact."""

    @abstractmethod
    def outcome(self) -> dict[str, Any]:
        """The JSON-serialisable product of the episode so far (what gets scored)."""

    def close(self) -> None:  # noqa: B027 (optional hook, deliberately not abstract)
        """Release processes or files held by the env."""
