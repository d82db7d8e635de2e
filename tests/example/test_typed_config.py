"""The tower suite's typed configuration: options as one class (the listing it had as a spec
tuple) read as fields by the factories, refused in one line before a run; the outcome typed from
the env through the store back to the scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness import ConfigError, RunConfig, get_suite
from buildbench.suites.example.options import ExampleOptions
from buildbench.suites.example.outcome import TowerOutcome

SUITE = get_suite("example")


def test_the_options_class_lists_the_options_the_suite_declared() -> None:
    assert SUITE.options is ExampleOptions
    listed = [(s.name, s.kind, s.default, s.minimum, s.maximum) for s in SUITE.option_specs()]
    assert listed == [("max_steps", "int", 3, 1, 1000), ("delay_s", "float", 0.0, 0.0, 3600.0),
                      ("prompts", "str", None, None, None)]


def test_the_factories_read_the_parsed_fields() -> None:
    task = SUITE.load_tasks("demo", 0)[0]
    options = SUITE.parse_options({"max_steps": "5", "delay_s": "0.25"})
    assert SUITE.protocol("refine").factory(task, options).max_steps == 5  # type: ignore[attr-defined]
    assert SUITE.agent("slow-reference").factory(task, None, options).delay_s == 0.25  # type: ignore[attr-defined]
    assert SUITE.protocol("refine").factory(task, ExampleOptions()).max_steps == 3  # type: ignore[attr-defined]


def test_a_bad_value_is_one_line_and_exit_2_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match=r"^option max_steps='0': must be >= 1$"):
        SUITE.parse_options({"max_steps": "0"})
    run_dir = tmp_path / "run"
    rc = main(["run", "example", "--split", "demo", "--limit", "1", "-q", "-o", "delay_s=-1", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == ["error: option delay_s='-1': must be >= 0"], err
    assert not run_dir.exists()


def test_the_outcome_is_typed_from_the_env_through_the_store_to_the_scorer(stored_episode: Any) -> None:
    config = RunConfig(suite="example", agent="floating", protocol="refine", split="demo", limit=1, workers=0)
    task = SUITE.load_tasks("demo", 0)[0]
    assert isinstance(SUITE.make_env(task, ExampleOptions()).outcome(), TowerOutcome)
    kept = stored_episode(config, task)
    outcome = SUITE.read_outcome(kept.outcome)
    assert isinstance(outcome, TowerOutcome) and outcome.to_dict() == kept.outcome
    assert outcome.attempts == 3 and len(outcome.blocks) >= 2  # refine: 3 submissions by default
    assert SUITE.score(task, outcome) == kept.metrics and kept.metrics["passed"] == 0.0
