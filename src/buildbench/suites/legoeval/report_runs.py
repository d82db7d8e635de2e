"""The LEGO-Eval report over stored runs (``buildbench legoeval report RUN_DIR ...``): the
tables of :mod:`.report` per run, and the two the paper builds from pairs of runs.

Each run is labelled by agent, model and options from its manifest; Table 2 pairs each run
with ``-o disable=...`` with the run that differs only by not disabling anything, Table 4
each ``constraints=identify`` run with its ``given`` twin. Table 4's success rates and F1s
carry 95 % intervals resampling scenes as Tables 1 and 3 do; the cells that compare two runs
(Table 2's relative F1 changes, Table 4's differences) resample the scenes of both runs together
(`paired_cell`).
With ``--json`` the tables are printed under ``tables`` and the intervals of their cells under
``table_intervals``, as ``buildbench report --json`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from buildbench.harness import Episode, is_scored
from buildbench.harness.stats import Estimate, bootstrap_of_counts
from buildbench.harness.tables import tables_json

from .options import LegoEvalOptions
from .report import (
    f1_counts,
    f1_of_counts,
    print_tables,
    run_tables,
    share_cell,
    share_parts,
    table1_row,
    verdict_parts,
    verdict_rate,
)

#: Table 2: relative drop (%) of holistic and partial F1 with tool groups disabled.
PAPER_TABLE2: dict[str, tuple[float, float]] = {
    "w/o M": (-0.04, -1.02), "w/o T": (-5.05, -2.65), "w/o T+M": (-6.46, -2.81), "w/o E+M": (-24.90, -5.34),
}
#: Table 4: holistic SR M1-M4, partial SR M1-M4 (fractions), oracle / identified / difference.
PAPER_TABLE4: dict[str, tuple[float, ...]] = {
    "Oracle constraint": (0.12, 0.05, 0.05, 0.14, 0.66, 0.57, 0.35, 0.65),
    "Identified constraint": (0.13, 0.07, 0.05, 0.12, 0.63, 0.57, 0.35, 0.64),
    "Difference": (0.01, 0.02, 0.00, -0.02, -0.03, 0.00, 0.00, -0.01),
}
_T4_COLS = tuple(f"{level}_M{i}" for level in ("hol", "part") for i in range(1, 5))


def table2_rows(full: dict[str, Any], ablated: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 2 rows: our relative F1 changes (%) beside the paper's, from Table 1 rows."""
    rows = []
    for name, row in ablated.items():
        ours = [None if not full[k] or row[k] is None else (row[k] - full[k]) / full[k] * 100.0
                for k in ("hol_f1", "part_f1")]
        paper = PAPER_TABLE2.get(name, (None, None))
        rows.append({"disabled": name, "hol_f1_pct": ours[0], "part_f1_pct": ours[1],
                     "paper_hol_f1_pct": paper[0], "paper_part_f1_pct": paper[1]})
    return rows


#: Option values that mean "not set" (a run that names them equals one that does not): the
#: declared defaults of the options that tell the paper's settings apart.
_DEFAULT_OPTIONS = {name: str(LegoEvalOptions.model_fields[name].default)
                    for name in ("constraints", "plans", "disable")}
#: Letters of the tool groups in Table 2's row names, in the paper's order.
_GROUP_LETTERS = {"textual": "T", "environment": "E", "multimodal": "M"}
_IDENTITY = ("suite", "agent", "model", "split", "limit", "seed", "samples")


@dataclass(frozen=True)
class StoredRun:
    """One agent's episodes of a stored run, with the run's configuration (``{}`` when the
    store has no manifest) and a label naming agent, model and options."""

    path: Path
    config: dict[str, Any]
    agent: str
    episodes: list[Episode]
    label: str = ""

    def options(self) -> dict[str, str]:
        """The run's options as strings, defaults dropped, tool groups in a fixed order."""
        out = {}
        for key, value in sorted((self.config.get("options") or {}).items()):
            text = str(value).strip()
            if key == "disable":
                text = ",".join(sorted({g.strip() for g in text.split(",") if g.strip()}))
            if text != _DEFAULT_OPTIONS.get(key):
                out[key] = text
        return out

    def key(self, *, without: str) -> tuple[Any, ...]:
        """What must be equal for two runs to differ only in option ``without``."""
        rest = tuple((k, v) for k, v in self.options().items() if k != without)
        return (*(str(self.config.get(k)) for k in _IDENTITY if k != "agent"), self.agent, rest)


def read_runs(run_dirs: Sequence[str | Path]) -> list[StoredRun]:
    """Stored runs, one entry per agent in each, labelled ``agent[model] key=value ...``
    (the folder name is added where two labels would be equal)."""
    from buildbench.harness import Store

    runs = []
    for run_dir in run_dirs:
        with Store(run_dir, create=False) as store:
            config = dict(store.manifest().get("config") or {})
            by_agent: dict[str, list[Episode]] = {}
            for ep in store.episodes():
                by_agent.setdefault(ep.agent, []).append(ep)
        runs += [StoredRun(Path(run_dir), config, agent, eps) for agent, eps in by_agent.items()]
    labels = [_label(r) for r in runs]
    return [replace(r, label=lab if labels.count(lab) == 1 else f"{lab} ({r.path.name})")
            for r, lab in zip(runs, labels, strict=True)]


