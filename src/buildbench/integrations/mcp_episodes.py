"""Episodes whose model is an agent on the other end of an MCP connection.

An episode played over MCP is a ``buildbench run`` episode in every respect but one: the suite's
model agent (``llm`` by default), its protocol, prompts, budgets, env, scorer and store are the
ones ``buildbench run SUITE --model …`` uses, and only the chat model is replaced by
:class:`BridgeModel`, whose every request becomes one *turn* that the MCP client answers with a
tool call (one of the turn's suite tools) or a text reply. So an MCP agent plays exactly what an
API model plays, and its episodes are stored, scored and reported the same way
(:func:`~buildbench.harness.runner.execute_episode` into the run's :class:`~buildbench.harness.Store`).

A turn shows the client what is new to it: the system prompt when it changed (a protocol with
several roles, such as BuildArena's planner, drafter and builder, asks with several), then the
request's messages after its last assistant message (the task, tool results, feedback, images).
Requests that arrive together (an agent asking in parallel) are answered one at a time, oldest first.

Finishing early answers the current request, and every later one, as a spent budget: the episode
ends the way it ends for an API model that ran out of requests (status ``budget``, scored on what
was built). A client that goes away mid-episode leaves it an ``api_error`` (unscored, as a
failed endpoint is).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema

from buildbench.harness import Episode, Store, Suite, Task, get_suite, mean_metrics
from buildbench.harness.apart import play_apart
from buildbench.harness.errors import BuildbenchError, ConfigError
from buildbench.harness.run_options import with_run_options
from buildbench.harness.runner import RunConfig, Runner, execute_episode, score_isolated, select_tasks
from buildbench.harness.user_agent import resolve_agent
from buildbench.llm import ChatModel
from buildbench.llm.parts import ImagePart
from buildbench.llm.types import ApiError, ChatRequest, ChatResponse, Message, Tool, ToolCall, Usage

__all__ = ["BridgeModel", "EpisodeSession", "McpRun", "TurnView"]

#: What a turn shows, in order: text blocks and PNG images.
Block = tuple[Literal["text"], str] | tuple[Literal["image"], bytes]


@dataclass
class _Pending:
    request: ChatRequest
    answer: asyncio.Future[ChatResponse]


class BridgeModel(ChatModel):
    """A chat model answered from outside: each ``generate`` waits for :meth:`answer`.

    Attributes:
        pending: Requests not answered yet, oldest first.
        arrived: Set whenever a request arrives (cleared by the reader).
    """

    provider = "mcp"

    def __init__(self, model: str) -> None:
        self.model = model
        self.pending: deque[_Pending] = deque()
        self.arrived = asyncio.Event()
        self._closing: ApiError | None = None

    async def generate(self, request: ChatRequest) -> ChatResponse:
        if self._closing is not None:
            return ChatResponse.failure(self._closing, self.model)
        entry = _Pending(request, asyncio.get_running_loop().create_future())
        self.pending.append(entry)
        self.arrived.set()
        return await entry.answer

    def answer(self, text: str = "", tool_calls: Sequence[ToolCall] = ()) -> None:
        """Answer the oldest pending request (an agent's reply: one request, no tokens counted)."""
        entry = self.pending.popleft()
        entry.answer.set_result(ChatResponse(text=text, tool_calls=tuple(tool_calls), usage=Usage(requests=1),
                                             finish_reason="tool_calls" if tool_calls else "stop", model=self.model))

    def close(self, error: ApiError) -> None:
        """Answer every pending and later request with ``error``."""
        self._closing = error
        while self.pending:
            entry = self.pending.popleft()
            if not entry.answer.done():
                entry.answer.set_result(ChatResponse.failure(error, self.model))


@dataclass(frozen=True)
class TurnView:
    """What the client is shown: a turn to answer, or the episode's end.

    Attributes:
        blocks: Text and images, in order.
        tools: The suite tools the turn offers (empty: answer with text).
        ended: The episode is over (``result`` holds its record summary).
        result: Task, sample, status, error and metrics of an ended episode.
    """

    blocks: tuple[Block, ...]
    tools: tuple[Tool, ...] = ()
    ended: bool = False
    result: dict[str, Any] = field(default_factory=dict)


class McpRun(Runner):
    """The run MCP episodes go into: ``config``'s suite, tasks and checked options, and its store.

    A run folder that already holds a run with the same settings is continued (an agent app starts
    its server afresh each time); one with other settings is refused, as ``buildbench run --resume``
    refuses it. Each task gets ``config.samples`` episodes; a task whose episodes are all stored
    (or in play) cannot be started again, so no agent can retry a task until it passes.

    Open it with :meth:`open` in the thread that serves (the store is a SQLite connection).

    Args:
        config: The run's settings (``model`` is what the run records as the model: the agent app).
        run_dir: The run's folder.
        only: Serve only these task ids of the split (all when empty).
    """

    def __init__(self, config: RunConfig, run_dir: str | Path, only: Sequence[str] = ()) -> None:
        super().__init__(config, run_dir, resume=True)
        self.suite: Suite = get_suite(config.suite)
        self.only = tuple(only)
        self.tasks: list[Task] = []
        self._store: Store | None = None
        self._taken: set[tuple[str, int]] = set()
        #: Where the waits for episode processes run (one thread per episode in play).
        self.threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="buildbench-mcp-episode")

    def check(self) -> None:
        """Everything ``buildbench run`` refuses before its first episode (ConfigError, one line)."""
        suite = self.suite
        spec = resolve_agent(suite, self.config.agent, has_model=True)
        if not spec.needs_model:
            models = ", ".join(n for n, a in suite.agents.items() if a.needs_model) or "none"
            raise ConfigError(f"agent {spec.name!r} of {suite.name} takes no model, so nothing is left for an MCP "
                              f"client to do; model agents: {models}")
        suite.protocol(self.config.protocol)
        options = self.checked_options(suite, spec.name)  # as `buildbench run` checks them
        self.tasks = select_tasks(suite, self.config)
        if self.only:
            known = {t.id for t in self.tasks}
            missing = [t for t in self.only if t not in known]
            if missing:
                raise ConfigError(f"--task {missing[0]}: no such task in {suite.name} split {self.config.split!r}")
            self.tasks = [t for t in self.tasks if t.id in self.only]
        if not self.tasks:
            raise ConfigError(f"{suite.name}: no tasks to serve")
        self.check_protocol(suite, self.tasks[0], options)

    def open(self) -> McpRun:
        """Check the settings and open (or continue) the store."""
        if self._store is None:
            self.check()
            self._store = self._open_store(len(self.tasks))
        return self

    @property
    def store(self) -> Store:
        if self._store is None:
            raise RuntimeError("McpRun.open() first")
        return self._store

    def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)
        if self._store is not None:
            self._store.close()
            self._store = None

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        shown = ", ".join(t.id for t in self.tasks[:5]) + (", …" if len(self.tasks) > 5 else "")
        raise ConfigError(f"no task {_clipped(task_id)} in this server's tasks ({shown})")

    def stored(self, task_id: str) -> int:
        return sum(1 for t, _ in self.store.finished() if t == task_id)

    def take(self, task_id: str | None) -> tuple[Task, int]:
        """The task (default: the first with an episode left) and the sample to play now."""
        done = self.store.finished() | self._taken
        tasks = [self.task(task_id)] if task_id else self.tasks
        for task in tasks:
            for sample in range(self.config.samples):
                if (task.id, sample) not in done:
                    self._taken.add((task.id, sample))
                    return task, sample
        if task_id:
            raise ConfigError(f"task {task_id!r} already has its {self.config.samples} episode(s) stored or in play "
                              f"in {self.run_dir}")
        raise ConfigError(f"every task has its {self.config.samples} episode(s) stored or in play in {self.run_dir}")

    def store_episode(self, episode: Episode) -> None:
        """Commit a finished episode and refresh the run's summary, as the runner does."""
        self._taken.discard((episode.task_id, episode.sample))
        if not self.store.add_episode(episode):
            raise BuildbenchError(f"task {episode.task_id} sample {episode.sample} was stored meanwhile by another "
                                  f"process serving {self.run_dir}; this episode was not stored (serve a run folder "
                                  "from one server at a time)")
        episodes = with_run_options(self.store.episodes(), self.config.to_dict())  # as the runner summarises
        self.store.write_summary((self.suite.summarize or mean_metrics)(episodes))


