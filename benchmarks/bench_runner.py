"""Runner overhead: zero-latency episodes, and slow model-like episodes in flight."""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from _common import Figure, check_run

from buildbench.harness import Action, RunConfig, Runner
from buildbench.suites.example.agents import tower_design
from buildbench.suites.example.env import TowerEnv
from buildbench.suites.example.generate import make_task
from buildbench.suites.example.score import score


def _bare_loop(n: int) -> float:
    """Baseline: the same env/check/score work in a plain for-loop, no harness, no store."""
    t0 = time.perf_counter()
    for i in range(n):
        task = make_task(i, 0)
        env = TowerEnv(task)
        env.reset(task)
        env.step(Action(data={"blocks": tower_design(task)}))
        score(task, env.outcome())
    return time.perf_counter() - t0


def _runner(n_tasks: int, samples: int, **kw) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(suite="example", protocol="one-shot", samples=samples, **kw)
        t0 = time.perf_counter()
        result = Runner(config, Path(tmp) / "run").run()
        elapsed = time.perf_counter() - t0
    check_run(result, n_tasks * samples)
    return elapsed


#: Zero-latency episodes per figure (a multiple of the 50 tasks).
ZERO_LATENCY = 100
#: Episodes of the 1 s agent at concurrency 50: one wave of sleeps, all in flight at once.
SLOW = 50
#: The wave's 1 s of sleeping plus at most 1 s of runner overhead (the issue's 5 s for 200 episodes, 4 waves).
SLOW_TARGET_S = 2.0


async def _bare_sleeps(n: int, concurrency: int, delay: float) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await asyncio.sleep(delay)

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - t0


def run() -> list[Figure]:
    # Each episode plays in its own process, so a few hundred give a stable ratio; the default
    # split has 50 tasks, samples per task set the count.
    pool = _runner(50, ZERO_LATENCY // 50, agent="reference", workers=2)
    inproc = _runner(50, ZERO_LATENCY // 50, agent="reference", workers=0)
    bare = _bare_loop(ZERO_LATENCY)
    slow = _runner(50, SLOW // 50, agent="slow-reference", concurrency=50, options={"delay_s": 1.0})
    ideal = asyncio.run(_bare_sleeps(SLOW, 50, 1.0))
    return [
        Figure(f"runner: {ZERO_LATENCY:,} zero-latency episodes (2 workers, stored)", pool, "bare env loop, no store",
               bare, extra={"episodes_per_s": ZERO_LATENCY / pool}),
        Figure(f"runner: {ZERO_LATENCY:,} zero-latency episodes (in-process, stored)", inproc,
               "bare env loop, no store", bare, extra={"episodes_per_s": ZERO_LATENCY / inproc}),
        Figure(f"runner: {SLOW} episodes x 1 s agent at concurrency 50", slow,
               f"{SLOW} bare 1 s sleeps at concurrency 50", ideal, target_seconds=SLOW_TARGET_S),
    ]
