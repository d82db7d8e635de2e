"""The LEGO-Eval report: the paper's tables with its numbers beside ours.

Every table is rebuilt from per-episode metrics (:func:`.score.score` writes confusion
and verdict counts), so a stored run can be reported without its tasks. Rows are plain
dicts (JSON) and print as rich tables. Published numbers are spec section 8 (paper
Tables 1, 2, 3, 5, 7); ours are labelled by evaluator (agent) name.

* Table 1: holistic and partial macro F1 / recall / precision / κ against the labels.
* Table 2: relative F1 change of tool-group ablations against the full evaluator.
* Table 3: success rates (holistic, per constraint type, micro "Avg.") by an evaluator's
  verdicts, plus holistic SR per complexity bucket (Figure 6 has no printed numbers); our
  holistic SR and constraint shares carry a 95 % bootstrap interval resampling scenes (tasks).
* Table 4: identified (``-o constraints=identify``) against given constraints: holistic
  and partial success rates (fractions, as the paper prints them) and holistic F1.
* Table 5: tool F1, GED and argument F1 of the model's plans against the reference plans,
  beside the evaluation F1s; Table 7: argument F1 when the reference plans are given
  (``-o plans=reference``). Both only for runs whose outcomes carry the pipeline's trace.

:func:`print_runs_report` combines stored runs (``buildbench legoeval report RUN_DIR ...``):
each run is labelled by agent, model and options from its manifest; Table 2 pairs each run
with ``-o disable=...`` with the run that differs only by not disabling anything, Table 4
each ``constraints=identify`` run with its ``given`` twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from buildbench.harness import Episode, is_scored
from buildbench.harness.stats import Estimate, bootstrap_interval, bootstrap_of_counts
from buildbench.harness.tables import cell_text, number_text

from .metrics import Agreement, agreement_from_counts
from .options import LegoEvalOptions
from .task_records import BUCKETS, TYPES, bucket_of

_MISSING = "—"
#: Table 1 (holistic F1, R, P, κ, partial F1, R, P, κ), 260 pairs.
PAPER_TABLE1: dict[str, tuple[float, ...]] = {
    "SceneEval Full": (0.33, 0.50, 0.25, 0.00, 0.28, 0.43, 0.39, 0.00),
    "SceneEval Measurable": (0.47, 0.58, 0.74, 0.15, 0.45, 0.58, 0.64, 0.12),
    "CLIPScore thr=15": (0.37, 0.52, 0.67, 0.03, 0.43, 0.50, 0.73, 0.01),
    "CLIPScore thr=20": (0.49, 0.51, 0.51, 0.02, 0.46, 0.50, 0.50, 0.00),
    "CLIPScore thr=25": (0.42, 0.50, 0.51, 0.01, 0.51, 0.55, 0.54, 0.07),
    "VLM-judge Gemini 2.5 Pro": (0.38, 0.52, 0.76, 0.05, 0.60, 0.70, 0.66, 0.28),
    "VLM-judge GPT-o4-mini": (0.40, 0.53, 0.70, 0.05, 0.67, 0.75, 0.70, 0.39),
    "VLM-judge GPT-4.1": (0.40, 0.53, 0.67, 0.05, 0.68, 0.73, 0.65, 0.35),
    "LEGO-Eval GPT-4.1": (0.81, 0.82, 0.84, 0.63, 0.83, 0.81, 0.86, 0.66),
    "LEGO-Eval GPT-4.1-mini": (0.70, 0.72, 0.78, 0.43, 0.78, 0.76, 0.80, 0.56),
    "LEGO-Eval Qwen2.5VL-32B": (0.64, 0.66, 0.70, 0.32, 0.72, 0.71, 0.73, 0.44),
}
#: Table 2: relative drop (%) of holistic and partial F1 with tool groups disabled.
PAPER_TABLE2: dict[str, tuple[float, float]] = {
    "w/o M": (-0.04, -1.02), "w/o T": (-5.05, -2.65), "w/o T+M": (-6.46, -2.81), "w/o E+M": (-24.90, -5.34),
}
#: Table 3: holistic SR, FL, MS, OS, OP, Avg. (%).
PAPER_TABLE3: dict[str, tuple[float, ...]] = {
    "I-Design": (3.8, 92.7, 63.7, 11.0, 4.1, 34.2),
    "LayoutGPT": (6.9, 96.0, 65.3, 40.9, 37.3, 55.2),
    "Holodeck": (8.4, 96.3, 61.6, 46.3, 43.7, 58.5),
    "LayoutVLM": (10.0, 95.6, 65.3, 49.8, 46.0, 60.6),
}
#: Table 5: tool F1, GED, argument F1, holistic F1, partial F1.
PAPER_TABLE5: dict[str, tuple[float, ...]] = {
    "Gemma3-27B": (0.50, 3.01, 0.38, 0.61, 0.68),
    "Qwen2.5VL-32B": (0.57, 2.87, 0.46, 0.64, 0.72),
    "Qwen3-32B": (0.62, 2.55, 0.42, 0.69, 0.73),
}
#: Table 7: argument F1, holistic F1, partial F1 with ground-truth plans.
PAPER_TABLE7: dict[str, tuple[float, ...]] = {
    "Gemma3-27B": (0.38, 0.65, 0.66), "Qwen2.5VL-32B": (0.46, 0.68, 0.68), "Qwen3-32B": (0.42, 0.68, 0.67),
}
#: Table 4: holistic SR M1-M4, partial SR M1-M4 (fractions), oracle / identified / difference.
PAPER_TABLE4: dict[str, tuple[float, ...]] = {
    "Oracle constraint": (0.12, 0.05, 0.05, 0.14, 0.66, 0.57, 0.35, 0.65),
    "Identified constraint": (0.13, 0.07, 0.05, 0.12, 0.63, 0.57, 0.35, 0.64),
    "Difference": (0.01, 0.02, 0.00, -0.02, -0.03, 0.00, 0.00, -0.01),
}
_T4_COLS = tuple(f"{level}_M{i}" for level in ("hol", "part") for i in range(1, 5))
_T1_COLS = ("hol_f1", "hol_recall", "hol_precision", "hol_kappa", "part_f1", "part_recall", "part_precision",
            "part_kappa")


def _sum(episodes: Sequence[Episode], key: str) -> int:
    return int(sum(float(v) for ep in episodes if isinstance(v := ep.metrics.get(key), int | float)))


def _labelled(episodes: Sequence[Episode]) -> list[Episode]:
    return [ep for ep in episodes if is_scored(ep) and isinstance(ep.metrics.get("valid_label"), int | float)]


def holistic_from_episodes(episodes: Sequence[Episode]) -> Agreement:
    counts = {"tt": 0, "tf": 0, "ft": 0, "ff": 0}
    unknown = sum(1 for ep in episodes if not is_scored(ep))
    for ep in _labelled(episodes):
        pred = ep.metrics.get("valid_pred")
        if not isinstance(pred, int | float):
            unknown += 1
            continue
        counts[("t" if ep.metrics["valid_label"] else "f") + ("t" if pred else "f")] += 1
    return agreement_from_counts(counts["tt"], counts["tf"], counts["ft"], counts["ff"], unknown=unknown)


def partial_from_episodes(episodes: Sequence[Episode], prefix: str = "partial") -> Agreement:
    eps = _labelled(episodes)
    tt, tf, ft, ff = (_sum(eps, f"{prefix}_{k}") for k in ("tt", "tf", "ft", "ff"))
    return agreement_from_counts(tt, tf, ft, ff, unknown=_sum(eps, f"{prefix}_unknown"))


def table1_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """One evaluator's Table 1 row from its episodes, each F1 with its 95 % interval
    (`f1_interval`)."""
    hol, part = holistic_from_episodes(episodes), partial_from_episodes(episodes)
    h, p = hol.reportable(), part.reportable()
    return {"method": name, "source": "ours",
            "hol_f1": h["f1"], "hol_recall": h["recall"], "hol_precision": h["precision"], "hol_kappa": h["kappa"],
            "part_f1": p["f1"], "part_recall": p["recall"], "part_precision": p["precision"],
            "part_kappa": p["kappa"],
            "pairs": hol.n, "constraints": part.n, "unknown_pairs": hol.n_unknown,
            "unknown_constraints": part.n_unknown,
            "hol_f1 95 % interval": f1_interval(episodes, "holistic"),
            "part_f1 95 % interval": f1_interval(episodes, "partial")}


def f1_interval(episodes: Sequence[Episode], level: str) -> str:
    """A macro F1's 95 % bootstrap interval (seed 0), resampling tasks with their episodes'
    confusion counts (`bootstrap_of_counts`); ``n/a`` with fewer than two tasks or where a
    resample would often hold one label class only."""
    rows, tasks = [], []
    for ep in _labelled(episodes):
        if level == "holistic":
            pred = ep.metrics.get("valid_pred")
            if not isinstance(pred, int | float):
                continue
            key = ("t" if ep.metrics["valid_label"] else "f") + ("t" if pred else "f")
            rows.append([float(key == k) for k in ("tt", "tf", "ft", "ff")])
        else:
            rows.append([float(ep.metrics.get(f"partial_{k}", 0.0)) for k in ("tt", "tf", "ft", "ff")])
        tasks.append(ep.task_id)

    def f1(counts: Sequence[float]) -> float | None:
        return agreement_from_counts(*(int(c) for c in counts)).reportable()["f1"]

    span = bootstrap_of_counts(rows, tasks, f1) if rows else None
    return "n/a" if span is None else f"[{number_text(span[0])}, {number_text(span[1])}]"


def paper_table1() -> list[dict[str, Any]]:
    return [{"method": m, "source": "paper", **dict(zip(_T1_COLS, v, strict=True))} for m, v in PAPER_TABLE1.items()]


def by_type_rows(name: str, episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Partial agreement per constraint type (no paper numbers: Table 6 is missing)."""
    rows = []
    for t in TYPES:
        a = partial_from_episodes(episodes, t)
        rows.append({"method": name, "type": t, **a.reportable(), "constraints": a.n, "unknown": a.n_unknown})
    return rows


