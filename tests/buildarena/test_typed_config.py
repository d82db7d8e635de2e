"""BuildArena's typed configuration: one options class (the listing it had before), bad values and
files refused in one line before the run, the env's controls declared on its methods, and the
outcome record typed from the env through the store to the scorer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import COMMON_OPTIONS, ConfigError, EpisodeContext, get_suite
from buildbench.harness.runner import stored_outcome
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.agents import DesignAgent, llm
from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.options import BuildArenaOptions
from buildbench.suites.buildarena.outcome import BuildArenaOutcome
from buildbench.suites.buildarena.protocols import CLOSED_LOOP_ROUNDS, closed_loop, workflow
from buildbench.suites.buildarena.score import score_episode
from buildbench.suites.buildarena.suite import to_task

#: ``buildbench suites --json`` as recorded before the options became a class.
LISTING = Path(__file__).resolve().parents[1] / "harness" / "snapshots" / "suites.json"

CONTROLS = {
    "begin": "open a stage: kind, machine_id, source, candidates",
    "approve": "record whether the workflow approved a machine",
    "set_final": "name the machine that is the episode's product",
    "new_control_round": "fresh control trials for a revised machine",
    "evaluate_round": "simulate the product and note a closed-loop round",
    "query": "a read-only library call on a machine, as text",
    "has_powered_wheel": "whether a machine has a powered wheel",
}


def test_the_options_class_declares_the_options_listed_before() -> None:
    (row,) = [r for r in json.loads(LISTING.read_text(encoding="utf-8")) if r["name"] == "buildarena"]
    own = [spec for spec in BuildArenaOptions.specs if spec not in COMMON_OPTIONS]
    assert {spec.name: spec.describe() for spec in own} == row["options"]
    assert {spec.name: spec.default for spec in own} == row["defaults"]
    defaults = BuildArenaOptions()
    assert all(getattr(defaults, spec.name) == spec.default for spec in own)
    assert defaults.top_p == 0.7 and defaults.given() == {}  # the paper's top-p, not the common unset


@pytest.mark.parametrize(("raw", "message"), [
    ({"profile": "bogus"}, "option profile='bogus': expected one of default, released"),
    ({"control_trials": "0"}, "option control_trials='0': must be >= 1"),
    ({"top_p": "0"}, "option top_p='0': must be >= 0.01"),
    ({"max_shift": "far"}, "option max_shift='far'"),
    ({"no_such": "1"}, "unknown option 'no_such' for suite 'buildarena'"),
])
def test_a_bad_value_is_one_config_error_line(raw: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        get_suite("buildarena").parse_options(raw)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_options_parse_once_into_typed_fields() -> None:
    options = get_suite("buildarena").parse_options({"top_p": "none", "max_shift": "none", "rounds": "2",
                                                     "profile": "released", "max_calls": "9"})
    assert (options.top_p, options.max_shift, options.rounds, options.profile, options.max_calls) == (
        None, None, 2, "released", 9)
    assert isinstance(options, BuildArenaOptions)
    with pytest.raises(ValueError):  # frozen
        options.rounds = 3  # type: ignore[misc]


@pytest.mark.parametrize(("option", "needle"), [("physics=besiege-9", "no such profile"),
                                                ("profile=bogus", "expected one of default, released"),
                                                ("draft_turns=0", "must be >= 1")])
def test_the_run_refuses_a_bad_option_in_one_line_before_its_folder_exists(
        option: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "buildarena", "--split", "lift-1", "--workers", "0", "--quiet", "--run-dir", str(run_dir),
               "-o", option])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error:") and needle in err[0], err
    assert not run_dir.exists()


def test_the_closed_loop_plays_five_rounds_unless_the_run_gives_rounds() -> None:
    task, suite = to_task("lift-1"), get_suite("buildarena")
    assert closed_loop(task, suite.parse_options({})).rounds == CLOSED_LOOP_ROUNDS == 5
    assert closed_loop(task, suite.parse_options({"rounds": "1"})).rounds == 1
    assert workflow(task, suite.parse_options({})).rounds == 1
    limits = workflow(task, suite.parse_options({"draft_turns": "7"})).options
    assert (limits.draft_turns, limits.build_turns, limits.max_substructures) == (7, 300, 3)


def test_the_team_reads_its_settings_from_the_options() -> None:
    from buildbench.llm import ScriptedChat

    task, suite = to_task("lift-1"), get_suite("buildarena")
    team = llm(task, ScriptedChat([]), suite.parse_options({"temperature": "0.2", "history": "3",
                                                            "max_requests": "4"}))
    assert (team.temperature, team.top_p, team.history, team.budget.max_requests) == (0.2, 0.7, 3, 4)
    with pytest.raises(ValueError, match="needs a model"):
        llm(task, None, suite.parse_options({}))


def test_the_env_lists_its_controls_by_name_with_their_docs() -> None:
    env = BuildArenaEnv(to_task("lift-1"))
    controls = env.controls
    assert {name: c.doc for name, c in controls.items()} == CONTROLS
    assert [name for name, c in controls.items() if c.cpu_bound] == ["evaluate_round"]
    assert controls["query"].fn.__self__ is env  # bound to this env


def test_the_outcome_is_the_record_from_the_env_through_the_store_to_the_scorer() -> None:
    task = to_task("lift-1")
    options = BuildArenaOptions(sim_duration_s=0.2)
    env = BuildArenaEnv(task, options)
    ctx = EpisodeContext(task=task, seed=3, options=options)
    asyncio.run(workflow(task, options).run(env, DesignAgent(designs.REFERENCE["lift-1"](), "reference"), ctx))
    record = env.outcome()
    assert isinstance(record, BuildArenaOutcome) and record.approved and record.seed == 3
    stored = json.loads(json.dumps(stored_outcome(record)))  # what the store keeps
    assert stored == record.to_dict() and stored["format"] == BuildArenaOutcome.FORMAT
    read = get_suite("buildarena").read_outcome(stored)
    assert read == record
    metrics = get_suite("buildarena").score(task, read)
    assert metrics == score_episode(task, record) and metrics["passed"] == 1.0
    with pytest.raises(ValueError, match="format"):
        get_suite("buildarena").read_outcome({**stored, "format": "something else"})
