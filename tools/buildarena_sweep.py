"""Developer tool: simulate every reference design and negative control on the nine levels and on seeded
variants, and count verdicts and divergences (the full sweep behind ``test_sweep.py``'s seeded slice).

    .venv/bin/python tools/buildarena_sweep.py --per-level 100 --seed 0 --jobs 1 [--physics NAME|FILE]

Prints one line per level and a total: simulations, references passed, controls failed, runs whose
first attempt diverged (and were re-simulated with a finer step), runs that ended ``diverged``, and CPU
seconds. ``--out FILE.jsonl`` keeps one record per simulation. Exit status 1 when any reference fails,
any control passes, or any run ends diverged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from buildbench.suites.buildarena import designs, variants
from buildbench.suites.buildarena.check import simulate
from buildbench.suites.buildarena.levels import TASKS
from buildbench.suites.buildarena.physics.config import config_for


def _negative(task_id: str) -> designs.Design:
    level = variants.level_of(task_id)
    name = next(n for n, (t, _) in designs.NEGATIVE.items() if t == level)
    return designs.control_design(task_id, name)


def run_one(args: tuple[str, str, str | None]) -> dict[str, Any]:
    """Simulate one (task, kind) pair; ``kind`` is ``reference`` or ``negative``."""
    task_id, kind, physics = args
    design = designs.REFERENCE[task_id]() if kind == "reference" else _negative(task_id)
    t0 = time.process_time()
    result = simulate(designs.build(design), task_id, config=config_for(physics))
    return {
        "task": task_id, "level": variants.level_of(task_id), "kind": kind, "passed": result.passed,
        "indicator": float(result.indicator), "status": result.status, "retries": result.metrics["retries"],
        "diverged_at_s": result.metrics["diverged_at_s"], "reason": result.reason,
        "cpu_s": time.process_time() - t0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-level", type=int, default=100, help="seeded variants per varied level")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--physics", default=None, help="physics profile name or file (default besiege-1)")
    parser.add_argument("--out", default=None, help="write one JSON record per simulation")
    ns = parser.parse_args(argv)
    config_for(ns.physics)  # a bad profile fails here, before any work
    tasks = list(TASKS) + [v.id for v in variants.generate(ns.seed, ns.per_level * len(variants.VARIED_LEVELS))]
    jobs = [(t, kind, ns.physics) for t in tasks for kind in ("reference", "negative")]
    wall0 = time.perf_counter()
    records = []
    # Each record is written as it arrives, so an interrupted sweep keeps what it did.
    with ProcessPoolExecutor(ns.jobs) as pool, open(ns.out or "/dev/null", "w", encoding="utf-8") as fh:
        for record in pool.map(run_one, jobs, chunksize=4):
            records.append(record)
            fh.write(json.dumps(record) + "\n")
            fh.flush()
    rows: dict[str, Counter[str]] = {}
    for r in records:
        row = rows.setdefault(r["level"], Counter())
        row["sims"] += 1
        row["cpu_ms"] += int(1000 * r["cpu_s"])
        ok = r["passed"] if r["kind"] == "reference" else not r["passed"]
        row[f"{r['kind']}_right"] += ok
        row[f"{r['kind']}_n"] += 1
        row["retried"] += r["retries"] > 0
        row["diverged"] += r["status"] != "ok"
    total: Counter[str] = Counter()
    print(f"{'level':12} sims  ref-pass  neg-fail  retried  diverged  cpu-s")
    for level in sorted(rows):
        row = rows[level]
        total.update(row)
        print(f"{level:12} {row['sims']:4}  {row['reference_right']:4}/{row['reference_n']:<4} "
              f"{row['negative_right']:4}/{row['negative_n']:<4} {row['retried']:7}  {row['diverged']:8}  "
              f"{row['cpu_ms'] / 1000:6.1f}")
    print(f"{'total':12} {total['sims']:4}  {total['reference_right']:4}/{total['reference_n']:<4} "
          f"{total['negative_right']:4}/{total['negative_n']:<4} {total['retried']:7}  {total['diverged']:8}  "
          f"{total['cpu_ms'] / 1000:6.1f}   (wall {time.perf_counter() - wall0:.0f} s)")
    for r in records:
        wrong = (not r["passed"]) if r["kind"] == "reference" else r["passed"]
        if wrong or r["status"] != "ok" or r["retries"]:
            print(f"  {r['kind']} {r['task']}: passed={r['passed']} status={r['status']} retries={r['retries']} "
                  f"— {r['reason']}")
    bad = (total["reference_right"] < total["reference_n"] or total["negative_right"] < total["negative_n"]
           or total["diverged"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
