"""BuildArena tables in the paper's layouts, with the published numbers beside ours.

Table 2 (parts, success rate, indicator per level) and Table 3 (input and
output tokens ×10³, requests per level) come from the paper (spec 5.1,
5.2); Table 6 from its closed-loop ablation (spec 5.3). The paper simulated
in Besiege (Unity PhysX); we simulate with MuJoCo and our own joint
strengths, so our numbers are not comparable one to one: every row says
which simulator it comes from.

Our rows carry 95 % intervals: a task level is one task, so its samples (independent draws of
the same task) are resampled (`buildbench.harness.stats.bootstrap_interval`); Tables 2-5 give
them in a row of their own under ours, Table 6 in its cells (``[low, high]``, ``—`` with fewer than two samples),
the per-task table in its cells (exported under the report's ``table_intervals``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from buildbench.harness import Episode, is_scored, mean_metrics
from buildbench.harness.episode_outcome import episode_outcome
from buildbench.harness.stats import Estimate, Interval, bootstrap_interval
from buildbench.harness.tables import number_text

from .check import STOPPED
from .metrics import failure_counts, invalid_pct, level_rows, role_costs
from .outcome import BuildArenaOutcome

OURS = "ours (MuJoCo)"
#: The row under ours with the 95 % intervals of its cells.
INTERVALS = "ours: 95 % interval"
#: The physics-table row of the episodes that stored no outcome (the env never gave one).
NO_OUTCOME = "(no outcome)"
PAPER = "paper (Besiege)"
CATEGORIES = ("transport", "support", "lift")
TABLE2_HEADERS = ("parts L1/L2/L3", "SR % L1/L2/L3", "indicator L1/L2/L3")
TABLE3_HEADERS = ("input k-tokens L1/L2/L3", "output k-tokens L1/L2/L3", "requests L1/L2/L3")

# category model | parts L1 L2 L3 | SR% L1 L2 L3 | indicator L1 L2 L3 (paper Table 2, n = 64)
_TABLE2 = """
transport GPT-4o 11.0 13.1 18.4 9.4 1.6 7.8 13.5 4.2 5.1
transport Claude-4 9.5 13.4 26.1 17.2 4.7 15.6 34.9 6.8 7.3
transport Grok-4 12.0 15.6 34.6 25.0 0.0 9.4 19.6 4.2 12.3
transport Gemini-2.0 9.0 12.3 10.0 1.6 1.6 1.6 4.8 4.6 4.6
transport DeepSeek-3.1 9.2 11.6 16.7 6.2 0.0 1.6 6.2 4.6 4.6
transport Qwen-3 9.1 7.8 10.9 10.9 1.6 4.7 18.4 3.3 21.5
transport Kimi-K2 14.2 17.1 19.5 12.5 0.0 1.6 7.4 4.5 3.5
transport Seed-1.6 7.4 11.2 28.5 6.2 4.7 7.8 4.3 3.8 6.8
support GPT-4o 36.8 16.7 29.9 40.6 0.0 0.0 181.2 0.0 0.0
support Claude-4 8.0 21.4 31.5 7.8 1.6 0.0 36.8 3.3 0.0
support Grok-4 18.7 22.3 33.3 46.9 15.6 0.0 211.4 44.5 0.0
support Gemini-2.0 20.5 23.5 41.0 23.4 0.0 0.0 105.5 0.0 0.0
support DeepSeek-3.1 19.0 10.5 17.8 25.0 0.0 0.0 122.6 0.0 0.0
support Qwen-3 18.6 18.0 22.2 12.5 4.7 0.0 70.5 13.9 0.0
support Kimi-K2 23.3 34.7 16.5 29.7 4.7 0.0 122.6 18.6 0.0
support Seed-1.6 33.4 36.2 68.8 45.3 9.4 3.1 197.4 25.8 7.1
lift GPT-4o 4.0 7.4 5.1 7.8 3.1 0.0 0.9 9.1 4.1
lift Claude-4 4.5 7.9 2.5 10.9 1.6 0.0 1.0 4.1 1.2
lift Grok-4 4.8 6.8 1.1 31.2 31.2 3.1 1.8 890.6 86.5
lift Gemini-2.0 4.3 6.3 4.9 0.0 0.0 0.0 0.5 2.8 0.8
lift DeepSeek-3.1 4.5 6.9 1.1 10.9 0.0 0.0 1.0 3.3 0.6
lift Qwen-3 3.5 7.2 3.2 3.1 0.0 0.0 0.6 2.7 0.8
lift Kimi-K2 5.3 15.1 12.0 6.2 3.1 0.0 0.7 44.8 1.8
lift Seed-1.6 3.5 3.3 0.0 6.2 0.0 0.0 0.9 1.7 0.0
"""
# category model | input ktokens L1 L2 L3 | output ktokens L1 L2 L3 | requests L1 L2 L3 (paper Table 3)
_TABLE3 = """
transport GPT-4o 326.7 546.2 458.1 22.1 11.1 11.6 63.5 69.4 74.7
transport Claude-4 203.0 264.9 751.5 18.5 19.1 25.3 41.3 48.0 74.3
transport Grok-4 233.5 368.3 1259.9 8.9 10.8 15.5 40.7 49.3 98.4
transport Gemini-2.0 382.5 371.6 361.7 11.0 10.8 9.3 65.4 63.1 63.9
transport DeepSeek-3.1 252.8 469.4 715.5 18.5 23.6 28.2 49.8 67.9 80.1
transport Qwen-3 473.8 381.1 841.3 18.5 19.9 21.8 59.7 51.1 72.2
transport Kimi-K2 635.5 1099.6 968.7 13.9 16.0 14.2 82.2 96.8 99.8
transport Seed-1.6 197.1 248.7 899.3 41.0 43.2 63.7 34.1 41.1 81.5
support GPT-4o 1008.6 748.7 1671.8 19.5 19.0 22.5 102.5 135.7 192.5
support Claude-4 116.3 548.5 1134.4 8.6 30.9 40.3 26.7 94.4 135.1
support Grok-4 301.8 545.1 1152.0 7.6 11.9 14.7 45.5 69.4 91.1
support Gemini-2.0 425.3 1413.9 2308.0 10.4 20.1 22.2 62.7 142.2 186.5
support DeepSeek-3.1 484.4 299.0 424.8 22.1 19.3 18.4 70.5 57.0 64.8
support Qwen-3 880.1 817.5 1263.5 17.7 23.9 23.3 63.8 89.4 104.0
support Kimi-K2 508.8 1750.3 861.1 8.6 22.6 7.3 60.9 160.0 64.2
support Seed-1.6 880.3 2043.2 5423.0 51.5 112.2 165.4 78.3 165.5 293.2
lift GPT-4o 345.7 232.3 423.6 23.7 8.7 13.8 51.2 50.8 88.1
lift Claude-4 279.8 376.0 386.8 22.6 28.8 30.6 44.9 50.7 68.9
lift Grok-4 103.4 180.9 128.0 6.7 8.4 10.2 24.2 33.0 34.3
lift Gemini-2.0 290.5 266.1 445.1 7.1 10.3 14.1 40.4 47.6 80.3
lift DeepSeek-3.1 317.3 401.6 396.8 22.5 24.7 29.5 54.4 61.3 76.0
lift Qwen-3 483.7 987.0 877.2 22.0 28.6 18.1 49.7 76.5 76.5
lift Kimi-K2 288.8 885.8 715.2 7.4 11.1 13.4 46.5 84.6 96.5
lift Seed-1.6 227.4 233.3 244.3 51.4 52.1 62.9 35.0 35.8 50.3
"""
# round: SR %, max load, parts, invalid-action rate %, requests (paper Table 6, Seed-1.6, Support Lv.1, 18 samples)
_TABLE6 = ((1, 0.0, 0.0, 26.5, 1.2, 56.8), (2, 72.2, 422.6, 61.0, 1.1, 128.8), (3, 83.3, 477.2, 49.8, 2.2, 108.2),
           (4, 94.4, 568.8, 82.7, 0.9, 171.7), (5, 100.0, 586.9, 43.0, 1.2, 89.0))


# protocol: parts, SR %, max load, invalid-action rate % (paper Table 4, Seed-1.6, Support Lv.1, n = 64)
_TABLE4 = (("workflow", 33.4, 45.3, 197.4, 1.4), ("guidance-builder", 20.2, 4.7, 31.4, 1.7),
           ("builder-only", 19.8, 22.6, 75.5, 44.7))
# temperature (top-p 0.7): parts, SR %, max load, invalid-action rate % (paper Table 5, same setting)
_TABLE5 = (("0.5 (default)", 33.4, 45.3, 197.4, 1.4), ("0.0", 30.0, 43.8, 168.8, 2.3),
           ("1.0", 29.8, 42.2, 199.1, 1.8))


def _na(value: float) -> float | None:
    """A table cell: NaN (a rate over no call) as None, which tables print as n/a."""
    return None if math.isnan(value) else value


def _ablation_cells(parts: float, sr: float, load: float, invalid: float) -> dict[str, str]:
    return {"parts": f"{parts:.1f}", "SR %": f"{sr:.1f}", "max load": f"{load:.1f}",
            "invalid %": "n/a" if math.isnan(invalid) else f"{invalid:.1f}"}


def _span(interval: Interval | None) -> str:
    """An interval as ``[low, high]`` to the tables' one decimal; ``—`` where there is none (no
    value, or one sample: nothing to resample)."""
    if interval is None or interval.clusters < 2 or not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        return "—"
    return f"[{number_text(interval.low, 1)}, {number_text(interval.high, 1)}]"


#: Tables 2 and 3's figures of one scored episode, as ``level_rows`` averages them (a failed
#: construction counts 0 parts and 0 indicator; the success rate in %, tokens in thousands).
_FIGURES = {"parts": lambda e: e.metrics.get("parts", 0.0), "success_rate": lambda e: 100.0 * e.metrics.get("passed", 0.0),
            "indicator": lambda e: e.metrics.get("indicator", 0.0),
            "input_ktokens": lambda e: e.usage.get("input_tokens", 0) / 1000.0,
            "output_ktokens": lambda e: e.usage.get("output_tokens", 0) / 1000.0,
            "requests": lambda e: float(e.usage.get("requests", 0))}


def level_intervals(episodes: Sequence[Episode]) -> dict[str, dict[str, Interval]]:
    """Per task id, the bootstrap interval of each of Tables 2 and 3's figures over its scored samples."""
    by_task: dict[str, list[Episode]] = {}
    for ep in episodes:
        if is_scored(ep):
            by_task.setdefault(ep.task_id, []).append(ep)
    return {task: {name: bootstrap_interval([float(value(e)) for e in eps]) for name, value in _FIGURES.items()}
            for task, eps in by_task.items()}


