"""Any suite's Env as a multi-turn environment of ``verifiers`` (William Brown's library, 0.1.10)::

    from openai import AsyncOpenAI
    from buildbench.integrations.verifiers import load_environment

    env = load_environment("example", split="demo", max_turns=3)
    results = env.evaluate_sync(AsyncOpenAI(base_url=URL, api_key=KEY), model=MODEL)

Dataset:
    One row per task of ``split`` (the first ``limit``): ``prompt`` is the env's reset observation
    as chat messages (after a ``system_prompt`` message, when one is given); ``info`` holds the
    task id, the episode seed (the one ``buildbench run --seed SEED`` gives the task's first
    sample) and the env's tools as JSON text; ``task`` is the suite's name.
Rollout:
    The suite's env is made and reset when the rollout starts; its live first observation
    replaces the row's (a reset may name files of its own episode). The model is offered the
    env's tools, again after every step (an env's tools may change with its stage). A reply is
    one action: its tool calls, else its text (model text, a ``{"tool_calls": …}`` object or a
    ``{"control": …}`` call, as in :mod:`buildbench.gym`). The env's answer comes back as a tool
    message per call and a user message for feedback text and images. The rollout ends when the
    env terminates or truncates it, or after ``max_turns`` replies; ``trajectory[i]["reward"]``
    is the env's reward for reply i.
Reward:
    The rubric's ``env_reward`` (the sum of the env's step rewards) plus ``verifier_score``
    (metric ``metric`` of the suite's verifier on the episode's outcome; see
    :data:`DEFAULT_METRICS`). A rollout that could not be played or scored (the model endpoint,
    the env or the verifier failed, or the verifier left the metric out) gets the reward NaN and
    ``error`` set (:class:`UnscorableEpisode` for the verifier): an error is never a score, so
    means are taken over the outputs without ``error``, as buildbench's own summaries do.

The suite's protocol is not played, only its env, as with :mod:`buildbench.gym`: what a
protocol does around the env's loop (SceneReVis's evaluation-judge record, a refine loop's
step count) is up to ``max_turns`` and the model's control calls.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from typing import Any, cast

import verifiers as vf
from datasets import Dataset

from buildbench.harness import Env, Observation, StepResult, Task, episode_seed
from buildbench.harness.errors import ConfigError
from buildbench.harness.runner import stored_outcome
from buildbench.llm import Message, ToolCall
from buildbench.llm.openai_client import to_openai_messages, to_openai_tools
from buildbench.llm.types import valid_text

from .rollout import EpisodePlay, SuiteSetup, metric_value, observation_messages
from .text import plain_json

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_METRICS", "EpisodeError", "SuiteEnv", "UnscorableEpisode",
           "load_environment"]

#: Model replies per rollout unless ``max_turns`` says otherwise (the env's own budget may end it sooner).
DEFAULT_MAX_TURNS = 20
#: The verifier metric each bundled suite adds to the reward: its pass/score signal (a plugin
#: suite names its own with ``metric=``). SceneReVis's is a percentage (100: no object out).
DEFAULT_METRICS = {"example": "passed", "dreamhouse": "structural_pass", "buildarena": "passed",
                   "bimedit": "final", "legoeval": "holistic_correct", "scenerevis": "valid_placement"}

# What a rollout keeps in its state between turns (objects, never serialised).
_EPISODE = "buildbench_episode"
_REWARDS = "buildbench_rewards"
_OUTCOME = "buildbench_outcome"


class EpisodeError(vf.Error):
    """The suite's env failed (reset, step or outcome raised): the rollout has no score."""


class UnscorableEpisode(vf.Error):
    """The suite's verifier could not score the outcome, or left the reward's metric out."""


def _one_line(exc: BaseException) -> str:
    return (f"{type(exc).__name__}: {exc}".splitlines() or [type(exc).__name__])[0]


def _chat(messages: list[Message]) -> list[dict[str, Any]]:
    return to_openai_messages(tuple(messages))


def _tools(env: Env) -> list[dict[str, Any]] | None:
    tools = env.tools
    return plain_json(to_openai_tools(tuple(tools))) if tools else None


def _writable(reply: dict[str, Any]) -> None:
    """Replace each lone surrogate in the model's reply by U+FFFD, in place: verifiers sends this
    very message again with the next request, which one would fail (a UnicodeEncodeError, so an
    unscored rollout the model could choose by writing ``"\\ud800"``)."""
    content = reply.get("content")
    if isinstance(content, str):
        reply["content"] = valid_text(content)
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            part["text"] = valid_text(part["text"])
    for call in reply.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                if isinstance(function.get(key), str):
                    function[key] = valid_text(function[key])


