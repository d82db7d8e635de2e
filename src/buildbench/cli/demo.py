"""``buildbench demo``: real evaluations end to end on built-in tasks, offline, no keys.

- DreamHouse: oracle and safe-house under all five protocols, Frame and Facade, on a
  stratified sample, printed in the layout of the paper's Table 1.
- BuildArena: the reference designs and the negative controls simulated on the Lv.1 tasks,
  one row per task (each task's indicator has its own unit).
- BIM-Edit: the oracle, the no-op agent and a flawed agent on generated IFC edit tasks.
- SceneReVis: the scripted diagnose-and-act, one-pass, random and oracle agents on real
  prompts, chains and goal tasks, with OBR/CNR.
- LEGO-Eval: the deterministic evaluator and the baselines on the generated 130 + 130 pairs
  (Table 1), and the LLM pipeline driven by a scripted model through a loopback server.
- Generators: two sets of generated rooms (SceneReVis's seeded generator and a degraded copy)
  scored by ``buildbench scenes evaluate`` with both suites, one row per generator.
- ``--suite example`` runs the tower walkthrough suite instead.

Every run announces itself on a line before it starts (the long ones show a progress bar on
a terminal), and every table says how many tasks each row or cell covers and fits 100
columns (:data:`TABLE_WIDTH`).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from buildbench.harness import BuildbenchError, RunConfig, Runner, Store, run_report

DEMO_SUITES = ("dreamhouse", "buildarena", "bimedit", "scenerevis", "legoeval", "generators")
#: The widest a demo table may be, in terminal columns.
TABLE_WIDTH = 100
#: BuildArena's indicator per task category and level (spec §3: the released analysers).
BUILDARENA_INDICATORS: dict[str, str] = {
    "transport": "max distance (units)", "support": "max load (mass units)", "lift-1": "thrust/weight",
    "lift": "max height (units)",
}  # fmt: skip
#: DreamHouse's demo budgets: 2 refinement revisions and 2 retries per episode instead of
#: Table 6's 10 and 5–30, so the whole demo stays within a few minutes on two cores.
DREAMHOUSE_DEMO_OPTIONS: dict[str, Any] = {"revisions": 2, "global_retries": 2}
#: BIM-Edit's flawed agent: tasks it runs on (it only applies to wall-creation tasks, listed first).
BIMEDIT_FLAWED_TASKS = 3


def _say(console: Console, text: str) -> None:
    """A progress line, shown at once (dim, so tables stand out)."""
    console.print(f"[dim]{text}[/dim]")


def _run(config: RunConfig, out: Path, console: Console) -> dict[str, Any]:
    what = f"{config.suite} / {config.agent} / {config.protocol}" + (f" / {config.split}" if config.split else "")
    _say(console, f"  running {what} …")
    t0 = time.perf_counter()
    Runner(config, out, progress=console.is_terminal).run()
    rep = run_report(out)
    errors = rep["status"].get("error", 0)
    if errors:
        raise BuildbenchError(f"demo: {errors} episode(s) of {config.suite}/{config.agent} failed to run; "
                              f"see `buildbench report {out}`")
    _say(console, f"  done: {rep['episodes']} tasks in {time.perf_counter() - t0:.1f} s")
    return rep


def demo_dreamhouse(run_dir: Path, console: Console, limit: int) -> None:
    from buildbench.suites.dreamhouse.demo import demo_table, run_demo

    rows = run_demo(run_dir, limit=limit, options=DREAMHOUSE_DEMO_OPTIONS, progress=lambda line: _say(console, "  " + line))
    console.print(demo_table(rows))


def buildarena_indicator(task_id: str) -> str:
    """What the indicator of a BuildArena task measures, with its unit."""
    category = task_id.split("-")[0]
    return BUILDARENA_INDICATORS.get(task_id, BUILDARENA_INDICATORS.get(category, "indicator"))


def buildarena_table(rows: list[tuple[str, str, int, dict[str, float]]]) -> Table:
    """One row per agent × task: pass, the task's own indicator (units differ), parts, invalid actions."""
    table = Table(title="BuildArena (MuJoCo), Lv.1: reference designs and negative controls, per task")
    for col in ("agent", "task", "tasks", "passed", "indicator", "measures", "parts", "invalid"):
        table.add_column(col, no_wrap=True, justify="left" if col in ("agent", "task", "measures") else "right")
    for agent, task_id, n, m in rows:
        table.add_row(agent, task_id, str(n), f"{m.get('passed', 0):.2f}", f"{m.get('indicator', 0):.2f}",
                      buildarena_indicator(task_id), f"{m.get('parts', 0):.0f}",
                      f"{m.get('invalid_action_rate', 0):.2f}")
    return table


