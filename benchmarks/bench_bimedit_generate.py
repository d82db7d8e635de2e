"""BIM-Edit: generate the 324-task default split, then score every task's oracle prediction.

Figures:
* generating the default split (scenes, inputs, ground truths, verified descriptions),
  beside a naive baseline timed in the same run: building one fresh complex scene per
  complex base edit instead of reusing a few (54 builds, extrapolated from 3 timed);
* scoring the 324 oracle predictions with a process pool of 2 (target ≤ 5 min), projected
  from every sixth task (54, spread over every cell of the split: their scoring time × 6;
  the full split took 150 s of a 46-minute ``make bench``), beside the paper's reported
  cost of 1-2 minutes per task, taken as the stated constant 60 s × 324 (paper section 5;
  spec section 0).
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Figure  # noqa: E402

from buildbench.suites.bimedit.generate.scenes import write_scene  # noqa: E402
from buildbench.suites.bimedit.generate.tasks import generate_tasks, score_oracle  # noqa: E402

#: The paper's per-task evaluation cost (1-2 minutes; the lower bound), seconds.
PAPER_SECONDS_PER_TASK = 60.0
#: Every this many tasks of the split are scored; the time is scaled back up by it.
SCORE_EVERY = 6


def run() -> list[Figure]:
    """Time generation and oracle scoring of the default split."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        tasks = generate_tasks(None, 0, Path(tmp) / "split")
        gen_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for k in range(3):
            write_scene("complex", 900 + k, Path(tmp) / "naive")
        naive_s = (time.perf_counter() - t0) / 3 * 54
        preds = Path(tmp) / "preds"
        preds.mkdir()
        t0 = time.perf_counter()
        scored = tasks[::SCORE_EVERY]
        with ProcessPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(score_oracle, scored, [str(preds)] * len(scored), chunksize=3))
        score_s = (time.perf_counter() - t0) * len(tasks) / len(scored)
    axes = [(t.task_id, (r.geometry, r.semantics, r.topology)) for t, r in zip(scored, results, strict=True)]
    perfect = sum(1 for _, a in axes if a == (1.0, 1.0, 1.0))
    failed = [tid for tid, a in axes if a != (1.0, 1.0, 1.0)]
    return [
        Figure("bimedit generate default split (324 tasks)", gen_s,
               baseline="naive: a fresh complex scene per complex base edit (ours + 54 builds; 3 timed)",
               baseline_seconds=gen_s + naive_s, extra={"tasks": len(tasks)}),
        Figure(f"bimedit score 324 oracle predictions (2 processes, projected from {len(scored)})", score_s,
               baseline="paper: 60 s per task x 324 (stated constant)",
               baseline_seconds=PAPER_SECONDS_PER_TASK * len(tasks), target_seconds=300.0,
               extra={"perfect": perfect, "scored": len(results), "tasks": len(tasks), "not_perfect": failed[:20]}),
    ]


if __name__ == "__main__":
    for fig in run():
        print(fig.to_dict())
