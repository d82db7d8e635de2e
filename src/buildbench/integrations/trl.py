"""Any suite's Env as a multi-turn environment for TRL (``GRPOTrainer(rollout_func=...)``).

TRL's experimental ``rollout_func`` hook hands a batch of prompts to a function that returns,
per prompt, ``prompt_ids``, ``completion_ids`` and ``logprobs`` (plus any extra column, which
reaches the reward functions as a keyword). :func:`make_rollout_func` plays each prompt as one
episode of an :class:`~buildbench.harness.Env` with the trainer's own model: the reset
observation is the prompt; each reply is generated with HF ``generate`` and applied to the env
as text (:func:`buildbench.integrations.text.apply_text`: model text, a ``{"tool_calls": …}``
object or a ``{"control": …}`` call); every observation is appended to the completion with
``env_mask`` 0, so the loss only sees the policy's tokens. The episode's reward travels as the
``episode_reward`` column, which :func:`episode_reward` hands back to the trainer.

The conversation is the tokenizer's own chat template (:class:`ChatTokens`): the prompt is the
template's rendering of the system prompt and first observation with the generation prompt, and
each observation adds what the template renders after the reply (end of turn, the user turn, the
next generation prompt), so the policy sees at training time what it sees at inference. The
template must render earlier turns unchanged as turns are added (prefix-preserving, as TRL's own
tool loop requires). A tokenizer without a template (a base model) gets :data:`PLAIN_TEMPLATE`
(``"User: …"``, ``"Assistant: …"``). Observation images are not passed yet: the policy reads the
text of each observation (a text model cannot take them; a vision model's processor would).
What becomes the reward is a
:data:`RewardFn`: the sum of the env's step rewards (each suite's paper signal, shaped where the
paper shapes it) by default, or a verifier metric of the outcome (:func:`verifier_metric`); an
episode that could not be played or scored gets None, which TRL leaves out (errors are never
scores).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from buildbench.harness import Env, Task
from buildbench.harness.sft import suite_system_prompt

from .rollout import (
    EpisodePlay,
    RewardFn,
    SuiteSetup,
    observation_text,
    step_reward_sum,
    verifier_metric,
)

__all__ = ["PLAIN_TEMPLATE", "ChatTokens", "RewardFn", "Rollout", "Sampling", "TaskFor", "episode_reward", "make_rollout_func", "observation_text",
           "play", "prompt_text", "step_reward_sum", "suite_rollout_func", "verifier_metric"]

#: The chat template of a tokenizer that has none: plain ``User:``/``Assistant:`` turns.
PLAIN_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] }}\n\n"
    "{% elif m['role'] == 'assistant' %}Assistant: {{ m['content'] }}\n\n"
    "{% else %}User: {{ m['content'] }}\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant: {% endif %}"
)


class ChatTokens:
    """One episode's conversation in a tokenizer's chat template, as token chunks.

    :meth:`start` gives the prompt; :meth:`answer` the tokens that follow a generated reply when
    the env answers it (the template's end of the reply's turn, the user turn, the generation
    prompt), so prompt + replies + answers tokenize the conversation the template renders.
    """

    def __init__(self, tokenizer: Any, system_prompt: str = "") -> None:
        self.tokenizer = tokenizer
        self.template = getattr(tokenizer, "chat_template", None) or PLAIN_TEMPLATE
        self.messages: list[dict[str, str]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        self.text = ""

    def _render(self) -> str:
        return str(self.tokenizer.apply_chat_template(self.messages, chat_template=self.template, tokenize=False,
                                                      add_generation_prompt=True))

    def start(self, observation: str) -> list[int]:
        """The prompt: the system prompt and the first observation, then the generation prompt."""
        self.messages.append({"role": "user", "content": observation})
        self.text = self._render()
        return _encode(self.tokenizer, self.text)

    def answer(self, reply: str, reply_ids: list[int], observation: str) -> list[int]:
        """The tokens after the generated ``reply`` (``reply_ids``) that carry ``observation``.

        Raises:
            ValueError: The template renders the conversation so far differently once a turn is added.
        """
        self.messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}]
        text = self._render()
        head = self.text + reply
        if not text.startswith(head):
            raise ValueError("trl rollout: the tokenizer's chat template renders earlier turns differently once "
                             "a turn is added (not prefix-preserving); give the tokenizer a template that is "
                             "(trl.chat_template_utils.get_training_chat_template) or none")
        tail = text[len(head):]
        eos = self.tokenizer.eos_token
        if reply_ids and reply_ids[-1] == self.tokenizer.eos_token_id and eos and tail.startswith(eos):
            tail = tail[len(eos):]  # the model already generated the end of its turn
        self.text = text
        return _encode(self.tokenizer, tail)

#: ``task_for(prompt, k)``: the task the k-th prompt of a batch is played on.
TaskFor = Callable[[Any, int], Task]


def prompt_text(prompt: Any) -> str:
    """A dataset prompt as text: a string, or the content of a message list's last message."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and prompt and isinstance(prompt[-1], dict):
        return str(prompt[-1].get("content") or "")
    raise TypeError(f"prompt: expected text or a list of messages, got {type(prompt).__name__}")


def episode_reward(prompts: Sequence[Any], completions: Sequence[Any], episode_reward: Sequence[float | None],
                   **_: Any) -> list[float | None]:
    """TRL reward function for :func:`make_rollout_func`: the reward each rollout computed."""
    return list(episode_reward)


