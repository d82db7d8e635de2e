"""``buildbench demo``: real evaluations end to end on built-in tasks, offline, no keys.

- DreamHouse: oracle and safe-house under all four protocols, Frame and Facade, on a
  stratified sample, printed in the layout of the paper's Table 1.
- BuildArena: the reference designs and the negative controls simulated on the Lv.1 tasks.
- BIM-Edit: the oracle, the no-op agent and a flawed agent on generated IFC edit tasks.
- SceneReVis: the scripted diagnose-and-act, one-pass, random and oracle agents on real
  prompts, chains and goal tasks, with OBR/CNR.
- LEGO-Eval: the deterministic evaluator and the baselines on the generated 130 + 130 pairs
  (Table 1), and the LLM pipeline driven by a scripted model through a loopback server.
- ``--suite example`` runs the tower walkthrough suite instead.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from buildbench.harness import BuildbenchError, RunConfig, Runner, run_report

DEMO_SUITES = ("dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval")


def _run(config: RunConfig, out: Path) -> dict[str, Any]:
    Runner(config, out, progress=False).run()
    rep = run_report(out)
    errors = rep["status"].get("error", 0)
    if errors:
        raise BuildbenchError(f"demo: {errors} episode(s) of {config.suite}/{config.agent} failed to run; "
                              f"see `buildbench report {out}`")
    return rep


def demo_dreamhouse(run_dir: Path, console: Console, limit: int) -> None:
    from buildbench.suites.dreamhouse.demo import demo_table, run_demo

    rows = run_demo(run_dir, limit=limit, options={"revisions": 2})
    console.print(demo_table(rows))


def demo_buildarena(run_dir: Path, console: Console) -> None:
    table = Table(title="BuildArena (MuJoCo): reference designs and negative controls, Lv.1 tasks")
    for col in ("agent", "episodes", "success rate", "indicator", "parts", "invalid actions"):
        table.add_column(col)
    for agent in ("reference", "negative"):
        config = RunConfig(suite="buildarena", agent=agent, protocol="workflow", split="demo")
        m = _run(config, run_dir / f"buildarena-{agent}")["metrics"]
        table.add_row(agent, "3", f"{m.get('passed', 0):.2f}", f"{m.get('indicator', 0):.2f}",
                      f"{m.get('parts', 0):.1f}", f"{m.get('invalid_action_rate', 0):.2f}")
    console.print(table)


def demo_bimedit(run_dir: Path, console: Console) -> None:
    table = Table(title="BIM-Edit: IFC edits scored on geometry / semantics / topology")
    for col in ("agent", "episodes", "final", "geometry", "semantics", "topology", "solved"):
        table.add_column(col)
    # The flawed agent only applies to wall-creation tasks; the demo split lists those first.
    for agent, limit in (("oracle", None), ("noop", None), ("uncontained-wall", 3)):
        config = RunConfig(suite="bimedit", agent=agent, protocol="tool-loop", split="demo", limit=limit)
        rep = _run(config, run_dir / f"bimedit-{agent}")
        m = rep["metrics"]
        table.add_row(agent, str(rep["episodes"]), *(f"{m.get(k, 0):.3f}" for k in
                                                     ("final", "geometry", "semantics", "topology", "solved")))
    console.print(table)


def demo_example(run_dir: Path, console: Console) -> None:
    table = Table(title="example suite (demo split): agents × protocols")
    for col in ("agent", "protocol", "episodes", "pass rate", "height ratio", "attempts"):
        table.add_column(col)
    for agent in ("reference", "repairing", "short", "floating"):
        for protocol in ("one-shot", "refine"):
            config = RunConfig(suite="example", agent=agent, protocol=protocol, split="demo")
            rep = _run(config, run_dir / f"example-{agent}-{protocol}")
            m = rep["metrics"]
            table.add_row(agent, protocol, str(rep["episodes"]), f"{m['passed']:.2f}",
                          f"{m['height_ratio']:.2f}", f"{m['attempts']:.1f}")
    console.print(table)


def run_demo(run_dir: Path, suites: tuple[str, ...] = DEMO_SUITES, *, dreamhouse_limit: int = 4) -> None:
    """Run the demo evaluations into ``run_dir`` (emptied first) and print their tables."""
    console = Console()
    if run_dir.exists():
        shutil.rmtree(run_dir)
    for name in suites:
        t0 = time.perf_counter()
        console.rule(f"[bold]{name}")
        if name == "dreamhouse":
            demo_dreamhouse(run_dir / "dreamhouse", console, dreamhouse_limit)
        elif name == "buildarena":
            demo_buildarena(run_dir, console)
        elif name == "bimedit":
            demo_bimedit(run_dir, console)
        elif name == "scenerevis":
            from buildbench.suites.scenerevis.demo import run_demo as demo_scenerevis

            demo_scenerevis(run_dir / "scenerevis", console)
        elif name == "legoeval":
            from buildbench.suites.legoeval.demo import run_demo as demo_legoeval

            demo_legoeval(run_dir / "legoeval", console)
        elif name == "example":
            demo_example(run_dir, console)
        else:
            raise BuildbenchError(f"demo: no demo for suite {name!r}; choose from {', '.join(DEMO_SUITES)}, example")
        console.print(f"{name}: {time.perf_counter() - t0:.0f} s")
    console.print(f"runs stored under {run_dir}; inspect any with `buildbench report {run_dir}/<run>`")