def _unscored(state: vf.State) -> bool:
    """Whether the rollout ended on an error that is no score: any but verifiers' refusal of a reply
    with no content and no tool call, which the model chose (the ``EmptyModelResponseError`` of an
    endpoint that sent no response or no choices says so in other words, and is unscored)."""
    error = state.get("error")
    return error is not None and not (isinstance(error, vf.EmptyModelResponseError) and "no content" in str(error))


def _tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    """Our tool calls for an assistant message in chat-completions form."""
    calls = []
    for k, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        calls.append(ToolCall.parse(str(call.get("id") or f"call_{k}"), str(function.get("name") or ""),
                                    function.get("arguments") or ""))
    return calls


class SuiteEnv(vf.MultiTurnEnv):
    """A verifiers multi-turn environment playing the env of one suite (see the module docstring).

    Args:
        setup: The suite, its tasks and options.
        tasks: The tasks that become dataset rows.
        metric: The verifier metric added to the env rewards.
        max_turns: Model replies per rollout at most.
        **kwargs: Passed to ``verifiers.MultiTurnEnv`` (``system_prompt``, ``sampling_args``…).
    """

    def __init__(self, setup: SuiteSetup, tasks: list[Task], *, metric: str, max_turns: int = DEFAULT_MAX_TURNS,
                 **kwargs: Any) -> None:
        self.setup = setup
        self.metric = metric
        self.turn_limit = max_turns
        self._tasks = {task.id: task for task in tasks}
        rubric = EpisodeRubric(setup, metric)
        kwargs.setdefault("env_id", __name__)  # what verifiers' load_environment imports
        # max_turns=-1: the base class would stop before the last reply reaches the env; the
        # limit is applied after each step instead (env_response). Rows are built on first use.
        super().__init__(dataset=lambda: self.rows(tasks), eval_dataset=lambda: self.rows(tasks), rubric=rubric,
                         max_turns=-1, **kwargs)

    def rows(self, tasks: list[Task]) -> Dataset:
        """One dataset row per task: the reset observation as chat messages, and its info."""
        return Dataset.from_list([self._row(task) for task in tasks])

    def _row(self, task: Task) -> dict[str, Any]:
        seed = episode_seed(self.setup.seed, task.id, 0)
        env = self.setup.make_env(task)
        try:
            with self.setup.prompts():
                observation = EpisodePlay(env, task, seed).reset()
            tools = _tools(env) or []
        finally:
            env.close()
        return {"prompt": _chat(observation_messages(observation)), "answer": "", "task": self.setup.suite.name,
                "info": {"task_id": task.id, "episode_seed": seed, "tools": json.dumps(tools)}}

    def _episode(self, state: vf.State) -> EpisodePlay:
        return cast(EpisodePlay, state[_EPISODE])

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Env and verifier work is CPU-bound: off the event loop every rollout shares."""

        def call() -> Any:
            with self.setup.prompts():
                return fn(*args)

        return await asyncio.to_thread(call)

    async def setup_state(self, state: vf.State) -> vf.State:
        info = state["info"]
        task = self._tasks.get(str(info.get("task_id")))
        if task is None:
            raise EpisodeError(f"{self.setup.suite.name}: no task {info.get('task_id')!r} in this environment")
        try:
            env = await self._in_thread(self.setup.make_env, task)
            episode = EpisodePlay(env, task, int(info["episode_seed"]))
            state[_EPISODE] = episode
            observation: Observation = await self._in_thread(episode.reset)
        except Exception as exc:
            raise EpisodeError(f"{self.setup.suite.name} task {task.id}: the env failed at reset: {_one_line(exc)}") from exc
        system = [m for m in state["prompt"] if m.get("role") == "system"]
        state["prompt"] = system + _chat(observation_messages(observation))
        state["oai_tools"] = _tools(env)
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        episode = self._episode(state)
        reply = cast(dict[str, Any], messages[-1])
        _writable(reply)
        calls = _tool_calls(reply)
        try:
            result: StepResult = await self._in_thread(episode.reply, str(reply.get("content") or ""), calls)
        except Exception as exc:
            raise EpisodeError(f"{self.setup.suite.name} task {episode.task.id}, reply {episode.turns}: "
                               f"the env failed: {_one_line(exc)}") from exc
        state["trajectory"][-1]["reward"] = result.reward
        state["trajectory"][-1]["extras"]["env_info"] = plain_json(result.info)
        answer = _chat(observation_messages(result.observation, calls))
        if episode.ended or episode.turns >= self.turn_limit:
            state["final_env_response"] = answer
        else:
            state["oai_tools"] = _tools(episode.env)
        return answer

    @vf.cleanup
    async def close_episode(self, state: vf.State) -> None:
        """Keep the env's outcome for the rubric, then close the env."""
        episode = state.pop(_EPISODE, None)
        if episode is None:
            return
        try:
            if not _unscored(state):
                state[_OUTCOME] = plain_json(stored_outcome(await self._in_thread(episode.env.outcome)))
        except Exception as exc:  # noqa: BLE001 - an env that cannot say what it built has no score
            error = EpisodeError(f"{self.setup.suite.name} task {episode.task.id}: no outcome: {_one_line(exc)}")
            error.__cause__ = exc
            state["error"] = error
        finally:
            state[_REWARDS] = list(episode.rewards)
            await asyncio.to_thread(episode.env.close)


