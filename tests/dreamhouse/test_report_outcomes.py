"""The DreamHouse report reads each stored outcome as a `DreamHouseOutcome`: an episode without
one is counted apart from Frame and Facade (its condition is not known), never guessed into Frame;
a failed one stays a failure, an unscored one stays out of the means."""

from __future__ import annotations

from typing import Any

import pytest

from buildbench.harness import Episode
from buildbench.harness.episode_outcome import OutcomeReadError
from buildbench.suites.dreamhouse.report import summarize, table1_rows
from buildbench.suites.dreamhouse.report_extra import refinement_notes, table5_rows
from buildbench.suites.dreamhouse.report_paper import NO_OUTCOME, condition_of
from buildbench.suites.dreamhouse.score import failure_metrics

PASSED = {"structural_pass": 1.0, "pass_rate": 1.0, "visual_pass": 1.0, "joint_pass": 1.0, "visual_fidelity": 0.5}


def _ep(sample: int, status: Any = "ok", outcome: dict[str, Any] | None = None, metrics: dict[str, float] | None = None,
        protocol: str = "planner-managed") -> Episode:
    return Episode(task_id="h1", sample=sample, suite="dreamhouse", agent="oracle", protocol=protocol, seed=0,
                   status=status, outcome={"condition": "facade"} if outcome is None else outcome,
                   metrics=PASSED if metrics is None else metrics)


def _run() -> list[Episode]:
    return [_ep(0), _ep(1, outcome={"condition": "frame"}),
            _ep(2, "failed", {}, dict(failure_metrics(None))),  # type: ignore[arg-type]
            _ep(3, "error", {}, {})]


def test_an_episode_without_an_outcome_is_in_neither_condition() -> None:
    episodes = _run()
    assert [condition_of(ep) for ep in episodes] == ["facade", "frame", NO_OUTCOME, NO_OUTCOME]
    (ours,) = [row for row in table1_rows(episodes) if not row["model"].endswith("*")]
    assert ours["N F/Fa"] == "1/1" and ours[f"N {NO_OUTCOME}"] == 2
    assert ours["Struct F/Fa"] == "1.000/1.000"  # nothing guessed into Frame
    (row5,) = [row for row in table5_rows(episodes) if not row["model"].endswith("*")]
    assert row5["N"] == 1 and row5[f"N {NO_OUTCOME}"] == 2


def test_the_summary_counts_the_failure_and_leaves_the_error_out() -> None:
    out = summarize(_run())
    assert out["unscored"] == 1 and out["metrics"]["structural_pass"] == pytest.approx(2 / 3)


def test_outcomes_everywhere_add_no_column() -> None:
    (ours,) = [row for row in table1_rows(_run()[:2]) if not row["model"].endswith("*")]
    assert f"N {NO_OUTCOME}" not in ours


def test_refinement_notes_of_an_episode_without_an_outcome_are_none() -> None:
    assert refinement_notes(_ep(0, "failed", {}, {}, protocol="iterative-refinement")) is None
    notes = {"status": "done", "baseline": 0.3, "final": 0.5, "eligible": True}
    assert refinement_notes(_ep(0, outcome={"protocol": {"refinement": notes}})) == notes


@pytest.mark.parametrize("outcome", [{"condition": 1}, {"protocol": []}, {"structure": "box"}])
def test_a_malformed_stored_outcome_is_one_error_naming_the_episode(outcome: dict[str, Any]) -> None:
    with pytest.raises(OutcomeReadError, match=r"^episode 'h1' sample 5: stored outcome unreadable: dreamhouse"):
        summarize([_ep(0), _ep(5, outcome=outcome)])


def test_the_dreamhouse_report_command_names_the_run_folder(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main
    from buildbench.harness import Store

    run_dir = tmp_path / "run"
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "dreamhouse", "agent": "oracle", "protocol": "planner-managed",
                                         "options": {}}, "tasks": 1})
        store.add_episode(_ep(0))
        store.add_episode(_ep(5, outcome={"condition": ["frame"]}))
    assert main(["dreamhouse", "report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run_dir}: episode 'h1' sample 5: stored outcome unreadable: dreamhouse outcome: "
                          "condition: ") and err.count("\n") == 1
