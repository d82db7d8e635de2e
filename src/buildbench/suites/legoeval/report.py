"""The LEGO-Eval report: the paper's tables with its numbers beside ours.

Every table is rebuilt from per-episode metrics (:func:`~.metrics.score` writes confusion
and verdict counts), so a stored run can be reported without its tasks. Rows are plain
dicts (JSON) and print as rich tables. Published numbers are spec section 8 (paper
Tables 1, 2, 3, 5, 7); ours are labelled by evaluator (agent) name.

* Table 1: holistic and partial macro F1 / recall / precision / κ against the labels.
* Table 2: relative F1 change of tool-group ablations against the full evaluator.
* Table 3: success rates (holistic, per constraint type, micro "Avg.") by an evaluator's
  verdicts, plus holistic SR per complexity bucket (Figure 6 has no printed numbers).
* Tables 5/7: planner quality rows, when the caller measured them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from buildbench.harness import Episode, is_scored

from .metrics import Agreement, agreement_from_counts
from .tasks import BUCKETS, TYPES, bucket_of

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
    """One evaluator's Table 1 row from its episodes."""
    h, p = holistic_from_episodes(episodes), partial_from_episodes(episodes)
    return {"method": name, "source": "ours",
            "hol_f1": h.f1, "hol_recall": h.recall, "hol_precision": h.precision, "hol_kappa": h.kappa,
            "part_f1": p.f1, "part_recall": p.recall, "part_precision": p.precision, "part_kappa": p.kappa,
            "pairs": h.n, "constraints": p.n, "unknown_pairs": h.n_unknown, "unknown_constraints": p.n_unknown}


def paper_table1() -> list[dict[str, Any]]:
    return [{"method": m, "source": "paper", **dict(zip(_T1_COLS, v, strict=True))} for m, v in PAPER_TABLE1.items()]


def by_type_rows(name: str, episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Partial agreement per constraint type (no paper numbers: Table 6 is missing)."""
    rows = []
    for t in TYPES:
        a = partial_from_episodes(episodes, t)
        rows.append({"method": name, "type": t, "f1": a.f1, "recall": a.recall, "precision": a.precision,
                     "kappa": a.kappa, "constraints": a.n, "unknown": a.n_unknown})
    return rows


def _rate(hits: int, n: int) -> float | None:
    return 100.0 * hits / n if n else None


def table3_row(name: str, episodes: Sequence[Episode]) -> dict[str, Any]:
    """Success rates (%) of the scenes in ``episodes`` by the evaluator's verdicts."""
    eps = [ep for ep in episodes if is_scored(ep)]
    preds = [ep.metrics.get("valid_pred") for ep in eps]
    judged = [p for p in preds if isinstance(p, int | float)]
    row: dict[str, Any] = {"method": name, "source": "ours", "holistic_sr": _rate(int(sum(judged)), len(judged))}
    for t in TYPES:
        holds, fails = _sum(eps, f"{t}_holds"), _sum(eps, f"{t}_fails")
        row[t] = _rate(holds, holds + fails)
    holds, fails = _sum(eps, "partial_holds"), _sum(eps, "partial_fails")
    row["avg"] = _rate(holds, holds + fails)
    for b in BUCKETS:
        mine = [ep.metrics.get("valid_pred") for ep in eps
                if bucket_of(int(ep.metrics.get("n_constraints") or 0)) == b]
        mine_j = [p for p in mine if isinstance(p, int | float)]
        row[f"sr_{b}"] = _rate(int(sum(mine_j)), len(mine_j))
    row["scenes"], row["unknown_scenes"] = len(judged), len(eps) - len(judged) + (len(episodes) - len(eps))
    row["unknown_constraints"] = _sum(eps, "partial_unknown")
    return row


def paper_table3() -> list[dict[str, Any]]:
    cols = ("holistic_sr", *TYPES, "avg")
    return [{"method": m, "source": "paper", **dict(zip(cols, v, strict=True))} for m, v in PAPER_TABLE3.items()]


def table2_rows(full: dict[str, Any], ablated: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 2 rows: our relative F1 changes (%) beside the paper's, from Table 1 rows."""
    rows = []
    for name, row in ablated.items():
        ours = [None if not full[k] else (row[k] - full[k]) / full[k] * 100.0 for k in ("hol_f1", "part_f1")]
        paper = PAPER_TABLE2.get(name, (None, None))
        rows.append({"disabled": name, "hol_f1_pct": ours[0], "part_f1_pct": ours[1],
                     "paper_hol_f1_pct": paper[0], "paper_part_f1_pct": paper[1]})
    return rows


def run_tables(groups: Mapping[str, Sequence[Episode]]) -> dict[str, list[dict[str, Any]]]:
    """All tables for evaluators named by ``groups`` (name -> its episodes)."""
    t1 = paper_table1() + [table1_row(n, eps) for n, eps in groups.items()]
    types = [r for n, eps in groups.items() for r in by_type_rows(n, eps)]
    t3 = paper_table3() + [table3_row(n, eps) for n, eps in groups.items()]
    return {"Table 1: agreement with labels": t1, "Partial agreement by constraint type": types,
            "Table 3: success rates (%)": t3}


def _cell(value: Any) -> str:
    if value is None:
        return _MISSING
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def print_tables(titled: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Print titled row lists as rich tables (floats to 3 decimals, None as a dash)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.width = max(console.width, 160)  # the paper's tables are wide; never wrap numbers
    for title, rows in titled.items():
        if not rows:
            console.print(f"{title}: no rows")
            continue
        cols = list(dict.fromkeys(k for r in rows for k in r))
        table = Table(title=title)
        for col in cols:
            table.add_column(col)
        for row in rows:
            table.add_row(*(_cell(row.get(c)) for c in cols))
        console.print(table)


def episodes_from_results(agent: str, results: Sequence[tuple[Any, Mapping[str, Any]]]) -> list[Episode]:
    """Scored episode records for ``(task, outcome)`` pairs judged outside the harness
    (a scripted baseline run in-process); an outcome that cannot be scored becomes an
    ``error`` episode, kept out of every table."""
    from .metrics import score
    from .tasks import OutcomeError

    out = []
    for task, outcome in results:
        ep = Episode(task_id=task.id, sample=0, suite=task.suite, agent=agent, protocol="direct", seed=0,
                     outcome=dict(outcome))
        try:
            ep.metrics = {k: v for k, v in score(task, outcome).items() if v is not None}
        except OutcomeError as exc:
            ep.status, ep.error = "error", str(exc)
        out.append(ep)
    return out


def read_run(run_dir: str | Path) -> dict[str, list[Episode]]:
    """A stored run's episodes grouped by agent name."""
    from buildbench.harness import Store

    groups: dict[str, list[Episode]] = {}
    with Store(run_dir, create=False) as store:
        for ep in store.episodes():
            groups.setdefault(ep.agent, []).append(ep)
    return groups


def print_run_report(run_dir: str | Path, *, as_json: bool = False) -> None:
    """Print a stored run's tables (JSON with ``as_json``)."""
    import json

    tables = run_tables(read_run(run_dir))
    if as_json:
        print(json.dumps(tables, indent=2))
    else:
        print_tables(tables)
