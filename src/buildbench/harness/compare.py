"""Several runs side by side (``buildbench report RUN [RUN…]``), and two runs task by task
(``buildbench compare RUN_A RUN_B``).

A run's identity is its whole configuration — suite, agent, protocol, model, split, seed,
samples, every ``-o`` option with its value (physics profile and geometry level included), the
task file — and the set of tasks its episodes cover. Runs are grouped by identity, so a decoding
sweep or an ablation never collapses into one row: only runs with the same identity (one run
resumed into two folders, say) share a group. Each group goes through the suite's own summary,
so every paper table comes out with one block of rows per group, led by a label that names what
differs between the groups shown (``temperature=0``, ``seed=1``…). Every metric mean carries n
and a seeded, task-clustered 95 % bootstrap interval (`buildbench.harness.stats`). Runs of
different suites cannot be compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .episode import Episode, add_usage, as_failure, is_scored
from .errors import ConfigError
from .identity import differing_fields, identity_label, run_identity
from .report import paper_table
from .stats import metric_intervals, paired_difference
from .store import Store
from .suite import Summarizer, get_suite, mean_metrics


def _load(run_dir: Path) -> tuple[dict[str, Any], list[Episode]]:
    with Store(run_dir, create=False) as store:
        return store.manifest().get("config", {}), list(store.episodes())


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
    groups: dict[str, list[Episode]] = {}
    sources: dict[str, list[str]] = {}
    identities: dict[str, dict[str, Any]] = {}
    for run_dir, cfg, episodes in loaded:
        ident = run_identity(cfg, [ep.task_id for ep in episodes])
        key = repr(sorted(ident.items()))
        identities.setdefault(key, ident)
        groups.setdefault(key, []).extend(episodes)
        sources.setdefault(key, []).append(str(run_dir))
    fields = differing_fields(list(identities.values()))
    task_sets = {ident["task set"] for ident in identities.values()}
    notes = []
    if len(task_sets) > 1:
        notes.append(f"the runs cover different task sets ({'; '.join(sorted(task_sets))}): "
                     "their means are not over the same tasks")
    summarize = _summarizer(suites[0])
    rows: list[dict[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    for key, episodes in groups.items():
        label = identity_label(identities[key], fields)
        unscored = sum(1 for ep in episodes if not is_scored(ep))
        if errors_as_failures:
            keys = sorted({k for ep in episodes for k in ep.metrics})
            episodes = [ep if is_scored(ep) else as_failure(ep, keys) for ep in episodes]
        summary = summarize(episodes)
        usage: dict[str, int] = {}
        for ep in episodes:
            usage = add_usage(usage, ep.usage)
        rows.append({"label": label, "runs": sources[key], "identity": identities[key],
                     "episodes": len(episodes), "unscored": unscored, "status": summary.get("status", {}),
                     "metrics": summary.get("metrics", {}), "intervals": metric_intervals(episodes),
                     "usage": usage})
        for title, table in (summary.get("tables") or {}).items():
            tables.setdefault(title, []).extend({"run": label, **row} for row in table)
    return {"suite": suites[0], "errors_as_failures": errors_as_failures, "differs_in": fields, "notes": notes,
            "rows": rows, "tables": tables}


def metrics_table(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per label: episodes, unscored, and the mean of every metric any label has."""
    keys: list[str] = []
    for row in report["rows"]:
        keys.extend(k for k in row["metrics"] if k not in keys)
    return [{"run": row["label"], "episodes": row["episodes"], "unscored": row["unscored"],
             **{k: row["metrics"].get(k, "") for k in keys}} for row in report["rows"]]