def _support1_means(episodes: Sequence[Episode]) -> dict[str, float] | None:
    chosen = [e for e in episodes if e.task_id == "support-1" and is_scored(e)]  # failures count
    if not chosen:
        return None
    calls = math.fsum(e.metrics.get("calls", 0.0) for e in chosen)
    return {
        "parts": math.fsum(e.metrics.get("parts", 0.0) for e in chosen) / len(chosen),
        "sr": 100.0 * math.fsum(e.metrics.get("passed", 0.0) for e in chosen) / len(chosen),
        "load": math.fsum(e.metrics.get("indicator", 0.0) for e in chosen) / len(chosen),
        "invalid": invalid_pct(math.fsum(e.metrics.get("invalid_calls", 0.0) for e in chosen), calls),
    }


def _ablation_intervals(episodes: Sequence[Episode], setting: str) -> dict[str, Any]:
    """The row under one of ours in Tables 4 and 5: the intervals of its Support Lv.1 means (the
    invalid-action rate is a ratio of sums over calls: none)."""
    spans = level_intervals([e for e in episodes if e.task_id == "support-1"]).get("support-1", {})
    return {"source": INTERVALS, "setting": setting, "parts": _span(spans.get("parts")),
            "SR %": _span(spans.get("success_rate")), "max load": _span(spans.get("indicator")), "invalid %": "—"}


