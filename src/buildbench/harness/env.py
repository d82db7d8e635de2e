"""The environment contract: Gymnasium-shaped ``reset``/``step`` over construction tasks.

``reset`` and ``step`` return NamedTuples, so RL code can unpack them like Gymnasium's
tuples (``obs, info = env.reset(task)``; ``obs, reward, terminated, truncated, info =
env.step(action)``) while harness code reads fields by name.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypeVar, get_args

import numpy as np

from buildbench.llm.types import valid_text

from .outcome import OutcomeRecord
from .record import Record
from .task import Task

if TYPE_CHECKING:
    from buildbench.llm import ApiError, Tool, ToolCall

#: Why an agent produced no action: the model client's kinds (``buildbench.llm.ApiError``)
#: and ``agent`` for an agent that has nothing left to do (a scripted agent out of actions).
AgentErrorKind = Literal["api_error", "timeout", "budget", "replay_miss", "context_length", "agent"]
_AGENT_ERROR_KINDS: tuple[str, ...] = get_args(AgentErrorKind)


@dataclass(frozen=True)
class AgentError:
    """Why the agent could not act, typed from the model client to the store.

    Attributes:
        kind: One of ``AgentErrorKind``; ``budget`` and ``context_length`` are the agent's own
            doing (its episode is scored), every other kind leaves the episode unscored.
        message: One line for a person.
    """

    kind: AgentErrorKind
    message: str

    def __post_init__(self) -> None:
        if self.kind not in _AGENT_ERROR_KINDS:
            raise ValueError(f"AgentError.kind: expected one of {_AGENT_ERROR_KINDS}, got {self.kind!r}")

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}

    @classmethod
    def from_api(cls, error: ApiError, *, after_reply: bool = False) -> AgentError:
        """The agent error for a failed model call; ``after_reply``: its request carried the
        agent's own earlier output (its replies in the conversation, or a prompt built from them).

        A request over the model's context window is the agent's doing after a reply (its output
        and the feedback on it grew the request: ``context_length``, scored like a spent budget).
        Before any, it is the task's prompt against the model the run chose, nothing the agent
        did: an unscored ``api_error``.
        """
        if error.kind == "context_length" and not after_reply:
            return cls("api_error", f"{error.message} (the task's first prompt, before any reply of the agent)")
        return cls(error.kind, error.message)


@dataclass
class Observation:
    """What the agent sees after a reset or a step.

    Attributes:
        text: Instructions or feedback, as the model will read it.
        images: RGBA/RGB uint8 arrays (H, W, C) or PNG bytes, in the order they are described.
        tool_results: For tool-call actions, ``(tool_call_id, text)`` for each call answered.
        state: Structured, JSON-serialisable state for scripted agents and logs, written from
            the env's :attr:`Env.state_type` record.
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
        error: Set when the agent could not produce an action; protocols end the episode
            on it (``EpisodeContext.fail``) and the runner reads its kind.
        usage: Tokens/requests spent producing this action, as a plain dict.
        finish_reason: Why the model stopped, when it says (``length``: cut at the token limit,
            ``content_filter``, ``refusal``…); the step log keeps any but ``stop``/``tool_calls``,
            so a cut or filtered reply is named where it failed.
    """

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    data: Any = None
    error: AgentError | None = None
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None

    def __post_init__(self) -> None:
        # Whichever bridge the text came by (our client, Inspect, verifiers, MCP, Gymnasium), a
        # lone surrogate in it would fail the first UTF-8 write: the env's file, the store.
        if isinstance(self.text, str):
            self.text = valid_text(self.text)


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


@dataclass(frozen=True)
class Control:
    """A named operation a protocol may ask of an env besides ``step``: open a stage, set a
    checkpoint, evaluate, name the final design.

    Envs declare controls by decorating methods with :func:`control`; protocols call those
    methods through ``EpisodeContext.control(env.method, ...)``, typed end to end, which logs each
    call in the trajectory as a control step. ``Env.controls`` lists them by name for callers that
    only have a name (a Gymnasium or Inspect text agent's ``{"control": NAME}``, Gymnasium's info). Arguments are
    JSON values, so a logged control can be replayed.

    Attributes:
        fn: The operation (a bound method of the env).
        cpu_bound: Run it in a worker thread (a simulation, a render) so the event loop keeps
            serving other episodes' model calls.
        doc: One line saying what it does.
    """

    fn: Callable[..., Any]
    cpu_bound: bool = False
    doc: str = ""


@dataclass(frozen=True)
class ControlMark:
    """What :func:`control` records on a method: its control name, where it runs, its doc line."""

    name: str
    cpu_bound: bool
    doc: str


_MARK = "__buildbench_control__"
F = TypeVar("F", bound=Callable[..., Any])


def control(*, name: str = "", cpu_bound: bool = False, doc: str = "") -> Callable[[F], F]:
    """Declare an env method a control (see :class:`Control`); the method keeps its signature.

    Args:
        name: The control's name in logs and for text agents (default: the method's name).
        cpu_bound: The context runs it in a worker thread.
        doc: One line for listings (default: the docstring's first line).
    """

    def mark(fn: F) -> F:
        line = doc or (fn.__doc__ or "").strip().split("\n")[0]
        setattr(fn, _MARK, ControlMark(name or fn.__name__, cpu_bound, line))
        return fn

    return mark


def control_mark(fn: Callable[..., Any]) -> ControlMark | None:
    """The :func:`control` mark of ``fn`` (a bound method reads its function's), or None."""
    mark = getattr(fn, _MARK, None)
    return mark if isinstance(mark, ControlMark) else None


@functools.cache
def _marked(cls: type) -> tuple[tuple[str, ControlMark], ...]:
    """``(attribute, mark)`` of every control method of ``cls``, its bases' included."""
    found: dict[str, tuple[str, ControlMark]] = {}
    for klass in reversed(cls.__mro__):
        for attr, value in vars(klass).items():
            mark = control_mark(value) if callable(value) else None
            if mark is not None:
                found[mark.name] = (attr, mark)
    return tuple(found.values())


class Env(ABC):
    """A construction environment for one task at a time.

    Cheap to construct; all per-episode state is created in ``reset``. Same task + seed +
    actions (+ control calls) → same observations and outcome.

    Subclasses describe their spaces in words with ``observation_description`` /
    ``action_description`` (units included; for people and wrappers; not Gymnasium ``Space``
    objects, which ``buildbench.gym`` builds) and offer protocols their
    non-step operations through :attr:`controls`.
    """

    #: What an observation holds (text, images, ``state`` keys and their units); "" when undocumented.
    observation_description: str = ""
    #: What an action may be (text format, tools, ``data`` shape); "" when undocumented.
    action_description: str = ""
    #: The record the env's ``Observation.state`` dicts are written from (``to_dict``), fields
    #: with units; None when the env keeps no structured state. ``state_type.json_schema()`` describes it.
    state_type: ClassVar[type[Record] | None] = None
    #: The record a scripted agent's ``Action.data`` is read as (``from_data``: bad input is one
    #: line naming the field); None when the env takes no structured data.
    action_type: ClassVar[type[Record] | None] = None

    @property
    def tools(self) -> list[Tool]:
        """Tools offered now to agents that act by function calling (empty when text-only).

        A property so that each env instance answers for its own stage; subclasses override it
        or assign ``self.tools`` in ``__init__``/``reset``.
        """
        return list(getattr(self, "_env_tools", ()))

    @tools.setter
    def tools(self, value: list[Tool]) -> None:
        self._env_tools = list(value)

    @property
    def controls(self) -> Mapping[str, Control]:
        """The env's :func:`control` methods by name, bound to this env."""
        return {mark.name: Control(getattr(self, attr), mark.cpu_bound, mark.doc)
                for attr, mark in _marked(type(self))}

    @abstractmethod
    def reset(self, task: Task, *, seed: int | None = None) -> ResetResult:
        """Start an episode on ``task``.

        ``seed`` (None means 0) seeds every random choice of the episode (``numpy.random.default_rng``
        with the seed in its key); the same task, seed and actions give the same observations,
        rewards and outcome byte for byte.
        """

    @abstractmethod
    def step(self, action: Action) -> StepResult:
        """Apply one action. Bad actions give feedback and leave the built state intact."""

    @abstractmethod
    def outcome(self) -> OutcomeRecord | dict[str, Any]:
        """The product of the episode so far (what gets scored): the suite's outcome record
        (subclasses narrow the type to theirs), which the store keeps as ``to_dict()``."""

    def close(self) -> None:  # noqa: B027 (optional hook, deliberately not abstract)
        """Release processes or files held by the env."""
