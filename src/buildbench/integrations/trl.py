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
(``"User: …"``, ``"Assistant: …"``).

A vision-language model's processor as the trainer's ``processing_class`` (anything with an
``image_processor`` and a ``tokenizer``, e.g. LLaVA's or Gemma 3's) makes the observation
images (SceneReVis renders, DreamHouse views, LEGO-Eval tool images) image parts of their user
turn: the processor's template places its image placeholders, ``processor(text=…, images=…)``
expands them into the image tokens in ``prompt_ids``/``completion_ids``, and each reply is
generated with the pixel inputs of every image so far. The episode's images come back as the
``episode_images`` column (PIL images in conversation order). TRL's GRPOTrainer (1.16) builds
the pixel inputs of its loss pass only from the dataset's ``images`` column, not from a
``rollout_func``: there the image tokens of env observations are scored without their pixels.
A plain tokenizer keeps the text-only path. What becomes the reward is a
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

from buildbench.harness import Env, Observation, Task
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
    """One episode's conversation in a tokenizer's or processor's chat template, as token chunks.

    :meth:`start` gives the prompt; :meth:`answer` the tokens that follow a generated reply when
    the env answers it (the template's end of the reply's turn, the user turn, the generation
    prompt), so prompt + replies + answers tokenize the conversation the template renders. With a
    processor (``processing`` has an ``image_processor``), observation images become image parts
    and :meth:`model_inputs` gives the pixel inputs of the images so far.
    """

    def __init__(self, processing: Any, system_prompt: str = "") -> None:
        self.processor: Any = processing if getattr(processing, "image_processor", None) is not None else None
        self.tokenizer = processing.tokenizer if self.processor is not None else processing
        self.template = (getattr(self.processor, "chat_template", None) or getattr(self.tokenizer, "chat_template", None)
                         or PLAIN_TEMPLATE)
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        self.text = ""
        self.images: list[Any] = []
        self._length = 0  # tokens of the conversation so far (prompt, replies, answers)
        self._pixels: list[dict[str, Any]] = []  # per-image inputs of each processor call
        self._token_fields: dict[str, list[int]] = {}  # per-token inputs (e.g. mm_token_type_ids), 0 off images

    def _render(self) -> str:
        renderer = self.processor if self.processor is not None else self.tokenizer
        return str(renderer.apply_chat_template(self.messages, chat_template=self.template, tokenize=False,
                                                add_generation_prompt=True))

    def _user(self, observation: str, images: Sequence[Any]) -> dict[str, Any]:
        if not images:
            return {"role": "user", "content": observation}
        if self.processor is None:
            raise ValueError("trl rollout: the observation has images but the processing class is a tokenizer; "
                             "give the trainer the vision model's processor, or play a text observation")
        if self.template is PLAIN_TEMPLATE:
            raise ValueError("trl rollout: the processor has no chat template to place the observation's images")
        parts: list[dict[str, Any]] = [{"type": "text", "text": observation}] if observation else []
        return {"role": "user", "content": parts + [{"type": "image"} for _ in images]}

    def start(self, observation: str, images: Sequence[Any] = ()) -> list[int]:
        """The prompt: the system prompt and the first observation (its text, then its images), then
        the generation prompt."""
        self.messages.append(self._user(observation, images))
        self.text = self._render()
        return self._encode(self.text, images)

    def answer(self, reply: str, reply_ids: list[int], observation: str, images: Sequence[Any] = ()) -> list[int]:
        """The tokens after the generated ``reply`` (``reply_ids``) that carry ``observation`` and its
        ``images``.

        Raises:
            ValueError: The template renders the conversation so far differently once a turn is added,
                or there are images and no processor with a chat template.
        """
        self._grow(len(reply_ids))
        self.messages += [{"role": "assistant", "content": reply}, self._user(observation, images)]
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
        return self._encode(tail, images)

    @property
    def placeholder_ids(self) -> list[int]:
        """Token ids the policy must not generate: the processor's image placeholder and image tokens
        (a reply with one would claim an image that has no pixels)."""
        tokens = [getattr(self.processor, "image_token_id", None), *(getattr(self.processor, "image_token_ids", None) or [])]
        return list(dict.fromkeys(t for t in tokens if isinstance(t, int)))

    def model_inputs(self) -> dict[str, Any]:
        """What ``generate`` needs besides the token ids: the pixel inputs of every image so far
        (concatenated per image, in order) and the per-token inputs over the conversation; empty
        without images."""
        import torch

        inputs = {key: torch.cat([chunk[key] for chunk in self._pixels if key in chunk])
                  for key in dict.fromkeys(k for chunk in self._pixels for k in chunk)}
        return inputs | {key: torch.tensor([values]) for key, values in self._token_fields.items()}

    def _grow(self, n: int) -> None:
        """``n`` tokens that are no image's join the conversation."""
        self._length += n
        for values in self._token_fields.values():
            values += [0] * n

    def _encode(self, text: str, images: Sequence[Any]) -> list[int]:
        if not images:
            ids = _encode(self.tokenizer, text)
            self._grow(len(ids))
            return ids
        pil = [_pil(image) for image in images]
        encoded = self.processor(text=[text], images=pil, add_special_tokens=False, return_tensors="pt")
        ids = [int(t) for t in encoded["input_ids"][0]]
        for key, value in encoded.items():
            if key in ("input_ids", "attention_mask"):
                continue
            if value.dim() == 2 and value.shape == encoded["input_ids"].shape:  # one value per token
                field = self._token_fields.setdefault(key, [0] * self._length)
                field += [int(v) for v in value[0]]
            else:
                self._pixels.append({key: value})
        self._length += len(ids)
        for values in self._token_fields.values():
            values += [0] * (self._length - len(values))
        self.images += pil
        return ids