class EpisodeSession:
    """One MCP session's episodes, one at a time (sessions share nothing but the run).

    Args:
        run: The open run.
        client: The client's name and version, kept in each episode's metadata.
    """

    def __init__(self, run: McpRun, client: dict[str, str] | None = None) -> None:
        self.run = run
        self.client = dict(client or {})
        self.model: BridgeModel | None = None
        self._play: asyncio.Task[Episode] | None = None
        self._shown_system: str | None = None
        self._shown_tools: tuple[Tool, ...] | None = None
        self._last: TurnView | None = None

    @property
    def playing(self) -> bool:
        return self._play is not None and not self._play.done()

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The suite tools of the turn waiting for an answer (none between turns)."""
        if self.model is None or not self.model.pending or not self.playing:
            return ()
        return self.model.pending[0].request.tools

    async def start(self, task_id: str | None) -> TurnView:
        """Start an episode on ``task_id`` (default: the next task with an episode left)."""
        if self.playing:
            raise ConfigError("an episode is already in play in this session: answer its turn, or call finish")
        task, sample = self.run.take(task_id)
        config = self.run.config
        self.model = BridgeModel(config.model or "mcp")
        self._shown_system, self._shown_tools = None, None
        self._play = asyncio.create_task(self._episode(config, task, sample, self.model))
        return await self._next()

    async def _episode(self, config: RunConfig, task: Task, sample: int, model: BridgeModel) -> Episode:
        async def score(task: Task, outcome: dict[str, Any]) -> dict[str, float]:
            return await asyncio.to_thread(score_isolated, config.suite, task, outcome)

        try:
            # As `buildbench run` plays a model-backed episode: env, protocol and agent in a process of
            # their own; the model's requests and the scoring are answered here.
            episode = await play_apart(execute_episode, config, task, sample, self.run.store.artifact_root, model,
                                       score, self.run.threads)
        finally:
            model.close(ApiError("api_error", "the episode ended"))
        if self.client:
            episode.metadata["mcp_client"] = self.client
        self.run.store_episode(episode)
        return episode

    def observe(self) -> TurnView:
        """The current turn again, in full (system prompt included), or the last episode's end."""
        if self.playing and self.model is not None and self.model.pending:
            self._shown_system, self._shown_tools = None, None
            return self._turn(self.model.pending[0].request)
        if self._last is not None and self._last.ended:
            return self._last
        return TurnView((("text", "No episode in play: start one with start_episode (tasks are listed as "
                                  "resources)."),))

    async def reply(self, text: str) -> TurnView:
        """Answer the current turn with text."""
        self._waiting().answer(text)
        return await self._next()

    async def call(self, name: str, arguments: dict[str, Any]) -> TurnView:
        """Answer the current turn with one call of its tool ``name``.

        Raises:
            ConfigError: The turn offers no such tool, or ``arguments`` do not fit its schema
                (nothing is sent; the turn still waits).
        """
        model = self._waiting()
        offered = {t.name: t for t in model.pending[0].request.tools}
        tool = offered.get(name)
        if tool is None:
            names = ", ".join(offered) or "none (answer with submit)"
            raise ConfigError(f"tool {_clipped(name)} is not offered in this turn; its tools: {names}")
        check_arguments(tool, arguments)
        calls = sum(1 for m in model.pending[0].request.messages for _ in m.tool_calls)
        model.answer("", [ToolCall.parse(f"mcp_{calls}", name, arguments)])
        return await self._next()

    async def finish(self) -> TurnView:
        """End the episode now: it is scored on what was built (status ``budget``)."""
        if not self.playing or self.model is None:
            raise ConfigError("no episode in play to finish")
        self.model.close(ApiError("budget", "the agent ended the episode (MCP finish)"))
        return await self._next()

    async def close(self) -> None:
        """The client went away: an episode in play ends unscored (``api_error``) and is stored."""
        if self.model is not None:
            self.model.close(ApiError("api_error", "the MCP client disconnected before the episode ended"))
        if self._play is not None:
            await asyncio.gather(self._play, return_exceptions=True)

    def _waiting(self) -> BridgeModel:
        if not self.playing or self.model is None or not self.model.pending:
            raise ConfigError("no turn is waiting for an answer: start an episode with start_episode")
        return self.model

    async def _next(self) -> TurnView:
        """Wait for the next request or the episode's end, and show it."""
        model, play = self.model, self._play
        assert model is not None and play is not None
        while not model.pending and not play.done():
            model.arrived.clear()
            waiter = asyncio.ensure_future(model.arrived.wait())
            try:
                await asyncio.wait({play, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        if model.pending and not play.done():
            view = self._turn(model.pending[0].request)
        elif play.exception() is not None:  # the harness failed (storing it): never shown as an end
            exc = play.exception()
            raise BuildbenchError(f"the episode could not be stored: {type(exc).__name__}: {exc}")
        else:
            view = _ended(play.result())
        self._last = view
        return view

    def _turn(self, request: ChatRequest) -> TurnView:
        messages = list(request.messages)
        blocks: list[Block] = []
        system = messages[0].text if messages and messages[0].role == "system" else ""
        if system and system != self._shown_system:
            blocks.append(("text", f"[system prompt]\n{system}"))
            self._shown_system = system
        blocks += _new_messages(messages)
        tools = request.tools
        if tools and tools != self._shown_tools:
            # Written out as well as listed: an app that never refreshes its tool list still sees them.
            listed = "\n".join(f"- {t.name}: {t.description}\n  arguments (JSON schema): "
                               f"{json.dumps(t.parameters, sort_keys=True)}" for t in tools)
            blocks.append(("text", f"[tools of this turn; call one directly, or through `call`]\n{listed}"))
        self._shown_tools = tools
        if tools:
            ask = (f"Answer with one call of this turn's tools ({', '.join(t.name for t in tools)}), or with "
                   "`submit` to reply in text.")
        else:
            ask = "Answer with `submit`: your reply as text."
        blocks.append(("text", ask))
        return TurnView(tuple(blocks), tools)


def _new_messages(messages: list[Message]) -> list[Block]:
    """The request's messages after its last assistant message (all but the system prompt if none)."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    called = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[Block] = []
    for message in messages[last + 1:]:
        if message.role == "system":
            continue
        text = message.text
        if message.role == "tool":
            text = f"[result of {called.get(message.tool_call_id or '', 'the call')}]\n{text}"
        if text:
            out.append(("text", text))
        out += [("image", part.png) for part in message.parts if isinstance(part, ImagePart)]
    return out


def _ended(episode: Episode) -> TurnView:
    result = {"task_id": episode.task_id, "sample": episode.sample, "status": episode.status,
              "error": episode.error, "metrics": episode.metrics,
              "steps": len(episode.steps), "duration_s": round(episode.duration_s, 3)}
    lines = [f"The episode on {episode.task_id} (sample {episode.sample}) ended: {episode.status}."]
    if episode.error:
        lines.append(f"Reason: {episode.error.splitlines()[0][:300]}")
    if episode.metrics:
        lines.append("Metrics: " + json.dumps(episode.metrics, sort_keys=True, default=str))
    lines.append("It is stored with the run; start the next one with start_episode.")
    return TurnView((("text", "\n".join(lines)),), ended=True, result=result)


def _clipped(value: str) -> str:
    """A client's text quoted for an error line, clipped: a 2 MB argument must not come back as a
    2 MB error line."""
    return repr(value) if len(value) <= 100 else f"{value[:100]!r}… ({len(value)} characters)"


def check_arguments(tool: Tool, arguments: Any) -> None:
    """Refuse ``arguments`` that do not fit ``tool``'s JSON schema (ConfigError naming the argument)."""
    if not isinstance(arguments, dict):
        raise ConfigError(f"tool {tool.name}: arguments must be a JSON object, got {type(arguments).__name__}")
    try:
        jsonschema.validate(arguments, tool.parameters)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        said = exc.message if len(exc.message) <= 300 else f"{exc.message[:300]}… ({len(exc.message)} characters)"
        raise ConfigError(f"tool {tool.name}: argument {where or '(the object)'}: {said}") from None
    except jsonschema.SchemaError as exc:  # the suite's schema itself: its tool takes the call as it is
        del exc


def default_run_dir(config: RunConfig) -> Path:
    """``runs/SUITE-AGENT-PROTOCOL-MODEL-sSEED`` (the model label made a file name: ``mcp_claude-code``),
    beside the folders ``buildbench run`` makes."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", config.model or "mcp")
    return Path("runs") / f"{config.suite}-{config.agent}-{config.protocol}-{label}-s{config.seed}"

