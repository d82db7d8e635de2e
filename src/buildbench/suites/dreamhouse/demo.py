"""The DreamHouse demo: reference agents on a stratified sample under every protocol, in
both input conditions, tabulated in the layout of the paper's Table 1.

Rows are agent × protocol; columns are each metric under Frame / Facade. Metrics the
scorer does not (yet) produce are shown as ``–``.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.harness import BuildbenchError, RunConfig, Runner, run_report

from .protocols import TABLE6
from .views import CONDITIONS

#: Table 1's metric columns: (label, metric key).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("Struct", "structural_pass"),
    ("Visual", "visual_fidelity"),
    ("Topo", "topological_fidelity"),
    ("Joint", "joint_pass"),
)
AGENTS: tuple[str, ...] = ("oracle", "safe-house")


@dataclass(frozen=True)
class DemoRow:
    """One agent × protocol row: each column's mean per condition (NaN when not measured)."""

    agent: str
    protocol: str
    values: dict[str, dict[str, float]]
    episodes: int


def run_demo(run_dir: str | Path, *, split: str = "demo", limit: int | None = None, workers: int = 2,
             options: dict[str, Any] | None = None) -> list[DemoRow]:
    """Run every reference agent under every protocol and condition; one run folder each.

    Args:
        run_dir: Parent folder of the runs (emptied first).
        split: Task split (``demo``: one task per style, roofs in turn).
        limit: First ``limit`` tasks only.
        workers: Worker processes per run.
        options: Extra run options (e.g. ``{"revisions": 2}`` to shorten refinement).

    Raises:
        BuildbenchError: When an episode fails to run.
    """
    root = Path(run_dir)
    if root.exists():
        shutil.rmtree(root)
    rows = []
    for agent in AGENTS:
        for protocol in TABLE6:
            values: dict[str, dict[str, float]] = {key: {} for _, key in COLUMNS}
            episodes = 0
            for condition in CONDITIONS:
                out = root / f"{agent}-{protocol}-{condition}"
                config = RunConfig(suite="dreamhouse", agent=agent, protocol=protocol, split=split, limit=limit,
                                   workers=workers, options={**(options or {}), "condition": condition})
                Runner(config, out).run()
                rep = run_report(out)
                if rep["status"].get("error"):
                    raise BuildbenchError(f"dreamhouse demo: {rep['status']['error']} episode(s) of "
                                          f"{agent}/{protocol}/{condition} failed; see `buildbench report {out}`")
                episodes += int(rep["episodes"])
                for _, key in COLUMNS:
                    values[key][condition] = float(rep["metrics"].get(key, math.nan))
            rows.append(DemoRow(agent, protocol, values, episodes))
    return rows


def demo_table(rows: list[DemoRow]) -> Any:
    """A rich table in Table 1's layout: each metric cell reads ``Frame / Facade``."""
    from rich.table import Table

    table = Table(title="DreamHouse (demo split): agent × protocol (Planner-…); cells are Frame/Facade")
    table.add_column("agent", no_wrap=True)
    table.add_column("protocol", no_wrap=True)
    for label, _ in COLUMNS:
        table.add_column(label, justify="right", no_wrap=True)
    for row in rows:
        cells = [row.agent, row.protocol.removeprefix("planner-").replace("iterative-", "")]
        for _, key in COLUMNS:
            parts = []
            for condition in CONDITIONS:
                v = row.values[key].get(condition, math.nan)
                parts.append("–" if math.isnan(v) else f"{v:.2f}")
            cells.append("/".join(parts))
        table.add_row(*cells)
    return table
