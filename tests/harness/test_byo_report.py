"""``buildbench report RUN [RUN…]``: runs side by side, one row per run identity (issues 14, 23),
and ``buildbench compare`` (paired differences)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import ConfigError, RunConfig, Runner
from buildbench.harness.compare import compare_runs, metrics_table

REPO = Path(__file__).resolve().parents[2]


def _run(root: Path, name: str, suite: str = "example", agent: str = "reference", **kw: object) -> Path:
    config = RunConfig(suite=suite, agent=agent, protocol="one-shot" if suite == "example" else "evaluate",
                       split="demo", limit=2, workers=0, **kw)  # type: ignore[arg-type]
    Runner(config, root / name).run()
    return root / name


def test_two_runs_give_one_row_each(tmp_path: Path) -> None:
    good = _run(tmp_path, "good")
    short = _run(tmp_path, "short", agent="short")
    both = compare_runs([good, short])
    rows = metrics_table(both)
    assert [(r["run"], r["episodes"], r["passed"]) for r in rows] == [("reference", 2, 1.0), ("short", 2, 0.0)]


def test_runs_that_differ_in_any_setting_are_never_merged(tmp_path: Path) -> None:
    model = f"python:{REPO}/examples/example/model.py:chat"
    first = _run(tmp_path, "a", agent="llm", model=model)
    second = _run(tmp_path, "b", agent="llm", model=model, seed=1)
    ref = _run(tmp_path, "c")
    both = compare_runs([first, second, ref])
    assert [(r["episodes"], len(r["runs"])) for r in both["rows"]] == [(2, 1)] * 3
    labels = [r["label"] for r in both["rows"]]
    assert labels[0].startswith(f"llm / {model} / seed=0") and labels[1].startswith(f"llm / {model} / seed=1")
    assert labels[2].startswith("reference / seed=0")
    assert {"agent", "model", "seed"} <= set(both["differs_in"])


def test_a_temperature_sweep_gives_two_rows_labelled_by_the_option(tmp_path: Path) -> None:
    model = f"python:{REPO}/examples/example/model.py:chat"
    plain = _run(tmp_path, "plain", agent="llm", model=model)
    cold = _run(tmp_path, "cold", agent="llm", model=model, options={"temperature": 0.0})
    both = compare_runs([plain, cold])
    labels = [r["label"] for r in both["rows"]]
    assert labels == [f"llm / {model} / temperature=(default)", f"llm / {model} / temperature=0.0"]
    assert both["differs_in"] == ["-o temperature"] and not both["notes"]
    for row in both["rows"]:
        assert row["intervals"]["passed"]["n"] == 2


def test_identical_runs_share_a_row_and_differing_task_sets_are_named(tmp_path: Path) -> None:
    one, two = _run(tmp_path, "one"), _run(tmp_path, "two")
    same = compare_runs([one, two])
    assert [(r["episodes"], len(r["runs"])) for r in same["rows"]] == [(4, 2)]
    config = RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=3,
                       workers=0)
    Runner(config, tmp_path / "three").run()
    mixed = compare_runs([one, tmp_path / "three"])
    assert len(mixed["rows"]) == 2 and "different task sets" in mixed["notes"][0]


def test_compare_gives_paired_differences_and_names_unshared_tasks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, short = _run(tmp_path, "good"), _run(tmp_path, "short", agent="short")
    config = RunConfig(suite="example", agent="short", protocol="one-shot", split="demo", limit=3, workers=0)
    Runner(config, tmp_path / "short3").run()
    assert main(["compare", str(good), str(tmp_path / "short3"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["shared_tasks"] == 2 and len(result["only_b"]) == 1
    assert "only in B" in result["notes"][0]
    passed = result["metrics"]["passed"]
    assert (passed["diff"], passed["test"], passed["tasks"]) == (-1.0, "mcnemar", 2)
    assert main(["compare", str(good), str(short)]) == 0
    out = capsys.readouterr().out
    assert "B - A" in out and "passed" in out
    assert main(["compare", str(good), str(tmp_path / "nothing")]) == 2
    capsys.readouterr()
    assert main(["compare", str(good), str(good), "--json"]) == 2  # more in test_compare_refusals.py
    assert "same run folder" in capsys.readouterr().err


def test_suite_tables_get_a_run_column(tmp_path: Path) -> None:
    runs = [_run(tmp_path, "v", suite="legoeval", agent="always-valid"),
            _run(tmp_path, "i", suite="legoeval", agent="always-invalid")]
    both = compare_runs(runs)
    assert both["tables"], "legoeval prints paper tables"
    for rows in both["tables"].values():
        labels = [row["run"] for row in rows]
        assert labels[0] == "always-valid" and "always-invalid" in labels


def test_different_suites_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="runs of different suites cannot share tables"):
        compare_runs([_run(tmp_path, "e"), _run(tmp_path, "l", suite="legoeval", agent="always-valid")])


def test_cli_prints_both_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, short = _run(tmp_path, "good"), _run(tmp_path, "short", agent="short")
    assert main(["report", str(good), str(short)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "metric" in line and "reference" in line)
    assert header.index("reference") < header.index("short")  # one column per run, in the order given
    passed = next(line for line in lines if " passed " in line)
    assert [cell.strip() for cell in passed.split("│")[2:4]] == ["1.000 [1.000, 1.000] n=2",
                                                                  "0.000 [0.000, 0.000] n=2"]
    assert main(["report", str(good), str(tmp_path / "nothing")]) == 2