#: ``task_for(prompt, k)``: the task the k-th prompt of a batch is played on.
TaskFor = Callable[[Any, int], Task]


def prompt_text(prompt: Any) -> str:
    """A dataset prompt as text: a string, or the content of a message list's last message (the
    text of its text parts when it has parts, as TRL's multimodal prompts do)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence) and prompt and isinstance(prompt[-1], dict):
        content = prompt[-1].get("content") or ""
        if isinstance(content, list):
            return "".join(str(part.get("text") or "") for part in content
                           if isinstance(part, dict) and part.get("type") == "text")
        return str(content)
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
        images: The observation images in the tokens, in order (PIL; only with a processor).
    """

    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    reward: float | None = None
    turns: int = 0
    images: list[Any] = field(default_factory=list)

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


def play(env: Env, task: Task, seed: int, processing: Any, model: Any, sampling: Sampling,
         reward: RewardFn = step_reward_sum) -> Rollout:
    """Play one episode of ``env`` on ``task`` with ``model`` (a HF causal LM, or a vision-language
    model when ``processing`` is its processor) and return its tokens."""
    episode = EpisodePlay(env, task, seed)
    chat = ChatTokens(processing, sampling.system_prompt or "")
    tokenizer = chat.tokenizer
    first = episode.reset()
    rollout = Rollout(chat.start(observation_text(first), _images(chat, first)))
    for _ in range(sampling.max_turns):
        new, logprobs = _generate(model, tokenizer, rollout.prompt_ids + rollout.completion_ids, sampling,
                                  chat.model_inputs(), chat.placeholder_ids)
        rollout.add(new, logprobs)
        rollout.turns += 1
        reply = tokenizer.decode(new, skip_special_tokens=True)
        step = episode.reply(reply)
        if episode.ended:
            break
        rollout.add(chat.answer(reply, new, observation_text(step.observation), _images(chat, step.observation)))
    if not rollout.completion_ids or rollout.completion_ids[-1] != tokenizer.eos_token_id:
        rollout.add([tokenizer.eos_token_id])  # a closed sequence, so TRL does not count it as truncated
    rollout.reward = episode.reward(reward)
    rollout.images = chat.images
    return rollout


