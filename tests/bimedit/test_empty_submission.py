"""An edit task answered with no edit (nothing committed: the input model is scored) never passes
(issue 23). The paper's metrics keep their documented blind spot on updates (topology 1 by the shortcut,
a geometry of the untouched target, so `final` above 1/3, never solved); strict mode, ours, scores
it 0 on every axis."""

from __future__ import annotations

import pytest

from buildbench.harness import Action, Task
from buildbench.suites.bimedit.check.edit import EditTask, score_edit
from buildbench.suites.bimedit.env import BimEditEnv
from buildbench.suites.bimedit.options import BimEditOptions
from buildbench.suites.bimedit.outcome import BimEditOutcome
from buildbench.suites.bimedit.score import score

from .conftest import Case
from .test_env_tool import door_task  # noqa: F401 (the fixture)


def _nothing_committed(task: Task, strict: bool) -> tuple[float, BimEditOutcome]:
    env = BimEditEnv(BimEditOptions(strict=strict))
    try:
        env.reset(task)
        done = env.step(Action(text="No change is needed."))
        assert done.terminated
        return done.reward, env.outcome()
    finally:
        env.close()


@pytest.mark.timeout(300)
def test_an_update_answered_with_no_edit(door_task: Task) -> None:  # noqa: F811
    _, paper = _nothing_committed(door_task, strict=False)
    assert not paper.committed
    m = score(door_task, paper)
    assert m["solved"] == 0.0 and m["strict_solved"] == 0.0
    # The paper's values, kept as the paper defines them (README "Known blind spots"):
    assert m["topology"] == 1.0 and 0.0 < m["geometry"] < 1.0 and m["final"] > 1 / 3
    assert m["strict_topology"] == m["strict_final"] == 0.0
    reward, strict = _nothing_committed(door_task, strict=True)
    assert reward == 0.0
    s = score(door_task, strict)
    assert (s["geometry"], s["semantics"], s["topology"], s["final"], s["solved"]) == (0.0,) * 5
    assert s["paper_topology"] == 1.0 and s["paper_final"] == m["final"]


@pytest.mark.parametrize("strict", [False, True])
def test_a_create_or_delete_answered_with_no_edit_scores_zero(simple_case: Case, strict: bool) -> None:
    for gt, task in (("gt_create", EditTask("create")), ("gt_delete", EditTask("delete", (simple_case.wall,)))):
        s = score_edit(simple_case.m0, simple_case[gt], simple_case.m0, task, strict=strict)
        assert (s.geometry, s.semantics, s.topology, s.final, s.solved) == (0.0, 0.0, 0.0, 0.0, False), gt
        assert s.reason.startswith("prediction made no change")
