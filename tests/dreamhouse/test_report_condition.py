"""An episode that stored no outcome (it errored, or its output was refused) belongs to its run's
condition (``-o condition``): the reports read each run's options onto its episodes, so such an
episode is counted in its own condition's Table 1/5 and Figure 7 group, and as a failure there with
``--errors-as-failures``, over one run or several."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Episode, Store
from buildbench.harness.compare import compare_runs
from buildbench.harness.report import run_report
from buildbench.suites.dreamhouse.report import runs_summary, tables
from buildbench.suites.dreamhouse.report_paper import NO_OUTCOME
from buildbench.suites.dreamhouse.score import failure_metrics

T1 = "Table 1: structural / visual S / topological T / joint pass, Frame/Facade (* paper)"
T5 = "Table 5: Planner-Managed without / with per-step visual feedback, Frame (* paper)"
FIG7 = "Figure 7: per-test failure rate"
PASSED = {"structural_pass": 1.0, "pass_rate": 1.0, "visual_pass": 1.0, "joint_pass": 1.0,
          "visual_fidelity": 0.5, "test_load_path": 1.0}
FAILED = {"structural_pass": 0.0, "pass_rate": 0.0, "visual_pass": 0.0, "joint_pass": 0.0,
          "test_load_path": 0.0}


def _ep(task: str, status: Any, outcome: dict[str, Any], metrics: dict[str, float],
        protocol: str = "planner-managed") -> Episode:
    return Episode(task_id=task, sample=0, suite="dreamhouse", agent="oracle", protocol=protocol, seed=0,
                   status=status, outcome=outcome, metrics=metrics)


def _store(run_dir: Path, condition: str | None, protocol: str = "planner-managed",
           without_outcome: bool = True) -> Path:
    """A run of 2 scored episodes with an outcome (one passed, one failed), and, with
    ``without_outcome``, one whose output was refused (failed, ``{}``) and one that errored (``{}``).
    ``condition`` None: the option not given (the default, Frame)."""
    cond = condition or "frame"
    options = {} if condition is None else {"condition": condition}
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "dreamhouse", "agent": "oracle", "protocol": protocol,
                                         "options": options}, "tasks": 4})
        store.add_episode(_ep("h1", "ok", {"condition": cond}, PASSED, protocol))
        store.add_episode(_ep("h2", "ok", {"condition": cond}, FAILED, protocol))
        if without_outcome:
            store.add_episode(_ep("h3", "failed", {}, dict(failure_metrics(None)), protocol))  # type: ignore[arg-type]
            store.add_episode(_ep("h4", "error", {}, {}, protocol))
    return run_dir


def _ours(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [row for row in rows if not str(row["model"]).endswith("*")]


@pytest.mark.parametrize("condition", ["frame", "facade", None])
@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_a_run_s_episodes_without_an_outcome_are_in_its_condition(tmp_path: Path, condition: str | None,
                                                                  errors_as_failures: bool) -> None:
    run = _store(tmp_path / "run", condition)
    report = run_report(run, errors_as_failures=errors_as_failures)
    (row,) = _ours(report["tables"][T1])
    assert f"N {NO_OUTCOME}" not in row
    # Scored: passed, failed, refused output (failed); the error only with --errors-as-failures.
    struct = "0.250" if errors_as_failures else "0.333"
    if condition == "facade":
        assert row["N F/Fa"] == "0/4" and row["Struct F/Fa"] == f"–/{struct}"
    else:
        assert row["N F/Fa"] == "4/0" and row["Struct F/Fa"] == f"{struct}/–"
    assert report["unscored"] == 1 and report["errors_as_failures"] is errors_as_failures
    groups = [key for key in report["tables"][FIG7][0] if key != "test"]
    assert groups == [f"oracle/managed/{condition or 'frame'}"]


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_table5_counts_them_in_frame(tmp_path: Path, errors_as_failures: bool) -> None:
    run = _store(tmp_path / "run", "frame")
    (row,) = _ours(run_report(run, errors_as_failures=errors_as_failures)["tables"][T5])
    assert row["N"] == 4 and f"N {NO_OUTCOME}" not in row
    assert row["struct"] == ("0.250" if errors_as_failures else "0.333")
    assert row.get("unscored") == (None if errors_as_failures else 1)  # in N, in no rate: said so
    facade = _store(tmp_path / "facade", "facade")
    assert _ours(run_report(facade)["tables"][T5]) == []  # Table 5 is Frame only


@pytest.mark.parametrize("errors_as_failures", [False, True])
def test_a_report_over_two_runs_keeps_each_in_its_condition(tmp_path: Path, errors_as_failures: bool) -> None:
    runs = [_store(tmp_path / "frame", "frame"), _store(tmp_path / "facade", "facade")]
    (row,) = _ours(runs_summary(runs, errors_as_failures=errors_as_failures)[T1])
    struct = "0.250" if errors_as_failures else "0.333"
    assert row["N F/Fa"] == "4/4" and row["Struct F/Fa"] == f"{struct}/{struct}"
    assert f"N {NO_OUTCOME}" not in row
    # buildbench report RUN RUN: one group per run (the condition differs), each in its own column.
    merged = compare_runs(runs, errors_as_failures=errors_as_failures)["tables"][T1]
    by_run = {row["run"]: row for row in merged if not str(row["model"]).endswith("*")}
    # The unscored episode is in N and in no rate, and said so (counted as failed: no column).
    unscored = {} if errors_as_failures else {"frame": {"unscored F/Fa": "1/0"}, "facade": {"unscored F/Fa": "0/1"}}
    assert by_run == {
        "oracle / condition=frame": {"run": "oracle / condition=frame", "model": "oracle", "protocol": "managed",
                                     "Struct F/Fa": f"{struct}/–", "Visual F/Fa": "0.500/–",
                                     "Topo F/Fa": "–/–", "Joint F/Fa": f"{struct}/–", "N F/Fa": "4/0",
                                     **unscored.get("frame", {})},
        "oracle / condition=facade": {"run": "oracle / condition=facade", "model": "oracle", "protocol": "managed",
                                      "Struct F/Fa": f"–/{struct}", "Visual F/Fa": "–/0.500",
                                      "Topo F/Fa": "–/–", "Joint F/Fa": f"–/{struct}", "N F/Fa": "0/4",
                                      **unscored.get("facade", {})},
    }


def test_the_dreamhouse_report_command_counts_errors_as_failures(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main

    runs = [str(_store(tmp_path / "frame", "frame")), str(_store(tmp_path / "facade", "facade"))]
    for flag, struct in (([], "0.333"), (["--errors-as-failures"], "0.250")):
        assert main(["dreamhouse", "report", *runs, "--json", *flag]) == 0
        out = json.loads(capsys.readouterr().out)
        (row,) = _ours(out["tables"][T1])
        assert row["N F/Fa"] == "4/4" and row["Struct F/Fa"] == f"{struct}/{struct}"
        # Figure 7's rates are Estimate cells: their intervals come along, one per group
        (rates, *_) = out["table_intervals"][FIG7]
        assert len(rates) == 2 and all(set(r) == {"value", "low", "high", "n", "tasks"} for r in rates.values())


def test_report_numbers_are_unchanged_on_runs_where_every_episode_has_an_outcome(tmp_path: Path) -> None:
    runs = [_store(tmp_path / "frame", "frame", without_outcome=False),
            _store(tmp_path / "facade", "facade", protocol="planner-atomic", without_outcome=False)]
    bare: list[Episode] = []  # as read before runs carried their options
    for run in runs:
        with Store(run, create=False) as store:
            bare.extend(store.episodes())
    assert runs_summary(runs) == tables(bare)
    assert run_report(runs[0])["tables"] == tables(bare[:2])


def test_a_run_condition_that_is_no_condition_is_one_error_naming_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.cli.main import main

    run = _store(tmp_path / "run", "sideways")
    assert main(["dreamhouse", "report", str(run)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {run}: episode 'h3' sample 0: the run's option condition is 'sideways', "
                   "not one of frame, facade\n")
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run}: episode 'h3' sample 0: the run's option condition") and err.count("\n") == 1
