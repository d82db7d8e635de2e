"""DreamHouse's typed configuration: its options are one class (the listing it had as a spec
tuple), parsed once, refused in one line before a run; the protocol takes a model agent's
tokens and history from the parsed options only; the outcome is typed from the env through
the store back to the scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest

from buildbench.cli.main import main
from buildbench.harness import ConfigError, RunConfig, get_suite
from buildbench.harness.llm_agent import LLMAgent
from buildbench.llm import ScriptedChat
from buildbench.suites.dreamhouse.options import DreamHouseOptions, Renderer
from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome
from buildbench.suites.dreamhouse.protocols import TABLE6, make_protocol
from buildbench.suites.dreamhouse.views import RENDERERS

SUITE = get_suite("dreamhouse")
_T6 = "the protocol's Table 6 value"

#: (name, kind, choices, default, minimum, maximum, unset) of every option as the suite declared
#: them before the options class (the OptionSpec tuple of suite.py), in listing order.
DECLARED = [
    ("executor", "str", ("fast", "blender"), "fast", None, None, ""),
    ("profile", "str", ("paper", "released"), "paper", None, None, ""),
    ("condition", "str", ("frame", "facade"), "frame", None, None, ""),
    ("action_format", "str", ("python", "json", "tools"), "python", None, None, ""),
    ("isolation", "str", ("auto", "bwrap", "process"), "auto", None, None, ""),
    ("images", "str", ("on", "off"), "on", None, None, ""),
    ("renderer", "str", ("raster", "gl", "cycles"), "raster", None, None, ""),
    ("step_retries", "int", (), None, 0, 1000, _T6),
    ("global_retries", "int", (), None, 0, 1000, _T6),
    ("max_actions", "int", (), None, 0, 100_000, _T6),
    ("revisions", "int", (), None, 0, 1000, _T6),
    ("tau_retry", "float", (), None, 0.0, 1.0, _T6),
    ("require_visual", "bool", (), True, None, None, ""),
    ("prompts", "str", (), None, None, None, ""),
    ("degrade", "float", (), 0.5, 0.0, 1.0, ""),
    ("degrade_mode", "str", ("members", "shift"), "members", None, None, ""),
]


def test_the_options_class_lists_the_options_the_suite_declared() -> None:
    assert SUITE.options is DreamHouseOptions
    specs = SUITE.option_specs()
    assert [(s.name, s.kind, s.choices, s.default, s.minimum, s.maximum, s.unset) for s in specs] == DECLARED
    assert get_args(Renderer) == RENDERERS  # the env's renderers are the option's choices


def test_options_are_typed_frozen_and_default_to_their_declaration() -> None:
    options = SUITE.parse_options({"revisions": "2", "require_visual": "no", "history": "full"})
    assert isinstance(options, DreamHouseOptions)
    assert (options.revisions, options.require_visual, options.history, options.renderer) == (2, False, None, "raster")
    assert DreamHouseOptions().model_dump() == SUITE.parse_options({}).model_dump()
    with pytest.raises(ValueError):
        options.renderer = "cycles"  # type: ignore[misc]


@pytest.mark.parametrize(("raw", "message"), [
    ({"renderer": "vray"}, r"^option renderer='vray': expected one of raster, gl, cycles$"),
    ({"tau_retry": "1.5"}, r"^option tau_retry='1.5': must be <= 1$"),
    ({"revisions": "-1"}, r"^option revisions='-1': must be >= 0$"),
    ({"scorer": "x"}, r"^unknown option 'scorer' for suite 'dreamhouse'; options: action_format, "),
])
def test_a_bad_value_is_one_config_error_line(raw: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        SUITE.parse_options(raw)
    assert "\n" not in str(refused.value)


def test_a_bad_value_through_the_command_line_exits_2_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "dreamhouse", "--split", "demo", "--limit", "1", "-q", "-o", "images=off",
               "-o", "degrade_mode=melt", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0] == "error: option degrade_mode='melt': expected one of members, shift"
    assert not run_dir.exists()


@pytest.mark.parametrize("protocol", ["planner-atomic", "planner-managed", "iterative-refinement"])
@pytest.mark.parametrize("given", [{}, {"history": "3"}, {"history": "full", "max_tokens": "100"}])
def test_a_model_agent_gets_the_budgets_tokens_and_history_from_the_parsed_options(
        protocol: str, given: dict[str, str]) -> None:
    task = SUITE.load_tasks("demo", 0)[0]
    options = SUITE.parse_options(given)
    agent = SUITE.agent("llm").factory(task, ScriptedChat([]), options)
    assert isinstance(agent, LLMAgent)
    proto = make_protocol(protocol, options)
    proto._configure(agent)
    table = TABLE6[protocol]
    assert agent.max_tokens == (100 if "max_tokens" in given else table.max_tokens)
    assert agent.history == (3 if given.get("history") == "3" else table.history)  # full and unset: None


def test_the_outcome_is_typed_from_the_env_through_the_store_to_the_scorer(stored_episode: Any) -> None:
    config = RunConfig(suite="dreamhouse", agent="fault-no-roof", protocol="planner-atomic", split="demo", limit=1,
                       workers=0, options={"images": "off", "step_retries": 0})
    task = SUITE.load_tasks("demo", 0)[0]
    env = SUITE.make_env(task, SUITE.parse_options(config.options))
    assert isinstance(env.outcome(), DreamHouseOutcome)
    env.close()
    kept = stored_episode(config, task)
    outcome = SUITE.read_outcome(kept.outcome)
    assert isinstance(outcome, DreamHouseOutcome) and outcome.to_dict() == kept.outcome
    assert outcome.profile == "paper" and outcome.protocol["plan"]["ok"] is True and outcome.attempts >= 1
    assert SUITE.score(task, outcome) == pytest.approx(kept.metrics, nan_ok=True)
    assert kept.metrics["test_roof_coverage"] == 0.0
