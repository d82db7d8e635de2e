"""Figure 7's inputs in the report: our rank per task level among the paper's eight models (Table 2)."""

from __future__ import annotations

from buildbench.suites.buildarena.report import FIGURE7_TITLE, figure7_rows, summarize


def _row(sr: float, indicator: float) -> dict[str, float]:
    return {"success_rate": sr, "indicator": indicator}


def test_ranks_follow_success_rate_then_indicator() -> None:
    rows = figure7_rows({"lift-1": _row(100.0, 5.0), "support-1": _row(45.3, 0.0),
                         "transport-2": _row(0.0, 0.0)}, "reference/workflow")
    by_task = {r["task"]: r for r in rows}
    assert by_task["lift-1"]["rank of 9"] == 1
    assert by_task["lift-1"]["paper's first"] == "Grok-4 (31.2 %, 1.8)"
    # Support Lv.1: Grok-4 46.9 % ranks above; Seed-1.6 has 45.3 % too but the higher indicator (197.4).
    assert by_task["support-1"]["rank of 9"] == 3
    # Transport Lv.2: the paper's models at 0 % success still rank above by their indicator.
    assert by_task["transport-2"]["rank of 9"] == 9
    assert by_task["transport-2"]["SR %"] == "0.0" and by_task["transport-2"]["model"] == "reference/workflow"


def test_the_summary_carries_the_table_and_says_why_there_is_no_weighted_score() -> None:
    assert "weights are not published" in FIGURE7_TITLE
    assert summarize([])["tables"].get(FIGURE7_TITLE) is None  # nothing to rank without episodes