def ablation_rows(episodes: Sequence[Episode], label: str) -> dict[str, list[dict[str, Any]]]:
    """Tables 4 (workflow roles) and 5 (decoding temperature): the paper's Support Lv.1 rows and ours.

    Ours: Support Lv.1 episodes of this run, by protocol for Table 4 and as one row for Table 5 (a run has
    one decoding setting; compare runs made with ``-o temperature=…``).
    """
    table4: list[dict[str, Any]] = []
    for protocol, *paper in _TABLE4:
        ours = _support1_means([e for e in episodes if e.protocol == protocol])
        if ours is not None:
            table4.append({"source": OURS, "setting": f"{protocol} ({label})",
                           **_ablation_cells(ours["parts"], ours["sr"], ours["load"], ours["invalid"])})
            table4.append(_ablation_intervals([e for e in episodes if e.protocol == protocol], f"{protocol} ({label})"))
        table4.append({"source": PAPER, "setting": f"{protocol} (Seed-1.6)", **_ablation_cells(*paper)})
    table5: list[dict[str, Any]] = []
    ours_all = _support1_means(episodes)
    if ours_all is not None:
        table5.append({"source": OURS, "setting": label,
                       **_ablation_cells(ours_all["parts"], ours_all["sr"], ours_all["load"], ours_all["invalid"])})
        table5.append(_ablation_intervals(episodes, label))
    table5 += [{"source": PAPER, "setting": f"T = {t}, top-p 0.7 (Seed-1.6)", **_ablation_cells(*paper)}
               for t, *paper in _TABLE5]
    return {"Table 4: workflow ablation, Support Lv.1 (paper: Seed-1.6, n = 64)": table4,
            "Table 5: decoding ablation, Support Lv.1 (paper: Seed-1.6, n = 64)": table5}