def _rate(hits: int, n: int) -> float | None:
    return 100.0 * hits / n if n else None


def table3_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Success rates (%) of the scenes in ``episodes`` by the evaluator's verdicts."""
    eps = [ep for ep in episodes if is_scored(ep)]
    verdicts = [(float(p), ep.task_id) for ep in eps if isinstance(p := ep.metrics.get("valid_pred"), int | float)]
    judged = [p for p, _ in verdicts]
    sr = bootstrap_interval([100.0 * p for p in judged], [t for _, t in verdicts])
    row: dict[str, Any] = {"method": name, "source": "ours",
                           "holistic_sr": Estimate.of(sr, digits=1, rounded=False) if judged else None}
    for t in TYPES:
        row[t] = _share(eps, t)
    row["avg"] = _share(eps, "partial")
    for b in BUCKETS:
        mine = [ep.metrics.get("valid_pred") for ep in eps
                if bucket_of(int(ep.metrics.get("n_constraints") or 0)) == b]
        mine_j = [p for p in mine if isinstance(p, int | float)]
        row[f"sr_{b}"] = _rate(int(sum(mine_j)), len(mine_j))
    row["scenes"], row["unknown_scenes"] = len(judged), len(eps) - len(judged) + (len(episodes) - len(eps))
    row["unknown_constraints"] = _sum(eps, "partial_unknown")
    return row


