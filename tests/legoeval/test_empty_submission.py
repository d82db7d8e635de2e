"""An evaluator that judges nothing scores as a failure with n/a agreement (issue 23): its holistic
verdict counts wrong, its per-constraint figures are n/a and counted as unknown, never a pass."""

from __future__ import annotations

import json

import pytest

from buildbench.harness import Action, Episode, get_suite
from buildbench.llm import ToolCall
from buildbench.suites.legoeval.env import SUBMIT, LegoEvalEnv
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.outcome import LegoEvalOutcome
from buildbench.suites.legoeval.report import by_type_rows, table1_row
from buildbench.suites.legoeval.score import failure_metrics, score
from buildbench.suites.legoeval.task_records import Verdict, holistic

from .test_env import task


def _episode(metrics: dict[str, float]) -> Episode:
    return Episode(task_id="t0", sample=0, suite="legoeval", agent="a", protocol="evaluate", seed=0, status="ok",
                   metrics=metrics)


@pytest.mark.parametrize("submit", [True, False], ids=["empty verdict list", "nothing submitted"])
def test_no_verdict_scores_as_a_failure(submit: bool) -> None:
    t = task()
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    if submit:
        result = env.step(Action(tool_calls=[ToolCall.parse("s", SUBMIT, {"verdicts": []})]))
        assert result.terminated and result.reward == 0.0
    suite = get_suite("legoeval")
    stored = json.loads(json.dumps(env.outcome().to_dict()))  # as the store keeps it
    metrics = suite.score(t, suite.read_outcome(stored))
    assert metrics["holistic_correct"] == 0.0 == failure_metrics(t)["holistic_correct"]
    assert "valid_pred" not in metrics and "partial_accuracy" not in metrics  # n/a: nothing judged
    assert metrics["partial_unknown"] == metrics["n_constraints"] == 3.0 and metrics["partial_holds"] == 0.0

    row = table1_row("empty", [_episode(metrics)])
    assert row["unknown_pairs"] == 1 and row["unknown_constraints"] == 3 and row["pairs"] == 0
    assert row["hol_f1"] is None and row["part_f1"] is None and row["part_kappa"] is None
    assert all(r["f1"] is None and r["constraints"] == 0 for r in by_type_rows("empty", [_episode(metrics)]))


def test_a_partial_abstention_keeps_an_unknown_holistic_verdict() -> None:
    t = task()
    outcome = LegoEvalOutcome(verdicts=[{"id": "c0", "holds": True}], valid=None)
    metrics = score(t, outcome)
    assert "holistic_correct" not in metrics and metrics["partial_accuracy"] == 1.0


def test_no_constraint_is_no_valid_scene() -> None:
    assert holistic([]) is None
    assert holistic([Verdict("c0", True, "")]) is True


def test_an_unreadable_scene_leaves_the_holistic_verdict_unknown() -> None:
    t = task(scene={"rooms": "not a list"})
    env = LegoEvalEnv(t, LegoEvalOptions(render=False))
    env.reset(t)
    metrics = score(t, env.outcome())
    assert "holistic_correct" not in metrics and metrics["partial_unknown"] == 3.0
