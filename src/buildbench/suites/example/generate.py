"""Seeded tower tasks."""

from __future__ import annotations

import numpy as np

from buildbench.harness import Task

SUITE = "example"


def make_task(index: int, seed: int) -> Task:
    """Task ``tower_<seed>_<index>``: reach a height on a square lot with at most N blocks."""
    rng = np.random.default_rng([seed, index])
    target = round(float(rng.uniform(1.0, 6.0)), 2)
    half = round(float(rng.uniform(1.0, 3.0)), 2)
    max_blocks = int(rng.integers(8, 40))
    return Task(
        id=f"tower_{seed:04d}_{index:04d}",
        suite=SUITE,
        inputs={"target_height_m": target, "lot_half_width_m": half, "max_blocks": max_blocks},
        target={"target_height_m": target},
        metadata={"difficulty": "tall" if target / max_blocks > 0.2 else "easy"},
    )


def load_tasks(split: str, seed: int) -> list[Task]:
    """``default``: 50 tasks; ``demo``: 6 tasks."""
    n = {"default": 50, "demo": 6}[split]
    return [make_task(i, seed) for i in range(n)]
