"""Agents from a user's file: ``--agent path/to/file.py:factory`` or ``--agent package.module:factory``.

``factory(task, model, options)`` returns the agent for one episode: an :class:`Agent`, or any
object with an ``act(observation, ctx)`` method (sync or async) returning an :class:`Action`.
``model`` is the run's ``--model`` (a :class:`~buildbench.llm.ChatModel`, recorded or replayed
like any other) or None without one; ``options`` are the run's ``-o`` options. See
docs/agents.md for the protocol. The file is imported where its episodes are played (a process
of their own, `buildbench.harness.apart`; the ``model`` there passes each call to the harness):
it is the user's own code, trusted like a provider SDK.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from .agent import Agent
from .context import EpisodeContext
from .env import Action, Observation
from .errors import ConfigError
from .suite import AgentSpec, Suite, SuiteOptions
from .task import Task

if TYPE_CHECKING:
    from buildbench.llm import ChatModel


def is_user_agent(name: str) -> bool:
    """Whether ``--agent`` names a factory in a file or module rather than a suite's agent."""
    return ":" in name


class _Adapter(Agent):
    """Gives an object with a sync or async ``act`` the Agent interface, checking what it returns."""

    def __init__(self, inner: Any, name: str) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", "") or name)

    def __getattr__(self, name: str) -> Any:
        # Protocols read optional flags off agents (``plays_script``); the wrapped object has them.
        return getattr(self.inner, name)

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        out = self.inner.act(observation, ctx)
        if inspect.isawaitable(out):
            out = await out
        if not isinstance(out, Action):
            raise TypeError(f"agent {self.name!r}: act returned {type(out).__name__}; expected an Action")
        return out


def user_agent_spec(target: str, *, has_model: bool) -> AgentSpec:
    """The agent spec of ``target``; ConfigError when it cannot be loaded.

    User agents run on the event loop (``kind="io"``), so they can overlap model calls and
    need not be picklable; the suite's scorer still runs in the worker pool.
    """
    from buildbench.llm import LLMConfigError
    from buildbench.llm.python_model import load_callable

    try:
        factory = load_callable(target, what="agent factory")
    except LLMConfigError as exc:
        raise ConfigError(str(exc)) from None

    def make(task: Task, model: ChatModel | None, options: SuiteOptions) -> Agent:
        agent = factory(task, model, options)
        if not callable(getattr(agent, "act", None)):
            raise TypeError(f"agent factory {target!r} returned {type(agent).__name__}, which has no act method")
        return agent if isinstance(agent, Agent) else _Adapter(agent, target)

    return AgentSpec(target, make, f"user agent from {target}", needs_model=has_model, kind="io")


def resolve_agent(suite: Suite, name: str, *, has_model: bool) -> AgentSpec:
    """The suite's agent ``name``, an adapter the suite declares for the name's prefix
    (``PREFIX:TARGET``, ``suite.extra["agent_adapters"][PREFIX](TARGET) -> AgentSpec``, e.g.
    DreamHouse's ``released:file.py:generate``), or the user agent it names (``file.py:factory``)."""
    prefix, sep, target = name.partition(":")
    adapters = suite.extra.get("agent_adapters") or {}
    if sep and prefix in adapters:
        spec: AgentSpec = adapters[prefix](target)
        return spec
    if is_user_agent(name):
        return user_agent_spec(name, has_model=has_model)
    return suite.agent(name)
