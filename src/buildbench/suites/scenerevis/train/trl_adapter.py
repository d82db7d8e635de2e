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
:func:`make_rollout_func` (the shared adapter of :mod:`buildbench.integrations.trl` with this
suite's task and return) plays each prompt as a multi-turn episode with the trainer's own
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
    from ..env import SceneReVisEnv
    from ..options import SceneReVisOptions

    return SceneReVisEnv(SceneReVisOptions(render=False, retrieve=False, feedback=False))


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


def make_rollout_func(
    env_factory: Callable[[], Env] | None = None,
    *,
    max_turns: int = 4,
    max_new_tokens: int = 512,
    temperature: float = 1.0,
    system_prompt: str = "",
) -> Callable[[list[Any], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func`` (the shared :func:`buildbench.integrations.trl.make_rollout_func`):
    every prompt (the user's request, text or a message list) is played as one episode of at most
    ``max_turns`` replies (turn 0 included) with the trainer's model. Returns ``prompt_ids``,
    ``completion_ids`` (replies and observations interleaved), ``logprobs`` (of the sampled
    tokens; 0 for observation tokens), ``env_mask`` and ``trajectory_reward`` (J(τ) of §4.3)."""
    from buildbench.integrations.trl import Sampling, prompt_text
    from buildbench.integrations.trl import make_rollout_func as env_rollout_func

    from ..env import SceneReVisEnv
    from ..options import SceneReVisOptions

    def make_env() -> SceneReVisEnv:
        return SceneReVisEnv(SceneReVisOptions(render=False, retrieve=False, max_turns=max_turns))

    factory = env_factory or make_env

    def task_for(prompt: Any, k: int) -> Task:
        return Task(id=f"rollout_{k}", suite="scenerevis", inputs={"instruction": prompt_text(prompt)})

    def trajectory_return(task: Task, env: Env, rewards: Sequence[float]) -> float:
        assert isinstance(env, SceneReVisEnv), "the rollout plays SceneReVis episodes"
        return env.outcome().trajectory_reward

    play = env_rollout_func(lambda task: factory(), task_for, reward=trajectory_return,
                            sampling=Sampling(max_turns, max_new_tokens, temperature, system_prompt))

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        out = play(prompts, trainer)
        out["trajectory_reward"] = out.pop("episode_reward")
        return out

    return rollout_func
