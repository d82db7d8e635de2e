"""BIM-Edit's aggregate metrics over many scored predictions, as the paper's Tables 1–2 report
them: mean ± std of each axis on a 0–100 scale, the strict solve rate and per-axis pass rates.
The run report's tables (:mod:`.report`) give the same figures per group of episodes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .check.edit import SOLVE_THRESHOLD, EditScore


def summarise(scores: Sequence[EditScore]) -> dict[str, float]:
    """Mean ± std (0–100 scale, as the paper reports) and solve/pass rates (%) over ``scores``."""
    if not scores:
        return {}
    arr = np.array([[s.final, s.geometry, s.semantics, s.topology] for s in scores]) * 100
    out: dict[str, float] = {}
    for i, name in enumerate(("final", "geometry", "semantics", "topology")):
        out[f"{name}_mean"] = float(arr[:, i].mean())
        out[f"{name}_std"] = float(arr[:, i].std())
    for i, name in enumerate(("geometry", "semantics", "topology"), start=1):
        out[f"{name}_pass_rate"] = float(np.mean(arr[:, i] >= SOLVE_THRESHOLD * 100) * 100)
    out["solve_rate"] = float(np.mean([s.solved for s in scores]) * 100)
    return out