def _share(eps: Sequence[Episode], prefix: str) -> Estimate | None:
    """The share (%) of the ``prefix`` constraints that hold, with its 95 % interval resampling
    scenes (`bootstrap_of_counts`); None without a judged constraint."""
    holds, fails = _sum(eps, f"{prefix}_holds"), _sum(eps, f"{prefix}_fails")
    rate = _rate(holds, holds + fails)
    counts = [[float(ep.metrics.get(f"{prefix}_{k}") or 0.0) for k in ("holds", "fails")] for ep in eps]
    span = bootstrap_of_counts(counts, [ep.task_id for ep in eps], lambda c: _rate(int(c[0]), int(c[0] + c[1])))
    low, high = span or (float("nan"), float("nan"))
    return None if rate is None else Estimate(rate, low, high, holds + fails, len({e.task_id for e in eps}), 1)


def paper_table3() -> list[dict[str, Any]]:
    cols = ("holistic_sr", *TYPES, "avg")
    return [{"method": m, "source": "paper", **dict(zip(cols, v, strict=True))} for m, v in PAPER_TABLE3.items()]


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


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _plan_sum(episodes: Sequence[Episode], key: str) -> float:
    return sum(float(v) for ep in episodes if is_scored(ep) and isinstance(v := ep.metrics.get(key), int | float))


