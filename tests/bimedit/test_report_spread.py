"""BIM-Edit Table 1 gives mean ± std across tasks as the paper does (one sample per task there):
with several samples a task counts once, at the mean of its samples, and the row says so."""

from __future__ import annotations

from buildbench.harness import Episode
from buildbench.harness.tables import cell_text
from buildbench.suites.bimedit.report import summarize

TABLE1 = "Table 1: scores, 0-100, mean ± std"


def _episode(task_id: str, sample: int, final: float) -> Episode:
    metrics = {"final": final, "geometry": final, "semantics": 1.0, "topology": 0.0, "solved": 0.0}
    return Episode(task_id=task_id, sample=sample, suite="bimedit", agent="a", protocol="p", seed=0, status="ok",
                   outcome={"failure": "executed", "tool_calls": 1}, metrics=metrics,
                   metadata={"operation": "update", "category": "direct", "scene": "simple", "element": "wall"})


def test_the_spread_is_across_tasks_not_samples() -> None:
    # t1's samples disagree (0 and 1: 50 as a task), t2's agree (100): across tasks 75 ± 25;
    # across the four episodes it would be 75 ± 43.30.
    eps = [_episode("t1", 0, 0.0), _episode("t1", 1, 1.0), _episode("t2", 0, 1.0), _episode("t2", 1, 1.0)]
    ours, *paper = summarize(eps)["tables"][TABLE1]
    assert cell_text(ours["final"]) == cell_text(ours["geometry"]) == "75.00 ± 25.00 [50.00, 100.00]"
    assert cell_text(ours["semantics"]) == "100.00 ± 0.00 [100.00, 100.00]"  # the interval of the mean
    assert (ours["final"], ours["final"].std, ours["final"].n, ours["final"].tasks) == (75.0, 25.0, 2, 2)
    assert (ours["n"], ours["tasks"], ours["± across"]) == (4, 2, "tasks (each the mean of its samples)")
    assert {(r["tasks"], r["± across"]) for r in paper} == {(324, "tasks")}


def test_uneven_samples_weigh_each_task_once() -> None:
    # three failed samples of t1 and one solved t2: 25 over episodes, 50 over tasks
    eps = [_episode("t1", s, 0.0) for s in range(3)] + [_episode("t2", 0, 1.0)]
    assert cell_text(summarize(eps)["tables"][TABLE1][0]["final"]).startswith("50.00 ± 50.00 [")


def test_one_sample_per_task_is_the_paper_s_shape() -> None:
    ours = summarize([_episode("t1", 0, 0.5), _episode("t2", 0, 1.0)])["tables"][TABLE1][0]
    assert cell_text(ours["final"]).startswith("75.00 ± 25.00 [")
    assert (ours["n"], ours["tasks"], ours["± across"]) == (2, 2, "tasks")
    empty = summarize([])["tables"][TABLE1][0]
    assert empty["final"] == "–" and (empty["n"], empty["tasks"]) == (0, 0)
