"""LEGO-Eval's options as one typed, frozen declaration: the same listing as the spec tuple it
replaced, factories that read its fields, and rules refused once before a run (one ``error:`` line,
exit 2, no run folder), never episode by episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from buildbench.cli.main import main
from buildbench.harness import ConfigError, get_suite
from buildbench.harness.suite import RunChoice
from buildbench.suites.legoeval import agents
from buildbench.suites.legoeval.env import LegoEvalEnv, make_env
from buildbench.suites.legoeval.options import LegoEvalOptions
from buildbench.suites.legoeval.protocols import evaluate

#: ``buildbench suites --json``'s legoeval options, defaults and schema properties, recorded from
#: the spec tuple the options class replaced.
LISTING = Path(__file__).parent / "data" / "options-listing.json"
COMBINATION = "plans=reference needs the task's constraints (constraints=given), got constraints=identify"


def test_the_options_class_lists_what_the_spec_tuple_did(capsys: pytest.CaptureFixture[str]) -> None:
    suite = get_suite("legoeval")
    assert suite.options is LegoEvalOptions and suite.options_model() is LegoEvalOptions
    assert main(["suites", "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out) if r["name"] == "legoeval")
    before = json.loads(LISTING.read_text())
    assert row["options"] == before["options"] and list(row["options"]) == list(before["options"])
    assert row["defaults"] == before["defaults"]
    assert row["schema"]["properties"] == before["schema_properties"]
    assert [spec.name for spec in suite.option_specs()] == list(before["options"])


def test_the_factories_read_the_typed_fields() -> None:
    suite = get_suite("legoeval")
    task = suite.load_tasks("demo", 0)[0]
    options = suite.parse_options({"max_steps": "7", "render": "no", "wall_midpoint_positions": "yes",
                                   "geometry": "procedural", "disable": "multimodal,textual"})
    assert isinstance(options, LegoEvalOptions) and options.disabled_groups == ("multimodal", "textual")
    env = make_env(task, options)
    assert env.options is options
    assert evaluate(task, options).max_steps == 7
    assert agents._relations_level(options) == "box"  # the compatible mode keeps the original's boxes
    defaults = LegoEvalOptions()
    assert evaluate(task, defaults).max_steps == 40 and LegoEvalEnv(task).options == defaults
    with pytest.raises(ValidationError):  # frozen
        defaults.max_steps = 3  # type: ignore[misc]


def test_a_rule_among_options_is_one_config_error_line() -> None:
    suite = get_suite("legoeval")
    with pytest.raises(ConfigError) as info:
        suite.parse_options({"plans": "reference", "constraints": "identify"})
    assert str(info.value) == f"options for suite 'legoeval': {COMBINATION}"
    with pytest.raises(ValidationError, match="plans=reference needs"):
        LegoEvalOptions(plans="reference", constraints="identify")
    assert suite.parse_options({"plans": "reference"}).constraints == "given"


@pytest.mark.parametrize("agent", ["llm", "deterministic"])
def test_a_bad_combination_stops_buildbench_run_before_its_folder(
        agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    model = ["--model", "scripted"] if agent == "llm" else []
    rc = main(["run", "legoeval", "--agent", agent, *model, "--split", "demo", "--limit", "1", "-q",
               "-o", "plans=reference", "-o", "constraints=identify", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"error: options for suite 'legoeval': {COMBINATION}"]
    assert not run_dir.exists()


def test_meshes_without_assets_are_refused_once_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    suite = get_suite("legoeval")
    assert suite.check_run is not None
    with pytest.raises(ConfigError, match="geometry=mesh needs an asset folder"):
        suite.check_run(RunChoice("deterministic", "evaluate", "demo", suite.parse_options({"geometry": "mesh"})))
    suite.check_run(RunChoice("deterministic", "evaluate", "demo", suite.parse_options({"geometry": "procedural"})))
    run_dir = tmp_path / "run"
    rc = main(["run", "legoeval", "--split", "demo", "--limit", "2", "-q", "-o", "geometry=mesh",
               "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: option geometry=mesh needs an asset folder")
    assert not run_dir.exists()


def test_the_env_offers_no_controls_beside_its_tools() -> None:
    # Tool calls and the verdict are actions; the evaluate protocol asks nothing else of the env.
    task = get_suite("legoeval").load_tasks("demo", 0)[0]
    env = LegoEvalEnv(task, LegoEvalOptions(render=False))
    assert dict(env.controls) == {}
