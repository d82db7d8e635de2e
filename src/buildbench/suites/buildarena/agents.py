"""BuildArena agents: a chat model playing every workflow role, and the scripted design agents.

``Team`` is the model-backed agent. All roles use the same model and differ
only by system prompt (spec 4.1); each conversation thread (the planner, the
drafter of sub-structure 2, the builder of the refine stage, ...) keeps its
own history, and one budget covers the whole episode. The protocol says who
speaks through ``Observation.state``: ``role``, ``thread`` and ``tools`` (tool
names: library commands and objection tools).

``DesignAgent`` plays a scripted design of ``designs.py`` (reference designs,
negative controls) through the same env, one library call per step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from buildbench.harness import Action, Agent, AgentError, EpisodeContext, Observation, Task
from buildbench.harness.prompts import PROMPT_DIR, PromptFiles
from buildbench.llm import Budget, BudgetedChat, ChatModel, ChatRequest, Message, Tool, ToolCall

from .library import tool_specs
from .library.control import VALID_KEYS_TEXT
from .model import load_catalogue
from .options import BuildArenaOptions

ROLES = ("planner", "drafter", "reviewer", "builder", "guidance", "controller")
"""Workflow roles (spec 4.1: P, D, R, B, G and the Controller C)."""

OBJECTION_TOOLS = ("raise_objection_draft", "raise_objection_build", "raise_objection_refine")
"""Tools that end a branch as failed (Reviewer: draft; Guidance: build, assemble, refine)."""

DEFAULT_TEMPERATURE = 0.5
"""Decoding temperature of the paper's runs (App. E.1, Table 5), the team's own when a run does
not give ``-o temperature``. (Its top-p, 0.7, is the ``top_p`` option's default.)"""

UNANSWERED = "Not executed: only one tool call is run per reply."


#: The replaceable prompt texts (``-o prompts=DIR``): ``common.md`` and one file per role,
#: filled by ``string.Template`` (``$common``, ``$catalogue``, ``$objection``, ``$keys``).
PROMPT_FILES = PromptFiles(Path(str(resources.files("buildbench.suites.buildarena") / "prompts")), dollar=True)


def _read_prompt(name: str) -> str:
    return PROMPT_FILES.read(f"{name}.md")


def role_prompt(role: str, objection: str = "raise_objection_build") -> str:
    """The system prompt of ``role``, with the block catalogue injected (the released code never did, spec 4.4).

    Raises:
        ValueError: For an unknown role.
    """
    return _role_prompt(role, objection, PROMPT_DIR.get())


@functools.cache
def _role_prompt(role: str, objection: str, prompt_dir: Path | None) -> str:
    # Cached per prompt folder: a run with -o prompts=DIR must not get another run's texts.
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
    common = Template(_read_prompt("common")).substitute(catalogue=load_catalogue().describe())
    return Template(_read_prompt(role)).substitute(common=common, objection=objection, keys=VALID_KEYS_TEXT)


def objection_tool(name: str) -> Tool:
    """A ``raise_objection_*`` tool: ends the current branch and marks it failed."""
    stage = name.rsplit("_", 1)[-1]
    return Tool(
        name,
        f"Declare that the {stage} cannot succeed and stop it. Use only when the problem cannot be fixed.",
        {
            "type": "object",
            "properties": {
                "key_failure": {"type": "string", "description": "The one problem that makes it impossible."},
                "objection": {"type": "string", "description": "Why, with the evidence."},
            },
            "required": ["key_failure", "objection"],
            "additionalProperties": False,
        },
    )


@functools.cache
def _tool_table() -> dict[str, Tool]:
    table = {
        s["function"]["name"]: Tool(s["function"]["name"], s["function"]["description"], s["function"]["parameters"])
        for s in tool_specs()
    }
    table.update({name: objection_tool(name) for name in OBJECTION_TOOLS})
    return table


def tools_named(names: list[str] | tuple[str, ...]) -> tuple[Tool, ...]:
    """Tool descriptions by name (library commands and objection tools).

    Raises:
        KeyError: For a name that is neither.
    """
    table = _tool_table()
    return tuple(table[n] for n in names)


@dataclass
class _Thread:
    """One role's conversation: its messages and the tool calls of its last reply still unanswered."""

    system: str
    messages: list[Message] = field(default_factory=list)
    pending: tuple[ToolCall, ...] = ()


class Team(Agent):
    """One chat model playing every role, one conversation per thread.

    Args:
        model: The chat model.
        options: The run's options (default: every option's default). The team reads
            ``temperature`` (unset: the paper's 0.5), ``top_p`` (the paper's 0.7 by default; None
            leaves the server default, e.g. for Anthropic models that refuse temperature and top-p
            together), ``max_tokens`` (cap on each reply), ``history`` (None: whole conversations;
            k: the first message and the last k exchanges of each thread, which keeps 300-turn
            build loops within a context window) and the episode's budget (``max_requests``,
            ``max_input_tokens``, ``max_output_tokens``: all roles together).
    """

    name = "llm"

    def __init__(self, model: ChatModel, options: BuildArenaOptions | None = None) -> None:
        options = options or BuildArenaOptions()
        self.budget = Budget(max_requests=options.max_requests, max_input_tokens=options.max_input_tokens,
                             max_output_tokens=options.max_output_tokens)
        self.model = BudgetedChat(model, self.budget)
        self.temperature = DEFAULT_TEMPERATURE if options.temperature is None else options.temperature
        self.top_p = options.top_p
        self.max_tokens = options.max_tokens
        self.history = options.history
        self.threads: dict[str, _Thread] = {}

    def _thread(self, role: str, key: str, tools: tuple[str, ...]) -> _Thread:
        if key not in self.threads:
            objection = next((t for t in tools if t in OBJECTION_TOOLS), "raise_objection_build")
            self.threads[key] = _Thread(role_prompt(role, objection))
        return self.threads[key]

    def _window(self, messages: list[Message]) -> list[Message]:
        if self.history is None or len(messages) <= 1 + 2 * self.history:
            return messages
        tail = messages[len(messages) - 2 * self.history:]
        # A window must not start with tool answers whose calls were cut off.
        while tail and tail[0].role == "tool":
            tail = tail[1:]
        return [messages[0], *tail]

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        role = str(observation.state.get("role", "builder"))
        tool_names = tuple(observation.state.get("tools", ()))
        thread = self._thread(role, str(observation.state.get("thread", role)), tool_names)
        answers = dict(observation.tool_results)
        thread.messages += [Message.tool(c.id, answers.get(c.id, UNANSWERED)) for c in thread.pending]
        if observation.text or not thread.pending:
            thread.messages.append(Message.user(observation.text or "Continue."))
        tools = tools_named(tool_names)
        request = ChatRequest(
            messages=(Message.system(thread.system), *self._window(thread.messages)),
            tools=tools,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            tool_choice="auto" if tools else None,
            seed=ctx.seed,
            top_p=self.top_p,
        )
        response = await self.model.generate(request)
        usage = response.usage.to_dict()
        if response.error is not None:
            thread.pending = ()
            return Action(error=AgentError.from_api(response.error, after_reply=request.has_reply), usage=usage)
        thread.messages.append(Message.assistant(response.text, response.tool_calls))
        thread.pending = tuple(response.tool_calls)
        return Action(text=response.text or None, tool_calls=list(response.tool_calls), usage=usage,
                      finish_reason=response.finish_reason)


def llm(task: Task, model: ChatModel | None, options: BuildArenaOptions) -> Agent:
    """Factory of the model-backed team (``-o temperature=… -o top_p=… -o max_tokens=… -o max_requests=…``;
    the team always acts by function calling, whatever ``-o tools`` says).

    Raises:
        ValueError: Without a model.
    """
    if model is None:
        raise ValueError("the llm agent needs a model (--model)")
    return Team(model, options)


# -- scripted designs ---------------------------------------------------------------------------


def script_actions(design: Any) -> list[dict[str, Any]]:
    """A design as the data actions the script protocol plays.

    Stage switches are ``{"stage": {...}}``, approvals ``{"approve": id, "final": bool}``, and
    everything else a library call ``{"op", "params"}``. An assembled design builds each saved
    part on its own machine first, then the assembly.
    """
    out: list[dict[str, Any]] = []
    saved = dict(design.saved or {})
    for machine_id, calls in saved.items():
        out.append({"stage": {"kind": "script", "machine_id": machine_id}})
        out += [dict(c) for c in calls]
        out.append({"approve": machine_id, "final": False})
    final = "assembly" if saved else "1"
    kind = "script-assemble" if saved else "script"
    out.append({"stage": {"kind": kind, "machine_id": final, "candidates": list(saved)}})
    out += [dict(c) for c in design.calls]
    out.append({"approve": final, "final": True})
    return out


class DesignAgent(Agent):
    """Plays a scripted design one action per step, then answers ``{"done": True}``.

    Args:
        design: A ``designs.Design``.
        name: Label recorded with episodes.
    """

    plays_script = True

    def __init__(self, design: Any, name: str) -> None:
        self.name = name
        self.actions = script_actions(design)
        self.turn = 0

    async def act(self, observation: Observation, ctx: EpisodeContext) -> Action:
        if self.turn >= len(self.actions):
            return Action(data={"done": True})
        self.turn += 1
        return Action(data=self.actions[self.turn - 1])


def reference(task: Task, model: ChatModel | None, options: BuildArenaOptions) -> Agent:
    """The scripted reference design of ``task`` (``designs.REFERENCE``).

    Raises:
        ValueError: When there is no reference design for the task.
    """
    from . import designs

    make = designs.REFERENCE.get(task.id)
    if make is None:
        raise ValueError(f"no reference design for task {task.id!r} (have: {', '.join(designs.REFERENCE)})")
    return DesignAgent(make(), "reference")


def negative(task: Task, model: ChatModel | None, options: BuildArenaOptions) -> Agent:
    """A negative control that must fail ``task`` (``designs.NEGATIVE``, one per level; ``-o control=NAME``
    picks one); a variant gets its level's control, fitted to it (``designs.control_design``).

    Raises:
        ValueError: When the named control does not exist or targets another level.
    """
    from . import designs, variants

    level = variants.level_of(task.id)
    name = options.control or next(n for n, (task_id, _) in designs.NEGATIVE.items() if task_id == level)
    if name not in designs.NEGATIVE:
        raise ValueError(f"unknown negative control {name!r}; controls: {', '.join(designs.NEGATIVE)}")
    task_id, make = designs.NEGATIVE[name]
    if task_id != level:
        raise ValueError(f"negative control {name!r} targets task {task_id!r}, not {task.id!r}")
    return DesignAgent(make() if level == task.id else designs.control_design(task.id, name), "negative")
