"""The report: paper tables with our rows, rebuilt from episode metrics alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.harness import Episode, Store, Task
from buildbench.suites.legoeval.check import BASELINES
from buildbench.suites.legoeval.metrics import agreement_row
from buildbench.suites.legoeval.report import (
    PAPER_TABLE1,
    episodes_from_results,
    print_tables,
    run_tables,
    table1_row,
    table3_row,
)
from buildbench.suites.legoeval.report_runs import print_run_report, table2_rows
from buildbench.suites.legoeval.tasks import generated_tasks

# The module-scoped fixtures (the episode groups) take seconds to build: its tests share one worker
# under --dist loadgroup, so they are built once, not on both.
pytestmark = pytest.mark.xdist_group("legoeval-report")


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return generated_tasks(12, seed=7)


@pytest.fixture(scope="module")
def groups(tasks: list[Task]) -> dict[str, list[Episode]]:
    return {name: episodes_from_results(name, [(t, fn(t)) for t in tasks]) for name, fn in BASELINES.items()}


def test_table1_rows_equal_the_direct_metrics(tasks: list[Task], groups: dict[str, list[Episode]]) -> None:
    for name, fn in BASELINES.items():
        direct = agreement_row([(t, fn(t)) for t in tasks])
        row = table1_row(name, groups[name])
        assert row["hol_f1"] == pytest.approx(direct.holistic.f1)
        assert row["part_f1"] == pytest.approx(direct.partial.f1)
        assert row["part_kappa"] == direct.partial.kappa or row["part_kappa"] == pytest.approx(direct.partial.kappa)
        assert row["pairs"] == 24 and row["constraints"] == direct.partial.n
    assert table1_row("always-valid", groups["always-valid"])["hol_precision"] == 0.25


def test_paper_rows_sit_beside_ours(groups: dict[str, list[Episode]]) -> None:
    tables = run_tables(groups)
    t1 = tables["Table 1: agreement with labels"]
    paper = [r for r in t1 if r["source"] == "paper"]
    assert len(paper) == len(PAPER_TABLE1) and paper[-3]["method"] == "LEGO-Eval GPT-4.1"
    assert paper[-3]["hol_f1"] == 0.81 and paper[-3]["part_kappa"] == 0.66
    assert [r["method"] for r in t1 if r["source"] == "ours"] == list(BASELINES)
    t3 = tables["Table 3: success rates (%)"]
    ours = {r["method"]: r for r in t3 if r["source"] == "ours"}
    assert ours["always-valid"]["holistic_sr"] == 100.0 and ours["always-invalid"]["avg"] == 0.0
    assert ours["deterministic"]["holistic_sr"] == 50.0  # the aligned half
    print_tables(tables)  # renders without error


def test_unscorable_episodes_stay_out(tasks: list[Task]) -> None:
    eps = episodes_from_results("broken", [(tasks[0], {"verdicts": "nope"}), (tasks[1], BASELINES["deterministic"](tasks[1]))])
    assert eps[0].status == "error" and "verdicts" in (eps[0].error or "")
    row = table1_row("broken", eps)
    assert row["pairs"] == 1 and row["unknown_pairs"] == 1
    assert table3_row("broken", eps)["unknown_scenes"] == 1


def test_ablation_rows_show_relative_change() -> None:
    full = {"hol_f1": 0.8, "part_f1": 0.5}
    rows = table2_rows(full, {"w/o E+M": {"hol_f1": 0.6, "part_f1": 0.5}})
    assert rows[0]["hol_f1_pct"] == pytest.approx(-25.0) and rows[0]["part_f1_pct"] == 0.0
    assert rows[0]["paper_hol_f1_pct"] == -24.90


def test_print_run_report_reads_a_stored_run(tmp_path: Path, groups: dict[str, list[Episode]],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with Store(tmp_path / "run") as store:
        for ep in groups["deterministic"]:
            store.add_episode(ep)
    print_run_report(tmp_path / "run", as_json=True)
    tables = json.loads(capsys.readouterr().out)["tables"]
    ours = [r for r in tables["Table 1: agreement with labels"] if r["source"] == "ours"]
    assert ours[0]["method"] == "deterministic" and ours[0]["hol_kappa"] == 1.0
