"""DreamHouse tables in the paper's layouts, with the published numbers beside ours.

* Table 1 (paper §4, spec §6.3): per model × protocol, structural pass, visual fidelity S,
  topological fidelity T and joint pass, each for Frame / Facade. Structural and joint
  pass are rates over the scored episodes (with ``--errors-as-failures`` an episode that
  errored counts as not passing); S and T are means over the structurally passed episodes
  only, as in the paper. An episode that stored no outcome is in its run's condition (the
  run's ``-o condition``), so it counts in that condition's N, and as a failure there when
  errors count as failures.
* Table 2 (paper §5): iterative refinement from the Atomic passes whose S was below τ:
  mean S at the start (baseline), at the end (final) and the best reached, the share of
  tasks that ended above their baseline, and the share of revisions that kept a passing
  structure ("structures retained"; [S]: the paper does not define it further).
* Table 5 (paper §5): Planner-Managed with and without per-step visual feedback, Frame:
  structural pass, S, visual pass (every view ≥ 0.6) and joint pass.
* T of passed vs failed structures (paper §5 text), from ``topological_fidelity_any``.
* Figure 7 (paper §5): per-test failure rates per model × protocol × condition, and the
  most common co-failure patterns (the exact set of failed tests of a failing structure).
  The paper gives these only as a figure, so no published numbers sit beside them.

Tables 1, 2 and 5 are followed by a table of the 95 % intervals of our cells (bootstrap resampling
tasks; ``[low, high]``, ``–`` where there is none), in the same layout, so that the paper's
stays as it is. The T split and Figure 7's failure rates have no published layout to keep: their
cells are `buildbench.harness.stats.Estimate` values, printed ``mean [low, high]`` and exported
under the report's ``table_intervals``; unscored episodes are in none of them and are counted.

Every table says how many episodes each row covers (``N``), and the paper's rows are marked
with ``*`` after the model. Protocols are shown by short labels (:data:`PROTOCOL_LABELS`) so
each table fits 100 columns.

Our S comes from our renderer and colours, not Blender Cycles with the paper's (unstated)
materials, and our models are whatever ran; the published rows are context, not targets.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from buildbench.harness import Episode, is_scored, mean_metrics

from .report_extra import t_split_rows, table2_intervals, table2_rows, table5_intervals, table5_rows
from .report_paper import (
    NO_OUTCOME,
    PAPER_MARK,
    PAPER_TABLE1,
    Labeller,
    condition_of,
    estimate_cell,
    group_mean,
    group_span,
    model_of,
    protocol_label,
)

# From report_paper, where the shared part moved; each `X as X` is a re-export.
from .report_paper import PAPER_T_SPLIT as PAPER_T_SPLIT
from .report_paper import PAPER_TABLE2 as PAPER_TABLE2
from .report_paper import PAPER_TABLE5 as PAPER_TABLE5
from .report_paper import PASSED_ONLY as PASSED_ONLY
from .report_paper import PROTOCOL_LABELS as PROTOCOL_LABELS

#: Table 1 column groups in the paper's order: (title, metric key); each cell reads "Frame/Facade".
TABLE1_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Struct F/Fa", "structural_pass"),
    ("Visual F/Fa", "visual_fidelity"),
    ("Topo F/Fa", "topological_fidelity"),
    ("Joint F/Fa", "joint_pass"),
)
CONDITION_ORDER: tuple[str, str] = ("frame", "facade")
#: The titles of the tables of our cells' 95 % intervals.
TABLE1_INTERVALS = "Table 1 (ours): 95 % intervals, bootstrap resampling tasks, Frame/Facade"
TABLE2_INTERVALS = "Table 2 (ours): 95 % intervals, bootstrap resampling tasks (improved in %)"
TABLE5_INTERVALS = "Table 5 (ours): 95 % intervals, bootstrap resampling tasks"
_INTERVAL_TABLES = (TABLE1_INTERVALS, TABLE2_INTERVALS, TABLE5_INTERVALS)
#: Co-failure patterns listed per group.
TOP_PATTERNS = 8
#: Figure 7's last row: the unscored episodes of each group, in no failure rate.
UNSCORED_ROW = "(unscored episodes, in no rate)"
_MISSING = "–"


def table1_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 1: our rows (one per model label × protocol, both conditions), then the paper's.

    Cells read "Frame / Facade" (3 decimals, "–" where no episode defines the value); use
    :func:`group_mean` for the numbers themselves.

    Args:
        episodes: Episodes of any number of runs.
        label: Model label of an episode; by default :func:`model_of`.
    """
    label = label or model_of
    groups: dict[tuple[str, str], dict[str, list[Episode]]] = {}
    for ep in episodes:
        groups.setdefault((label(ep), ep.protocol), {}).setdefault(condition_of(ep), []).append(ep)
    rows = []
    for (model, protocol), by_cond in sorted(groups.items()):
        row: dict[str, Any] = {"model": model, "protocol": protocol_label(protocol)}
        for title, key in TABLE1_COLUMNS:
            row[title] = _pair(*(group_mean(by_cond.get(c, []), key) for c in CONDITION_ORDER))
        row["N F/Fa"] = "/".join(str(len(by_cond.get(c, []))) for c in CONDITION_ORDER)
        unscored = [sum(1 for ep in by_cond.get(c, []) if not is_scored(ep)) for c in CONDITION_ORDER]
        if any(unscored):  # in N but in no rate (--errors-as-failures counts them as failed): said so
            row["unscored F/Fa"] = "/".join(map(str, unscored))
        if by_cond.get(NO_OUTCOME):  # run not known, so in neither condition: counted, not guessed
            row[f"N {NO_OUTCOME}"] = len(by_cond[NO_OUTCOME])
        rows.append(row)
    for (model, protocol), values in PAPER_TABLE1.items():
        row = {"model": model + PAPER_MARK, "protocol": protocol_label(protocol)}
        for k, (title, _) in enumerate(TABLE1_COLUMNS):
            row[title] = _pair(values[2 * k], values[2 * k + 1])
        row["N F/Fa"] = "1200/1200"
        rows.append(row)
    return rows


