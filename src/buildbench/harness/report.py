"""Reading a stored run back as numbers and tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .cost import Prices, cost_summary, solved_flag
from .episode import add_usage, is_scored
from .episode_outcome import OutcomeReadError
from .identity import run_identity
from .run_options import with_run_options
from .stats import metric_intervals, pass_at_k_summary
from .store import Store
from .suite import Summarizer, counted_as_failures, get_suite, mean_metrics
from .tables import cell_intervals, interval_span, number_text, paper_table, print_table

__all__ = ["cost_rows", "paper_table", "print_report", "run_report"]


def run_report(run_dir: str | Path, *, errors_as_failures: bool = False,
               prices: Prices | None = None) -> dict[str, Any]:
    """The run's metrics as one JSON-serialisable object.

    Recomputed from the committed episodes (not the cached summary), so a run that was
    killed before it finished still reports what it has. Episodes without a result (errors,
    API failures) stay out of every mean and are counted under ``unscored``; with
    ``errors_as_failures`` they count as failed episodes (the suite's failing values) instead, as some
    papers report. ``cost`` gives tokens, requests and wall time per episode and per solved
    task (money too with ``prices``). ``pass_at_k`` (suites whose first headline metric is a 0/1
    flag) gives the unbiased pass@1 and pass@k for the largest k every task has samples for;
    ``table_intervals`` the 95 % intervals of the paper tables' cells that have one.
    """
    with Store(run_dir, create=False) as store:
        manifest = store.manifest()
        config = store.run_config()
        episodes = list(store.episodes())
    unscored = sum(1 for ep in episodes if not is_scored(ep))
    episodes = with_run_options(episodes, config)  # what a summary groups by may be a run option
    if errors_as_failures:
        episodes = counted_as_failures(config.get("suite"), episodes)
    suite_name = config.get("suite")
    summarize: Summarizer = mean_metrics
    headline: list[str] = []
    units: dict[str, str] = {}
    if suite_name:
        try:
            suite = get_suite(suite_name)
            summarize, headline, units = suite.summarize or mean_metrics, list(suite.headline), dict(suite.units)
        except Exception:  # a report must still open if the suite is not importable here
            summarize = mean_metrics
    usage: dict[str, int] = {}
    for ep in episodes:
        usage = add_usage(usage, ep.usage)
    try:
        summary = summarize(episodes)
    except OutcomeReadError as exc:
        raise exc.in_run(run_dir) from None
    flag = solved_flag(headline, episodes, units)
    return {
        "run_dir": str(run_dir),
        "suite": suite_name,
        "agent": config.get("agent"),
        "protocol": config.get("protocol"),
        "model": config.get("model"),
        "expected_episodes": manifest.get("tasks", 0) * config.get("samples", 1),
        "identity": run_identity(config, [ep.task_id for ep in episodes]),
        **summary,
        "headline": headline,
        "units": units,
        "intervals": metric_intervals(episodes),
        "table_intervals": cell_intervals(summary.get("tables") or {}),
        "pass_at_k": pass_at_k_summary(episodes, flag) if flag else None,
        "cost": cost_summary(episodes, solved_metric=flag, model=config.get("model"), prices=prices),
        "unscored": unscored,
        "errors_as_failures": errors_as_failures,
        "usage": usage,
    }


def print_report(report: dict[str, Any], *, show_all: bool = False) -> None:
    """Render ``run_report``'s output as terminal tables: who ran what, the suite's headline
    metrics with their intervals, its paper tables, cost; every other metric with ``show_all``.
    Each table fits the terminal (split by columns when it must be)."""
    from rich.console import Console

    console = Console()
    console.print(f"run {report['run_dir']}", soft_wrap=True, highlight=False)
    status = ", ".join(f"{k}: {v}" for k, v in sorted(report.get("status", {}).items()))
    head = [{"field": key, "value": "—" if report.get(key) is None else str(report.get(key))}
            for key in ("suite", "agent", "protocol", "model", "episodes", "expected_episodes", "unscored")]
    head.append({"field": "status", "value": status})
    print_table(console, "run", head)
    metrics = report.get("metrics", {})
    headline = [k for k in report.get("headline", []) if k in metrics] or (list(metrics) if show_all else [])
    if not headline:
        headline = list(metrics)[:8]
    rest = [k for k in metrics if k not in headline]
    intervals = report.get("intervals", {})
    title = "mean over scored episodes, 95 % bootstrap interval clustered by task"
    units = report.get("units") or {}
    print_table(console, f"headline metrics ({title})", _metric_rows(headline, metrics, intervals, units))
    passes = report.get("pass_at_k")
    if passes and passes["samples_per_task"]["max"] > 1:  # with one sample a task pass@1 is the mean above
        print_table(console, pass_at_k_title(passes), pass_at_k_rows(passes))
    for name, rows in report.get("tables", {}).items():
        print_table(console, name, rows)
    cost = report.get("cost")
    if cost:
        flagless = "" if cost.get("solved_metric") else "; no per-solved figures: the suite has no 0/1 solved flag"
        print_table(console, f"cost (every episode, scored or not{flagless})", cost_rows(cost))
    if show_all:
        print_table(console, f"all other metrics ({title})", _metric_rows(rest, metrics, intervals, units))
    elif rest:
        console.print(f"{len(rest)} more metrics: add --all to list them", highlight=False)


def _metric_rows(keys: list[str], metrics: dict[str, Any], intervals: dict[str, Any],
                 units: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    with_units = any(k in units for k in keys)  # a unit column only where the suite declares some
    for key in keys:
        interval = intervals.get(key)
        value = metrics[key]
        row = {"metric": key, "mean": number_text(value, 4) if isinstance(value, float) else str(value),
               "95 % interval": interval_span(interval, 4), "n": interval["n"] if interval else ""}
        if with_units:
            row["unit"] = units.get(key, "")
        rows.append(row)
    return rows


def pass_at_k_title(passes: dict[str, Any]) -> str:
    return (f"pass@k of {passes['metric']}: 1 - C(n-c,k)/C(n,k) per task, mean over tasks, 95 % bootstrap "
            "interval over tasks")


def pass_at_k_rows(passes: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per k, with the samples it is over and the episodes left out of them."""
    per_task = passes["samples_per_task"]
    spread = str(per_task["min"]) if per_task["min"] == per_task["max"] else f"{per_task['min']}-{per_task['max']}"
    rows = []
    for row in passes["k"]:
        cells = {"k": row["k"], "pass@k": number_text(row["mean"], 4), "95 % interval": interval_span(row, 4),
                 "tasks": row["tasks"], "samples": passes["samples"], "per task": spread,
                 "unscored (left out)": passes["unscored"]}
        if passes["no_value"]:
            cells[f"scored without {passes['metric']} (left out)"] = passes["no_value"]
        if passes["tasks_without_samples"]:
            cells["tasks without a sample (left out)"] = passes["tasks_without_samples"]
        rows.append(cells)
    return rows


def cost_rows(cost: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per quantity: per episode, per solved task, total."""
    names = {"input_tokens": "input tokens", "output_tokens": "output tokens", "requests": "requests",
             "wall_s": "wall s", "money": f"money ({cost.get('currency', '')})".replace(" ()", "")}
    rows = []
    for key, label in names.items():
        if key not in cost["total"]:
            continue
        row = {"quantity": label, "per episode": cost["per_episode"][key]}
        if cost.get("solved_metric"):  # without a 0/1 flag there is no solved task to divide by
            row[f"per solved task ({cost['solved_tasks']})"] = cost["per_solved_task"][key]
        rows.append({**row, "total": cost["total"][key]})
    return rows
