"""``buildbench demo``: a real evaluation end to end on built-in tasks, offline."""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console
from rich.table import Table

from buildbench.harness import BuildbenchError, RunConfig, Runner, run_report


def run_demo(run_dir: Path) -> None:
    """Evaluate reference, repairing and negative-control agents on the example suite."""
    console = Console()
    if run_dir.exists():
        shutil.rmtree(run_dir)
    table = Table(title="example suite (demo split): agents × protocols")
    for col in ("agent", "protocol", "episodes", "pass rate", "height ratio", "attempts"):
        table.add_column(col)
    for agent in ("reference", "repairing", "short", "floating"):
        for protocol in ("one-shot", "refine"):
            config = RunConfig(suite="example", agent=agent, protocol=protocol, split="demo", seed=0)
            out = run_dir / f"example-{agent}-{protocol}"
            Runner(config, out, progress=False).run()
            rep = run_report(out)
            m = rep["metrics"]
            errors = rep["status"].get("error", 0)
            if errors:
                raise BuildbenchError(f"demo: {errors} episode(s) of {agent}/{protocol} failed to run; "
                                      f"see `buildbench report {out}`")
            table.add_row(agent, protocol, str(rep["episodes"]), f"{m['passed']:.2f}",
                          f"{m['height_ratio']:.2f}", f"{m['attempts']:.1f}")
    console.print(table)
    console.print(f"runs stored under {run_dir}; inspect one with `buildbench report {run_dir}/example-reference-refine`")