def demo_buildarena(run_dir: Path, console: Console) -> None:
    rows: list[tuple[str, str, int, dict[str, float]]] = []
    for agent in ("reference", "negative"):
        config = RunConfig(suite="buildarena", agent=agent, protocol="workflow", split="demo")
        out = run_dir / f"buildarena-{agent}"
        _run(config, out, console)
        with Store(out, create=False) as store:
            by_task: dict[str, list[dict[str, float]]] = {}
            for ep in store.episodes():
                by_task.setdefault(ep.task_id, []).append(ep.metrics)
        for task_id, metrics in by_task.items():
            mean = {k: sum(float(m.get(k, 0.0)) for m in metrics) / len(metrics)
                    for k in ("passed", "indicator", "parts", "invalid_action_rate")}
            rows.append((agent, task_id, len(metrics), mean))
    console.print(buildarena_table(rows))


def bimedit_table(rows: list[tuple[str, int, dict[str, float]]]) -> Table:
    """One row per agent with the number of tasks it ran and its mean scores."""
    table = Table(title="BIM-Edit: IFC edits scored on geometry / semantics / topology",
                  caption=f"uncontained-wall edits walls only: it runs on the {BIMEDIT_FLAWED_TASKS} "
                          "wall-creation tasks of the demo split")
    for col in ("agent", "tasks", "final", "geometry", "semantics", "topology", "solved"):
        table.add_column(col, no_wrap=True, justify="left" if col == "agent" else "right")
    for agent, n, m in rows:
        table.add_row(agent, str(n), *(f"{m.get(k, 0):.3f}" for k in ("final", "geometry", "semantics", "topology",
                                                                         "solved")))
    return table


def demo_bimedit(run_dir: Path, console: Console) -> None:
    _say(console, "  BIM-Edit builds the demo split's IFC models first (about 30 s when not cached)")
    rows: list[tuple[str, int, dict[str, float]]] = []
    for agent, limit in (("oracle", None), ("noop", None), ("uncontained-wall", BIMEDIT_FLAWED_TASKS)):
        config = RunConfig(suite="bimedit", agent=agent, protocol="tool-loop", split="demo", limit=limit)
        rep = _run(config, run_dir / f"bimedit-{agent}", console)
        rows.append((agent, int(rep["episodes"]), rep["metrics"]))
    console.print(bimedit_table(rows))


def demo_example(run_dir: Path, console: Console) -> None:
    table = Table(title="example suite (demo split): agents × protocols")
    for col in ("agent", "protocol", "tasks", "pass rate", "height ratio", "attempts"):
        table.add_column(col)
    for agent in ("reference", "repairing", "short", "floating"):
        for protocol in ("one-shot", "refine"):
            config = RunConfig(suite="example", agent=agent, protocol=protocol, split="demo")
            rep = _run(config, run_dir / f"example-{agent}-{protocol}", console)
            m = rep["metrics"]
            table.add_row(agent, protocol, str(rep["episodes"]), f"{m['passed']:.2f}",
                          f"{m['height_ratio']:.2f}", f"{m['attempts']:.1f}")
    console.print(table)


def run_demo(run_dir: Path, suites: tuple[str, ...] = DEMO_SUITES, *, dreamhouse_limit: int = 4,
             console: Console | None = None) -> None:
    """Run the demo evaluations into ``run_dir`` and print their tables. The chosen suites'
    earlier demo runs there are replaced, other suites' kept (``--suite legoeval`` must not delete
    the SceneReVis images an earlier ``--suite scenerevis`` printed); a folder holding anything
    but demo runs is refused, never deleted (``--run-dir ~`` emptied the home folder)."""
    console = console or Console(width=max(TABLE_WIDTH, Console().width))
    owners = (*DEMO_SUITES, "example")

    def owner(entry: Path) -> str | None:
        return next((name for name in owners if entry.name == name or entry.name.startswith(name + "-")), None)

    if run_dir.exists():
        foreign = sorted(e.name for e in run_dir.iterdir()) if run_dir.is_dir() else [run_dir.name]
        foreign = [name for name in foreign if owner(run_dir / name) is None]
        if foreign:
            raise BuildbenchError(f"demo: --run-dir {run_dir}: holds {foreign[0]!r}, which is no demo run "
                                  "(nothing was removed); choose a new or demo-only folder")
        for entry in run_dir.iterdir():
            if owner(entry) in suites and entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            elif owner(entry) in suites:
                entry.unlink()
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

            _say(console, "  running the scripted SceneReVis agents on the demo prompts, chains and goal tasks …")
            demo_scenerevis(run_dir / "scenerevis", console)
        elif name == "legoeval":
            from buildbench.suites.legoeval.demo import run_demo as demo_legoeval

            _say(console, "  running the LEGO-Eval evaluators on 260 pairs, then the scripted LLM pipeline …")
            demo_legoeval(run_dir / "legoeval", console)
        elif name == "generators":
            from buildbench.scenes.evaluate_demo import run_demo as demo_generators

            _say(console, "  scoring two scene generators' rooms with LEGO-Eval and SceneReVis (scenes evaluate) …")
            console.print(demo_generators(run_dir / "generators"))
        elif name == "example":
            demo_example(run_dir, console)
        else:
            raise BuildbenchError(f"demo: no demo for suite {name!r}; choose from {', '.join(DEMO_SUITES)}, example")
        console.print(f"{name}: {time.perf_counter() - t0:.0f} s")
    console.print(f"runs stored under {run_dir}; inspect any with `buildbench report {run_dir}/<run>`")
