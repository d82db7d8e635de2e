"""TRL integration: SceneReVis turns as GRPO prompts and the environment's reward as a TRL
reward function (``GRPOTrainer(reward_funcs=[SceneReVisTurnReward()], train_dataset=…)``).

TRL's trainer generates single completions per prompt; our prompts are the editing turns of
the chain records (the conversation up to one ``<current_scene>`` user turn, optionally with
earlier turns), so every completion is one diagnose-and-act reply. The reward function
restarts the environment on that turn's scene (a goal-style task: ``initial_scene`` plus the
instruction), steps it with the completion and returns the §4.3 reward the environment
gives: the intermediate-turn reward, or the final reward when the reply terminates. TRL
then normalises rewards within each prompt's ``num_generations`` completions, which is the
GRPO advantage of :func:`.grpo.grpo_advantages` (TRL's ``scale_rewards="group"``).

Whole episodes go through TRL's (experimental) ``rollout_func`` hook:
:func:`make_rollout_func` plays each prompt as a multi-turn episode with the trainer's own
model (HF ``generate``), appends every environment observation to the completion with
``env_mask`` 0 (so the loss only sees policy tokens) and forwards the trajectory return J(τ),
which :func:`trajectory_reward` hands back to the trainer as the reward.
:func:`.grpo.rollout` collects the same episodes with any chat model behind an API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from buildbench.harness import Action, Env, Task

#: How observations and replies are joined when the tokenizer has no chat template.
USER_PREFIX, ASSISTANT_PREFIX = "\n\nUser: ", "\nAssistant: "

_SCENE_RE = re.compile(r"<current_scene>\s*```json\s*(.*?)\s*```\s*</current_scene>", re.S)


def turn_prompts(records: Iterable[dict[str, Any]], *, history_turns: int = 0,
                 text_only: bool = True) -> list[dict[str, Any]]:
    """GRPO rows from chain records: one per editing user turn.

    Each row: ``prompt`` (system message, ``history_turns`` earlier user/assistant pairs,
    the user turn; ``<image>`` tags dropped when ``text_only``), ``instruction``, ``scene``
    (the turn's scene as JSON text) and ``room_type``.
    """
    rows = []
    for rec in records:
        msgs = rec["messages"]
        meta = rec.get("metadata", {})
        instruction = str(meta.get("global_user_instruction") or "")
        for i, m in enumerate(msgs):
            found = _SCENE_RE.search(m["content"]) if m["role"] == "user" else None
            if found is None:
                continue
            history = msgs[max(1, i - 2 * history_turns):i] if history_turns else []
            turn = [*history, m]
            if text_only:
                turn = [{"role": x["role"], "content": x["content"].replace("<image>\n", "")} for x in turn]
            rows.append({"prompt": [msgs[0], *turn] if msgs[0]["role"] == "system" else turn,
                         "instruction": instruction, "scene": found.group(1),
                         "room_type": str(meta.get("room_type") or "")})
    return rows


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content") or "")
    raise TypeError(f"completion: expected text or a list of messages, got {type(completion).__name__}")


def default_env_factory() -> Env:
    """The SceneReVis environment without rendering or retrieval (the reward's rule judge
    reads the scene JSON; images and asset ids would only cost time)."""
    from ..env import EnvOptions, SceneReVisEnv

    return SceneReVisEnv(EnvOptions(render=False, retrieve=False, feedback=False))


class SceneReVisTurnReward:
    """TRL reward function: ``(prompts, completions, instruction, scene, **kw) -> rewards``.

    ``instruction`` and ``scene`` are the dataset columns of :func:`turn_prompts`. A
    completion the environment cannot even start from (a broken scene row) gets None, which
    TRL leaves out of that sample's reward instead of scoring it.
    """

    __name__ = "scenerevis_turn_reward"

    def __init__(self, env_factory: Callable[[], Env] = default_env_factory) -> None:
        self.env_factory = env_factory
        self.last_terms: list[dict[str, Any] | None] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], instruction: Sequence[str],
                 scene: Sequence[str], **_: Any) -> list[float | None]:
        rewards: list[float | None] = []
        self.last_terms = []
        for k, completion in enumerate(completions):
            env = self.env_factory()
            try:
                reward, terms = self._score(env, k, _completion_text(completion), instruction[k], scene[k])
            finally:
                env.close()
            rewards.append(reward)
            self.last_terms.append(terms)
        return rewards

    @staticmethod
    def _score(env: Env, k: int, reply: str, instruction: str, scene: str) -> tuple[float | None, Any]:
        try:
            initial = json.loads(scene)
            task = Task(id=f"grpo_{k}", suite="scenerevis",
                        inputs={"instruction": instruction or "Furnish the room.", "initial_scene": initial},
                        target={"room_type": str(initial.get("room_type", ""))})
            env.reset(task, seed=k)
        except Exception:  # noqa: BLE001 - a broken row is not the policy's fault: no score
            return None, None
        step = env.step(Action(text=reply))
        return float(step.reward), step.info.get("reward_terms")


def trajectory_reward(prompts: Sequence[Any], completions: Sequence[Any], trajectory_reward: Sequence[float | None],
                      **_: Any) -> list[float | None]:
    """TRL reward function for :func:`make_rollout_func`: the episode's J(τ) as the rollout
    computed it (None for an episode that errored)."""
    return list(trajectory_reward)


def _sampled_logprobs(scores: Sequence[Any], tokens: list[int]) -> list[float]:
    import torch

    return [float(torch.log_softmax(s[0].float(), dim=-1)[t]) for s, t in zip(scores, tokens, strict=False)]


def make_rollout_func(
    env_factory: Callable[[], Env] | None = None,
    *,
    max_turns: int = 4,
    max_new_tokens: int = 512,
    temperature: float = 1.0,
    system_prompt: str = "",
) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func``: every prompt (the user's request, text or a message list) is
    played as one episode of at most ``max_turns`` replies (turn 0 included) with the
    trainer's model. Returns ``prompt_ids``, ``completion_ids`` (replies and observations
    interleaved), ``logprobs`` (of the sampled tokens; 0 for observation tokens),
    ``env_mask`` and ``trajectory_reward``."""
    import torch

    from ..env import EnvOptions, SceneReVisEnv

    def make_env() -> Env:
        return SceneReVisEnv(EnvOptions(render=False, retrieve=False, max_turns=max_turns))

    factory = env_factory or make_env

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tok = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                     "trajectory_reward")}
        for k, prompt in enumerate(prompts):
            request = prompt if isinstance(prompt, str) else _completion_text(prompt)
            env = factory()
            try:
                obs = env.reset(Task(id=f"rollout_{k}", suite="scenerevis", inputs={"instruction": request}),
                                seed=k).observation
                head = (system_prompt + USER_PREFIX if system_prompt else USER_PREFIX.lstrip()) + obs.text
                prompt_ids = tok(head + ASSISTANT_PREFIX, add_special_tokens=False)["input_ids"]
                ids: list[int] = []
                logps: list[float] = []
                mask: list[int] = []
                for _ in range(max_turns):
                    context = torch.tensor([prompt_ids + ids], device=model.device)
                    with torch.no_grad():
                        gen = model.generate(context, attention_mask=torch.ones_like(context), do_sample=True,
                                             temperature=temperature, max_new_tokens=max_new_tokens,
                                             output_scores=True, return_dict_in_generate=True,
                                             pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
                    new = gen.sequences[0, context.shape[1]:].tolist()
                    ids += new
                    logps += _sampled_logprobs(gen.scores, new)
                    mask += [1] * len(new)
                    step = env.step(Action(text=tok.decode(new, skip_special_tokens=True)))
                    if step.terminated or step.truncated:
                        break
                    seen = tok(USER_PREFIX + step.observation.text + ASSISTANT_PREFIX,
                               add_special_tokens=False)["input_ids"]
                    ids += seen
                    logps += [0.0] * len(seen)
                    mask += [0] * len(seen)
                if not ids or ids[-1] != tok.eos_token_id:  # close the sequence so TRL does not call it truncated
                    ids, logps, mask = ids + [tok.eos_token_id], logps + [0.0], mask + [0]
                ret: float | None = float(env.outcome()["trajectory_reward"])
            finally:
                env.close()
            out["prompt_ids"].append(prompt_ids)
            out["completion_ids"].append(ids)
            out["logprobs"].append(logps)
            out["env_mask"].append(mask)
            out["trajectory_reward"].append(ret)
        return out

    return rollout_func
