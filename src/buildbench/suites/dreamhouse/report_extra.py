"""DreamHouse Tables 2 and 5 and the passed-vs-failed T comparison (see :mod:`.report`).

Each reads stored episodes: Table 2 the refinement notes the protocol keeps in the outcome
(``outcome["protocol"]["refinement"]``), Table 5 and the T split the per-episode metrics.
Rows are ours first (one per model label × protocol), then the paper's (model ending ``*``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from buildbench.harness import Episode, is_scored
from buildbench.harness.episode_outcome import episode_outcome
from buildbench.harness.stats import bootstrap_interval

from .outcome import DreamHouseOutcome
from .report_paper import (
    NO_OUTCOME,
    PAPER_MARK,
    PAPER_T_SPLIT,
    PAPER_TABLE2,
    PAPER_TABLE5,
    Labeller,
    condition_of,
    estimate_cell,
    group_mean,
    group_span,
    model_of,
    protocol_label,
)

#: The τ below which an Atomic pass enters refinement (Table 6), for runs stored before the
#: protocol recorded eligibility itself.
REFINE_TAU = 0.6
#: Table 5's two variants.
TABLE5_PROTOCOLS: tuple[str, str] = ("planner-managed", "planner-managed-visual")
_MISSING = "–"


def refinement_notes(episode: Episode) -> dict[str, Any] | None:
    """The refinement record of an episode that entered refinement (passed, S below τ), else None
    (also for an episode without an outcome: it has no record of refinement)."""
    outcome = episode_outcome(episode, DreamHouseOutcome)
    notes = (outcome.protocol.get("refinement") if outcome is not None else None) or {}
    if notes.get("status") != "done" or not _finite(notes.get("baseline")) or not _finite(notes.get("final")):
        return None
    eligible = notes.get("eligible")
    if eligible is None:
        eligible = float(notes["baseline"]) < REFINE_TAU
    return notes if eligible else None


def table2_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 2: per model label, the mean baseline / final / best S of the tasks that entered
    refinement, Δ = final − baseline, the share of tasks whose final S beat their baseline,
    and the share of revisions that kept a passing structure ("retained"); N tasks."""
    label = label or model_of
    groups: dict[str, list[dict[str, Any]]] = {}
    for ep in episodes:
        record = refinement_notes(ep) if ep.protocol == "iterative-refinement" and is_scored(ep) else None
        if record is not None:
            groups.setdefault(label(ep), []).append(record)
    rows = []
    for model, notes in sorted(groups.items()):
        base = sum(float(n["baseline"]) for n in notes) / len(notes)
        final = sum(float(n["final"]) for n in notes) / len(notes)
        accepted = sum(int(n.get("accepted", 0)) for n in notes)
        tried = accepted + sum(int(n.get("rejected", 0)) for n in notes)
        rows.append(_table2_row(model, base, final, _mean([float(n["best"]) for n in notes]), final - base,
                                _mean([float(n["final"] > n["baseline"]) for n in notes]),
                                accepted / tried if tried else None, len(notes)))
    for model, (base, final, best, delta, improved, retained) in PAPER_TABLE2.items():
        rows.append(_table2_row(model + PAPER_MARK, base, final, best, delta, improved, retained, _MISSING))
    return rows


def table5_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 5 (Frame): Planner-Managed without and with per-step visual feedback: structural
    pass, S over passed structures, visual pass and joint pass over all scored episodes."""
    label = label or model_of
    groups: dict[tuple[str, str], list[Episode]] = {}
    unplaced: dict[tuple[str, str], int] = {}  # no outcome and no run options: condition not known
    for ep in episodes:
        if ep.protocol in TABLE5_PROTOCOLS:
            condition = condition_of(ep)
            if condition == "frame":
                groups.setdefault((label(ep), ep.protocol), []).append(ep)
            elif condition == NO_OUTCOME:
                key = (label(ep), ep.protocol)
                unplaced[key] = unplaced.get(key, 0) + 1
    rows = []
    for key in sorted(set(groups) | set(unplaced)):
        eps = groups.get(key, [])
        values = [group_mean(eps, k) for k in ("structural_pass", "visual_fidelity", "visual_pass", "joint_pass")]
        row = _table5_row(*key, values, len(eps))
        unscored = sum(1 for ep in eps if not is_scored(ep))
        if unscored:  # in N but in no rate (--errors-as-failures counts them as failed): said so
            row["unscored"] = unscored
        if unplaced.get(key):
            row[f"N {NO_OUTCOME}"] = unplaced[key]
        rows.append(row)
    for (model, protocol), paper in PAPER_TABLE5.items():
        rows.append(_table5_row(model + PAPER_MARK, protocol, list(paper), 1200))
    return rows


def table2_intervals(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 2's rows of ours again, each mean over tasks the 95 % interval of it, resampling the
    tasks that entered refinement ("retained" is a ratio of revision counts: none)."""
    label = label or model_of
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for ep in episodes:
        record = refinement_notes(ep) if ep.protocol == "iterative-refinement" and is_scored(ep) else None
        if record is not None:
            groups.setdefault(label(ep), []).append((ep.task_id, record))
    figures = {"baseline": lambda n: float(n["baseline"]), "final": lambda n: float(n["final"]),
               "best": lambda n: float(n["best"]), "Δ": lambda n: float(n["final"]) - float(n["baseline"]),
               "improved": lambda n: 100.0 * float(n["final"] > n["baseline"])}
    rows = []
    for model, records in sorted(groups.items()):
        tasks = [task for task, _ in records]
        row: dict[str, Any] = {"model": model}
        for name, value in figures.items():
            interval = bootstrap_interval([value(n) for _, n in records], tasks)
            digits = 1 if name == "improved" else 3
            row[name] = (f"[{interval.low:.{digits}f}, {interval.high:.{digits}f}]" if interval.clusters > 1
                         and math.isfinite(interval.low) and math.isfinite(interval.high) else _MISSING)
        rows.append({**row, "retained": _MISSING, "N": len(records)})
    return rows