def has_plan_metrics(episodes: Sequence[Episode]) -> bool:
    """Whether any scored episode carries the plan metrics (the LLM pipeline's trace)."""
    return any(is_scored(ep) and "plan_constraints" in ep.metrics for ep in episodes)


def plans_given(episodes: Sequence[Episode]) -> bool:
    """Whether the episodes ran on given reference plans (``-o plans=reference``)."""
    return _plan_sum(episodes, "plans_given") > 0


def table5_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Planner and argument quality against the reference plans, beside the evaluation F1s
    (means over scored constraints and argument calls of all episodes)."""
    n, calls = _plan_sum(episodes, "plan_constraints"), _plan_sum(episodes, "arg_calls")
    t1 = table1_row(name, episodes)
    return {"method": name, "source": "ours", "tool_f1": _ratio(_plan_sum(episodes, "tool_f1_sum"), n),
            "ged": _ratio(_plan_sum(episodes, "plan_ged_sum"), n),
            "argument_f1": _ratio(_plan_sum(episodes, "arg_f1_sum"), calls),
            "hol_f1": t1["hol_f1"], "part_f1": t1["part_f1"], "constraints": int(n),
            "skipped": int(_plan_sum(episodes, "plan_skipped")), "calls": int(calls)}


def table7_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Argument quality when the reference plans were given, beside the evaluation F1s."""
    row = table5_row(name, episodes)
    return {k: row[k] for k in ("method", "source", "argument_f1", "hol_f1", "part_f1", "constraints", "skipped",
                                "calls")}


def paper_table5() -> list[dict[str, Any]]:
    cols = ("tool_f1", "ged", "argument_f1", "hol_f1", "part_f1")
    return [{"method": m, "source": "paper", **dict(zip(cols, v, strict=True))} for m, v in PAPER_TABLE5.items()]


def paper_table7() -> list[dict[str, Any]]:
    cols = ("argument_f1", "hol_f1", "part_f1")
    return [{"method": m, "source": "paper", **dict(zip(cols, v, strict=True))} for m, v in PAPER_TABLE7.items()]


T5_TITLE = "Table 5: tool plans and arguments against the reference plans"
T7_TITLE = "Table 7: argument selection with the reference plans given"


def planner_tables(groups: Mapping[str, Sequence[Episode]]) -> dict[str, list[dict[str, Any]]]:
    """Tables 5 and 7 for the groups that carry plan metrics (none: no tables)."""
    planned = {n: eps for n, eps in groups.items() if has_plan_metrics(eps)}
    t5 = [table5_row(n, eps) for n, eps in planned.items() if not plans_given(eps)]
    t7 = [table7_row(n, eps) for n, eps in planned.items() if plans_given(eps)]
    out = {}
    if t5:
        out[T5_TITLE] = paper_table5() + t5
    if t7:
        out[T7_TITLE] = paper_table7() + t7
    return out


def run_tables(groups: Mapping[str, Sequence[Episode]]) -> dict[str, list[dict[str, Any]]]:
    """All tables for evaluators named by ``groups`` (name -> its episodes)."""
    t1 = paper_table1() + [table1_row(n, eps) for n, eps in groups.items()]
    types = [r for n, eps in groups.items() for r in by_type_rows(n, eps)]
    t3 = paper_table3() + [table3_row(n, eps) for n, eps in groups.items()]
    tables = {"Table 1: agreement with labels": t1, "Partial agreement by constraint type": types,
              "Table 3: success rates (%)": t3, **planner_tables(groups)}
    return {**tables, **na_notes(tables)}


