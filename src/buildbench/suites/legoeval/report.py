"""The LEGO-Eval report: the paper's tables with its numbers beside ours.

Every table is rebuilt from per-episode metrics (:func:`.score.score` writes confusion
and verdict counts), so a stored run can be reported without its tasks. Rows are plain
dicts (JSON) and print as rich tables. Published numbers are spec section 8 (paper
Tables 1, 2, 3, 4, 5, 7); ours are labelled by evaluator (agent) name.

* Table 1: holistic and partial macro F1 / recall / precision / κ against the labels.
* Table 3: success rates (holistic, per constraint type, micro "Avg.") by an evaluator's
  verdicts, plus holistic SR per complexity bucket (Figure 6 has no printed numbers).
* Table 5: tool F1, GED and argument F1 of the model's plans against the reference plans,
  beside the evaluation F1s; Table 7: argument F1 when the reference plans are given
  (``-o plans=reference``). Both only for runs whose outcomes carry the pipeline's trace.

Our cells that are rates or means (Tables 3, 4, 5, 7 and the buckets) are `Estimate` values
carrying a 95 % bootstrap interval resampling scenes (tasks): a verdict rate through
`verdict_rate`, a ratio of summed counts (constraint shares, per-constraint means) through
`ratio_cell`; Table 1's F1s give theirs in a column of their own. Unscored episodes are in no
cell and are counted.

Tables 2 (tool-group ablations) and 4 (identified constraints) compare stored runs:
:mod:`.report_runs`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from buildbench.harness import Episode, is_scored
from buildbench.harness.stats import Estimate, bootstrap_interval, bootstrap_of_counts
from buildbench.harness.tables import cell_text, number_text

from .metrics import Agreement, agreement_from_counts
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
    rows, tasks = f1_counts(episodes, level)
    span = bootstrap_of_counts(rows, tasks, f1_of_counts) if rows else None
    return "n/a" if span is None else f"[{number_text(span[0])}, {number_text(span[1])}]"


def f1_counts(episodes: Sequence[Episode], level: str) -> tuple[list[list[float]], list[str]]:
    """Each judged episode's confusion counts (tt, tf, ft, ff) at ``level`` (``holistic``: its
    verdict; else its constraints) and its task: what an F1's interval resamples."""
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
    return rows, tasks


def f1_of_counts(counts: Sequence[float]) -> float | None:
    """The macro F1 a table shows for summed confusion counts (None with one label class)."""
    return agreement_from_counts(*(int(c) for c in counts)).reportable()["f1"]


def paper_table1() -> list[dict[str, Any]]:
    return [{"method": m, "source": "paper", **dict(zip(_T1_COLS, v, strict=True))} for m, v in PAPER_TABLE1.items()]


