"""The bridges (Gymnasium, TRL, verifiers, Inspect) parse a suite's options once into its options
class and hand the typed object to the env; a bad option or split is one ConfigError line."""

from __future__ import annotations

import pytest

from buildbench.harness import get_suite
from buildbench.harness.errors import ConfigError
from buildbench.harness.outcome import OutcomeRecord
from buildbench.integrations.rollout import SuiteSetup, verifier_metric


def test_the_setup_holds_the_typed_options_and_its_envs_get_them() -> None:
    setup = SuiteSetup.load("example", "demo", 0, {"max_steps": "2"}, where="test")
    assert isinstance(setup.options, get_suite("example").options_model())
    assert setup.options.given() == {"max_steps": 2}
    env = setup.make_env(setup.tasks[0])
    try:
        env.reset(setup.tasks[0], seed=0)
        assert isinstance(env.outcome(), OutcomeRecord)
    finally:
        env.close()


@pytest.mark.parametrize(("split", "options", "message"), [
    ("huge", {}, "test: no split 'huge'; splits: default, demo"),
    ("demo", {"max_stepz": 1}, "unknown option 'max_stepz' for test; options: "),
    ("demo", {"max_steps": 0}, "option max_steps=0: must be >= 1"),
])
def test_a_bad_split_or_option_is_one_config_error_line(split: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SuiteSetup.load("example", split, 0, options, where="test")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_verifier_metric_scores_the_typed_outcome() -> None:
    from buildbench.harness import Action
    from buildbench.suites.example.agents import tower_design

    setup = SuiteSetup.load("example", "demo", 0, {}, where="test")
    task = setup.tasks[0]
    env = setup.make_env(task)
    try:
        env.reset(task, seed=0)
        env.step(Action(data={"blocks": tower_design(task)}))
        assert verifier_metric(setup.suite.verify, "passed")(task, env, [1.0]) == 1.0
    finally:
        env.close()
