"""BIM-Edit's RL reward: 0 for tool calls; on the step that ends the episode (the final answer, or
the budget's truncation) the paper's final score of the last committed model against the ground
truth, as the episode scorer computes it (strict mode with ``-o strict=true``). The paper does not
shape it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from buildbench.harness import Task

from .check.edit import score_edit
from .score import SCORE_SEED
from .tasks import from_harness

#: Seed of the geometry sampling for the reward: the episode scorer's own, so the reward equals
#: the episode's ``final`` metric.
REWARD_SEED = SCORE_SEED


def final_reward(task: Task, committed: bytes | None, *, strict: bool) -> float:
    """The ``final`` score of the ``committed`` model (None: the input model, nothing committed)."""
    bim = from_harness(task)
    with tempfile.TemporaryDirectory(prefix="bimedit-reward-") as scratch:
        pred = Path(scratch) / "committed.ifc"
        pred.write_bytes(committed or Path(bim.input_ifc).read_bytes())
        s = score_edit(bim.input_ifc, bim.ground_truth_ifc, pred, bim.score_spec(), strict=True, seed=REWARD_SEED)
    return float(s.final if strict else s.diagnostics.get("paper", {}).get("final", s.final))
