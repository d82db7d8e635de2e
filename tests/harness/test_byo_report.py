"""``buildbench report RUN [RUN…]``: runs side by side, one row per agent and model (issue 14)."""

from __future__ import annotations

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


def test_runs_of_one_agent_and_model_merge(tmp_path: Path) -> None:
    model = f"python:{REPO}/examples/example/model.py:chat"
    first = _run(tmp_path, "a", agent="llm", model=model)
    second = _run(tmp_path, "b", agent="llm", model=model, seed=1)
    ref = _run(tmp_path, "c")
    both = compare_runs([first, second, ref])
    assert [(r["label"], r["episodes"], len(r["runs"])) for r in both["rows"]] == [
        (f"llm / {model}", 4, 2), ("reference", 2, 1)]


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
    assert [cell.strip() for cell in passed.split("│")[2:4]] == ["1.000", "0.000"]
    assert main(["report", str(good), str(tmp_path / "nothing")]) == 2
