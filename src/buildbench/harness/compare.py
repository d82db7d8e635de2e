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
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .cost import Prices, cost_summary, solved_flag
from .episode import Episode, add_usage, is_scored
from .episode_outcome import OutcomeReadError
from .errors import ConfigError
from .identity import differing_fields, identity_label, run_identity
from .run_options import with_run_options
from .stats import metric_intervals, metric_number, paired_difference, pass_at_k_summary
from .store import Store
from .suite import Summarizer, counted_as_failures, get_suite, mean_metrics
from .tables import cell_intervals, cell_text, interval_span, number_text, print_table


def _load(run_dir: Path) -> tuple[dict[str, Any], list[Episode]]:
    with Store(run_dir, create=False) as store:
        config = store.run_config()
        return config, with_run_options(store.episodes(), config)


def _summarizer(suite: str) -> tuple[Summarizer, list[str], dict[str, str]]:
    """The suite's summary function, headline metrics and their units."""
    try:
        found = get_suite(suite)
        return found.summarize or mean_metrics, list(found.headline), dict(found.units)
    except Exception:  # a comparison must still open if the suite is not importable here
        return mean_metrics, [], {}


class _Groups(NamedTuple):
    suite: str
    identities: dict[str, dict[str, Any]]
    episodes: dict[str, list[Episode]]
    sources: dict[str, list[str]]
    repeats: dict[str, int]  # episodes whose task and sample another run of the group holds too


def _grouped(run_dirs: Sequence[str | Path]) -> _Groups:
    """The runs' episodes grouped by identity (key: the identity's repr), with their folders."""
    if not run_dirs:
        raise ConfigError("report: give at least one run folder")
    seen: dict[Path, Path] = {}
    for d in map(Path, run_dirs):
        if d.resolve() in seen:  # its episodes would count twice in every mean
            raise ConfigError(f"report: {d} is the run folder {seen[d.resolve()]} again: give each run once")
        seen[d.resolve()] = d
    loaded = [(Path(d), *_load(Path(d))) for d in run_dirs]
    suites = sorted({str(cfg.get("suite")) for _, cfg, _ in loaded})
    if len(suites) > 1:
        raise ConfigError(f"report: runs of different suites cannot share tables ({', '.join(suites)})")
    groups = _Groups(suites[0], {}, {}, {}, {})
    held: dict[str, dict[tuple[str, int], tuple[str, Episode]]] = {}  # per group: (task, sample) -> run, episode
    for run_dir, cfg, episodes in loaded:
        ident = run_identity(cfg, [ep.task_id for ep in episodes])
        key = repr(sorted(ident.items()))
        repeats = _refuse_repeats(held.setdefault(key, {}), str(run_dir), episodes)
        groups.repeats[key] = groups.repeats.get(key, 0) + repeats
        groups.identities.setdefault(key, ident)
        groups.episodes.setdefault(key, []).extend(episodes)
        groups.sources.setdefault(key, []).append(str(run_dir))
    return groups


def _refuse_repeats(held: dict[tuple[str, int], tuple[str, Episode]], run_dir: str,
                    episodes: Sequence[Episode]) -> int:
    """`pool_run`, refusing a copy of a run folder: each episode would count twice in every mean."""
    repeats, copy_of = pool_run(held, run_dir, episodes)
    if copy_of is not None:
        raise ConfigError(f"report: {run_dir} holds the episodes of {copy_of} unchanged (a copy of one run?): "
                          "each would count twice in every mean; give one of them")
    return repeats


def pool_run(held: dict[tuple[str, int], tuple[str, Episode]], run_dir: str,
             episodes: Sequence[Episode]) -> tuple[int, str | None]:
    """Add a run's ``episodes`` to those of its identity group (``held``: (task, sample) -> run,
    episode); return how many repeat a (task, sample) another run of the group holds, and the run
    they all repeat unchanged, if they do (a copy of a run folder, then not added: pooled, each
    would count twice in every mean, its n doubled). The CLI refuses such a copy, the viewer
    leaves it out and says so."""
    repeated = [(held[(ep.task_id, ep.sample)], ep) for ep in episodes if (ep.task_id, ep.sample) in held]
    copied = [other for (other, kept), ep in repeated if kept.to_dict() == ep.to_dict()]
    if episodes and len(copied) == len(episodes):
        return len(repeated), copied[0]
    held.update(((ep.task_id, ep.sample), (run_dir, ep)) for ep in episodes)
    return len(repeated), None


