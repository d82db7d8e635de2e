"""DreamHouse report: Table 1 cells, paper rows, Figure 7 failure rates and co-failure patterns."""

from __future__ import annotations

import pytest

from buildbench.harness import Episode, Store, is_scored
from buildbench.harness.episode import as_failure
from buildbench.suites.dreamhouse.report import (
    PAPER_TABLE1,
    co_failure_rows,
    failure_rate_rows,
    is_paper_row,
    runs_summary,
    summarize,
    table1_rows,
)

NAN = float("nan")


def _ep(
    i: int, metrics: dict[str, float], condition: str = "frame", status: str = "ok", **kw: str
) -> Episode:
    return Episode(
        task_id=f"T{i}",
        sample=0,
        suite="dreamhouse",
        agent=kw.get("agent", "oracle"),
        protocol=kw.get("protocol", "planner-atomic"),
        seed=0,
        status=status,  # type: ignore[arg-type]
        outcome={"condition": condition},
        metrics=metrics,
    )


def _passed(s: float, t: float, joint: float, **tests: float) -> dict[str, float]:
    return {"structural_pass": 1.0, "visual_fidelity": s, "topological_fidelity": t, "joint_pass": joint,
            "test_load_path": 1.0, "test_span_limits": 1.0, "test_deflection": 1.0, **tests}  # fmt: skip


def _failed(**tests: float) -> dict[str, float]:
    base = {"test_load_path": 1.0, "test_span_limits": 1.0, "test_deflection": 1.0, **tests}
    return {
        "structural_pass": 0.0,
        "visual_fidelity": NAN,
        "topological_fidelity": NAN,
        "joint_pass": 0.0,
        **base,
    }


EPISODES = [
    _ep(0, _passed(0.5, 0.2, 0.0)),
    _ep(1, _passed(0.7, 0.4, 1.0)),
    _ep(2, _failed(test_span_limits=0.0, test_deflection=0.0)),
    _ep(3, {}, status="error"),
    _ep(4, _failed(test_span_limits=0.0, test_deflection=0.0), condition="facade"),
    _ep(5, _failed(test_load_path=0.0), condition="facade"),
    _ep(6, _passed(0.9, 1.0, 1.0), condition="facade"),
]


def test_table1_cells_hand_computed() -> None:
    from buildbench.suites.dreamhouse.report import group_mean

    frame = [ep for ep in EPISODES if ep.outcome["condition"] == "frame"]
    # The errored episode has no result: it stays out of the rates (errors are never scores)…
    assert group_mean(frame, "structural_pass") == pytest.approx(2/3)
    assert group_mean(frame, "visual_fidelity") == pytest.approx(0.6)  # mean over the 2 passed
    assert group_mean(frame, "topological_fidelity") == pytest.approx(0.3)
    assert group_mean(frame, "joint_pass") == pytest.approx(1/3)
    # …unless the report counts it as a failure, as the paper's pass rates do.
    keys = sorted({k for ep in frame for k in ep.metrics})
    as_failed = [ep if is_scored(ep) else as_failure(ep, dict.fromkeys(keys, 0.0)) for ep in frame]
    assert group_mean(as_failed, "structural_pass") == pytest.approx(2/4)
    assert group_mean(as_failed, "joint_pass") == pytest.approx(1/4)
    rows = table1_rows(EPISODES)
    ours = [r for r in rows if not is_paper_row(r)]
    assert len(ours) == 1
    row = ours[0]
    assert (row["model"], row["protocol"]) == ("oracle", "atomic")
    assert row["Struct F/Fa"] == "0.667/0.333"
    assert row["Visual F/Fa"] == "0.600/0.900"
    assert row["Topo F/Fa"] == "0.300/1.000"
    assert row["Joint F/Fa"] == "0.333/0.333"
    assert row["N F/Fa"] == "4/3"


def test_table1_carries_the_papers_numbers_verbatim() -> None:
    paper = {(r["model"], r["protocol"]): r for r in table1_rows([]) if is_paper_row(r)}
    assert len(paper) == 9 == len(PAPER_TABLE1)
    claude = paper[("Claude*", "atomic")]
    assert claude["Struct F/Fa"] == "0.716/0.779"
    assert claude["Joint F/Fa"] == "0.071/0.064"  # the 7.1% headline
    gpt = paper[("GPT-5*", "managed")]
    assert (gpt["Struct F/Fa"], gpt["Topo F/Fa"]) == ("0.333/0.157", "0.178/0.157")
    # Every row has the same columns but for the count of unscored episodes, a row of ours has
    # only where there are some (in N, in no rate): the printers take every row's columns.
    rows = table1_rows(EPISODES)
    assert len({tuple(k for k in r if k != "unscored F/Fa") for r in rows}) == 1
    assert next(r for r in rows if not is_paper_row(r))["unscored F/Fa"] == "1/0"


def test_missing_cells_are_marked_not_zero() -> None:
    only_failed = [_ep(0, _failed(test_load_path=0.0))]
    row = next(r for r in table1_rows(only_failed) if not is_paper_row(r))
    assert row["Visual F/Fa"] == "–/–" and row["Struct F/Fa"] == "0.000/–"


def test_failure_rates_per_group() -> None:
    rows = {r["test"]: r for r in failure_rate_rows(EPISODES)}
    frame, facade = "oracle/atomic/frame", "oracle/atomic/facade"
    assert rows["span_limits"][frame] == pytest.approx(1/3)  # 3 scored frame episodes
    assert rows["load_path"][frame] == 0.0
    assert rows["load_path"][facade] == pytest.approx(1/3)
    assert rows["deflection"][facade] == pytest.approx(1/3)


def test_co_failure_patterns() -> None:
    many = EPISODES + [_ep(9, _failed(test_span_limits=0.0, test_deflection=0.0), condition="facade")]
    rows = [r for r in co_failure_rows(many) if r["group"].endswith("facade")]
    assert rows[0]["failed tests"] == "deflection + span_limits"
    assert rows[0]["count"] == 2 and rows[0]["share of failures"] == pytest.approx(2/3)
    assert rows[1]["failed tests"] == "load_path" and rows[1]["count"] == 1


def test_summarize_feeds_the_harness_report() -> None:
    out = summarize(EPISODES)
    assert out["episodes"] == len(EPISODES)
    titles = list(out["tables"])
    assert [t.split(":")[0] for t in titles] == [
        "Table 1", "Table 1 (ours)", "Table 2", "Table 5", "T of passed vs failed structures (* paper, Planner-Atomic)",
        "Figure 7", "Figure 7",
    ]


def test_runs_summary_labels_rows_by_the_runs_model(tmp_path) -> None:
    for name, model in (("a", "vllm:qwen"), ("b", None)):
        with Store(tmp_path/name) as store:
            store.write_manifest({"config": {"suite": "dreamhouse", "model": model}})
            for ep in EPISODES[:2]:
                store.add_episode(ep)
    tables = runs_summary([tmp_path/"a", tmp_path/"b"])
    table1 = next(iter(tables.values()))
    models = sorted(r["model"] for r in table1 if not is_paper_row(r))
    assert models == ["oracle", "vllm:qwen"]
