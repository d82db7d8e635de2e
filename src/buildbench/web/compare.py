"""The data of the viewer's "Compare runs" page, per suite.

Columns are run identities (`buildbench.harness.identity`), as in ``buildbench report``: runs
that differ in any setting are never merged, runs with the same identity (one run resumed into
two folders) share a column, a copy of a run folder beside it is left out with a note (it would
count every episode twice; ``buildbench report`` refuses it, `buildbench.harness.compare.pool_run`
decides for both), and each column is labelled by what differs between the columns
shown. A column carries every metric's mean with n and its task-clustered 95 % bootstrap
interval (`buildbench.harness.stats`) and the cost per episode (`buildbench.harness.cost`).
The per-task grid gives, for each task and column, the verdict of its episodes: solved,
failed or unscored when the suite's first headline metric is a 0/1 flag, else that metric's
mean, and where each episode is (run and sample), so the page can open them side by side.

Only the episode rows are read (no step logs), so a run of thousands of episodes stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.harness.compare import pool_run
from buildbench.harness.cost import cost_summary, solved_flag
from buildbench.harness.episode import Episode, is_scored
from buildbench.harness.identity import differing_fields, identity_label, run_identity
from buildbench.harness.stats import metric_intervals

from .runs import RunView

UNKNOWN_SUITE = "(unknown suite)"
#: Metrics charted when the suite names no headline metric (an unknown or unimportable suite).
FALLBACK_CHARTS = 4


def compare_view(runs: Sequence[RunView]) -> dict[str, Any]:
    """Per suite (in the order runs were given): its columns, headline metrics and task grid."""
    by_suite: dict[str, list[RunView]] = {}
    for run in runs:
        by_suite.setdefault(run.suite or UNKNOWN_SUITE, []).append(run)
    return {"suites": {suite: _suite_view(suite, members) for suite, members in by_suite.items()}}


def _headline(suite: str) -> tuple[list[str], dict[str, str]]:
    """The suite's headline metrics and their units (which decide whether the first is a 0/1 flag)."""
    from buildbench.harness.suite import get_suite

    try:
        found = get_suite(suite)
        return list(found.headline), dict(found.units)
    except Exception:  # the page must still open when the suite is not importable here
        return [], {}


def _episodes(run: RunView) -> list[Episode]:
    """The run's episodes as the aggregates need them: status, metrics, usage, duration."""
    cfg = run.config
    return [Episode(task_id=row["task_id"], sample=row["sample"], suite=run.suite, agent=str(cfg.get("agent")),
                    protocol=str(cfg.get("protocol")), seed=row["seed"], status=row["status"],
                    metrics=row["metrics"], usage=row["usage"], duration_s=float(row["duration_s"] or 0.0))
            for row in run.all_rows()]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return float(value)


def _suite_view(suite: str, runs: list[RunView]) -> dict[str, Any]:
    identities: dict[str, dict[str, Any]] = {}
    members: dict[str, list[tuple[RunView, list[Episode]]]] = {}
    held: dict[str, dict[tuple[str, int], tuple[str, Episode]]] = {}  # as `buildbench report` pools runs
    notes: list[str] = []
    for run in runs:
        episodes = _episodes(run)
        ident = run_identity(run.config, [ep.task_id for ep in episodes])
        key = repr(sorted(ident.items()))
        _, copy_of = pool_run(held.setdefault(key, {}), f"run {run.index} ({run.run_dir})", episodes)
        if copy_of is not None:  # `buildbench report` refuses it; the page still opens, without it
            notes.append(f"run {run.index} ({run.run_dir}) holds the episodes of {copy_of} unchanged (a copy of "
                         "one run?): left out of the columns and the grid, its episodes would count twice")
            continue
        identities.setdefault(key, ident)
        members.setdefault(key, []).append((run, episodes))
    fields = differing_fields(list(identities.values()))
    everything = [ep for found in members.values() for _, eps in found for ep in eps]
    headline, units = _headline(suite)
    flag = solved_flag(headline, everything, units)
    seen = sorted({k for ep in everything if is_scored(ep) for k, v in ep.metrics.items() if _number(v) is not None})
    charts = [m for m in headline if m in seen] or seen[:FALLBACK_CHARTS]
    grid_metric = flag or (charts[0] if charts else None)

    columns = []
    for key, found in members.items():
        episodes = [ep for _, eps in found for ep in eps]
        status: dict[str, int] = {}
        for ep in episodes:
            status[ep.status] = status.get(ep.status, 0) + 1
        columns.append({
            "label": identity_label(identities[key], fields), "identity": identities[key],
            "runs": [{"id": run.index, "name": run.run_dir.name} for run, _ in found],
            "episodes": len(episodes), "unscored": sum(1 for ep in episodes if not is_scored(ep)),
            "status": status, "intervals": metric_intervals(episodes),
            "cost": cost_summary(episodes, solved_metric=flag, model=identities[key].get("model")),
        })
    task_sets = sorted({ident["task set"] for ident in identities.values()})
    if len(task_sets) > 1:
        notes.insert(0, f"the columns cover different task sets ({'; '.join(task_sets)}): their means are not "
                        "over the same tasks")
    return {"headline": charts, "metrics": seen, "differs_in": fields, "notes": notes, "columns": columns,
            "grid": _grid([[(run.index, eps) for run, eps in found] for found in members.values()],
                          grid_metric, binary=flag is not None)}


def _grid(columns: list[list[tuple[int, list[Episode]]]], metric: str | None, *, binary: bool) -> dict[str, Any]:
    """One row per task id (sorted), one cell per column: None where the column lacks the task."""
    cells: dict[str, list[list[dict[str, Any]] | None]] = {}
    for c, found in enumerate(columns):
        for run, episodes in found:
            for ep in episodes:
                row = cells.setdefault(ep.task_id, [None] * len(columns))
                value = _number(ep.metrics.get(metric)) if metric and is_scored(ep) else None
                entry = {"run": run, "sample": ep.sample, "status": ep.status, "scored": is_scored(ep),
                         "value": value}
                slot = row[c]
                if slot is None:
                    row[c] = [entry]
                else:
                    slot.append(entry)
    values = [e["value"] for row in cells.values() for slot in row if slot for e in slot if e["value"] is not None]
    rows = [{"task": task, "cells": [None if slot is None else _cell(slot, binary) for slot in row]}
            for task, row in sorted(cells.items())]
    return {"metric": metric, "binary": binary, "range": [min(values), max(values)] if values else None,
            "rows": rows}


def _cell(episodes: list[dict[str, Any]], binary: bool) -> dict[str, Any]:
    """The verdict of one task's episodes in one column, with counts and the episodes."""
    episodes.sort(key=lambda e: (e["run"], e["sample"]))
    scored = [e for e in episodes if e["scored"]]
    values = [e["value"] for e in scored if e["value"] is not None]
    solved = sum(1 for v in values if v >= 0.5) if binary else 0
    failed = len(scored) - solved if binary else 0
    if not scored:
        verdict = "unscored"
    elif not binary:
        verdict = "scored"
    elif failed == 0:
        verdict = "solved"
    elif solved == 0:
        verdict = "failed"
    else:
        verdict = "mixed"
    return {"verdict": verdict, "n": len(episodes), "solved": solved, "failed": failed,
            "unscored": len(episodes) - len(scored), "mean": sum(values) / len(values) if values else None,
            "episodes": episodes}
