"""The SceneReVis report: the paper's Tables 1–4 (spec §5.4) with our runs beside them.

OBR and CNR are the per-scene out-of-bounds and collision shares (%), averaged over scenes;
Ra/Spa/Ac are the judge's 1–10 scores and Avg their mean; VBL is the voxel loss × 10³ and
Phy the mean of OBR and CNR. A table's mean row is the mean of its room (condition) rows, as
the paper's is; ours also gives the mean pooled over episodes, labelled. Every row names its judge in a ``judge`` column: the paper's rows
GPT-5, ours the model that judged them, or ``rule judge: not comparable`` when the rule-based
judge scored them (its scores are not comparable with the paper's). An episode whose model
judge failed keeps its physics columns and has no judge scores (``judge failures`` counts
them). Episodes that could not be scored are kept out of every mean. Our per-room and pooled
means carry a 95 % bootstrap interval resampling tasks (printed ``mean [low, high]``, exported
under ``table_intervals``); the mean of room rows resamples tasks within each room.
Published numbers are data (the ``PAPER_*`` tables), never computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from buildbench.harness import Episode, mean_metrics
from buildbench.harness.episode import is_scored
from buildbench.harness.episode_outcome import episode_outcome
from buildbench.harness.stats import Estimate, bootstrap_interval, mean_of_groups_interval

from .outcome import SceneReVisOutcome

COLUMNS = ("OBR", "CNR", "Ra", "Spa", "Ac", "Avg")
#: Report column → the per-episode metric it averages.
METRIC_OF = {"OBR": "oob_rate", "CNR": "collision_rate", "Ra": "Ra", "Spa": "Spa", "Ac": "Ac", "Avg": "Avg",
             "VBL": "voxel_loss_m3", "Phy": "Phy"}
VBL_SCALE = 1e3

#: Table 1 (bedroom, living room, mean), columns OBR, CNR, Ra, Spa, Ac, Avg.
PAPER_TABLE1: dict[str, dict[str, tuple[float, ...]]] = {
    "DiffuScene": {"bedroom": (46.2, 33.8, 8.2, 6.2, 6.9, 7.1), "living_room": (28.0, 41.5, 7.3, 7.5, 8.2, 7.7),
                   "mean": (37.1, 37.7, 7.8, 6.9, 7.6, 7.4)},
    "ReSpace": {"bedroom": (14.7, 41.9, 6.8, 6.1, 7.0, 6.6), "living_room": (11.5, 40.3, 6.9, 6.6, 7.3, 6.9),
                "mean": (13.1, 41.1, 6.9, 6.4, 7.2, 6.8)},
    "LayoutGPT": {"bedroom": (34.3, 45.9, 7.8, 5.6, 7.6, 7.0), "living_room": (15.0, 35.7, 7.5, 7.3, 8.7, 7.8),
                  "mean": (24.7, 40.8, 7.7, 6.5, 8.2, 7.5)},
    "I-Design": {"bedroom": (15.5, 18.2, 8.3, 6.6, 8.1, 7.7), "living_room": (17.8, 14.1, 8.3, 6.5, 8.6, 7.8),
                 "mean": (16.7, 16.2, 8.3, 6.6, 8.4, 7.8)},
    "Holodeck": {"bedroom": (15.4, 22.2, 7.1, 8.1, 8.6, 7.9), "living_room": (10.0, 3.1, 5.9, 8.2, 8.8, 7.6),
                 "mean": (12.7, 12.7, 6.5, 8.2, 8.7, 7.8)},
    "LayoutVLM": {"bedroom": (11.5, 44.9, 7.0, 7.6, 8.0, 7.5), "living_room": (14.3, 28.7, 6.8, 7.9, 8.7, 7.8),
                  "mean": (12.9, 36.8, 6.9, 7.8, 8.4, 7.7)},
    "SceneReVis": {"bedroom": (2.8, 4.6, 9.3, 8.0, 8.9, 8.7), "living_room": (1.2, 4.4, 9.5, 8.0, 8.8, 8.8),
                   "mean": (2.0, 4.5, 9.4, 8.0, 8.9, 8.8)},
}
#: Table 2 (dining room, study room, mean: long-tail).
PAPER_TABLE2: dict[str, dict[str, tuple[float, ...]]] = {
    "LayoutGPT": {"dining_room": (6.2, 26.2, 6.9, 7.7, 8.8, 7.8), "study_room": (16.6, 52.1, 8.5, 7.2, 8.3, 8.0),
                  "mean": (11.4, 39.2, 7.7, 7.5, 8.6, 7.9)},
    "I-Design": {"dining_room": (17.6, 0.7, 7.8, 5.7, 8.8, 7.4), "study_room": (16.3, 4.5, 8.2, 6.9, 8.9, 8.0),
                 "mean": (17.0, 2.6, 8.0, 6.3, 8.9, 7.7)},
    "Holodeck": {"dining_room": (11.9, 3.3, 6.4, 8.0, 8.5, 7.6), "study_room": (13.7, 5.1, 6.7, 8.4, 8.9, 8.0),
                 "mean": (12.8, 4.2, 6.6, 8.2, 8.7, 7.8)},
    "LayoutVLM": {"dining_room": (19.2, 27.0, 6.5, 7.8, 8.8, 7.7), "study_room": (12.3, 36.6, 6.9, 7.6, 8.6, 7.7),
                  "mean": (15.8, 31.8, 6.7, 7.7, 8.7, 7.7)},
    "SceneReVis": {"dining_room": (0.1, 2.8, 8.1, 8.3, 8.6, 8.3), "study_room": (0.5, 2.1, 8.2, 8.3, 8.9, 8.5),
                   "mean": (0.3, 2.5, 8.2, 8.3, 8.8, 8.4)},
}
#: Table 3 (goal-oriented): condition 1 chaotic & missing, 2 chaotic only, 3 missing only, overall.
PAPER_TABLE3: dict[str, dict[str, tuple[float, ...]]] = {
    "DiffuScene": {"chaotic_missing": (50.8, 30.3, 7.5, 7.3, 8.5, 7.8), "chaotic": (62.8, 24.1, 7.4, 7.0, 8.7, 7.7),
                   "missing": (27.8, 30.2, 7.3, 7.0, 7.7, 7.3), "mean": (47.1, 28.2, 7.4, 7.1, 8.3, 7.6)},
    "LayoutVLM": {"chaotic_missing": (10.0, 39.7, 6.7, 6.3, 8.7, 7.2), "chaotic": (8.1, 63.1, 7.2, 6.6, 8.3, 7.4),
                  "missing": (6.5, 31.0, 6.5, 6.4, 8.7, 7.2), "mean": (8.2, 44.6, 6.8, 6.4, 8.6, 7.3)},
    "SceneReVis": {"chaotic_missing": (1.1, 1.8, 8.8, 8.1, 8.9, 8.6), "chaotic": (2.7, 1.3, 7.7, 7.9, 8.5, 8.0),
                   "missing": (1.1, 1.0, 7.9, 7.8, 8.7, 8.1), "mean": (1.6, 1.4, 8.1, 7.9, 8.7, 8.2)},
}
#: Table 4 (ablation), columns VBL, Phy, Ra, Spa, Ac, Avg (row reading per spec §5.4).
ABLATION_COLUMNS = ("VBL", "Phy", "Ra", "Spa", "Ac", "Avg")
PAPER_TABLE4: dict[str, tuple[float, ...]] = {
    "SFT": (544.5, 30.4, 8.7, 7.1, 7.8, 7.9),
    "+ Final reward (RL)": (154.0, 15.8, 7.7, 7.1, 8.9, 7.9),
    "+ Trajectory reward": (210.9, 21.9, 9.1, 7.7, 8.7, 8.5),
    "+ Physical optimisation": (25.6, 3.3, 9.4, 8.0, 8.9, 8.8),
}
#: Room groups of Tables 1 and 2 (metadata ``room``), and Table 3's conditions (metadata
#: ``condition``: 1 chaotic & missing, 2 chaotic only, 3 missing only).
TABLE1_ROOMS = ("bedroom", "living_room")
TABLE2_ROOMS = ("dining_room", "study_room")
CONDITIONS = ("chaotic_missing", "chaotic", "missing")


def _value(ep: Episode, column: str) -> float | None:
    value = ep.metrics.get(METRIC_OF[column])
    if value is None and column in ("Phy", "Avg"):
        parts = [_value(ep, c) for c in (("OBR", "CNR") if column == "Phy" else ("Ra", "Spa", "Ac"))]
        return sum(parts) / len(parts) if all(p is not None for p in parts) else None  # type: ignore[arg-type]
    if value is None or not isinstance(value, (int, float)) or math.isnan(float(value)):
        return None
    return float(value) * (VBL_SCALE if column == "VBL" else 1.0)


def _mean(episodes: Sequence[Episode], column: str) -> Estimate | str:
    """The mean of ``column`` over the episodes that have a value, with its 95 % bootstrap interval
    resampling tasks (`buildbench.harness.stats.bootstrap_interval`); ``–`` without a value."""
    pairs = [(v, e.task_id) for e in episodes if (v := _value(e, column)) is not None]
    if not pairs:
        return "–"
    return Estimate.of(bootstrap_interval([v for v, _ in pairs], [t for _, t in pairs]))


def _mean_of_rows(groups: Sequence[Sequence[Episode]], column: str) -> Estimate | str:
    """The paper's mean column: the plain mean of its per-group rows (Table 1's DiffuScene OBR
    37.1 = (46.2 + 28.0) / 2), so each room weighs the same whatever its episode count; ``–``
    when a group has no value (a mean over fewer groups is not the paper's). Its interval
    resamples tasks within each group (`mean_of_groups_interval`)."""
    values = [[(v, e.task_id) for e in eps if (v := _value(e, column)) is not None] for eps in groups]
    if not all(values):
        return "–"
    return Estimate.of(mean_of_groups_interval([([v for v, _ in g], [t for _, t in g]) for g in values]))


#: The columns whose means share their episodes: physics rates (n/a for a scene without objects)
#: and the judge's scores (none where the judge failed or did not run).
N_COLUMNS = {"n OBR/CNR": ("OBR", "CNR"), "n judged": ("Ra", "Spa", "Ac", "Avg")}


def _n_over(episodes: Sequence[Episode], columns: Sequence[str]) -> int | str:
    """How many episodes the means of ``columns`` are over: one count, or one per column when
    they differ (``OBR 3 / CNR 2``)."""
    counts = [sum(1 for e in episodes if _value(e, c) is not None) for c in columns]
    if len(set(counts)) == 1:
        return counts[0]
    return " / ".join(f"{c} {n}" for c, n in zip(columns, counts, strict=True))


PAPER_JUDGE = "GPT-5 (paper)"
RULE_MARK = "rule judge: not comparable"


def judge_label(episodes: Sequence[Episode]) -> str:
    """Which judge scored Ra/Spa/Ac of ``episodes``: the rule mark if any rule scores are
    among them, else the model judges' labels, else ``–`` (nothing judged)."""
    comparable = {e.metrics.get("judge_comparable") for e in episodes if "Ra" in e.metrics}
    if 0.0 in comparable:
        return RULE_MARK if comparable == {0.0} else f"mixed: {RULE_MARK} / model"
    models = sorted({_judge_of(episode_outcome(e, SceneReVisOutcome)) for e in episodes if "Ra" in e.metrics})
    return ", ".join(models) or "–"


def _judge_of(outcome: SceneReVisOutcome | None) -> str:
    """The evaluation judge an outcome names ("model" when its record names none)."""
    if outcome is None:
        return "unknown (no outcome)"
    return str((outcome.eval_judge or {}).get("judge", "model"))


def _row(source: str, group: str, n: Any, values: dict[str, Any], judge: str,
         counts: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"source": source, "group": group, "n": n, **(counts or dict.fromkeys(N_COLUMNS, "–")), **values,
            "judge": judge}


def _counts(episodes: Sequence[Episode]) -> dict[str, Any]:
    return {name: _n_over(episodes, cols) for name, cols in N_COLUMNS.items()}


POOLED = "pooled episodes"


def room_table(episodes: Sequence[Episode], label: str, groups: Sequence[str],
               paper: dict[str, dict[str, tuple[float, ...]]], key: str = "room") -> list[dict[str, Any]]:
    """One row per (source, group) and each source's mean of its group rows, as the paper's
    mean column is; ours also pooled over all its episodes, labelled so (it weighs the groups by
    their episode counts). ``n`` counts a row's episodes, ``n OBR/CNR`` and ``n judged`` those its
    means are over. Ours first, then the paper's methods; empty when none of our episodes falls
    in ``groups``."""
    ours = {g: [e for e in episodes if str(e.metadata.get(key)) == g] for g in groups}
    pooled = [e for g in groups for e in ours[g]]
    if not pooled:
        return []
    judge = judge_label(pooled)
    mean = f"mean of {key}s"
    rows = [_row(label, g, len(ours[g]), {c: _mean(ours[g], c) for c in COLUMNS}, judge, _counts(ours[g]))
            for g in groups]
    rows.append(_row(label, mean, len(pooled), {c: _mean_of_rows(list(ours.values()), c) for c in COLUMNS}, judge,
                     _counts(pooled)))
    rows.append(_row(label, POOLED, len(pooled), {c: _mean(pooled, c) for c in COLUMNS}, judge, _counts(pooled)))
    for method, cols in paper.items():
        rows += [_row(f"paper: {method}", mean if g == "mean" else g, "–", dict(zip(COLUMNS, cols[g], strict=True)),
                      PAPER_JUDGE) for g in (*groups, "mean")]
    return rows


#: Table 4's columns whose means share their episodes: the voxel loss (none without a target
#: layout), the physics rates and the judge's scores.
ABLATION_N_COLUMNS = {"n VBL": ("VBL",), "n Phy": ("Phy",), "n judged": ("Ra", "Spa", "Ac", "Avg")}


def ablation_table(episodes: Sequence[Episode], label: str) -> list[dict[str, Any]]:
    """Ours and the paper's ablation rows; ``n`` counts our episodes, ``n VBL``, ``n Phy`` and
    ``n judged`` those each column's mean is over (columns differ where a metric is undefined
    for some rooms)."""
    counts = {name: _n_over(episodes, cols) for name, cols in ABLATION_N_COLUMNS.items()}
    rows: list[dict[str, Any]] = [{"source": label, "n": len(episodes), **counts,
                                   **{c: _mean(episodes, c) for c in ABLATION_COLUMNS}, "judge": judge_label(episodes)}]
    rows += [{"source": f"paper: {name}", "n": "–", **dict.fromkeys(ABLATION_N_COLUMNS, "–"),
              **dict(zip(ABLATION_COLUMNS, vals, strict=True)), "judge": PAPER_JUDGE}
             for name, vals in PAPER_TABLE4.items()]
    return rows


def episode_table(episodes: Sequence[Episode], all_episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    """Rates the paper reports in prose, plus the loop's own figures (turns, invalid replies) and
    navigability (ours: free floor in the largest free area, floor furniture reachable).

    Latency per scene is the generation time the env measured (``latency_s``: reset to the
    episode's end, reward and judging left out), else the episode's wall time."""
    def mean_of(key: str, eps: Sequence[Episode]) -> Estimate | str:
        # NaN is n/a (e.g. the rates of a scene without objects): left out, as in every mean.
        pairs = [(float(v), e.task_id) for e in eps if isinstance(v := e.metrics.get(key), (int, float)) and v == v]
        if not pairs:
            return "–"
        return Estimate.of(bootstrap_interval([v for v, _ in pairs], [t for _, t in pairs]), digits=3)

    read = [(e, episode_outcome(e, SceneReVisOutcome)) for e in all_episodes]
    latency = [o.latency_s if o is not None and o.latency_s is not None else e.duration_s for e, o in read]
    # Turns and invalid replies of the episodes that recorded them: an episode without an outcome
    # (or a layout made outside an episode: no turns) has no count, not a count of 0.
    turns = [float(o.turns) for _, o in read if o is not None and o.turns is not None]
    invalid = [float(o.invalid_replies) for _, o in read if o is not None]
    model_judged = [e for e in episodes if "judge_failed" in e.metrics]
    row: dict[str, Any] = {
        "scored": len(episodes), "unscored": len(all_episodes) - len(episodes),
        "collision-free %": mean_of("collision_free", episodes),
        "valid placement %": mean_of("valid_placement", episodes),
        "mean penetration (m)": mean_of("mean_penetration_m", episodes),
        "objects": mean_of("n_objects", episodes),
        "free floor connected %": mean_of("free_connected_pct", episodes),
        "reachable %": mean_of("reachable_pct", episodes),
        "turns": round(sum(turns) / len(turns), 2) if turns else "–",
        "invalid replies": round(sum(invalid) / len(invalid), 2) if invalid else "–",
        "latency per scene (s)": round(sum(latency) / len(latency), 3) if latency else "–",
        "judge": judge_label(episodes),
        "judge failures": sum(int(e.metrics["judge_failed"]) for e in model_judged) if model_judged else "–",
        "judge latency (s)": mean_of("judge_latency_s", episodes),
        "paper latency (s)": "251 / 208",
    }
    stand_ins = [e.metrics["mesh_fallbacks"] for e in episodes if "mesh_fallbacks" in e.metrics]
    if stand_ins:  # geometry=mesh: objects without a usable asset were measured on procedural stand-ins
        row["procedural stand-ins (objects)"] = int(sum(stand_ins))
    missing = sum(1 for _, o in read if o is None)
    if missing:
        row["no outcome"] = missing
    return [row]


def _label(episodes: Sequence[Episode]) -> str:
    agents = sorted({e.agent for e in episodes})
    return f"ours: {', '.join(agents) or '?'}"


def room_tables(episodes: Sequence[Episode], groups: Sequence[str],
                paper: dict[str, dict[str, tuple[float, ...]]], key: str = "room") -> list[dict[str, Any]]:
    """:func:`room_table` with one block of rows per agent of ``episodes`` (several scene
    generators scored in one run by ``buildbench scenes evaluate``), the paper's rows once."""
    agents = sorted({e.agent for e in episodes})
    if len(agents) <= 1:
        return room_table(episodes, _label(episodes), groups, paper, key)
    rows = [r for a in agents for r in room_table([e for e in episodes if e.agent == a], f"ours: {a}", groups, {}, key)]
    if not rows:
        return []
    paper_rows = room_table(episodes, "", groups, paper, key)
    return rows + [r for r in paper_rows if str(r["source"]).startswith("paper: ")]


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """The harness summary plus the paper-shaped tables under ``tables``."""
    out = mean_metrics(episodes)
    scored = [e for e in episodes if is_scored(e)]
    label = _label(episodes)
    tables = {
        "Table 1: bedroom / living room (OBR, CNR %; Ra, Spa, Ac, Avg 1-10)":
            room_tables(scored, TABLE1_ROOMS, PAPER_TABLE1),
        "Table 2: long-tail dining / study room": room_tables(scored, TABLE2_ROOMS, PAPER_TABLE2),
        "Table 3: goal-oriented optimisation (chaotic_missing = condition 1, chaotic = 2, missing = 3)":
            room_tables(scored, CONDITIONS, PAPER_TABLE3, key="condition"),
        "Table 4: ablation (VBL = voxel loss x 10^3, Phy = mean of OBR and CNR)":
            ablation_table(scored, label) if scored else [],
        "episodes (paper latency: 15 iterations from scratch / 10 GPT-initialised)": episode_table(scored, episodes),
    }
    out["tables"] = {name: rows for name, rows in tables.items() if rows}
    return out