def interval_text(interval: dict[str, Any] | None, value: Any = None) -> str:
    """``0.750 [0.500, 1.000] n=4``: a mean, its 95 % interval and its episode count."""
    if not interval or not interval.get("n"):
        return _cell(value) if value is not None and value != "" else "n/a"
    mean = value if isinstance(value, int | float) else interval["mean"]
    return f"{mean:.3f} [{interval['low']:.3f}, {interval['high']:.3f}] n={interval['n']}"


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
    for note in report.get("notes", []):
        console.print(f"note: {note}", highlight=False)
    means = Table(title=f"{report['suite']}: metrics (mean over scored episodes, 95 % bootstrap interval "
                        "clustered by task, n episodes)")
    means.add_column("metric", no_wrap=True)
    for row in rows:
        means.add_column(str(row["run"]), justify="right")
    for key in [k for k in rows[0] if k != "run"] if rows else []:
        texts = []
        for row, full in zip(rows, report["rows"], strict=True):
            interval = full.get("intervals", {}).get(key)
            texts.append(interval_text(interval, row.get(key, "")) if interval else _cell(row.get(key, "")))
        means.add_row(key, *texts)
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
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def compare_pair(run_a: str | Path, run_b: str | Path, *, errors_as_failures: bool = False,
                 seed: int = 0) -> dict[str, Any]:
    """``b - a`` per metric on the tasks both runs scored, with a 95 % interval and a p-value.

    Pass/fail metrics with one sample per task get an exact McNemar test, the others a
    sign-flip permutation test; each task's samples are averaged first. The answer says how
    the task sets differ when they do.

    Raises:
        ConfigError: A folder that is not a run, or runs of different suites.
    """
    (cfg_a, eps_a), (cfg_b, eps_b) = _load(Path(run_a)), _load(Path(run_b))
    if cfg_a.get("suite") != cfg_b.get("suite"):
        raise ConfigError(f"compare: runs of different suites ({cfg_a.get('suite')}, {cfg_b.get('suite')})")

    def per_task(episodes: list[Episode]) -> dict[str, dict[str, list[float]]]:
        keys = sorted({k for ep in episodes for k in ep.metrics})
        out: dict[str, dict[str, list[float]]] = {}
        for ep in episodes:
            if not is_scored(ep):
                if not errors_as_failures:
                    continue
                ep = as_failure(ep, keys)
            for key, value in ep.metrics.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
                    out.setdefault(key, {}).setdefault(ep.task_id, []).append(float(value))
        return out

    ta, tb = {ep.task_id for ep in eps_a}, {ep.task_id for ep in eps_b}
    ident_a, ident_b = run_identity(cfg_a, [e.task_id for e in eps_a]), run_identity(cfg_b, [e.task_id for e in eps_b])
    fields = differing_fields([ident_a, ident_b])
    ma, mb = per_task(eps_a), per_task(eps_b)
    metrics = {key: paired_difference(ma[key], mb[key], seed=seed).to_dict()
               for key in sorted(set(ma) & set(mb))}
    notes = []
    if ta != tb:
        notes.append(f"the task sets differ: {len(ta - tb)} tasks only in A, {len(tb - ta)} only in B; "
                     f"compared on the {len(ta & tb)} shared tasks")
    return {"suite": cfg_a.get("suite"), "a": {"run_dir": str(run_a), "label": identity_label(ident_a, fields)},
            "b": {"run_dir": str(run_b), "label": identity_label(ident_b, fields)}, "differs_in": fields,
            "shared_tasks": len(ta & tb), "only_a": sorted(ta - tb), "only_b": sorted(tb - ta), "notes": notes,
            "errors_as_failures": errors_as_failures, "metrics": metrics}


def print_pair(result: dict[str, Any]) -> None:
    """Render ``compare_pair``'s output: one row per metric."""
    from rich.console import Console

    console = Console()
    console.print(f"A: {result['a']['label']}  ({result['a']['run_dir']})", highlight=False)
    console.print(f"B: {result['b']['label']}  ({result['b']['run_dir']})", highlight=False)
    for note in result["notes"]:
        console.print(f"note: {note}", highlight=False)
    rows = [{"metric": key, "tasks": m["tasks"], "A": m["mean_a"], "B": m["mean_b"], "B - A": m["diff"],
             "95 % interval": f"[{m['low']:.3f}, {m['high']:.3f}]", "p": f"{m['p_value']:.3g}", "test": m["test"]}
            for key, m in result["metrics"].items()]
    if not rows:
        console.print("no metric is shared by both runs on a shared task")
        return
    table, width = paper_table(f"{result['suite']}: B - A on shared tasks (paired)", rows)
    Console(width=max(console.width, 100, width)).print(table)