class EpisodeRubric(vf.Rubric):
    """``env_reward`` + ``verifier_score`` (see the module docstring); NaN for an unscored rollout,
    whose advantage in a group is 0 (no gradient) and which the group's mean leaves out."""

    def __init__(self, setup: SuiteSetup, metric: str) -> None:
        super().__init__()
        self.setup = setup
        self.metric = metric
        self.add_reward_func(self.env_reward)
        self.add_reward_func(self.verifier_score)

    async def env_reward(self, state: vf.State) -> float:
        """The sum of the env's rewards for the replies of the rollout."""
        rewards = state.get(_REWARDS)
        if _unscored(state) or rewards is None:
            return math.nan
        return math.fsum(rewards)

    async def verifier_score(self, state: vf.State) -> float:
        """The metric of the suite's verifier on the episode's outcome."""
        outcome = state.get(_OUTCOME)
        if _unscored(state) or outcome is None:
            return math.nan
        task = self.setup.task(str(state["info"]["task_id"]), where=f"{self.setup.suite.name} rubric")
        try:
            metrics = await asyncio.to_thread(self.setup.suite.verify, task, outcome)
            value = metric_value(metrics, self.metric)
            if value is None:
                raise KeyError(f"the verifier reported no number for {self.metric!r}")
        except Exception as exc:  # noqa: BLE001 - an unscorable episode is an error, never a number
            error = UnscorableEpisode(f"{self.setup.suite.name} task {task.id}: {_one_line(exc)}")
            error.__cause__ = exc  # the output's error chain names the verifier's own error
            state["error"] = error
            return math.nan
        return value

    async def score_group(self, states: list[vf.State]) -> None:
        await super().score_group(states)
        scored = [s["reward"] for s in states if math.isfinite(s["reward"])]
        mean = math.fsum(scored) / len(scored) if scored else 0.0
        for state in states:
            state["advantage"] = state["reward"] - mean if math.isfinite(state["reward"]) else 0.0
            for step in state["trajectory"]:
                step["advantage"] = state["advantage"]


def load_environment(suite: str, split: str = "default", limit: int | None = None, seed: int = 0,
                     options: dict[str, Any] | None = None, *, metric: str | None = None,
                     max_turns: int = DEFAULT_MAX_TURNS, **kwargs: Any) -> SuiteEnv:
    """A verifiers environment playing ``suite`` (see the module docstring).

    Args:
        suite: A registered suite name.
        split: The task split.
        limit: Only the first ``limit`` tasks of the split.
        seed: Task generation seed, and the run seed of episode seeds.
        options: The suite's ``-o`` options, parsed once into its options class as the runner
            parses them.
        metric: The verifier metric added to the env rewards (default :data:`DEFAULT_METRICS`).
        max_turns: Model replies per rollout at most.
        **kwargs: Passed to ``verifiers.MultiTurnEnv`` (``system_prompt``, ``sampling_args``…).

    Raises:
        ConfigError: Unknown split or option, bad option value, bad limit or max_turns, or no metric.
    """
    where = f"verifiers environment of {suite}"
    setup = SuiteSetup.load(suite, split, seed, options, where=where)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"{where}: limit must be a positive integer, got {limit!r}")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ConfigError(f"{where}: max_turns must be a positive integer, got {max_turns!r}")
    chosen = metric or DEFAULT_METRICS.get(suite)
    if not chosen:
        raise ConfigError(f"{where}: name the verifier metric of the reward with metric=NAME")
    tasks = setup.tasks[:limit] if limit else setup.tasks
    if not tasks:
        raise ConfigError(f"{where}: split {split!r} has no tasks")
    # env_args let verifiers rebuild the environment elsewhere (its env server process).
    args = {"suite": suite, "split": split, "limit": limit, "seed": seed, "options": setup.options.given(),
            "metric": metric,
            "max_turns": max_turns, **kwargs}
    return SuiteEnv(setup, tasks, metric=chosen, max_turns=max_turns, env_args=args, **kwargs)
