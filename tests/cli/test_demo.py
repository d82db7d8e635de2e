"""``buildbench demo``: progress while it works; every table fits 100 columns and says how many
tasks each row or cell covers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from buildbench.cli import demo
from buildbench.harness import BuildbenchError
from buildbench.suites.dreamhouse import demo as dreamhouse_demo
from buildbench.suites.dreamhouse.demo import COLUMNS, DemoRow, demo_runs, demo_table


def _text(renderable: Any, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def assert_fits(renderable: Any, width: int = demo.TABLE_WIDTH) -> str:
    """The table renders the same at ``width`` as on an unlimited console: nothing wrapped or cut."""
    text = _text(renderable, width)
    assert text == _text(renderable, 400), "the table wraps or truncates at 100 columns"
    assert max(len(line) for line in text.splitlines()) <= width
    return text


def _dreamhouse_rows() -> list[DemoRow]:
    rows = []
    for agent, protocol, _ in demo_runs():
        if any(r.agent == agent and r.protocol == protocol for r in rows):
            continue
        frame_only = protocol in dreamhouse_demo.FRAME_ONLY
        values = {key: {"frame": 0.123, **({} if frame_only else {"facade": math.nan})} for _, key in COLUMNS}
        rows.append(DemoRow(agent, protocol, values, 8, {"frame": 4} if frame_only else {"frame": 4, "facade": 4}))
    return rows


def test_dreamhouse_table_fits_with_task_counts() -> None:
    rows = _dreamhouse_rows()
    assert {r.protocol for r in rows} >= {"planner-managed-visual", "iterative-refinement"}
    text = assert_fits(demo_table(rows))
    assert "(Planner-" not in text and "Frame/Facade" in text
    assert "tasks" in text and "4/4" in text and "4/–" in text  # managed+v runs under Frame only
    assert "managed+v" in text and "0.12/–" in text


def test_buildarena_table_reports_each_task_with_its_own_unit() -> None:
    metrics = {"passed": 1.0, "indicator": 305.7269, "parts": 9.0, "invalid_action_rate": 0.0}
    rows = [(agent, task, 1, metrics) for agent in ("reference", "negative")
            for task in ("transport-1", "support-1", "lift-1")]
    text = assert_fits(demo.buildarena_table(rows))
    for unit in ("max distance (units)", "max load (mass units)", "thrust/weight"):
        assert unit in text
    assert demo.buildarena_indicator("lift-2") == "max height (units)"
    assert "tasks" in text and "305.73" in text


def test_bimedit_table_says_why_one_agent_ran_fewer_tasks() -> None:
    metrics = {k: 1.0 for k in ("final", "geometry", "semantics", "topology", "solved")}
    text = assert_fits(demo.bimedit_table([("oracle", 12, metrics), ("noop", 12, metrics),
                                           ("uncontained-wall", 3, metrics)]))
    assert "tasks" in text and "wall-creation tasks" in text


def test_scenerevis_and_legoeval_tables_fit_with_task_counts() -> None:
    from buildbench.suites.legoeval.demo import _table1
    from buildbench.suites.scenerevis.demo import demo_table as scenerevis_table

    rep = {"episodes": 12, "metrics": {"oob_rate": 12.5, "collision_rate": 3.25, "collision_free": 80.0,
                                       "valid_placement": 75.0, "n_objects": 9.5, "turns": 4.0, "Avg": 7.5}}
    text = assert_fits(scenerevis_table([("diagnose", "demo", rep), ("one-pass", "goal", rep)]))
    assert "eps" in text and "12" in text
    rows = [{"method": "deterministic", "source": "ours", "hol_f1": 1.0, "hol_kappa": 1.0, "part_f1": 1.0,
             "part_kappa": 1.0, "unknown_constraints": 0}]
    assert "130 + 130" in assert_fits(_table1("LEGO-Eval Table 1: agreement with labels on the generated "
                                                    "130 + 130 pairs", rows))


# That the example demo announces each run before its table is checked with its table's snapshot
# (tests/harness/test_behaviour_snapshots.py), from the same eight runs.


def test_the_dreamhouse_demo_reports_progress_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dreamhouse_demo, "demo_runs", lambda: [("oracle", "planner-atomic", "frame")])
    lines: list[str] = []
    rows = dreamhouse_demo.run_demo(tmp_path, limit=1, workers=0, options={"images": "off"}, progress=lines.append)
    assert lines[0] == "[1/1] oracle × planner-atomic × frame …"
    assert lines[1].startswith("[1/1] oracle × planner-atomic × frame: 1 tasks, ")
    (row,) = rows
    assert row.tasks == {"frame": 1} and row.values["structural_pass"]["frame"] == 1.0


def test_a_demo_replaces_only_its_own_suites_runs_and_never_a_foreign_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the example runs themselves are tested above: here only which folders survive
    monkeypatch.setattr(demo, "demo_example", lambda run_dir, console: (run_dir / "example-reference-one-shot").mkdir())
    runs = tmp_path / "runs"
    (runs / "scenerevis" / "mesh-renders").mkdir(parents=True)
    (runs / "scenerevis" / "mesh-renders" / "room.png").write_bytes(b"png")
    (runs / "example-stale").mkdir()
    console = Console(width=demo.TABLE_WIDTH, record=True, color_system=None)
    demo.run_demo(runs, ("example",), console=console)
    assert (runs / "scenerevis" / "mesh-renders" / "room.png").read_bytes() == b"png"
    assert not (runs / "example-stale").exists() and (runs / "example-reference-one-shot").is_dir()
    (tmp_path / "thesis.tex").write_text("mine")
    with pytest.raises(BuildbenchError, match=r"holds 'runs', which is no demo run \(nothing was removed\)"):
        demo.run_demo(tmp_path, ("example",), console=console)
    assert (tmp_path / "thesis.tex").read_text() == "mine" and (runs / "scenerevis").is_dir()
