"""The DreamHouse demo: reference agents on a stratified sample under every protocol, in
both input conditions, tabulated in the layout of the paper's Table 1.

Rows are agent × protocol; columns are each metric under Frame/Facade, then the number of
tasks behind each cell. The Table 5 variant (Managed with per-step visual feedback) runs
under Frame only, as in the paper. Metrics the scorer does not produce are shown as ``–``.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.harness import BuildbenchError, RunConfig, Runner, run_report

from .protocols import TABLE6
from .report import protocol_label
from .views import CONDITIONS

#: Table 1's metric columns: (label, metric key).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("Struct", "structural_pass"),
    ("Visual", "visual_fidelity"),
    ("Topo", "topological_fidelity"),
    ("Joint", "joint_pass"),
)
AGENTS: tuple[str, ...] = ("oracle", "safe-house")
#: Protocols run under Frame only (the paper's Table 5 is Frame only).
FRAME_ONLY: frozenset[str] = frozenset({"planner-managed-visual"})

#: Called before each run with a one-line description, and after it with its time.
ProgressFn = Callable[[str], None]


@dataclass(frozen=True)
class DemoRow:
    """One agent × protocol row: each column's mean per condition (NaN when not measured) and
    the number of tasks (episodes) per condition."""

    agent: str
    protocol: str
    values: dict[str, dict[str, float]]
    episodes: int
    tasks: dict[str, int] | None = None


def demo_runs(protocols: tuple[str, ...] = tuple(TABLE6)) -> list[tuple[str, str, str]]:
    """The (agent, protocol, condition) runs of the demo, in order."""
    return [(agent, protocol, condition) for agent in AGENTS for protocol in protocols for condition in CONDITIONS
            if condition == "frame" or protocol not in FRAME_ONLY]


def run_demo(run_dir: str | Path, *, split: str = "demo", limit: int | None = None, workers: int = 2,
             options: dict[str, Any] | None = None, progress: ProgressFn | None = None) -> list[DemoRow]:
    """Run every reference agent under every protocol and condition; one run folder each.

    Args:
        run_dir: Parent folder of the runs (emptied first).
        split: Task split (``demo``: one task per style, roofs in turn).
        limit: First ``limit`` tasks only.
        workers: Worker processes per run.
        options: Extra run options (e.g. ``{"revisions": 2}`` to shorten refinement).
        progress: Told about each run as it starts and ends.

    Raises:
        BuildbenchError: When an episode fails to run.
    """
    root = Path(run_dir)
    if root.exists():
        shutil.rmtree(root)
    runs = demo_runs()
    results: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for k, (agent, protocol, condition) in enumerate(runs, start=1):
        out = root / f"{agent}-{protocol}-{condition}"
        config = RunConfig(suite="dreamhouse", agent=agent, protocol=protocol, split=split, limit=limit,
                           workers=workers, options={**(options or {}), "condition": condition})
        if progress:
            progress(f"[{k}/{len(runs)}] {agent} × {protocol} × {condition} …")
        t0 = time.perf_counter()
        Runner(config, out).run()
        rep = run_report(out)
        if rep["status"].get("error"):
            raise BuildbenchError(f"dreamhouse demo: {rep['status']['error']} episode(s) of "
                                  f"{agent}/{protocol}/{condition} failed; see `buildbench report {out}`")
        if progress:
            progress(f"[{k}/{len(runs)}] {agent} × {protocol} × {condition}: {rep['episodes']} tasks, "
                     f"{time.perf_counter() - t0:.1f} s")
        results.setdefault((agent, protocol), {})[condition] = rep
    return [_row(agent, protocol, by_cond) for (agent, protocol), by_cond in results.items()]


def _row(agent: str, protocol: str, by_cond: dict[str, dict[str, Any]]) -> DemoRow:
    values: dict[str, dict[str, float]] = {key: {} for _, key in COLUMNS}
    for condition, rep in by_cond.items():
        for _, key in COLUMNS:
            values[key][condition] = float(rep["metrics"].get(key, math.nan))
    tasks = {condition: int(rep["episodes"]) for condition, rep in by_cond.items()}
    return DemoRow(agent, protocol, values, sum(tasks.values()), tasks)


def demo_table(rows: list[DemoRow]) -> Any:
    """A rich table in Table 1's layout: each metric cell reads ``Frame/Facade``; ``tasks``
    gives the number of tasks behind each cell, Frame/Facade."""
    from rich.table import Table

    table = Table(title="DreamHouse, demo split: agent × protocol; cells Frame/Facade")
    table.add_column("agent", no_wrap=True)
    table.add_column("protocol", no_wrap=True)
    for label, _ in COLUMNS:
        table.add_column(label, justify="right", no_wrap=True)
    table.add_column("tasks", justify="right", no_wrap=True)
    for row in rows:
        cells = [row.agent, protocol_label(row.protocol)]
        for _, key in COLUMNS:
            parts = []
            for condition in CONDITIONS:
                v = row.values[key].get(condition, math.nan)
                parts.append("–" if math.isnan(v) else f"{v:.2f}")
            cells.append("/".join(parts))
        tasks = row.tasks or {}
        cells.append("/".join(str(tasks.get(c, 0)) if c in tasks else "–" for c in CONDITIONS))
        table.add_row(*cells)
    return table