def write_run_figures(run_dirs: Sequence[str | Path], out_dir: str | Path) -> list[Path]:
    """``buildbench report RUNS… --figures DIR``: the standard and the suite's figures, PNG and SVG,
    one series per run identity (labelled by what differs)."""
    from .figures import write_figures

    suite_name, identities, episodes, _, _ = _grouped(run_dirs)
    fields = differing_fields(list(identities.values()))
    labelled = {identity_label(identities[key], fields): eps for key, eps in episodes.items()}
    try:
        suite = get_suite(suite_name)
        headline, task_type, extra, units = list(suite.headline), suite.task_type, suite.figures, dict(suite.units)
    except Exception:  # figures must still be drawn if the suite is not importable here
        headline, task_type, extra, units = [], "", None, {}
    return write_figures(labelled, out_dir, headline=headline, task_type=task_type, suite_figures=extra, units=units)


def compare_runs(run_dirs: Sequence[str | Path], *, errors_as_failures: bool = False,
                 prices: Prices | None = None) -> dict[str, Any]:
    """The runs' summaries, grouped by label, with every suite table merged (label column first).

    Raises:
        ConfigError: No run given, a folder that is not a run, one given twice, or runs of
            different suites.
    """
    suite, identities, groups, sources, repeats = _grouped(run_dirs)
    fields = differing_fields(list(identities.values()))
    task_sets = {ident["task set"] for ident in identities.values()}
    notes = []
    if len(task_sets) > 1:
        notes.append(f"the runs cover different task sets ({'; '.join(sorted(task_sets))}): "
                     "their means are not over the same tasks")
    summarize, headline, units = _summarizer(suite)
    rows: list[dict[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    for key, episodes in groups.items():
        label = identity_label(identities[key], fields)
        if repeats.get(key):
            notes.append(f"{label}: {len(sources[key])} runs of one configuration ({', '.join(sources[key])}) pooled; "
                         f"{repeats[key]} of their episodes repeat a task and sample of another and count as "
                         "further samples of their task")
        unscored = sum(1 for ep in episodes if not is_scored(ep))
        if errors_as_failures:
            episodes = counted_as_failures(suite, episodes)
        try:
            summary = summarize(episodes)
        except OutcomeReadError as exc:
            raise exc.in_run(", ".join(map(str, sources[key]))) from None
        usage: dict[str, int] = {}
        for ep in episodes:
            usage = add_usage(usage, ep.usage)
        flag = solved_flag(headline, episodes, units)
        rows.append({"label": label, "runs": sources[key], "identity": identities[key],
                     "episodes": len(episodes), "unscored": unscored, "status": summary.get("status", {}),
                     "metrics": summary.get("metrics", {}), "intervals": metric_intervals(episodes),
                     "cost": cost_summary(episodes, solved_metric=flag, model=identities[key].get("model"),
                                          prices=prices),
                     "pass_at_k": pass_at_k_summary(episodes, flag) if flag else None, "usage": usage})
        for title, table in (summary.get("tables") or {}).items():
            tables.setdefault(title, []).extend({"run": label, **row} for row in table)
    return {"suite": suite, "errors_as_failures": errors_as_failures, "differs_in": fields, "notes": notes,
            "headline": headline, "units": units,
            "rows": rows, "tables": tables, "table_intervals": cell_intervals(tables)}


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
        return cell_text(value) if value is not None and value != "" else "n/a"
    mean = value if isinstance(value, int | float) else interval["mean"]
    return f"{number_text(float(mean))} {interval_span(interval)} n={interval['n']}"


def print_comparison(report: dict[str, Any], *, show_all: bool = False) -> None:
    """Render ``compare_runs``'s output as terminal tables, each within the terminal's width.

    The suite's headline metrics come first, one metric a row with a column per label (mean,
    95 % interval, n); then the suite's tables, each led by the label of the run its rows come
    from; every other metric with ``show_all``.
    """
    from rich.console import Console

    console = Console()
    rows = [{**row, "run": _short(str(row["run"]))} for row in metrics_table(report)]
    for note in report.get("notes", []):
        console.print(f"note: {note}", highlight=False)
    keys = [k for k in rows[0] if k not in ("run", "episodes", "unscored")] if rows else []
    headline = [k for k in report.get("headline", []) if k in keys] or keys[:8]
    rest = [k for k in keys if k not in headline]

    def means(names: list[str]) -> list[dict[str, Any]]:
        out = [{"metric": name, **{str(row["run"]): cell_text(row[name]) for row in rows}}
               for name in ("episodes", "unscored")]
        for name in names:
            unit = report.get("units", {}).get(name)
            line: dict[str, Any] = {"metric": f"{name} ({unit})" if unit else name}
            for row, full in zip(rows, report["rows"], strict=True):
                interval = full.get("intervals", {}).get(name)
                line[str(row["run"])] = interval_text(interval, row.get(name, "")) if interval \
                    else cell_text(row.get(name, ""))
            out.append(line)
        return out

    title = "mean over scored episodes, 95 % bootstrap interval clustered by task, n episodes"
    print_table(console, f"{report['suite']}: headline metrics ({title})", means(headline))
    for name, table_rows in report["tables"].items():
        cells = [{c: _short(v) if c == "run" else v for c, v in row.items()} for row in table_rows]
        print_table(console, f"{report['suite']}: {name}", cells)
    cost_lines = []
    for row in report["rows"]:
        cost = row.get("cost")
        if not cost:
            continue
        per, solved = cost["per_episode"], cost["per_solved_task"]
        line = {"run": _short(row["label"]), "tokens in / episode": per["input_tokens"],
                "tokens out / episode": per["output_tokens"], "requests / episode": per["requests"],
                "wall s / episode": per["wall_s"],
                "solved tasks": cost["solved_tasks"] if cost.get("solved_metric") else "no solved flag",
                "tokens / solved task": None if solved["input_tokens"] is None
                else solved["input_tokens"] + solved["output_tokens"]}
        if "money" in per:
            line[f"{cost.get('currency', '')} / episode"] = per["money"]
            line[f"{cost.get('currency', '')} / solved task"] = solved["money"]
        cost_lines.append(line)
    print_table(console, f"{report['suite']}: cost", cost_lines)
    passes = [(row["label"], row["pass_at_k"]) for row in report["rows"] if row.get("pass_at_k")]
    if any(p["samples_per_task"]["max"] > 1 for _, p in passes):
        from .report import pass_at_k_rows, pass_at_k_title

        print_table(console, f"{report['suite']}: {pass_at_k_title(passes[0][1])}",
                    [{"run": _short(label), **row} for label, p in passes for row in pass_at_k_rows(p)])
    if show_all and rest:
        print_table(console, f"{report['suite']}: all other metrics ({title})", means(rest)[2:])
    elif rest:
        console.print(f"{len(rest)} more metrics: add --all to list them", highlight=False)


def _short(label: str) -> str:
    """``label`` with each file path cut to its file name (``examples/x/model.py:chat`` -> ``model.py:chat``),
    so columns stay narrow; the JSON output keeps the full labels."""
    return re.sub(r"[^\s:/]*/(?:[^\s:/]*/)*([^\s:/]+\.py)", r"\1", label)


def compare_pair(run_a: str | Path, run_b: str | Path, *, errors_as_failures: bool = False,
                 seed: int = 0) -> dict[str, Any]:
    """``b - a`` per metric on the tasks both runs scored, with a 95 % interval and a p-value.

    Pass/fail metrics with one sample per task get an exact McNemar test, the others a
    sign-flip permutation test; each task's samples are averaged first. The answer says how
    the task sets differ when they do.

    Raises:
        ConfigError: A folder that is not a run, the same run twice, runs of different suites,
            a run without a scored episode, or runs with no task scored in both: a paired
            comparison of those has nothing to say, and a table of n/a would read as one.
    """
    (cfg_a, eps_a), (cfg_b, eps_b) = _load(Path(run_a)), _load(Path(run_b))
    both = f"{run_a} (A) and {run_b} (B)"
    if Path(run_a).resolve() == Path(run_b).resolve():
        raise ConfigError(f"compare: {both} are the same run folder: give two runs to compare")
    if cfg_a.get("suite") != cfg_b.get("suite"):
        raise ConfigError(f"compare: {both} are runs of different suites ({cfg_a.get('suite')}, "
                          f"{cfg_b.get('suite')}): only runs of one suite can be compared")

    def per_task(run_dir: str | Path, episodes: list[Episode]) -> dict[str, dict[str, list[float]]]:
        if errors_as_failures:
            episodes = counted_as_failures(cfg_a.get("suite"), episodes)
        scored = [ep for ep in episodes if is_scored(ep)]
        if not scored:
            statuses = Counter(ep.status for ep in episodes)
            held = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())) or "no episodes"
            hint = "" if errors_as_failures or not episodes else \
                " (--errors-as-failures counts its episodes without a result as failed)"
            raise ConfigError(f"compare: {run_dir} has no scored episode ({held}): nothing to compare{hint}")
        out: dict[str, dict[str, list[float]]] = {}
        for ep in scored:
            for key, value in ep.metrics.items():
                number = metric_number(value)
                if number is not None:
                    out.setdefault(key, {}).setdefault(ep.task_id, []).append(number)
        return out

    ta, tb = {ep.task_id for ep in eps_a}, {ep.task_id for ep in eps_b}
    ma, mb = per_task(run_a, eps_a), per_task(run_b, eps_b)
    if not ta & tb:
        raise ConfigError(f"compare: {both} share no task id (A has {_tasks_text(ta)}; B has {_tasks_text(tb)}): "
                          "a paired comparison needs tasks both runs played")
    metrics = {key: paired_difference(ma[key], mb[key], seed=seed).to_dict()
               for key in sorted(set(ma) & set(mb))}
    metrics = {key: m for key, m in metrics.items() if m["tasks"]}
    if not metrics:
        raise ConfigError(f"compare: {both} have no metric scored on a task of both ({len(ta & tb)} shared "
                          "tasks, none with a scored episode carrying the same metric in both runs)")
    ident_a, ident_b = run_identity(cfg_a, [e.task_id for e in eps_a]), run_identity(cfg_b, [e.task_id for e in eps_b])
    fields = differing_fields([ident_a, ident_b])
    notes = []
    if ta != tb:
        notes.append(f"the task sets differ: {len(ta - tb)} tasks only in A, {len(tb - ta)} only in B; "
                     f"compared on the {len(ta & tb)} shared tasks")
    return {"suite": cfg_a.get("suite"), "a": {"run_dir": str(run_a), "label": identity_label(ident_a, fields)},
            "b": {"run_dir": str(run_b), "label": identity_label(ident_b, fields)}, "differs_in": fields,
            "shared_tasks": len(ta & tb), "only_a": sorted(ta - tb), "only_b": sorted(tb - ta), "notes": notes,
            "errors_as_failures": errors_as_failures, "metrics": metrics}


def _tasks_text(tasks: set[str]) -> str:
    """``2 tasks (tower_0000_0000, tower_0000_0001)``, at most three ids named."""
    shown = sorted(tasks)[:3]
    more = ", …" if len(tasks) > len(shown) else ""
    return f"{len(tasks)} task{'s' if len(tasks) != 1 else ''} ({', '.join(shown)}{more})"


def print_pair(result: dict[str, Any]) -> None:
    """Render ``compare_pair``'s output: one row per metric."""
    from rich.console import Console

    console = Console()
    console.print(f"A: {result['a']['label']}  ({result['a']['run_dir']})", highlight=False)
    console.print(f"B: {result['b']['label']}  ({result['b']['run_dir']})", highlight=False)
    for note in result["notes"]:
        console.print(f"note: {note}", highlight=False)
    rows = [{"metric": key, "tasks": m["tasks"], "A": m["mean_a"], "B": m["mean_b"], "B - A": m["diff"],
             "95 % interval": interval_span({"n": m["tasks"], **m}), "p": f"{m['p_value']:.3g}", "test": m["test"]}
            for key, m in result["metrics"].items()]
    print_table(console, f"{result['suite']}: B - A on shared tasks (paired)", rows)
