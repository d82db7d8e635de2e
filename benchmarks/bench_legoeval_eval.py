"""LEGO-Eval: the whole deterministic 260-pair evaluation (issue target ≤ 2 min on 2 cores;
the paper reports about 2 hours per run with AI2-THOR and hosted models).

Ours: every task's house JSON read once, every constraint sentence parsed by the template
grammar and checked with the geometric relations (one candidate pool and one cached scene
index per house). Baseline, timed in the same run: the same checks done the way a
tool-calling evaluator does them, re-reading the house JSON for every constraint, so
nothing derived from a scene is shared between constraints. Generating the 130 + 130
pairs is reported as its own figure (no baseline: nothing else makes them).
"""

from __future__ import annotations

import time

from _common import Figure, median_time

from buildbench.harness import Task
from buildbench.scenes.io import load_scene
from buildbench.suites.legoeval.check import deterministic, evaluate
from buildbench.suites.legoeval.metrics import agreement_row
from buildbench.suites.legoeval.tasks import generated_tasks

TARGET_S = 120.0


def _ours(tasks: list[Task]) -> list[dict]:
    return [deterministic(t) for t in tasks]


def _per_constraint(tasks: list[Task]) -> int:
    held = 0
    for t in tasks:
        for c in t.inputs["constraints"]:
            scene = load_scene(dict(t.inputs["scene"]))
            held += bool(evaluate(scene, [{"id": c["id"], "text": c["text"]}])[0].holds)
    return held


def run() -> list[Figure]:
    t0 = time.perf_counter()
    tasks = generated_tasks(130, seed=0)
    gen_s = time.perf_counter() - t0
    outcomes = _ours(tasks)
    row = agreement_row(list(zip(tasks, outcomes, strict=True)))
    ours = median_time(lambda: _ours(tasks), repeat=3, warmup=0)
    base = median_time(lambda: _per_constraint(tasks), repeat=1, warmup=0)
    n_constraints = sum(len(t.inputs["constraints"]) for t in tasks)
    table1 = {"holistic_f1": row.holistic.f1, "holistic_kappa": row.holistic.kappa,
              "partial_f1": row.partial.f1, "partial_kappa": row.partial.kappa,
              "unknown_constraints": row.partial.n_unknown}
    return [
        Figure("legoeval deterministic evaluation, 260 pairs", ours, baseline="re-read scene per constraint",
               baseline_seconds=base, target_seconds=TARGET_S,
               extra={"tasks": len(tasks), "constraints": n_constraints, "table1": table1}),
        Figure("legoeval generate 130 + 130 pairs", gen_s, extra={"pairs": 130}),
    ]


if __name__ == "__main__":
    for figure in run():
        print(figure.to_dict())