def make_rollout_func(env_factory: Callable[[Task], Env], task_for: TaskFor, *, sampling: Sampling | None = None,
                      reward: RewardFn = step_reward_sum) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func`` over any Env: the k-th prompt of a batch is played on
    ``task_for(prompt, k)`` with episode seed k. Returns ``prompt_ids``, ``completion_ids``,
    ``logprobs``, ``env_mask``, ``episode_reward`` and, when the trainer's ``processing_class`` is
    a processor, ``episode_images`` (see the module docstring)."""
    settings = sampling or Sampling()

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        processing = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        vision = getattr(processing, "image_processor", None) is not None
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                     "episode_reward", *(("episode_images",) if vision else ()))}
        for k, prompt in enumerate(prompts):
            task = task_for(prompt, k)
            env = env_factory(task)
            try:
                rollout = play(env, task, k, processing, model, settings, reward)
            finally:
                env.close()
            out["prompt_ids"].append(rollout.prompt_ids)
            out["completion_ids"].append(rollout.completion_ids)
            out["logprobs"].append(rollout.logprobs)
            out["env_mask"].append(rollout.env_mask)
            out["episode_reward"].append(rollout.reward)
            if vision:
                out["episode_images"].append(rollout.images)
        return out

    return rollout_func


def suite_rollout_func(suite: str, *, split: str = "demo", seed: int = 0, options: dict[str, Any] | None = None,
                       sampling: Sampling | None = None, reward: RewardFn | str = step_reward_sum
                       ) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """:func:`make_rollout_func` for a registered suite: each prompt names a task of ``split``
    (generated with ``seed``) by id or index, the env is the suite's with ``options`` (parsed
    once into its options class, as ``-o`` options are), and ``reward`` is a :data:`RewardFn` or the name of a verifier metric.

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
        system = suite_system_prompt(setup.suite, "", setup.tasks[0], setup.options.given())
        settings = dataclasses.replace(settings, system_prompt=system)
    play = make_rollout_func(setup.make_env, task_for, sampling=settings, reward=chosen)

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        with setup.prompts():  # envs read their prompt files at reset and step
            return play(prompts, trainer)

    return rollout_func


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _images(chat: ChatTokens, observation: Observation) -> list[Any]:
    """The observation's images for a processor; none for a tokenizer (a text model reads the text)."""
    return list(observation.images) if chat.processor is not None else []


def _pil(image: Any) -> Any:
    """An observation image (an (H, W, C) uint8 array or PNG bytes) as an RGB PIL image."""
    import io

    from PIL import Image

    if isinstance(image, bytes | bytearray):
        return Image.open(io.BytesIO(image)).convert("RGB")
    return Image.fromarray(image).convert("RGB")


def _generate(model: Any, tokenizer: Any, context_ids: list[int], sampling: Sampling,
              extra: dict[str, Any] | None = None, suppress: list[int] | None = None
              ) -> tuple[list[int], list[float]]:
    """Sample one reply after ``context_ids`` (with ``extra`` model inputs such as pixel values and
    never a token of ``suppress``); its tokens and their log-probabilities."""
    import torch

    context = torch.tensor([context_ids], device=model.device)
    inputs: dict[str, Any] = {key: value.to(model.device) for key, value in (extra or {}).items()}
    if suppress:
        inputs["suppress_tokens"] = suppress
    with torch.no_grad():
        gen = model.generate(context, attention_mask=torch.ones_like(context), **inputs, do_sample=True,
                             temperature=sampling.temperature, max_new_tokens=sampling.max_new_tokens,
                             output_scores=True, return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    new = gen.sequences[0, context.shape[1]:].tolist()
    logprobs = [float(torch.log_softmax(s[0].float(), dim=-1)[t]) for s, t in zip(gen.scores, new, strict=False)]
    return new, logprobs
