"""A random policy on any suite through Gymnasium's vector API::

    python examples/gym/random_policy.py --suite Example --episodes 4 --num-envs 2

Each sub-env plays its own tasks of the demo split; a random action is short printable text (the
action space's ``sample()``), which no suite accepts as a design, so every env answers with its
feedback; an episode ends by the suite's own budget or after ``--episode-steps`` steps (the env's
``max_turns``: truncated, and scored like any end). At each episode's end ``info["metrics"]``
holds the suite verifier's scores (or ``info["score_error"]`` when it could not score). The point is
the plumbing: vectorised reset/step, autoreset, and where the scores arrive.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np

import buildbench.gym

gym.register_envs(buildbench.gym)


def scores_of(info: dict[str, Any], i: int) -> dict[str, float] | str:
    """Sub-env ``i``'s verifier scores from a vector env's info (each key batched, ``_key`` saying
    which sub-envs have it), or why it could not be scored."""
    if "metrics" in info and info["_metrics"][i]:
        metrics = info["metrics"]
        return {k: float(v[i]) for k, v in metrics.items() if not k.startswith("_") and metrics[f"_{k}"][i]}
    return str(info["score_error"][i]) if "score_error" in info and info["_score_error"][i] else "no score"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="Example", help="env name: Example, DreamHouse, BuildArena, BimEdit, ...")
    parser.add_argument("--episodes", type=int, default=4, help="episodes to finish, over all sub-envs")
    parser.add_argument("--num-envs", type=int, default=2)
    parser.add_argument("--mode", choices=("async", "sync"), default="async")
    parser.add_argument("--episode-steps", type=int, default=3, help="steps per episode at most")
    parser.add_argument("--max-steps", type=int, default=50, help="vector steps at most")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    envs = gym.make_vec(f"buildbench/{args.suite}-v0", num_envs=args.num_envs, vectorization_mode=args.mode,
                        split="demo", seed=args.seed, max_turns=args.episode_steps)
    envs.action_space.seed(args.seed)
    obs, info = envs.reset(seed=args.seed)
    returns = np.zeros(args.num_envs)
    finished = 0
    for _ in range(args.max_steps):
        obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
        returns += reward
        for i in np.flatnonzero(terminated | truncated):
            print(f"env {i}: episode over, return {returns[i]:g}, verifier: {scores_of(info, i)}")
            returns[i] = 0.0
            finished += 1
        if finished >= args.episodes:
            break
    envs.close()
    print(f"{finished} episodes finished")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
