"""BuildArena physics: each task's reference design simulated, and 64 samples across 2 workers.

* ``buildarena-sim-<task>``: one full simulation of the task's reference
  design (compile + run, one core, after a short warm-up run). Baseline: the original simulates in
  Besiege in real time (plus GUI automation), so its time is the simulated
  duration; the target is 20× faster than real time. Support runs end when
  the cargo falls (the rule is decided then), so their simulated time is
  what was actually simulated. ``extra`` also holds the CPU seconds and
  the 1-minute load average: on a shared machine the wall clock counts
  time spent waiting for a core, so ``x_real_time_cpu`` is the speed on
  one core. ``sim_s_per_cpu_s`` is simulated seconds per CPU second with the
  physics profile's drag and divergence checks; ``bare_step_cpu_s`` is MuJoCo's bare
  ``mj_step`` on the same compiled model (the scene as built, no controls,
  weld analysis or checks) for the same number of steps, in the same process;
  ``x_bare_step`` is their ratio (the goal of a separate issue: ≤ 1.5).
* ``buildarena-sim-64x-lift-2``: 64 seeded samples of Lift Lv.2 on a pool of
  2 worker processes; baseline: 64 real-time runs one after another.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import NamedTuple

import mujoco
from _common import Figure

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulate, simulation
from buildbench.suites.buildarena.physics import DEFAULT_CONFIG
from buildbench.suites.buildarena.tasks import TASKS

TARGET_SPEEDUP = 20.0
POOL_TASK = "lift-2"
POOL_SAMPLES = 64
POOL_WORKERS = 2


class _Timed(NamedTuple):
    """One timed simulation: wall and CPU seconds, simulated seconds, verdict, physics steps, retries."""

    wall_s: float
    cpu_s: float
    simulated_s: float
    passed: bool
    steps: int
    retries: int


def _one(task_id: str, seed: int = 0) -> _Timed:
    """Simulate the reference of ``task_id`` and time it.

    CPU seconds are reported beside wall seconds: on a shared machine the
    wall clock also counts time the process waited for a core, while one
    simulation never uses more than one.
    """
    machine = designs.build(designs.REFERENCE[task_id]())
    wall0, cpu0 = time.perf_counter(), time.process_time()
    result = simulate(machine, task_id, seed=seed)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return _Timed(wall, cpu, float(result.metrics["simulated_s"]), result.passed, int(result.metrics["steps"]),
                  int(result.metrics["retries"]))


def _bare_steps(task_id: str, steps: int) -> float:
    """CPU seconds of ``steps`` bare ``mj_step`` calls on the compiled model of ``task_id``'s reference."""
    model = simulation(designs.build(designs.REFERENCE[task_id]()), task_id).model
    data = mujoco.MjData(model)
    cpu0 = time.process_time()
    mujoco.mj_step(model, data, steps)
    return time.process_time() - cpu0


def run() -> list[Figure]:
    """Time every task's reference design, then the 64-sample pool."""
    # One short run first: the timed runs measure simulation, not first imports.
    simulate(designs.build(designs.REFERENCE["support-1"]()), "support-1", duration_s=1.0)
    figures = []
    for task_id in TASKS:
        run_ = _one(task_id)
        bare = _bare_steps(task_id, run_.steps)
        simulated = run_.simulated_s
        figures.append(
            Figure(
                name=f"buildarena-sim-{task_id}",
                seconds=run_.wall_s,
                baseline="original: Besiege in real time",
                baseline_seconds=simulated,
                target_seconds=simulated / TARGET_SPEEDUP,
                extra={
                    "simulated_s": simulated,
                    "x_real_time": simulated / run_.wall_s,
                    "cpu_s": run_.cpu_s,
                    "x_real_time_cpu": simulated / run_.cpu_s,
                    "passed": run_.passed,
                    "physics": DEFAULT_CONFIG.profile_name,
                    "sim_s_per_cpu_s": simulated / run_.cpu_s,
                    "bare_step_cpu_s": bare,
                    "x_bare_step": run_.cpu_s / bare if bare > 0 else None,
                    "retries": run_.retries,
                    "load_average_1min": os.getloadavg()[0],
                },
            )
        )
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=POOL_WORKERS) as pool:
        results = list(pool.map(partial(designs.run_reference, POOL_TASK), range(POOL_SAMPLES)))
    wall = time.perf_counter() - start
    simulated = sum(float(r.metrics["simulated_s"]) for r in results)
    figures.append(
        Figure(
            name=f"buildarena-sim-{POOL_SAMPLES}x-{POOL_TASK}",
            seconds=wall,
            baseline="original: 64 real-time runs in sequence",
            baseline_seconds=simulated,
            target_seconds=simulated / TARGET_SPEEDUP,
            extra={
                "workers": POOL_WORKERS,
                "samples_per_s": POOL_SAMPLES / wall,
                "simulated_s_per_wall_s": simulated / wall,
                "passed": sum(r.passed for r in results),
            },
        )
    )
    return figures
