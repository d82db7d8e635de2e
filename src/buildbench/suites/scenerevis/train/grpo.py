"""Multi-turn GRPO pieces (spec §4.2): rollouts of any chat model in the SceneReVis
environment, their rewards, and group-normalised advantages.

A rollout is one episode: the policy answers each observation, the environment applies the
reply and scores it with the hybrid reward of §4.3 (its ``StepResult.reward``); the
trajectory return J(τ) is the environment's aggregate (≤ 2 turns → −1, else 0.6 × last
turn + 0.4 / (n − 1) × each earlier one). GRPO draws ``n`` rollouts of one task (a group)
and gives every policy token of rollout i the advantage A_i = (J_i − mean J) / (std J + ε),
std over the group with Bessel's correction as VeRL does; environment tokens get none.

An episode that fails for a reason outside the policy (the model API errored, the env
raised) is an *error*, kept out of its group's statistics and given no advantage: errors
are never scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from buildbench.harness import Action, Task

from ..env import SceneReVisEnv
from ..outcome import SceneReVisOutcome

EPS = 1e-6

#: A policy: the chat so far (``[{"role", "content", "images"?}]``) → the assistant's text.
PolicyFn = Callable[[list[dict[str, Any]]], str]


class _ChatModel(Protocol):
    def generate_sync(self, request: Any) -> Any: ...


@dataclass
class Trajectory:
    """One rollout.

    Attributes:
        messages: The whole conversation: user observations and assistant replies, in order
            (user entries carry ``images`` when the env rendered any).
        turn_rewards: The environment's reward of each reply.
        ret: J(τ), the trajectory return (None for an errored rollout).
        error: Why the rollout could not be scored, or None.
        outcome: The environment's ``outcome()`` (None for an errored rollout).
    """

    messages: list[dict[str, Any]] = field(default_factory=list)
    turn_rewards: list[float] = field(default_factory=list)
    ret: float | None = None
    error: str | None = None
    outcome: SceneReVisOutcome | None = None
    advantage: float | None = None

    @property
    def policy_turns(self) -> list[int]:
        """Indices of the messages the policy wrote (the only ones a loss may touch)."""
        return [i for i, m in enumerate(self.messages) if m["role"] == "assistant"]


def grpo_advantages(rewards: Sequence[float | None], group: int) -> list[float | None]:
    """Group-normalised advantages of consecutive groups of ``group`` rewards.

    ``None`` (an errored rollout) stays None and is left out of its group's mean and std;
    a group with one valid reward, or with equal rewards, gets zeros.

    Raises:
        ValueError: ``group`` < 1, a length that is not a multiple of it, or a NaN/inf reward.
    """
    if group < 1:
        raise ValueError(f"group size must be at least 1, got {group}")
    if len(rewards) % group:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group}")
    out: list[float | None] = []
    for start in range(0, len(rewards), group):
        chunk = rewards[start:start + group]
        valid = [float(r) for r in chunk if r is not None]
        bad = [r for r in valid if not math.isfinite(r)]
        if bad:
            raise ValueError(f"reward {bad[0]} in group {start // group} is not finite")
        mean = sum(valid) / len(valid) if valid else 0.0
        std = math.sqrt(sum((r - mean) ** 2 for r in valid) / (len(valid) - 1)) if len(valid) > 1 else 0.0
        out.extend(None if r is None else (float(r) - mean) / (std + EPS) for r in chunk)
    return out


def chat_policy(model: _ChatModel, *, temperature: float | None = 1.0, max_tokens: int | None = None) -> PolicyFn:
    """A policy backed by a :mod:`buildbench.llm` chat model (any provider or a local
    OpenAI-compatible server); a failed call raises, which makes the rollout an error."""
    from buildbench.llm import ChatRequest, Message

    def policy(messages: list[dict[str, Any]]) -> str:
        msgs = []
        for m in messages:
            if m["role"] == "user":
                msgs.append(Message.user(m["content"], m.get("images") or ()))
            else:
                msgs.append(Message(m["role"], m["content"]))
        resp = model.generate_sync(ChatRequest(tuple(msgs), temperature=temperature, max_tokens=max_tokens))
        if resp.error is not None:
            raise RuntimeError(f"{resp.error.kind}: {resp.error.message}")
        return str(resp.text)

    return policy


def _episode(env: SceneReVisEnv, policy: PolicyFn, task: Task, seed: int, system_prompt: str) -> Trajectory:
    traj = Trajectory(messages=[{"role": "system", "content": system_prompt}] if system_prompt else [])
    obs = env.reset(task, seed=seed).observation
    while True:
        traj.messages.append({"role": "user", "content": obs.text, **({"images": list(obs.images)} if obs.images else {})})
        try:
            reply = policy(traj.messages)
        except Exception as exc:  # noqa: BLE001 - any policy failure makes this rollout an error
            traj.error = f"policy: {type(exc).__name__}: {exc}"
            return traj
        traj.messages.append({"role": "assistant", "content": reply})
        step = env.step(Action(text=reply))
        traj.turn_rewards.append(float(step.reward))
        obs = step.observation
        if step.terminated or step.truncated:
            break
    traj.outcome = env.outcome()
    traj.ret = traj.outcome.trajectory_reward
    if not math.isfinite(traj.ret):
        traj.error, traj.ret = "the environment reported no finite trajectory reward", None
    return traj


def rollout(
    env_factory: Callable[[], SceneReVisEnv],
    policy: PolicyFn,
    task: Task,
    n: int,
    *,
    seed: int = 0,
    system_prompt: str = "",
) -> list[Trajectory]:
    """``n`` episodes of ``policy`` on ``task`` (episode k seeded ``seed + k``), each in a
    fresh environment, with their group-normalised advantages filled in."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    group = []
    for k in range(n):
        env = env_factory()
        try:
            group.append(_episode(env, policy, task, seed + k, system_prompt))
        except Exception as exc:  # noqa: BLE001 - an env failure is this rollout's error, not a score
            group.append(Trajectory(error=f"env: {type(exc).__name__}: {exc}"))
        finally:
            env.close()
    for traj, adv in zip(group, grpo_advantages([t.ret for t in group], n), strict=True):
        traj.advantage = adv
    return group