def _parse(block: str) -> list[tuple[str, str, list[float]]]:
    rows = []
    for line in block.strip().splitlines():
        category, model, *numbers = line.split()
        rows.append((category, model, [float(v) for v in numbers]))
    return rows


PAPER_TABLE2 = _parse(_TABLE2)
PAPER_TABLE3 = _parse(_TABLE3)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _cells(headers: tuple[str, ...], values: list[float | None]) -> dict[str, str]:
    """One ``"L1 / L2 / L3"`` cell per header (keeps the tables readable in 80 columns)."""
    return {h: " / ".join(_fmt(v) for v in values[3 * k: 3 * k + 3]) for k, h in enumerate(headers)}


def _our_values(rows: dict[str, dict[str, float]], category: str, fields: tuple[str, ...]) -> list[float | None]:
    out: list[float | None] = []
    for field in fields:
        for level in (1, 2, 3):
            row = rows.get(f"{category}-{level}")
            out.append(row[field] if row else None)
    return out


def _table(rows: dict[str, dict[str, float]], label: str, published: list[tuple[str, str, list[float]]],
           headers: tuple[str, ...], fields: tuple[str, ...],
           intervals: dict[str, dict[str, Interval]] | None = None) -> list[dict[str, Any]]:
    table: list[dict[str, Any]] = []
    for category in CATEGORIES:
        if not any(k.startswith(category) for k in rows):
            continue
        table.append({"task": category.title(), "source": OURS, "model": label,
                      **_cells(headers, _our_values(rows, category, fields))})
        if intervals is not None:
            spans = [_span(intervals.get(f"{category}-{level}", {}).get(field)) for field in fields
                     for level in (1, 2, 3)]
            table.append({"task": category.title(), "source": INTERVALS, "model": "over samples",
                          **{h: " / ".join(spans[3 * k: 3 * k + 3]) for k, h in enumerate(headers)}})
        for cat, model, numbers in published:
            if cat == category:
                table.append({"task": category.title(), "source": PAPER, "model": model,
                              **_cells(headers, list(numbers))})
    return table


FIGURE7_TITLE = ("Figure 7 inputs: rank per task level among the paper's 8 models, by SR then indicator "
                 "(the figure's per-dimension weights are not published: no weighted score)")