def table1_intervals(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 1's rows of ours again, each cell the 95 % intervals of its Frame / Facade values."""
    label = label or model_of
    groups: dict[tuple[str, str], dict[str, list[Episode]]] = {}
    for ep in episodes:
        groups.setdefault((label(ep), ep.protocol), {}).setdefault(condition_of(ep), []).append(ep)
    return [{"model": model, "protocol": protocol_label(protocol),
             **{title: "/".join(group_span(by_cond.get(c, []), key) for c in CONDITION_ORDER)
                for title, key in TABLE1_COLUMNS}}
            for (model, protocol), by_cond in sorted(groups.items())]


def is_paper_row(row: dict[str, Any]) -> bool:
    """Whether a table row holds the paper's published numbers."""
    return str(row.get("model", "")).endswith(PAPER_MARK)


def failure_rate_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Figure 7 (left): per test, the failure rate in each model × protocol × condition group,
    with its 95 % interval resampling tasks (`estimate_cell`).

    Rates are over the group's scored episodes that ran the test; unscored ones (errored: no test
    results) are in none and are counted in a last row where any group has some.
    """
    groups = _groups(episodes, label)
    tests = sorted({k for ep in episodes for k in ep.metrics if k.startswith("test_")})
    rows = []
    for test in tests:
        row: dict[str, Any] = {"test": test.removeprefix("test_")}
        for name, eps in groups.items():
            ran = [ep for ep in eps if is_scored(ep) and test in ep.metrics]
            row[name] = estimate_cell([float(ep.metrics[test] == 0.0) for ep in ran], [ep.task_id for ep in ran])
        rows.append(row)
    unscored = {name: sum(not is_scored(ep) for ep in eps) for name, eps in groups.items()}
    if rows and any(unscored.values()):
        rows.append({"test": UNSCORED_ROW, **unscored})
    return rows


def co_failure_rows(
    episodes: Sequence[Episode], label: Labeller | None = None, top: int = TOP_PATTERNS
) -> list[dict[str, Any]]:
    """Figure 7 (right): the most common sets of failed tests among failing structures, per group."""
    rows = []
    for name, eps in _groups(episodes, label).items():
        patterns: Counter[str] = Counter()
        for ep in eps:
            failed = sorted(
                k.removeprefix("test_") for k, v in ep.metrics.items() if k.startswith("test_") and v == 0.0
            )
            if failed:
                patterns[" + ".join(failed)] += 1
        total = sum(patterns.values())
        for pattern, count in patterns.most_common(top):
            rows.append(
                {"group": name, "failed tests": pattern, "count": count, "share of failures": count / total}
            )
    return rows


def tables(episodes: Sequence[Episode], label: Labeller | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every table, titled (the harness prints ``report["tables"]``); a table of intervals only
    where we have rows."""
    titled = {
        "Table 1: structural / visual S / topological T / joint pass, Frame/Facade (* paper)": table1_rows(
            episodes, label
        ),
        TABLE1_INTERVALS: table1_intervals(episodes, label),
        "Table 2: iterative refinement, S of the Atomic passes below τ (* paper)": table2_rows(episodes, label),
        TABLE2_INTERVALS: table2_intervals(episodes, label),
        "Table 5: Planner-Managed without / with per-step visual feedback, Frame (* paper)": table5_rows(
            episodes, label
        ),
        TABLE5_INTERVALS: table5_intervals(episodes, label),
        "T of passed vs failed structures (* paper, Planner-Atomic)": t_split_rows(episodes, label),
        "Figure 7: per-test failure rate": failure_rate_rows(episodes, label),
        "Figure 7: co-failure patterns (failing structures)": co_failure_rows(episodes, label),
    }
    return {title: rows for title, rows in titled.items() if rows or title not in _INTERVAL_TABLES}


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """The suite summary: the harness's means plus :func:`tables` (``buildbench report`` prints both)."""
    out = mean_metrics(episodes)
    out["tables"] = tables(episodes)
    return out


