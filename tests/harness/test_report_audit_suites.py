"""The suites' paper tables agree with the headline means on the same episodes: agent failures
(refused output, spent budget) count as failures everywhere, unscored episodes nowhere."""

from __future__ import annotations

import pytest

from buildbench.harness import mean_metrics
from buildbench.harness.episode import Episode
from buildbench.suites.buildarena.report import summarize as buildarena_summary


def _buildarena(sample: int, status: str, passed: float, parts: float, indicator: float) -> Episode:
    metrics = {"passed": passed, "parts": parts, "indicator": indicator, "calls": 5.0, "invalid_calls": 1.0}
    return Episode(task_id="support-1", sample=sample, suite="buildarena", agent="a", protocol="workflow", seed=0,
                   status=status, metrics=metrics)  # type: ignore[arg-type]


def test_buildarena_tables_count_what_the_headline_counts() -> None:
    # A pass, a refused output (scored: the suite's failing values), a spent budget (scored), and an
    # episode the endpoint cut short whose leftover machine happened to pass (unscored: no mean).
    episodes = [_buildarena(0, "ok", 1.0, 10.0, 100.0), _buildarena(1, "failed", 0.0, 0.0, 0.0),
                _buildarena(2, "budget", 0.0, 4.0, 20.0), _buildarena(3, "api_error", 1.0, 30.0, 900.0)]
    headline = mean_metrics(episodes)["metrics"]
    assert headline["passed"] == pytest.approx(1 / 3) and headline["parts"] == pytest.approx(14 / 3)
    tables = buildarena_summary(episodes)["tables"]
    (per_task,) = tables["Per task (ours)"]  # was 50 % over ok+failed+budget+api_error (the api_error's pass)
    assert per_task["episodes"] == 3 and per_task["SR %"] == pytest.approx(100 * headline["passed"])
    assert per_task["parts"] == pytest.approx(headline["parts"]) and per_task["indicator"] == pytest.approx(40.0)
    table2 = next(rows for title, rows in tables.items() if title.startswith("Table 2"))
    assert table2[0]["SR % L1/L2/L3"] == "33.3 / — / —"
    assert "no scored episode of that task level" in tables["Notes"][0]["note"]  # the dashes, explained
    for title in ("Table 4", "Table 5"):  # were 100 %: only status ok counted, the failures left out
        rows = next(rows for name, rows in tables.items() if name.startswith(title))
        ours = next(r for r in rows if r["source"].startswith("ours"))
        assert (ours["SR %"], ours["parts"], ours["max load"]) == ("33.3", "4.7", "40.0")


def test_dreamhouse_table1_says_how_many_of_n_are_unscored_and_prints_whole_numbers(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.suites.dreamhouse.report import print_tables, table1_rows

    def ep(sample: int, status: str, passed: float | None) -> Episode:
        return Episode(task_id="h0", sample=sample, suite="dreamhouse", agent="oracle", protocol="planner-atomic",
                       seed=0, status=status,  # type: ignore[arg-type]
                       metrics={} if passed is None else {"structural_pass": passed},
                       metadata={"run_options": {"condition": "frame"}})

    episodes = [ep(0, "ok", 1.0), ep(1, "failed", 0.0), ep(2, "api_error", 1.0), ep(3, "error", None)]
    rows = table1_rows(episodes)
    ours = rows[0]
    assert ours["Struct F/Fa"] == "0.500/–" and ours["N F/Fa"] == "4/0"  # a rate over 2 of the 4
    assert ours["unscored F/Fa"] == "2/0"  # was not said: N 4 beside a rate over 2
    monkeypatch.setenv("COLUMNS", "80")
    print_tables({"Table 1": rows})
    out = capsys.readouterr().out
    assert "…" not in out and "0.792/0.637" in out and "2/0" in out  # was cut to "0.792/0.6…"


def test_legoeval_says_why_a_cell_of_ours_reads_na() -> None:
    from buildbench.suites.legoeval.report import run_tables

    def ep(task: str, label: float, pred: float) -> Episode:
        metrics = {"valid_label": label, "valid_pred": pred, "holistic_correct": float(label == pred),
                   "n_constraints": 2.0, "partial_tt": 2.0 * label, "partial_ff": 2.0 * (1 - label),
                   "partial_tf": 0.0, "partial_ft": 0.0, "partial_holds": 2.0 * pred, "partial_fails": 0.0}
        return Episode(task_id=task, sample=0, suite="legoeval", agent="a", protocol="evaluate", seed=0,
                       metrics=metrics)

    one_class = run_tables({"a": [ep("s0", 1.0, 1.0), ep("s1", 1.0, 1.0)]})
    (ours,) = [r for r in one_class["Table 1: agreement with labels"] if r["source"] == "ours"]
    assert ours["hol_f1"] is None and ours["pairs"] == 2  # a perfect evaluator, but no F1 to show…
    notes = [n["note"] for n in one_class["Notes"]]
    assert any(n.startswith("n/a in Table 1: ") and "one class" in n for n in notes)  # …and now why
    both = run_tables({"a": [ep(f"s{i}", float(i % 2), float(i % 2)) for i in range(8)]})
    (ours,) = [r for r in both["Table 1: agreement with labels"] if r["source"] == "ours"]
    assert ours["hol_f1"] == 1.0 and ours["hol_f1 95 % interval"] == "[1.000, 1.000]"
    assert not any(n["note"].startswith("n/a in Table 1: ") for n in both.get("Notes", []))


def test_legoeval_f1_carries_a_task_clustered_interval() -> None:
    from buildbench.harness.stats import bootstrap_of_counts
    from buildbench.suites.legoeval.metrics import agreement_from_counts
    from buildbench.suites.legoeval.report import table1_row

    pairs = [(1.0, 1.0), (0.0, 0.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0)]
    episodes = [Episode(task_id=f"s{i}", sample=0, suite="legoeval", agent="a", protocol="evaluate", seed=0,
                        metrics={"valid_label": label, "valid_pred": pred}) for i, (label, pred) in enumerate(pairs)]
    row = table1_row("a", episodes)
    assert row["hol_f1"] == pytest.approx(0.75)
    # Recomputed: resample the 8 tasks (seed 0, 2000 draws), the macro F1 of each draw's counts.
    rows = [[float(lab == 1 and pr == 1), float(lab == 1 and pr == 0), float(lab == 0 and pr == 1),
             float(lab == 0 and pr == 0)] for lab, pr in pairs]
    low, high = bootstrap_of_counts(rows, [f"s{i}" for i in range(8)],
                                    lambda c: agreement_from_counts(*map(int, c)).reportable()["f1"]) or (0, 0)
    assert row["hol_f1 95 % interval"] == f"[{low:.3f}, {high:.3f}]" and low < 0.75 < high
    assert table1_row("a", episodes[:1])["hol_f1 95 % interval"] == "n/a"  # one task: nothing to resample