def figure7_rows(rows: dict[str, dict[str, float]], label: str) -> list[dict[str, Any]]:
    """Per task level: our success rate and indicator and where they would rank among the paper's models.

    Figure 7 weights each model's per-task ranking by how much each task level exercises six difficulty
    dimensions and averages over the nine levels; neither the weights (Figure 3's radar charts carry no
    numbers) nor how a ranking becomes a score is published, so only these inputs can be given. Ranks
    are competition ranks among nine (the paper's eight models and ours): success rate first, then
    indicator, both from Table 2.
    """
    out: list[dict[str, Any]] = []
    for task_id, row in rows.items():
        category, _, level_text = task_id.rpartition("-")
        if not level_text.isdigit():
            continue  # a variant (``variants``): the paper has no row for it
        level = int(level_text) - 1
        paper = [(model, numbers[3 + level], numbers[6 + level])
                 for cat, model, numbers in PAPER_TABLE2 if cat == category]
        if not paper:
            continue
        ours = (row["success_rate"], row["indicator"])
        better = sum(1 for _, sr, indicator in paper if (sr, indicator) > ours)
        leader = max(paper, key=lambda p: (p[1], p[2]))
        out.append({"task": task_id, "model": label, "SR %": _fmt(ours[0]), "indicator": _fmt(ours[1]),
                    "rank of 9": 1 + better,
                    "paper's first": f"{leader[0]} ({_fmt(leader[1])} %, {_fmt(leader[2])})"})
    return out


def read_outcomes(episodes: Sequence[Episode]) -> list[tuple[Episode, BuildArenaOutcome | None]]:
    """Each episode with its stored outcome (None: it has none; `episode_outcome`)."""
    return [(ep, episode_outcome(ep, BuildArenaOutcome)) for ep in episodes]


def closed_loop_rows(read: Sequence[tuple[Episode, BuildArenaOutcome | None]]) -> list[dict[str, Any]]:
    """Table 6 layout: per closed-loop round, our means beside the paper's (empty without rounds).
    An episode without an outcome has no rounds to show (the physics table counts it)."""
    histories = [(ep.task_id, outcome.rounds) for ep, outcome in read if outcome is not None and outcome.rounds]
    last = max((len(h) for _, h in histories), default=0)
    by_round: dict[int, list[dict[str, Any]]] = {}
    tasks: dict[int, list[str]] = {}
    for task, rounds in histories:
        for k in range(last):
            # An episode that stopped earlier (it passed, or its revision failed) keeps its last result.
            by_round.setdefault(k + 1, []).append(rounds[min(k, len(rounds) - 1)])
            tasks.setdefault(k + 1, []).append(task)

    def mean(values: list[float], number: int) -> Estimate:
        # Its interval resamples tasks, or the samples of a single one (the paper's Support Lv.1).
        clusters = tasks[number] if len(set(tasks[number])) > 1 else None
        return Estimate.of(bootstrap_interval(values, clusters), digits=1, rounded=False)

    out = []
    for number, entries in sorted(by_round.items()):
        calls = math.fsum(e["calls"] for e in entries)
        paper = next((p for p in _TABLE6 if p[0] == number), None)
        out.append({
            "round": number,
            "episodes": len(entries),
            "SR % ours": mean([100.0 * float(e["passed"]) for e in entries], number),
            "indicator ours": mean([float(e["indicator"]) for e in entries], number),
            "parts ours": mean([float(e["parts"]) for e in entries], number),
            "invalid % ours": _na(invalid_pct(math.fsum(e["invalid_calls"] for e in entries), calls)),
            "SR % paper": paper[1] if paper else "—",
            "load paper": paper[2] if paper else "—",
            "parts paper": paper[3] if paper else "—",
        })
    return out


