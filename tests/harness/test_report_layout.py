"""Reports a researcher can publish (issue 23): headline first, tables within the terminal's
width, raw counts behind --all, cost and prices, figures, progress lines without a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from buildbench.cli.main import main
from buildbench.harness import ConfigError, RunConfig, Runner
from buildbench.harness.cost import load_prices
from buildbench.harness.episode import Episode
from buildbench.harness.progress import Progress
from buildbench.harness.tables import table_parts

REPO = Path(__file__).resolve().parents[2]


def _run(root: Path, name: str, agent: str = "reference", **kw: object) -> Path:
    config = RunConfig(suite="example", agent=agent, protocol="one-shot", split="demo", limit=2, workers=0,
                       **kw)  # type: ignore[arg-type]
    Runner(config, root / name).run()
    return root / name


def test_wide_tables_are_split_by_columns_never_cut() -> None:
    rows = [{"method": "deterministic", **{f"metric number {k}": 1000.123456 + k for k in range(12)}}]
    parts = table_parts("t", rows, 80)
    assert len(parts) > 1 and all(width <= 80 for _, width in parts)
    from rich.console import Console

    out = io.StringIO()
    for table, _ in parts:
        Console(file=out, width=80).print(table)
    text = out.getvalue()
    assert "…" not in text and max(map(len, text.splitlines())) <= 80
    assert all(f"{1000.123456 + k:.3f}" in text for k in range(12))
    assert text.count("deterministic") == len(parts)  # the label column is repeated


def test_report_leads_with_headline_and_hides_raw_counts(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, "r")
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.index("headline metrics") < out.index("cost")
    assert "invalid_actions" not in out and "more metrics: add --all" in out
    assert max(map(len, out.splitlines())) <= 80  # not a terminal: rich lays out 80 columns
    assert main(["report", str(run), "--all"]) == 0
    assert "invalid_actions" in capsys.readouterr().out


def test_prices_turn_tokens_into_money(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = f"python:{REPO}/examples/example/model.py:chat"
    run = _run(tmp_path, "llm", agent="llm", model=model)
    prices = tmp_path / "prices.yaml"
    prices.write_text(f'currency: EUR\nmodels:\n  "{model}": {{input_per_million: 1000000, per_request: 0.5}}\n')
    assert main(["report", str(run), "--json", "--prices", str(prices)]) == 0
    cost = json.loads(capsys.readouterr().out)["cost"]
    total = cost["total"]
    assert cost["currency"] == "EUR" and cost["priced"]
    assert total["money"] == pytest.approx(total["input_tokens"] + 0.5 * total["requests"])
    assert cost["episodes"] == 2 and cost["solved_metric"] == "passed"
    bad = tmp_path / "bad.yaml"
    bad.write_text('models:\n  m: {input_per_million: -1}\n')
    with pytest.raises(ConfigError, match=r"bad.yaml: models.m.input_per_million: expected a finite number"):
        load_prices(bad)
    assert main(["report", str(run), "--prices", str(bad)]) == 2
    assert capsys.readouterr().err.startswith("error: --prices")
    broken = tmp_path / "broken.json"
    broken.write_text('{"models": {"m": {"per_request": 1}\n')
    with pytest.raises(ConfigError, match=r"broken.json: line 2 column 1: not JSON/YAML: expected ',' or '}'"):
        load_prices(broken)


def test_figures_are_valid_images_that_change_with_the_data(tmp_path: Path) -> None:
    good, short = _run(tmp_path, "good"), _run(tmp_path, "short", agent="short")
    assert main(["report", str(good), str(short), "--figures", str(tmp_path / "f1")]) == 0
    assert main(["report", str(good), "--figures", str(tmp_path / "f2")]) == 0
    names = sorted(p.name for p in (tmp_path / "f1").iterdir())
    assert {"metrics.png", "metrics.svg", "outcomes.png", "cost_quality.svg"} <= set(names)
    for png in (tmp_path / "f1").glob("*.png"):
        with Image.open(png) as img:
            img.verify()
    svg = (tmp_path / "f1" / "metrics.svg").read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    assert (tmp_path / "f1" / "metrics.png").read_bytes() != (tmp_path / "f2" / "metrics.png").read_bytes()
    again = tmp_path / "f3"
    assert main(["report", str(good), str(short), "--figures", str(again)]) == 0
    assert (again / "metrics.svg").read_bytes() == (tmp_path / "f1" / "metrics.svg").read_bytes()


def test_progress_without_a_terminal_logs_lines() -> None:
    stream = io.StringIO()
    with Progress(True, 3, "example/reference", stream=stream, interactive=False, interval_s=0.0) as bar:
        for i in range(3):
            bar.advance(Episode(task_id=f"t{i}", sample=0, suite="example", agent="a", protocol="p", seed=0,
                                status="error" if i == 1 else "ok"))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("progress example/reference: 3/3 episodes")
    assert lines[-1].endswith("unscored 1")
    quiet = io.StringIO()
    with Progress(True, 50, "x", stream=quiet, interactive=False, interval_s=3600.0) as bar:
        for i in range(49):
            bar.advance(Episode(task_id=f"t{i}", sample=0, suite="example", agent="a", protocol="p", seed=0))
    assert quiet.getvalue() == ""  # at most one line per interval (and one at the end)


def test_suite_paper_figures_draw_from_episodes() -> None:
    from buildbench.suites.buildarena.figures import figures as buildarena_figures
    from buildbench.suites.dreamhouse.figures import figures as dreamhouse_figures

    def ep(metrics: dict[str, float]) -> Episode:
        return Episode(task_id="t", sample=0, suite="s", agent="a", protocol="p", seed=0, metrics=metrics)

    house = {"run": [ep({"test_span_limits": 0.0, "test_deflection": 0.0, "test_load_path": 1.0})]}
    ((name, fig),) = dreamhouse_figures(house)
    assert name == "dreamhouse_fig7_co_failures" and fig.axes[0].images[0].get_array()[0][0] == 1.0
    machines = {"run": [ep({"fail_overlap": 2.0, "fail_missing_face": 1.0})]}
    ((name, fig),) = buildarena_figures(machines)
    assert name == "buildarena_fig6_failure_kinds" and len(fig.axes[0].patches) == 2