def by_type_rows(name: str, episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Partial agreement per constraint type (no paper numbers: Table 6 is missing)."""
    rows = []
    for t in TYPES:
        a = partial_from_episodes(episodes, t)
        rows.append({"method": name, "type": t, **a.reportable(), "constraints": a.n, "unknown": a.n_unknown})
    return rows


def table3_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Success rates (%) of the scenes in ``episodes`` by the evaluator's verdicts, each with its
    95 % interval resampling scenes; unscored episodes are in none and counted (unknown_scenes)."""
    eps = [ep for ep in episodes if is_scored(ep)]
    row: dict[str, Any] = {"method": name, "source": "ours", "holistic_sr": verdict_rate(eps, 100.0, digits=1)}
    for t in TYPES:
        row[t] = share_cell(eps, t)
    row["avg"] = share_cell(eps, "partial")
    for b in BUCKETS:
        row[f"sr_{b}"] = verdict_rate([ep for ep in eps if bucket_of(int(ep.metrics.get("n_constraints") or 0)) == b],
                                      100.0, digits=1)
    judged = sum(isinstance(ep.metrics.get("valid_pred"), int | float) for ep in eps)
    row["scenes"], row["unknown_scenes"] = judged, len(episodes) - judged
    row["unknown_constraints"] = _sum(eps, "partial_unknown")
    return row


def verdict_rate(eps: Sequence[Episode], scale: float, *, digits: int) -> Estimate | None:
    """The share of the scored ``eps`` the evaluator called valid, times ``scale`` (100: a
    percentage), with its 95 % interval resampling scenes; None without a verdict."""
    verdicts = [(float(p), ep.task_id) for ep in eps if isinstance(p := ep.metrics.get("valid_pred"), int | float)]
    if not verdicts:
        return None
    interval = bootstrap_interval([p for p, _ in verdicts], [t for _, t in verdicts])
    return Estimate.of(interval, scale=scale, digits=digits, rounded=False)


def ratio_cell(eps: Sequence[Episode], parts: Callable[[Episode], tuple[float, float]], *, scale: float = 1.0,
               digits: int = 3) -> Estimate | None:
    """A ratio of sums over episodes (a share of constraints, a mean per constraint or call):
    ``scale`` times the summed numerators over the summed denominators of ``parts``, with a 95 %
    interval resampling scenes (`bootstrap_of_counts`; none with one scene, or where resamples
    would often have nothing to divide by); None where the denominators sum to 0. ``n`` is the
    denominator (constraints or calls), ``tasks`` the scenes that have some."""
    rows = [[float(v) for v in parts(ep)] for ep in eps]
    num, den = sum(r[0] for r in rows), sum(r[1] for r in rows)
    if not den:
        return None
    span = bootstrap_of_counts(rows, [ep.task_id for ep in eps], lambda c: scale * c[0] / c[1] if c[1] else None)
    low, high = span or (math.nan, math.nan)
    tasks = len({ep.task_id for ep, row in zip(eps, rows, strict=True) if row[1]})
    return Estimate(scale * num / den, low, high, int(den), tasks, digits)


def share_cell(eps: Sequence[Episode], prefix: str, scale: float = 100.0, digits: int = 1) -> Estimate | None:
    """The share of the ``prefix`` constraints that hold (% by default), with its interval
    (`ratio_cell`); None without a judged constraint."""
    return ratio_cell(eps, share_parts(prefix), scale=scale, digits=digits)


def share_parts(prefix: str) -> Callable[[Episode], tuple[float, float]]:
    """An episode's ``prefix`` constraints that hold, and those judged."""
    def parts(ep: Episode) -> tuple[float, float]:
        holds = _number(ep, f"{prefix}_holds")
        return holds, holds + _number(ep, f"{prefix}_fails")

    return parts


def verdict_parts(ep: Episode) -> tuple[float, float]:
    """An episode's verdict (1 valid, 0 not) and whether it gave one, for a ratio of sums."""
    pred = ep.metrics.get("valid_pred")
    return (float(pred), 1.0) if isinstance(pred, int | float) else (0.0, 0.0)


def _number(ep: Episode, key: str) -> float:
    value = ep.metrics.get(key)
    return float(value) if isinstance(value, int | float) else 0.0


def paper_table3() -> list[dict[str, Any]]:
    cols = ("holistic_sr", *TYPES, "avg")
    return [{"method": m, "source": "paper", **dict(zip(cols, v, strict=True))} for m, v in PAPER_TABLE3.items()]


def _scored(episodes: Sequence[Episode]) -> list[Episode]:
    return [ep for ep in episodes if is_scored(ep)]


def _plan_sum(episodes: Sequence[Episode], key: str) -> float:
    return sum(_number(ep, key) for ep in _scored(episodes))


def has_plan_metrics(episodes: Sequence[Episode]) -> bool:
    """Whether any scored episode carries the plan metrics (the LLM pipeline's trace)."""
    return any(is_scored(ep) and "plan_constraints" in ep.metrics for ep in episodes)


def plans_given(episodes: Sequence[Episode]) -> bool:
    """Whether the episodes ran on given reference plans (``-o plans=reference``)."""
    return _plan_sum(episodes, "plans_given") > 0


def table5_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Planner and argument quality against the reference plans, beside the evaluation F1s
    (means over the scored constraints and argument calls of the scored episodes, each with its
    95 % interval resampling scenes: `ratio_cell`)."""
    eps = _scored(episodes)
    t1 = table1_row(name, episodes)

    def per(key: str, per_key: str) -> Estimate | None:
        return ratio_cell(eps, lambda ep: (_number(ep, key), _number(ep, per_key)))

    return {"method": name, "source": "ours", "tool_f1": per("tool_f1_sum", "plan_constraints"),
            "ged": per("plan_ged_sum", "plan_constraints"), "argument_f1": per("arg_f1_sum", "arg_calls"),
            "hol_f1": t1["hol_f1"], "part_f1": t1["part_f1"], "constraints": int(_plan_sum(eps, "plan_constraints")),
            "skipped": int(_plan_sum(eps, "plan_skipped")), "calls": int(_plan_sum(eps, "arg_calls"))}


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
