"""Reading a stored run back as numbers and tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .episode import add_usage, as_failure, is_scored
from .errors import ConfigError
from .identity import run_identity
from .stats import metric_intervals
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
    if not manifest and not episodes:
        raise ConfigError(f"{run_dir} holds no run (run.sqlite has no manifest and no episode)")
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
        "identity": run_identity(config, [ep.task_id for ep in episodes]),
        **summarize(episodes),
        "intervals": metric_intervals(episodes),
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
        intervals = report.get("intervals", {})
        table = Table(title="metrics (mean over scored episodes, 95 % bootstrap interval clustered by task)")
        table.add_column("metric")
        table.add_column("mean", justify="right")
        table.add_column("95 % interval", justify="right")
        table.add_column("n", justify="right")
        for key, value in metrics.items():
            interval = intervals.get(key)
            span = f"[{interval['low']:.4f}, {interval['high']:.4f}]" if interval and interval["n"] else "n/a"
            table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value), span,
                          str(interval["n"]) if interval else "")
        console.print(table)
    for title, rows in report.get("tables", {}).items():
        if not rows:
            continue
        table, width = paper_table(title, rows)
        Console(width=max(console.width, 100, width)).print(table)


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def paper_table(title: str, rows: list[dict[str, Any]]) -> tuple[Any, int]:
    """A suite table and the console width (columns) it needs without losing a character.

    Numbers, ids and number lists are never cut or wrapped; prose cells (words of three letters
    or more) and headers wrap at word boundaries, so most tables fit 100 columns and a wider
    one is printed wider rather than truncated.
    """
    import re
    import textwrap

    from rich.table import Table

    table = Table(title=title)
    columns = list(rows[0])
    width = 1  # the left border; each column adds its padding and right border (3)
    for col in columns:
        cells = [_cell(row[col]) for row in rows]
        prose = any(" " in text and re.search("[A-Za-z]{3}", text) for text in cells)
        longest_word = max((len(word) for text in cells for word in text.split()), default=1)
        cell_width = max(min(max(map(len, cells)), 16), longest_word) if prose else max(map(len, cells))
        header = textwrap.wrap(str(col), max(cell_width, 10), break_long_words=False) or [str(col)]
        table.add_column("\n".join(header), no_wrap=not prose, min_width=cell_width)
        width += max(cell_width, *map(len, header)) + 3
    for row in rows:
        table.add_row(*(_cell(row[c]) for c in columns))
    return table, width
