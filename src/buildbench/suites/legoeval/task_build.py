"""Building a LEGO-Eval task in the shape :mod:`.tasks` documents, its reference plans included.

Between the reference plans (:mod:`.plans`, which :func:`make_task` uses) and the generators
(which use it); :mod:`.tasks` re-exports :func:`make_task`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from buildbench.harness import Task

from .constraints import program_to_json
from .plans import reference_plans
from .task_records import SUITE, TYPES, ConstraintSpec, bucket_of


def twin_ids(pair: str) -> tuple[str, str]:
    """Task ids of a pair's aligned and misaligned scene: ``<pair>-a`` and ``<pair>-b``, which
    is which decided by a hash of the pair id, so that no id tells an agent its label (an MCP,
    Gymnasium or Inspect client sees task ids)."""
    first, second = f"{pair}-a", f"{pair}-b"
    return (second, first) if hashlib.sha256(pair.encode()).digest()[0] & 1 else (first, second)


def make_task(
    task_id: str,
    *,
    instruction: str,
    scene: Mapping[str, Any],
    constraints: Sequence[ConstraintSpec],
    labels: Sequence[bool],
    pair: str,
    aligned: bool,
    violated: Sequence[str] = (),
    source: str = "generated",
) -> Task:
    """Build a task in the documented shape."""
    if len(labels) != len(constraints):
        raise ValueError(f"task {task_id}: {len(labels)} labels for {len(constraints)} constraints")
    types = {t: sum(c.type == t for c in constraints) for t in TYPES}
    return Task(
        id=task_id,
        suite=SUITE,
        inputs={"instruction": instruction, "scene": dict(scene),
                "constraints": [c.to_input() for c in constraints]},
        target={"valid": all(labels), "labels": [bool(x) for x in labels],
                "programs": [None if c.program is None else program_to_json(c.program) for c in constraints],
                "plans": reference_plans(scene, [c.program for c in constraints])},
        metadata={"pair": pair, "aligned": aligned, "n_constraints": len(constraints),
                  "bucket": bucket_of(len(constraints)), "types": types, "violated": list(violated),
                  "source": source},
    )
