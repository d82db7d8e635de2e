"""The LEGO-Eval report over stored runs (``buildbench legoeval report RUN_DIR ...``): the
tables of :mod:`.report` per run, and the two the paper builds from pairs of runs.

Each run is labelled by agent, model and options from its manifest; Table 2 pairs each run
with ``-o disable=...`` with the run that differs only by not disabling anything, Table 4
each ``constraints=identify`` run with its ``given`` twin. Table 4's success rates carry 95 %
intervals resampling scenes as Table 3's do, and so do their differences (the scenes of both
runs resampled together); its F1s have none (Table 1 gives theirs).
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
    """Table 2: each ``disable=...`` run against its full twin, beside the paper's drop."""
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
        rows.append({**row, "run": run.label, "full run": None if full is None else full.label})
    return rows


def _success(episodes: Sequence[Episode], prefix: str) -> tuple[Any, Any]:
    """Holistic and partial success rates (fractions) with their intervals: the scored scenes
    judged valid, the ``prefix`` constraints that hold."""
    eps = [ep for ep in episodes if is_scored(ep)]
    return verdict_rate(eps, 1.0, digits=3), share_cell(eps, prefix, 1.0, 3)


def _difference(ident: Sequence[Episode], given: Sequence[Episode], ident_prefix: str | None,
                given_prefix: str | None) -> Estimate | None:
    """Table 4's difference of one rate between the identified and the given run (verdicts when
    the prefixes are None, else constraint shares), with a 95 % interval resampling the scenes of
    both runs together (paired: a scene drawn brings its episodes of each run); None where a rate
    has nothing to divide by. ``n`` counts the values of both rates."""
    def parts(prefix: str | None) -> Callable[[Episode], tuple[float, float]]:
        return verdict_parts if prefix is None else share_parts(prefix)

    first, second = parts(ident_prefix), parts(given_prefix)
    a = [ep for ep in ident if is_scored(ep)]
    b = [ep for ep in given if is_scored(ep)]
    rows = [[*first(ep), 0.0, 0.0] for ep in a] + [[0.0, 0.0, *second(ep)] for ep in b]
    totals = [sum(r[i] for r in rows) for i in range(4)]

    def diff(c: Sequence[float]) -> float | None:
        return c[0] / c[1] - c[2] / c[3] if c[1] and c[3] else None

    value = diff(totals)
    if value is None:
        return None
    span = bootstrap_of_counts(rows, [ep.task_id for ep in [*a, *b]], diff)
    low, high = span or (math.nan, math.nan)
    return Estimate(value, low, high, int(totals[1] + totals[3]), len({ep.task_id for ep in [*a, *b]}), 3)


def identify_rows(runs: Sequence[StoredRun]) -> list[dict[str, Any]]:
    """Table 4: each ``constraints=identify`` run against its ``given`` twin (holistic and
    partial SR as fractions; the identified run's partial SR is over the constraints it
    identified), the paper's rows (methods M1-M4) first."""
    rows = [{"setting": s, "source": "paper", **dict(zip(_T4_COLS, v, strict=True))} for s, v in PAPER_TABLE4.items()]
    for run in runs:
        if run.options().get("constraints") != "identify":
            continue
        given = _partner(run, runs, "constraints")
        hol_i, part_i = _success(run.episodes, "identified")
        ident = {"setting": "Identified constraint", "source": "ours", "run": run.label, "hol_sr": hol_i,
                 "part_sr": part_i, "hol_f1": table1_row(run.label, run.episodes)["hol_f1"]}
        if given is None:
            rows.append(ident)
            continue
        hol_g, part_g = _success(given.episodes, "partial")
        oracle = {"setting": "Oracle constraint", "source": "ours", "run": given.label, "hol_sr": hol_g,
                  "part_sr": part_g, "hol_f1": table1_row(given.label, given.episodes)["hol_f1"]}
        diff = {"setting": "Difference", "source": "ours", "run": run.label,
                "hol_sr": _difference(run.episodes, given.episodes, None, None),
                "part_sr": _difference(run.episodes, given.episodes, "identified", "partial"),
                "hol_f1": None if ident["hol_f1"] is None or oracle["hol_f1"] is None
                else ident["hol_f1"] - oracle["hol_f1"]}
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
