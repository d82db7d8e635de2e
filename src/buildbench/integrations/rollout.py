"""One episode of a suite's Env played turn by turn from outside the harness.

The trainer bridges (:mod:`.trl`, :mod:`.verifiers`) drive our envs with their own models and
loops; what they share is here: a suite's tasks and typed ``-o`` options (:class:`SuiteSetup`),
one episode's replies and rewards (:class:`EpisodePlay`), how an observation reads as text or
as chat messages, and what an episode's reward is (:data:`RewardFn`): the sum of the env's step
rewards, a verifier metric of the outcome, or None when the episode could not be scored (errors
are never scores).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from buildbench.harness import Action, Env, Observation, StepResult, Suite, Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.option_model import ModelOptions
from buildbench.harness.outcome import OutcomeRecord
from buildbench.harness.prompts import prompt_folder
from buildbench.harness.suite import get_suite

from .text import apply_text, select_task

if TYPE_CHECKING:
    from buildbench.llm import Message, ToolCall

#: ``reward(task, env, step_rewards)``: an episode's reward, or None when it has none.
RewardFn = Callable[[Task, Env, Sequence[float]], float | None]
#: ``score(task, outcome) -> metrics``: a suite's verifier (``Suite.verify``), given ``Env.outcome()``.
ScoreFn = Callable[[Task, OutcomeRecord | dict[str, Any]], dict[str, float]]

#: What a tool message says for a call the env did not answer (it runs one call per turn).
NOT_EXECUTED = "Not executed: only one tool call is run per turn."


def step_reward_sum(task: Task, env: Env, rewards: Sequence[float]) -> float:
    """The undiscounted return: the sum of the env's step rewards."""
    return float(math.fsum(rewards))


def metric_value(metrics: dict[str, Any], metric: str) -> float | None:
    """``metrics[metric]`` as a finite float; None when it is missing, not a number or NaN/inf."""
    value = metrics.get(metric)
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def verifier_metric(score: ScoreFn, metric: str) -> RewardFn:
    """A reward that is one metric of the suite's verifier on the episode's outcome (e.g. BuildArena's
    ``passed``); None when the verifier cannot score the outcome or has no such metric."""

    def reward(task: Task, env: Env, rewards: Sequence[float]) -> float | None:
        try:
            return metric_value(score(task, env.outcome()), metric)
        except Exception:  # noqa: BLE001 - an unscorable episode gets no reward, never a number
            return None

    return reward


def observation_text(observation: Observation) -> str:
    """What the policy reads of an observation: its text, then each tool result on its own line."""
    parts = [observation.text] if observation.text else []
    parts += [f"[{call_id}] {text}" for call_id, text in observation.tool_results]
    return "\n".join(parts)


def observation_messages(observation: Observation, calls: Sequence[ToolCall] = ()) -> list[Message]:
    """The chat messages that carry ``observation`` to a model whose last reply made ``calls``.

    Without calls: one user message (text, then images). With calls: a tool message answering
    each one (providers refuse a conversation with an unanswered call), then a user message
    for the images and for text that no tool result carries.
    """
    from buildbench.llm import Message

    if not calls:
        return [Message.user(observation.text, observation.images)]
    answers = dict(observation.tool_results)
    messages = [Message.tool(call.id, answers.get(call.id, NOT_EXECUTED)) for call in calls]
    unanswered = observation.text if not answers else ""
    if observation.images or unanswered:
        messages.append(Message.user(unanswered or "Rendered views of the current state:", observation.images))
    return messages


@dataclass(frozen=True)
class SuiteSetup:
    """A registered suite with one split's tasks and its typed ``-o`` options.

    Attributes:
        suite: The suite.
        split: The split the tasks come from.
        seed: The seed the tasks were generated with (and the run seed of episode seeds).
        options: The suite's options object, parsed once as the runner parses ``-o KEY=VALUE``
            (what every env of the setup is made with).
        tasks: The split's tasks.
    """

    suite: Suite
    split: str
    seed: int
    options: ModelOptions
    tasks: list[Task]

    @classmethod
    def load(cls, suite: str, split: str, seed: int, options: Mapping[str, Any] | None, *, where: str) -> SuiteSetup:
        """The setup of ``suite``; ``where`` names the caller in error messages.

        Raises:
            ConfigError: An unknown split, option or bad option value.
        """
        spec = get_suite(suite)
        if split not in spec.splits:
            raise ConfigError(f"{where}: no split {split!r}; splits: {', '.join(spec.splits)}")
        parsed = spec.options_model().parse(options or {}, where=where)
        return cls(spec, split, int(seed), parsed, spec.load_tasks(split, int(seed)))

    def task(self, selector: int | str, *, where: str) -> Task:
        """The task at index ``selector`` or with id ``selector`` (ConfigError naming ``where``)."""
        return select_task(self.tasks, selector, where=where)

    @contextmanager
    def prompts(self) -> Iterator[None]:
        """The prompt folder of ``-o prompts=DIR`` (envs read their prompt files at reset and step)."""
        with prompt_folder(getattr(self.options, "prompts", None)):
            yield

    def make_env(self, task: Task) -> Env:
        """A fresh env of the suite for ``task``, with the options."""
        with self.prompts():
            return self.suite.make_env(task, self.options)


@dataclass
class EpisodePlay:
    """One episode of ``env`` on ``task``: a reset, then one model reply per turn.

    Attributes:
        env: The suite's env (the caller closes it).
        task: The task played.
        seed: The episode seed passed to ``reset``.
        rewards: The env's reward for each reply so far.
        ended: Whether the env terminated or truncated the episode.
    """

    env: Env
    task: Task
    seed: int
    rewards: list[float] = field(default_factory=list)
    ended: bool = False

    @property
    def turns(self) -> int:
        """Replies applied so far."""
        return len(self.rewards)

    def reset(self) -> Observation:
        """Start the episode; the first observation."""
        self.rewards.clear()
        self.ended = False
        return self.env.reset(self.task, seed=self.seed).observation

    def reply(self, text: str, tool_calls: Sequence[ToolCall] = ()) -> StepResult:
        """Apply one model reply: its tool calls as one action, else its text (model text, a
        ``{"tool_calls": …}`` object or a ``{"control": …}`` call, see :mod:`.text`)."""
        if tool_calls:
            result = self.env.step(Action(text=text or None, tool_calls=list(tool_calls)))
        else:
            result = apply_text(self.env, text, self.turns)
        self.rewards.append(float(result.reward))
        self.ended = bool(result.terminated or result.truncated)
        return result

    def reward(self, fn: RewardFn = step_reward_sum) -> float | None:
        """The episode's reward by ``fn`` (None: it has none)."""
        return fn(self.task, self.env, list(self.rewards))