def runs_summary(
    run_dirs: Sequence[str | Path], *, errors_as_failures: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """:func:`tables` over the episodes of several stored runs; the model label is the run's
    ``--model`` when it had one, else its agent, and an episode without an outcome is in its
    run's condition. With ``errors_as_failures`` an unscored episode counts as a failed attempt
    (as ``buildbench report --errors-as-failures``).

    Raises:
        BuildbenchError: When a folder is not a stored run, or holds an outcome that is not a
            DreamHouse outcome (`OutcomeReadError`, naming the folder and the episode).
    """
    from buildbench.harness import Store
    from buildbench.harness.episode_outcome import OutcomeReadError
    from buildbench.harness.run_options import with_run_options
    from buildbench.harness.suite import counted_as_failures

    episodes: list[Episode] = []
    for run_dir in run_dirs:
        with Store(run_dir, create=False) as store:
            config = store.manifest().get("config", {})
            model = config.get("model")
            run = with_run_options(store.episodes(), config)  # each episode's condition, outcome or not
        if errors_as_failures:
            run = counted_as_failures("dreamhouse", run)
        for ep in run:
            try:  # read here, where the run folder is known, so that an error names it
                condition_of(ep)
            except OutcomeReadError as exc:
                raise exc.in_run(run_dir) from None
            if model:
                ep.metadata["model"] = str(model)
            episodes.append(ep)
    return tables(episodes)


def print_tables(titled: dict[str, list[dict[str, Any]]], width: int = 100) -> None:
    """Print titled row lists as terminal tables (floats to 3 decimals) on a console at least
    ``width`` columns wide; a table wider than that is split by columns, never cut
    (`buildbench.harness.tables.print_table`): a column only some rows have (their unscored or
    no-outcome counts) had cut the numbers to "0.6…"."""
    from rich.console import Console

    from buildbench.harness.tables import print_table

    console = Console(width=max(width, Console().width))
    for title, rows in titled.items():
        if not rows:
            console.print(f"{title}: no rows")
            continue
        print_table(console, title, rows)


def _groups(episodes: Sequence[Episode], label: Labeller | None) -> dict[str, list[Episode]]:
    label = label or model_of
    out: dict[str, list[Episode]] = {}
    for ep in episodes:
        out.setdefault(f"{label(ep)}/{protocol_label(ep.protocol)}/{condition_of(ep)}", []).append(ep)
    return dict(sorted(out.items()))


def _pair(frame: float | None, facade: float | None) -> str:
    """A Table 1 cell, "Frame/Facade" to 3 decimals as the paper prints them."""
    return "/".join(_MISSING if v is None else f"{v:.3f}" for v in (frame, facade))
