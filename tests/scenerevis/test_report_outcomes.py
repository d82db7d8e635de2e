"""The SceneReVis report reads each stored outcome as a `SceneReVisOutcome`: an episode without
one has no turns, invalid replies or judge (never 0 turns), is counted in a "no outcome" column,
stays a failure when it failed and out of the means when unscored."""

from __future__ import annotations

from typing import Any

import pytest

from buildbench.harness import Episode
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.suites.scenerevis.report import judge_label, summarize
from buildbench.suites.scenerevis.score import failure_metrics

EPISODES = "episodes (paper latency: 15 iterations from scratch / 10 GPT-initialised)"
JUDGED = {"collision_free": 1.0, "valid_placement": 1.0, "Ra": 8.0, "Spa": 7.0, "Ac": 9.0, "judge_comparable": 1.0}


def _ep(sample: int, status: Any = "ok", outcome: dict[str, Any] | None = None,
        metrics: dict[str, float] | None = None) -> Episode:
    if outcome is None:
        outcome = {"scene": {}, "turns": 4, "invalid_replies": 2, "latency_s": 3.0,
                   "eval_judge": {"judge": "gpt-test"}}
    return Episode(task_id="bedroom-1", sample=sample, suite="scenerevis", agent="diagnose",
                   protocol="diagnose-act", seed=0, status=status, outcome=outcome,
                   metrics=JUDGED if metrics is None else metrics, duration_s=10.0,
                   metadata={"room": "bedroom"})


def _run() -> list[Episode]:
    return [_ep(0), _ep(1, "failed", {}, dict(failure_metrics(None))),  # type: ignore[arg-type]
            _ep(2, "error", {}, {})]


def test_episodes_without_an_outcome_have_no_turns_and_are_counted() -> None:
    out = summarize(_run())
    (row,) = out["tables"][EPISODES]
    assert row["turns"] == 4.0 and row["invalid replies"] == 2.0  # not (4 + 0 + 0) / 3
    assert row["no outcome"] == 2 and row["scored"] == 2 and row["unscored"] == 1
    assert row["judge"] == "gpt-test"
    # Latency: the measured one, else the episode's wall time (the failed one's 10 s).
    assert row["latency per scene (s)"] == round((3.0 + 10.0 + 10.0) / 3, 3)
    assert out["metrics"]["collision_free"] == 0.5 and out["unscored"] == 1


def test_outcomes_everywhere_add_no_column() -> None:
    (row,) = summarize([_ep(0), _ep(1)])["tables"][EPISODES]
    assert "no outcome" not in row and row["turns"] == 4.0


def test_a_layout_scored_outside_an_episode_has_no_turns() -> None:
    (row,) = summarize([_ep(0, outcome={"scene": {}})])["tables"][EPISODES]
    assert row["turns"] == "–" and row["invalid replies"] == 0.0


def test_the_judge_of_judged_scores_without_an_outcome_is_unknown() -> None:
    assert judge_label([_ep(0, outcome={})]) == "unknown (no outcome)"


@pytest.mark.parametrize("outcome", [{"turns": "4"}, {"scene": []}, {"latency_s": "slow"}, {"eval_judge": "x"}])
def test_a_malformed_stored_outcome_is_one_error_naming_the_episode(outcome: dict[str, Any]) -> None:
    with pytest.raises(OutcomeReadError, match=r"^episode 'bedroom-1' sample 3: stored outcome unreadable: scenerevis"):
        summarize([_ep(0), _ep(3, outcome=outcome)])


def test_the_demo_table_shows_a_mean_no_episode_has_as_a_dash() -> None:
    import io

    from rich.console import Console

    from buildbench.suites.scenerevis.demo import demo_table

    console = Console(file=io.StringIO(), width=200)
    console.print(demo_table([("diagnose", "demo", {"episodes": 2, "metrics": {"oob_rate": 1.25, "turns": 3.0}})]))
    (row,) = [line for line in console.file.getvalue().splitlines() if "diagnose" in line]  # type: ignore[attr-defined]
    cells = [c.strip() for c in row.split("┃" if "┃" in row else "│")[1:-1]]
    assert cells == ["diagnose", "demo", "2", "1.2", "–", "–", "–", "–", "3.0", "–"]