def table5_intervals(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Table 5's rows of ours again (Frame), each cell the 95 % interval of its value."""
    label = label or model_of
    groups: dict[tuple[str, str], list[Episode]] = {}
    for ep in episodes:
        if ep.protocol in TABLE5_PROTOCOLS and condition_of(ep) == "frame":
            groups.setdefault((label(ep), ep.protocol), []).append(ep)
    columns = {"struct": "structural_pass", "visual": "visual_fidelity", "vis pass": "visual_pass",
               "joint": "joint_pass"}
    return [{"model": model, "variant": protocol_label(protocol),
             **{title: group_span(eps, key) for title, key in columns.items()}}
            for (model, protocol), eps in sorted(groups.items())]


def t_split_rows(episodes: Sequence[Episode], label: Labeller | None = None) -> list[dict[str, Any]]:
    """Mean T of structurally passed and of failed structures, per model × protocol × condition,
    each with its 95 % interval resampling tasks (`estimate_cell`); unscored episodes are in
    neither mean and counted (``unscored``) where a group has any."""
    label = label or model_of
    groups: dict[tuple[str, str, str], list[Episode]] = {}
    for ep in episodes:
        if not is_scored(ep) or _finite(ep.metrics.get("topological_fidelity_any")):
            groups.setdefault((label(ep), ep.protocol, condition_of(ep)), []).append(ep)
    rows = []
    for (model, protocol, condition), eps in sorted(groups.items()):
        scored = [ep for ep in eps if is_scored(ep)]
        split = {outcome: [ep for ep in scored if (ep.metrics.get("structural_pass") == 1.0) is outcome]
                 for outcome in (True, False)}
        row: dict[str, Any] = {"model": model, "protocol": protocol_label(protocol), "condition": condition}
        for outcome, name in ((True, "passed"), (False, "failed")):
            row[f"T {name}"] = estimate_cell([float(ep.metrics["topological_fidelity_any"]) for ep in split[outcome]],
                                             [ep.task_id for ep in split[outcome]])
        row["N passed"], row["N failed"] = len(split[True]), len(split[False])
        if len(eps) > len(scored):
            row["unscored"] = len(eps) - len(scored)
        rows.append(row)
    for model, (t_pass, t_fail) in PAPER_T_SPLIT.items():
        rows.append({"model": model + PAPER_MARK, "protocol": protocol_label("planner-atomic"), "condition": "–",
                     "T passed": _fmt(t_pass), "T failed": _fmt(t_fail), "N passed": _MISSING,
                     "N failed": _MISSING})
    return rows


def _table2_row(model: str, base: float | None, final: float | None, best: float | None, delta: float | None,
                improved: float | None, retained: float | None, n: int | str) -> dict[str, Any]:
    return {"model": model, "baseline": _fmt(base), "final": _fmt(final), "best": _fmt(best),
            "Δ": _MISSING if delta is None else f"{delta:+.3f}", "improved": _pct(improved),
            "retained": _pct(retained), "N": n}


def _table5_row(model: str, protocol: str, values: list[float | None], n: int) -> dict[str, Any]:
    struct, visual, vis_pass, joint = values
    return {"model": model, "variant": protocol_label(protocol), "struct": _fmt(struct), "visual": _fmt(visual),
            "vis pass": _fmt(vis_pass), "joint": _fmt(joint), "N": n}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _fmt(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return _MISSING if value is None else f"{100 * value:.1f}%"
