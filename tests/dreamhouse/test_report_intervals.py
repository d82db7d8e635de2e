"""DreamHouse Tables 1 and 5 are followed by the 95 % intervals of our cells: the values each cell
averages, resampled by task (numpy default_rng(0), 2000 resamples, percentiles 2.5/97.5), by hand."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from buildbench.harness import Episode
from buildbench.suites.dreamhouse.report import (
    TABLE1_INTERVALS,
    TABLE2_INTERVALS,
    TABLE5_INTERVALS,
    summarize,
)


def _span(values: list[float], tasks: list[str]) -> str:
    order = list(dict.fromkeys(tasks))
    sums = np.array([sum(v for v, t in zip(values, tasks, strict=True) if t == task) for task in order])
    counts = np.array([tasks.count(task) for task in order], dtype=float)
    picks = np.random.default_rng(0).integers(0, len(order), size=(2000, len(order)))
    low, high = np.quantile(sums[picks].sum(axis=1) / counts[picks].sum(axis=1), [0.025, 0.975])
    return f"[{low:.3f}, {high:.3f}]"


def _ep(task: str, sample: int, metrics: dict[str, Any], condition: str, status: str = "ok",
        protocol: str = "planner-atomic") -> Episode:
    return Episode(task_id=task, sample=sample, suite="dreamhouse", agent="oracle", protocol=protocol, seed=0,
                   status=status, metrics=metrics,  # type: ignore[arg-type]
                   metadata={"run_options": {"condition": condition}})


def _m(passed: float, visual: float, joint: float) -> dict[str, float]:
    return {"structural_pass": passed, "visual_fidelity": visual, "topological_fidelity": 0.5, "joint_pass": joint,
            "visual_pass": joint}


def test_table1_and_table5_intervals_resample_tasks() -> None:
    frame = [("h0", 0, _m(1, 0.9, 1)), ("h0", 1, _m(0, 0.1, 0)), ("h1", 0, _m(1, 0.5, 0)),
             ("h2", 0, _m(0, 0.2, 0)), ("h3", 0, _m(1, 0.7, 1))]
    episodes = [_ep(t, s, m, "frame") for t, s, m in frame]
    episodes += [_ep("h4", 0, {}, "frame", status="error"),  # unscored: in no interval
                 _ep("h9", 0, _m(1, 0.4, 1), "facade")]  # one task: no interval
    episodes += [_ep(t, s, m, "frame", protocol="planner-managed") for t, s, m in frame]
    tables = summarize(episodes)["tables"]
    (atomic, managed) = tables[TABLE1_INTERVALS]
    assert (atomic["model"], atomic["protocol"], managed["protocol"]) == ("oracle", "atomic", "managed")
    tasks = [t for t, _, _ in frame]
    struct = _span([m["structural_pass"] for _, _, m in frame], tasks)
    assert atomic["Struct F/Fa"] == f"{struct}/–"
    passed = [(t, m) for t, _, m in frame if m["structural_pass"] == 1]  # S: over passed structures only
    visual = _span([m["visual_fidelity"] for _, m in passed], [t for t, _ in passed])
    assert atomic["Visual F/Fa"] == f"{visual}/–"
    assert atomic["Joint F/Fa"] == f"{_span([m['joint_pass'] for _, _, m in frame], tasks)}/–"
    (row,) = tables[TABLE5_INTERVALS]
    assert (row["variant"], row["struct"], row["visual"]) == ("managed", struct, visual)
    assert row["vis pass"] == _span([m["visual_pass"] for _, _, m in frame], tasks)


def test_no_interval_table_without_rows_of_ours() -> None:
    tables = summarize([])["tables"]
    assert TABLE1_INTERVALS not in tables and TABLE5_INTERVALS not in tables


def test_table2_intervals_resample_the_refined_tasks() -> None:
    def refined(task: str, sample: int, baseline: float, final: float, status: str = "ok") -> Episode:
        notes = {"status": "done", "baseline": baseline, "final": final, "best": max(baseline, final),
                 "eligible": True, "accepted": 1, "rejected": 1}
        ep = _ep(task, sample, _m(1, final, 1), "frame", status=status, protocol="iterative-refinement")
        ep.outcome = {"condition": "frame", "protocol": {"refinement": notes}}
        return ep

    runs = [("h0", 0, 0.2, 0.4), ("h0", 1, 0.3, 0.3), ("h1", 0, 0.5, 0.55), ("h2", 0, 0.1, 0.05)]
    episodes = [refined(*r) for r in runs] + [refined("h3", 0, 0.0, 0.9, status="error")]  # unscored: left out
    (row,) = summarize(episodes)["tables"][TABLE2_INTERVALS]
    tasks = [t for t, _, _, _ in runs]
    assert row["final"] == _span([r[3] for r in runs], tasks) and row["N"] == 4
    assert row["Δ"] == _span([r[3] - r[2] for r in runs], tasks)
    improved = _span([100.0 * (r[3] > r[2]) for r in runs], tasks).strip("[]").split(", ")
    assert row["improved"] == f"[{float(improved[0]):.1f}, {float(improved[1]):.1f}]" and row["retained"] == "–"


def _ends(values: list[float], tasks: list[str]) -> tuple[Any, Any]:
    order = list(dict.fromkeys(tasks))
    sums = np.array([sum(v for v, t in zip(values, tasks, strict=True) if t == task) for task in order])
    counts = np.array([tasks.count(task) for task in order], dtype=float)
    picks = np.random.default_rng(0).integers(0, len(order), size=(2000, len(order)))
    low, high = np.quantile(sums[picks].sum(axis=1) / counts[picks].sum(axis=1), [0.025, 0.975])
    return pytest.approx(low), pytest.approx(high)


def test_t_split_and_figure7_rates_carry_intervals() -> None:
    from buildbench.harness.stats import Estimate
    from buildbench.harness.tables import cell_intervals, cell_text
    from buildbench.suites.dreamhouse.report import UNSCORED_ROW, failure_rate_rows
    from buildbench.suites.dreamhouse.report_extra import t_split_rows

    def m(passed: float, t_any: float, load: float) -> dict[str, float]:
        return {"structural_pass": passed, "topological_fidelity_any": t_any, "test_load_path": load}

    # a: two samples; b, c, d one each; e unscored (in no mean, counted)
    episodes = [_ep("a", 0, m(1.0, 0.2, 1.0), "frame"), _ep("a", 1, m(0.0, 0.1, 0.0), "frame"),
                _ep("b", 0, m(1.0, 0.6, 1.0), "frame"), _ep("c", 0, m(0.0, 0.3, 0.0), "frame"),
                _ep("d", 0, m(1.0, 0.4, 0.0), "frame"), _ep("e", 0, {}, "frame", status="api_error")]
    (row, *paper) = t_split_rows(episodes)
    passed, failed = row["T passed"], row["T failed"]
    assert isinstance(passed, Estimate) and passed == pytest.approx(0.4) and (passed.n, passed.tasks) == (3, 3)
    assert (passed.low, passed.high) == _ends([0.2, 0.6, 0.4], ["a", "b", "d"])
    assert failed == pytest.approx(0.2) and (failed.n, failed.tasks) == (2, 2)
    assert (failed.low, failed.high) == _ends([0.1, 0.3], ["a", "c"])
    assert cell_text(failed) == f"0.200 {_span([0.1, 0.3], ['a', 'c'])}"
    assert (row["N passed"], row["N failed"], row["unscored"]) == (3, 2, 1) and len(paper) == 3

    rows = failure_rate_rows(episodes)
    assert [r["test"] for r in rows] == ["load_path", UNSCORED_ROW]
    rate = rows[0]["oracle/atomic/frame"]
    flags, tasks = [0.0, 1.0, 0.0, 1.0, 1.0], ["a", "a", "b", "c", "d"]
    assert isinstance(rate, Estimate) and rate == pytest.approx(0.6) and (rate.n, rate.tasks) == (5, 4)  # a's two samples: one task
    assert (rate.low, rate.high) == _ends(flags, tasks)
    assert rows[1]["oracle/atomic/frame"] == 1
    exported = cell_intervals({"Figure 7": rows})["Figure 7"][0]["oracle/atomic/frame"]
    assert (exported["value"], exported["low"], exported["high"], exported["n"]) == (float(rate), rate.low, rate.high, 5)
    assert failure_rate_rows(episodes[:-1])[-1]["test"] == "load_path"  # nothing unscored: no count row