def physics_rows(read: Sequence[tuple[Episode, BuildArenaOutcome | None]]) -> list[dict[str, Any]]:
    """Per physics profile (name and hash, from each outcome): episodes, those judged, those whose
    simulation diverged by the machine's doing (scored failures) and those that diverged otherwise
    (unscored infrastructure faults, ``check.SimulationDiverged``), and apart from these the runs MuJoCo's
    limits or errors stopped (``sim limit``: its arena full, out of memory, a model it could not build,
    another error; metric ``sim_limit``), scored or not alike. Episodes that stored no outcome have a row
    of their own: their profile is not known."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for ep, outcome in read:
        if outcome is None:
            key = (NO_OUTCOME, "")
        else:
            physics = outcome.physics or {}
            key = (str(physics.get("name", "besiege-1 (not recorded)")), str(physics.get("sha256", ""))[:12])
        row = rows.setdefault(key, {"physics": key[0], "sha256": key[1] or "—", "episodes": 0, "judged": 0,
                                    "diverged (machine)": 0, "diverged (unscored)": 0,
                                    "sim limit (machine)": 0, "sim limit (unscored)": 0})
        row["episodes"] += 1
        error = ep.error or ""
        if "SimulationDiverged" in error:
            row["sim limit (unscored)" if STOPPED in error else "diverged (unscored)"] += 1
        elif ep.metrics.get("diverged"):
            row["sim limit (machine)" if ep.metrics.get("sim_limit") else "diverged (machine)"] += 1
        elif ep.metrics.get("simulated"):
            row["judged"] += 1
    return list(rows.values())


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Mean metrics plus the paper-shaped tables (``buildbench report RUN_DIR`` prints ``tables``)."""
    out = mean_metrics(episodes)
    rows = level_rows(episodes)
    spread = level_intervals(episodes)
    labels = sorted({f"{e.agent}/{e.protocol}" for e in episodes})
    label = ", ".join(labels) or "—"
    tables: dict[str, list[dict[str, Any]]] = {
        "Table 2: parts, success rate (%), indicator (ours: MuJoCo, paper: Besiege; not comparable 1:1)":
            _table(rows, label, PAPER_TABLE2, TABLE2_HEADERS, ("parts", "success_rate", "indicator"), spread),
        "Table 3: input / output tokens (x10^3), requests per task instance":
            _table(rows, label, PAPER_TABLE3, TABLE3_HEADERS, ("input_ktokens", "output_ktokens", "requests"), spread),
        "Per task (ours)": [{"task": k, "episodes": int(r["episodes"]),
                             **{column: Estimate.of(spread[k][field], digits=1, rounded=False)
                                for column, field in (("parts", "parts"), ("SR %", "success_rate"),
                                                      ("indicator", "indicator"))},
                             "requests": r["requests"], "invalid %": _na(r["invalid_action_rate"])}
                            for k, r in rows.items()],
        "Cost per episode by role (ours)": [{"role": role, **row} for role, row in role_costs(episodes).items()],
        "Failure reasons of library calls (Fig. 6 categories)":
            [{"category": k, "calls": v} for k, v in failure_counts(episodes).items() if v],
    }
    figure7 = figure7_rows(rows, label)
    if figure7:
        tables[FIGURE7_TITLE] = figure7
    tables.update(ablation_rows(episodes, label))
    read = read_outcomes(episodes)
    loop = closed_loop_rows(read)
    if loop:
        tables["Table 6: closed-loop rounds (paper: Seed-1.6, Support Lv.1)"] = loop
    physics = physics_rows(read)
    if physics:
        tables["Physics profile and diverged simulations"] = physics
    if any(row["source"] == OURS and "—" in str(row.values()) for title, table_rows in tables.items()
           if title.startswith(("Table 2", "Table 3")) for row in table_rows):
        tables["Notes"] = [{"note": "— in our rows of Tables 2 and 3: no scored episode of that task level in "
                                    "this run, so no value (not a 0)"}]
    if spread:
        tables.setdefault("Notes", []).append(
            {"note": f"{INTERVALS} rows (Tables 2-5): 95 % bootstrap interval of the mean above, resampling "
                     "the level's scored samples (a level is one task); — with fewer than two samples"})
    out["diverged"] = sum(r["diverged (machine)"] + r["diverged (unscored)"] for r in physics)
    out["sim_limits"] = sum(r["sim limit (machine)"] + r["sim limit (unscored)"] for r in physics)
    out["levels"] = rows
    out["tables"] = tables
    return out
