"""Several runs side by side (``buildbench report RUN [RUN…]``), one row per model, as papers do.

The episodes of all runs are grouped by who produced them — the run's agent and model (and
protocol, when the runs do not all share one) — and each group goes through the suite's own
summary, so every paper table the suite prints for one run comes out with one block of rows
per group, each row led by the group's label. Runs of the same agent and model (two seeds,
two halves of a split) merge into one group. Runs of different suites cannot be compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .episode import Episode, add_usage, as_failure, is_scored
from .errors import ConfigError
from .report import paper_table
from .store import Store
from .suite import Summarizer, get_suite, mean_metrics


def _load(run_dir: Path) -> tuple[dict[str, Any], list[Episode]]:
    with Store(run_dir, create=False) as store:
        return store.manifest().get("config", {}), list(store.episodes())


def run_label(config: dict[str, Any], *, with_protocol: bool) -> str:
    """``agent``, ``agent / model`` or ``agent / model / protocol``: who produced a run's episodes."""
    parts = [str(config.get("agent"))]
    if config.get("model"):
        parts.append(str(config["model"]))
    if with_protocol:
        parts.append(str(config.get("protocol")))
    return " / ".join(parts)


def _summarizer(suite: str) -> Summarizer:
    try:
        return get_suite(suite).summarize or mean_metrics
    except Exception:  # a comparison must still open if the suite is not importable here
        return mean_metrics


def compare_runs(run_dirs: Sequence[str | Path], *, errors_as_failures: bool = False) -> dict[str, Any]:
    """The runs' summaries, grouped by label, with every suite table merged (label column first).

    Raises:
        ConfigError: No run given, a folder that is not a run, or runs of different suites.
    """
    if not run_dirs:
        raise ConfigError("report: give at least one run folder")
    loaded = [(Path(d), *_load(Path(d))) for d in run_dirs]
    suites = sorted({str(cfg.get("suite")) for _, cfg, _ in loaded})
    if len(suites) > 1:
        raise ConfigError(f"report: runs of different suites cannot share tables ({', '.join(suites)})")
    with_protocol = len({cfg.get("protocol") for _, cfg, _ in loaded}) > 1
    groups: dict[str, list[Episode]] = {}
    sources: dict[str, list[str]] = {}
    for run_dir, cfg, episodes in loaded:
        label = run_label(cfg, with_protocol=with_protocol)
        groups.setdefault(label, []).extend(episodes)
        sources.setdefault(label, []).append(str(run_dir))
    summarize = _summarizer(suites[0])
    rows: list[dict[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    for label, episodes in groups.items():
        unscored = sum(1 for ep in episodes if not is_scored(ep))
        if errors_as_failures:
            keys = sorted({k for ep in episodes for k in ep.metrics})
            episodes = [ep if is_scored(ep) else as_failure(ep, keys) for ep in episodes]
        summary = summarize(episodes)
        usage: dict[str, int] = {}
        for ep in episodes:
            usage = add_usage(usage, ep.usage)
        rows.append({"label": label, "runs": sources[label], "episodes": len(episodes), "unscored": unscored,
                     "status": summary.get("status", {}), "metrics": summary.get("metrics", {}), "usage": usage})
        for title, table in (summary.get("tables") or {}).items():
            tables.setdefault(title, []).extend({"run": label, **row} for row in table)
    return {"suite": suites[0], "errors_as_failures": errors_as_failures, "rows": rows, "tables": tables}


def metrics_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per label: episodes, unscored, and the mean of every metric any label has."""
    keys: list[str] = []
    for row in report["rows"]:
        keys.extend(k for k in row["metrics"] if k not in keys)
    return [{"run": row["label"], "episodes": row["episodes"], "unscored": row["unscored"],
             **{k: row["metrics"].get(k, "") for k in keys}} for row in report["rows"]]


def print_comparison(report: dict[str, Any]) -> None:
    """Render ``compare_runs``'s output as terminal tables.

    The metric means come one metric a row with a column per label (suites have dozens of
    metrics, but few runs are compared); each suite table keeps its own columns, led by the
    label of the run its rows come from.
    """
    from rich.console import Console
    from rich.table import Table

    console = Console()
    rows = [{**row, "run": _short(str(row["run"]))} for row in metrics_table(report)]
    means = Table(title=f"{report['suite']}: metrics (mean over scored episodes)")
    means.add_column("metric", no_wrap=True)
    for row in rows:
        means.add_column(str(row["run"]), justify="right")
    for key in [k for k in rows[0] if k != "run"] if rows else []:
        means.add_row(key, *(_cell(row.get(key, "")) for row in rows))
    console.print(means)
    for title, table_rows in report["tables"].items():
        if not table_rows:
            continue
        columns: list[str] = []
        for row in table_rows:
            columns.extend(c for c in row if c not in columns)
        cells = [{c: _short(row[c]) if c == "run" else row.get(c, "") for c in columns} for row in table_rows]
        table, width = paper_table(f"{report['suite']}: {title}", cells)
        Console(width=max(console.width, 100, width)).print(table)


def _short(label: str) -> str:
    """``label`` with each file path cut to its file name (``examples/x/model.py:chat`` -> ``model.py:chat``),
    so columns stay narrow; the JSON output keeps the full labels."""
    return re.sub(r"[^\s:/]*/(?:[^\s:/]*/)*([^\s:/]+\.py)", r"\1", label)


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
