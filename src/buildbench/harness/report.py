"""Reading a stored run back as numbers and tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .episode import add_usage, as_failure, is_scored
from .store import Store
from .suite import Summarizer, get_suite, mean_metrics


def run_report(run_dir: str | Path, *, errors_as_failures: bool = False) -> dict[str, Any]:
    """The run's metrics as one JSON-serialisable object.

    Recomputed from the committed episodes (not the cached summary), so a run that was
    killed before it finished still reports what it has. Episodes without a result (errors,
    API failures) stay out of every mean and are counted under ``unscored``; with
    ``errors_as_failures`` they count as failed episodes (0 on every metric) instead, as some
    papers report.
    """
    with Store(run_dir, create=False) as store:
        manifest = store.manifest()
        episodes = list(store.episodes())
    unscored = sum(1 for ep in episodes if not is_scored(ep))
    if errors_as_failures:
        keys = sorted({k for ep in episodes for k in ep.metrics})
        episodes = [ep if is_scored(ep) else as_failure(ep, keys) for ep in episodes]
    config = manifest.get("config", {})
    suite_name = config.get("suite")
    summarize: Summarizer = mean_metrics
    if suite_name:
        try:
            summarize = get_suite(suite_name).summarize or mean_metrics
        except Exception:  # a report must still open if the suite is not importable here
            summarize = mean_metrics
    usage: dict[str, int] = {}
    for ep in episodes:
        usage = add_usage(usage, ep.usage)
    return {
        "run_dir": str(run_dir),
        "suite": suite_name,
        "agent": config.get("agent"),
        "protocol": config.get("protocol"),
        "model": config.get("model"),
        "expected_episodes": manifest.get("tasks", 0) * config.get("samples", 1),
        **summarize(episodes),
        "unscored": unscored,
        "errors_as_failures": errors_as_failures,
        "usage": usage,
    }


def print_report(report: dict[str, Any]) -> None:
    """Render ``run_report``'s output as terminal tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    head = Table(title=f"run {report['run_dir']}", show_header=False)
    for key in ("suite", "agent", "protocol", "model", "episodes", "expected_episodes", "unscored"):
        head.add_row(key, str(report.get(key)))
    head.add_row("status", ", ".join(f"{k}: {v}" for k, v in sorted(report.get("status", {}).items())))
    if report.get("usage"):
        head.add_row("usage", ", ".join(f"{k}: {v}" for k, v in sorted(report["usage"].items())))
    console.print(head)
    metrics = report.get("metrics", {})
    if metrics:
        table = Table(title="metrics (mean over episodes)")
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key, value in metrics.items():
            table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
        console.print(table)
    for title, rows in report.get("tables", {}).items():
        if not rows:
            continue
        table = Table(title=title)
        columns = list(rows[0])
        for col in columns:
            table.add_column(str(col), no_wrap=True)
        for row in rows:
            table.add_row(*(f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]) for c in columns))
        # Paper tables are up to 100 columns wide: never wrap their cells on a narrower console.
        Console(width=max(console.width, 100)).print(table)