_AGREEMENT_NA = ("F1, recall, precision and kappa are undefined where the labels of the judged pairs (or "
                 "constraints) hold one class or none: a macro average would count the absent class as 0")
#: Why a cell of ours reads n/a, per table.
NA_REASONS = {
    "Table 1: agreement with labels": _AGREEMENT_NA + "; an F1's interval also with fewer than two tasks, or "
                                      "where resampled tasks would often hold one class",
    "Partial agreement by constraint type": _AGREEMENT_NA,
    "Table 3: success rates (%)": "no scene (or constraint) of that group was judged, so there is no rate",
}


def na_notes(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """A "Notes" table saying why cells of our rows read n/a, when some do (else nothing)."""
    notes = [{"note": f"n/a in {title.split(':')[0]}: {reason}"} for title, reason in NA_REASONS.items()
             if any(row.get("source") != "paper" and any(v is None or v == "n/a" for v in row.values())
                    for row in tables.get(title, ()))]
    return {"Notes": notes} if notes else {}


def _cell(value: Any) -> str:
    if value is None:
        return _MISSING
    if isinstance(value, Estimate):
        return cell_text(value)
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_tables(titled: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Print titled row lists as rich tables (floats to 3 decimals, None as a dash)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    for title, rows in titled.items():
        if not rows:
            console.print(f"{title}: no rows")
            continue
        cols = list(dict.fromkeys(k for r in rows for k in r))
        table = Table(title=title)
        for col in cols:
            table.add_column(col)
        for row in rows:
            table.add_row(*(escape(_cell(row.get(c))) for c in cols))  # run labels hold [model]
        # The paper's tables are wide: print each at its natural width, never cut a cell.
        natural = Console(width=10_000).measure(table).maximum
        Console(width=max(console.width, 100, natural)).print(table)


def episodes_from_results(agent: str, results: Sequence[tuple[Any, Mapping[str, Any]]]) -> list[Episode]:
    """Scored episode records for ``(task, outcome)`` pairs judged outside the harness
    (a scripted baseline run in-process); an outcome that cannot be scored becomes an
    ``error`` episode, kept out of every table."""
    from .outcome import LegoEvalOutcome
    from .score import score
    from .tasks import OutcomeError

    out = []
    for task, outcome in results:
        ep = Episode(task_id=task.id, sample=0, suite=task.suite, agent=agent, protocol="direct", seed=0,
                     outcome=dict(outcome))
        try:
            ep.metrics = score(task, LegoEvalOutcome.from_dict(outcome))
        except OutcomeError as exc:
            ep.status, ep.error = "error", str(exc)
        out.append(ep)
    return out


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


def _success(episodes: Sequence[Episode], prefix: str) -> tuple[float | None, float | None]:
    eps = [ep for ep in episodes if is_scored(ep)]
    preds = [p for ep in eps if isinstance(p := ep.metrics.get("valid_pred"), int | float)]
    holds, fails = _sum(eps, f"{prefix}_holds"), _sum(eps, f"{prefix}_fails")
    return _ratio(sum(preds), len(preds)), _ratio(holds, holds + fails)


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
                **{k: None if ident[k] is None or oracle[k] is None else ident[k] - oracle[k]
                   for k in ("hol_sr", "part_sr", "hol_f1")}}
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
    """Print the tables of stored runs (JSON with ``as_json``)."""
    import json

    tables = runs_tables(read_runs(run_dirs))
    if as_json:
        print(json.dumps(tables, indent=2))
    else:
        print_tables(tables)


def print_run_report(run_dir: str | Path, *, as_json: bool = False) -> None:
    """Print a stored run's tables (JSON with ``as_json``)."""
    print_runs_report([run_dir], as_json=as_json)