def _label(run: StoredRun) -> str:
    model = run.config.get("model")
    opts = " ".join(f"{k}={v}" for k, v in run.options().items())
    return f"{run.agent}{f'[{model}]' if model else ''}{f' {opts}' if opts else ''}"


def _partner(run: StoredRun, runs: Sequence[StoredRun], option: str) -> StoredRun | None:
    """The run equal to ``run`` except that ``option`` has its default."""
    want = run.key(without=option)
    return next((r for r in runs if option not in r.options() and r.key(without=option) == want), None)


def ablation_name(disable: str) -> str:
    """Table 2's row name for disabled groups: ``environment,multimodal`` -> ``w/o E+M``."""
    groups = {g.strip() for g in disable.split(",") if g.strip()}
    return "w/o " + "+".join(letter for g, letter in _GROUP_LETTERS.items() if g in groups)


def ablation_rows(runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    """Table 2: each ``disable=...`` run against its full twin, beside the paper's drop; each
    relative change with its paired 95 % interval (`relative_f1_change`)."""
    rows = []
    for run in runs:
        if "disable" not in run.options():
            continue
        name = ablation_name(run.options()["disable"])
        full = _partner(run, runs, "disable")
        if full is None:
            paper = PAPER_TABLE2.get(name, (None, None))
            row: dict[str, Any] = {"disabled": name, "hol_f1_pct": None, "part_f1_pct": None,
                                   "paper_hol_f1_pct": paper[0], "paper_part_f1_pct": paper[1]}
        else:
            row = table2_rows(table1_row(full.label, full.episodes),
                              {name: table1_row(run.label, run.episodes)})[0]
            for level, key in (("holistic", "hol_f1_pct"), ("partial", "part_f1_pct")):
                row[key] = relative_f1_change(row[key], full.episodes, run.episodes, level)
        rows.append({**row, "run": run.label, "full run": None if full is None else full.label})
    return rows


Counts = tuple[Sequence[Sequence[float]], Sequence[str]]
"""One run's count rows (one per episode, all of one width) and the task (scene) of each."""


def paired_cell(value: float | None, runs: Sequence[Counts],
                statistic: Callable[[Sequence[Sequence[float]]], float | None], *, n: int, digits: int) -> Estimate | None:
    """``value``, a statistic of the summed count rows of one run or of several (given each run's
    sums), with a 95 % interval resampling the scenes of all the runs together: a scene drawn
    brings its episodes of every run, so runs over the same scenes are compared pairwise
    (`bootstrap_of_counts` over the runs' rows set side by side). None where ``value`` is; NaN
    ends where the bootstrap gives no interval. ``tasks`` counts the scenes of all the runs."""
    if value is None:
        return None
    width = max((len(row) for rows, _ in runs for row in rows), default=0)
    stacked: list[list[float]] = []
    scenes: list[str] = []
    for i, (rows, ids) in enumerate(runs):
        stacked += [[0.0] * (i * width) + [float(v) for v in row] + [0.0] * ((len(runs) - 1 - i) * width)
                    for row in rows]
        scenes += ids

    def of_sums(sums: Sequence[float]) -> float | None:
        return statistic([sums[i * width:(i + 1) * width] for i in range(len(runs))])

    span = bootstrap_of_counts(stacked, scenes, of_sums) if stacked else None
    low, high = span or (math.nan, math.nan)
    return Estimate(value, low, high, n, len(set(scenes)), digits)


def _f1_total(counts: Sequence[Counts]) -> int:
    """The pairs (holistic) or constraints (partial) the F1s of ``counts`` are over."""
    return int(sum(sum(row) for rows, _ in counts for row in rows))


def f1_cell(value: float | None, episodes: Sequence[Episode]) -> Estimate | None:
    """A run's holistic F1 (Table 1's) with its 95 % interval resampling scenes."""
    counts = [f1_counts(episodes, "holistic")]
    return paired_cell(value, counts, lambda s: f1_of_counts(s[0]), n=_f1_total(counts), digits=3)


def f1_difference(value: float | None, ident: Sequence[Episode], given: Sequence[Episode]) -> Estimate | None:
    """Table 4's holistic F1 of the identified run minus the given run's, with a paired interval."""
    counts = [f1_counts(ident, "holistic"), f1_counts(given, "holistic")]

    def diff(sums: Sequence[Sequence[float]]) -> float | None:
        a, b = f1_of_counts(sums[0]), f1_of_counts(sums[1])
        return None if a is None or b is None else a - b

    return paired_cell(value, counts, diff, n=_f1_total(counts), digits=3)


def relative_f1_change(value: float | None, full: Sequence[Episode], ablated: Sequence[Episode],
                       level: str) -> Estimate | None:
    """Table 2's relative change (%) of the ``level`` F1 from the full run to the ablated one
    (``value``, from `table2_rows`), with a paired interval: undefined where the full F1 is 0."""
    counts = [f1_counts(full, level), f1_counts(ablated, level)]

    def change(sums: Sequence[Sequence[float]]) -> float | None:
        a, b = f1_of_counts(sums[0]), f1_of_counts(sums[1])
        return None if not a or b is None else (b - a) / a * 100.0

    return paired_cell(value, counts, change, n=_f1_total(counts), digits=2)


def _success(episodes: Sequence[Episode], prefix: str) -> tuple[Any, Any]:
    """Holistic and partial success rates (fractions) with their intervals: the scored scenes
    judged valid, the ``prefix`` constraints that hold."""
    eps = [ep for ep in episodes if is_scored(ep)]
    return verdict_rate(eps, 1.0, digits=3), share_cell(eps, prefix, 1.0, 3)


def _difference(ident: Sequence[Episode], given: Sequence[Episode], ident_prefix: str | None,
                given_prefix: str | None) -> Estimate | None:
    """Table 4's difference of one rate between the identified and the given run (verdicts when
    the prefixes are None, else constraint shares), with a paired 95 % interval (`paired_cell`);
    None where a rate has nothing to divide by. ``n`` counts the values of both rates."""
    def counts(episodes: Sequence[Episode], prefix: str | None) -> Counts:
        parts = verdict_parts if prefix is None else share_parts(prefix)
        scored = [ep for ep in episodes if is_scored(ep)]
        return [parts(ep) for ep in scored], [ep.task_id for ep in scored]

    runs = [counts(ident, ident_prefix), counts(given, given_prefix)]
    sums = [[sum(row[i] for row in rows) for i in range(2)] for rows, _ in runs]

    def diff(c: Sequence[Sequence[float]]) -> float | None:
        return c[0][0] / c[0][1] - c[1][0] / c[1][1] if c[0][1] and c[1][1] else None

    return paired_cell(diff(sums), runs, diff, n=int(sums[0][1] + sums[1][1]), digits=3)


def identify_rows(runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    """Table 4: each ``constraints=identify`` run against its ``given`` twin (holistic and
    partial SR as fractions, holistic F1, each with its 95 % interval; the identified run's
    partial SR is over the constraints it identified), the paper's rows (methods M1-M4) first."""
    rows = [{"setting": s, "source": "paper", **dict(zip(_T4_COLS, v, strict=True))} for s, v in PAPER_TABLE4.items()]
    for run in runs:
        if run.options().get("constraints") != "identify":
            continue
        given = _partner(run, runs, "constraints")
        hol_i, part_i = _success(run.episodes, "identified")
        f1_i = table1_row(run.label, run.episodes)["hol_f1"]
        ident: dict[str, Any] = {"setting": "Identified constraint", "source": "ours", "run": run.label,
                                 "hol_sr": hol_i, "part_sr": part_i, "hol_f1": f1_cell(f1_i, run.episodes)}
        if given is None:
            rows.append(ident)
            continue
        hol_g, part_g = _success(given.episodes, "partial")
        f1_g = table1_row(given.label, given.episodes)["hol_f1"]
        oracle: dict[str, Any] = {"setting": "Oracle constraint", "source": "ours", "run": given.label,
                                  "hol_sr": hol_g, "part_sr": part_g, "hol_f1": f1_cell(f1_g, given.episodes)}
        diff: dict[str, Any] = {
            "setting": "Difference", "source": "ours", "run": run.label,
            "hol_sr": _difference(run.episodes, given.episodes, None, None),
            "part_sr": _difference(run.episodes, given.episodes, "identified", "partial"),
            "hol_f1": f1_difference(None if f1_i is None or f1_g is None else f1_i - f1_g, run.episodes,
                                    given.episodes)}
        rows += [oracle, ident, diff]
    return rows


T2_TITLE = "Table 2: relative F1 change with tool groups disabled (%)"
T4_TITLE = "Table 4: identified vs given (oracle) constraints"


def runs_tables(runs: Sequence[StoredRun]) -> dict[str, list[dict[str, Any]]]:
    """Every table over several stored runs: Tables 1, 3, 5 and 7 per run, Table 2 and 4
    from the pairs of runs that differ in ``disable`` or ``constraints``."""
    tables = run_tables({r.label: r.episodes for r in runs})
    if any("disable" in r.options() for r in runs):
        tables[T2_TITLE] = ablation_rows(runs)
    if any(r.options().get("constraints") == "identify" for r in runs):
        tables[T4_TITLE] = identify_rows(runs)
    return tables


def print_runs_report(run_dirs: Sequence[str | Path], *, as_json: bool = False) -> None:
    """Print the tables of stored runs (with ``as_json`` a JSON object: ``tables`` and the
    intervals of their `Estimate` cells, ``table_intervals``: `tables_json`)."""
    tables = runs_tables(read_runs(run_dirs))
    if as_json:
        print(tables_json(tables))
    else:
        print_tables(tables)


def print_run_report(run_dir: str | Path, *, as_json: bool = False) -> None:
    """Print a stored run's tables (JSON with ``as_json``)."""
    print_runs_report([run_dir], as_json=as_json)