@dataclass
class Rollout:
    """One played episode in token form.

    Attributes:
        prompt_ids: Tokens of the system prompt, the first observation and the generation prompt.
        completion_ids: Replies and later observations, interleaved, ending with EOS.
        logprobs: Log-probability of each sampled token (0 for observation tokens).
        env_mask: 1 for the policy's tokens, 0 for the env's.
        reward: The episode's reward (None: unplayable or unscorable).
        turns: Replies generated.
    """

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    reward: float | None = None
    turns: int = 0

    def add(self, ids: list[int], logprobs: list[float] | None = None) -> None:
        """Append policy tokens (with their log-probabilities) or env tokens (without)."""
        self.completion_ids += ids
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)
        self.env_mask += [1 if logprobs is not None else 0] * len(ids)


@dataclass(frozen=True)
class Sampling:
    """Generation settings of a rollout.

    Attributes:
        max_turns: Replies per episode at most.
        max_new_tokens: Tokens per reply at most.
        temperature: Sampling temperature.
        system_prompt: The system message before the first observation ("" for none); None: the
            suite's own (its model agent's, as the SFT export writes it) in
            :func:`suite_rollout_func`, none in :func:`make_rollout_func`.
    """

    max_turns: int = 4
    max_new_tokens: int = 512
    temperature: float = 1.0
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.max_turns < 1 or self.max_new_tokens < 1 or not self.temperature > 0:
            raise ValueError(f"rollout: max_turns and max_new_tokens must be >= 1 and temperature > 0, got "
                             f"{self.max_turns}, {self.max_new_tokens}, {self.temperature}")


def play(env: Env, task: Task, seed: int, tokenizer: Any, model: Any, sampling: Sampling,
         reward: RewardFn = step_reward_sum) -> Rollout:
    """Play one episode of ``env`` on ``task`` with ``model`` (a HF causal LM) and return its tokens."""
    episode = EpisodePlay(env, task, seed)
    chat = ChatTokens(tokenizer, sampling.system_prompt or "")
    rollout = Rollout(chat.start(observation_text(episode.reset())))
    for _ in range(sampling.max_turns):
        new, logprobs = _generate(model, tokenizer, rollout.prompt_ids + rollout.completion_ids, sampling)
        rollout.add(new, logprobs)
        rollout.turns += 1
        reply = tokenizer.decode(new, skip_special_tokens=True)
        step = episode.reply(reply)
        if episode.ended:
            break
        rollout.add(chat.answer(reply, new, observation_text(step.observation)))
    if not rollout.completion_ids or rollout.completion_ids[-1] != tokenizer.eos_token_id:
        rollout.add([tokenizer.eos_token_id])  # a closed sequence, so TRL does not count it as truncated
    rollout.reward = episode.reward(reward)
    return rollout


def make_rollout_func(env_factory: Callable[[Task], Env], task_for: TaskFor, *, sampling: Sampling | None = None,
                      reward: RewardFn = step_reward_sum) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func`` over any Env: the k-th prompt of a batch is played on
    ``task_for(prompt, k)`` with episode seed k. Returns ``prompt_ids``, ``completion_ids``,
    ``logprobs``, ``env_mask`` and ``episode_reward`` (see the module docstring)."""
    settings = sampling or Sampling()

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                     "episode_reward")}
        for k, prompt in enumerate(prompts):
            task = task_for(prompt, k)
            env = env_factory(task)
            try:
                rollout = play(env, task, k, tokenizer, model, settings, reward)
            finally:
                env.close()
            out["prompt_ids"].append(rollout.prompt_ids)
            out["completion_ids"].append(rollout.completion_ids)
            out["logprobs"].append(rollout.logprobs)
            out["env_mask"].append(rollout.env_mask)
            out["episode_reward"].append(rollout.reward)
        return out

    return rollout_func


def suite_rollout_func(suite: str, *, split: str = "demo", seed: int = 0, options: dict[str, Any] | None = None,
                       sampling: Sampling | None = None, reward: RewardFn | str = step_reward_sum
                       ) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """:func:`make_rollout_func` for a registered suite: each prompt names a task of ``split``
    (generated with ``seed``) by id or index, the env is the suite's with ``options`` (checked
    like ``-o`` options), and ``reward`` is a :data:`RewardFn` or the name of a verifier metric.

    Raises:
        ConfigError: An unknown split, option or bad option value.
    """
    where = f"trl rollout of {suite}"
    setup = SuiteSetup.load(suite, split, seed, options, where=where)

    def task_for(prompt: Any, k: int) -> Task:
        text = prompt_text(prompt).strip()
        return setup.task(int(text) if text.lstrip("-").isdigit() else text, where=f"{where}, prompt {k}")

    chosen = verifier_metric(setup.suite.verify, reward) if isinstance(reward, str) else reward
    settings = sampling or Sampling()
    if settings.system_prompt is None and setup.tasks:  # what a model SFT-trained on our export was given
        system = suite_system_prompt(setup.suite, "", setup.tasks[0], setup.options)
        settings = dataclasses.replace(settings, system_prompt=system)
    play = make_rollout_func(setup.make_env, task_for, sampling=settings, reward=chosen)

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        with setup.prompts():  # envs read their prompt files at reset and step
            return play(prompts, trainer)

    return rollout_func


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _generate(model: Any, tokenizer: Any, context_ids: list[int], sampling: Sampling) -> tuple[list[int], list[float]]:
    """Sample one reply after ``context_ids``; its tokens and their log-probabilities."""
    import torch

    context = torch.tensor([context_ids], device=model.device)
    with torch.no_grad():
        gen = model.generate(context, attention_mask=torch.ones_like(context), do_sample=True,
                             temperature=sampling.temperature, max_new_tokens=sampling.max_new_tokens,
                             output_scores=True, return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    new = gen.sequences[0, context.shape[1]:].tolist()
    logprobs = [float(torch.log_softmax(s[0].float(), dim=-1)[t]) for s, t in zip(gen.scores, new, strict=False)]
    return new, logprobs
