"""Run options as one typed object: built once from ``-o``/config/Python values, frozen, with the
declared defaults, bounds and help, a standard JSON Schema, and every bad value refused before a
run folder exists, for every agent."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from buildbench.cli.main import main
from buildbench.harness import ConfigError, get_suite
from buildbench.harness.llm_agent import llm_agent_options
from buildbench.harness.option_model import ModelOptions

SUITES = ("bimedit", "buildarena", "dreamhouse", "example", "legoeval", "scenerevis")


@pytest.mark.parametrize("name", SUITES)
def test_each_suite_has_one_frozen_model_with_its_declared_defaults(name: str) -> None:
    suite = get_suite(name)
    model = suite.options_model()
    assert model is suite.options_model()  # built once per suite
    options = suite.parse_options({})
    assert options.given() == {}
    for spec in model.specs:
        field = model.model_fields[spec.name]
        assert getattr(options, spec.name) == spec.default, spec.name
        assert field.description == (spec.help or None)
    first = suite.option_specs()[0].name
    with pytest.raises(ValidationError):
        setattr(options, first, getattr(options, first))


@pytest.mark.parametrize("name", SUITES)
def test_the_json_schema_of_options_is_standard_and_checks_values(name: str) -> None:
    suite = get_suite(name)
    schema = suite.options_model().json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert not list(validator.iter_errors({}))
    assert list(validator.iter_errors({"no_such_option": 1}))  # additionalProperties: false
    assert list(validator.iter_errors({"max_requests": -1}))  # the declared minimum
    for spec in suite.option_specs():
        if spec.kind == "str" and spec.choices:
            assert list(validator.iter_errors({spec.name: "bogus"})), spec.name
            assert not list(validator.iter_errors({spec.name: spec.choices[0]})), spec.name


def test_common_options_reach_the_agent_and_client_from_one_parse() -> None:
    options = get_suite("example").parse_options(
        {"history": "full", "max_requests": "5", "tools": "yes", "temperature": "0.5", "timeout_s": "30",
         "max_retries": 2})
    assert options.given() == {"temperature": 0.5, "history": None, "max_requests": 5, "tools": True,
                               "timeout_s": 30.0, "max_retries": 2}
    assert options.agent_settings() == {"temperature": 0.5, "history": None, "budget": {"max_requests": 5},
                                        "use_tools": True}
    assert llm_agent_options(options) == options.agent_settings()
    client = options.client_settings()
    assert client["timeout_s"] == 30.0 and client["retry"].max_attempts == 3
    # "history" given as full is still given (DreamHouse keeps its protocol's own history otherwise)
    assert "history" in options.given() and "history" not in get_suite("example").parse_options({}).given()
    assert ModelOptions().agent_settings() == {} and ModelOptions().client_settings() == {}


def test_a_bad_value_names_the_option_and_what_it_accepts() -> None:
    suite = get_suite("legoeval")
    with pytest.raises(ConfigError, match=r"option image_px='9': must be >= 32"):
        suite.parse_options({"image_px": "9"})
    with pytest.raises(ConfigError, match=r"unknown option 'bogus' for suite 'legoeval'; options: .*disable"):
        suite.parse_options({"bogus": 1})
    assert suite.parse_options({"disable": "multimodal, textual,multimodal"}).disable == "multimodal,textual"


def _bad_value(name: str) -> tuple[str, str, str]:
    """An option of suite ``name`` with a value it refuses, and what the refusal must name."""
    for spec in get_suite(name).option_specs():
        if spec.choices:
            return spec.name, "bogus", ", ".join(spec.choices)
    spec = next(s for s in get_suite(name).option_specs() if s.kind == "int" and s.minimum is not None)
    return spec.name, str(int(spec.minimum or 0) - 1), f"must be >= {spec.minimum:g}"


@pytest.mark.parametrize("name, agent, bad", [
    *((name, get_suite(name).default_agent, _bad_value(name)) for name in SUITES),
    # the LLM agent used to find a bad tool group only once episodes ran; the scripted one never did
    ("legoeval", "deterministic", ("disable", "bogus", "textual, environment, multimodal")),
    ("legoeval", "llm", ("disable", "bogus", "textual, environment, multimodal")),
])
def test_a_bad_option_is_refused_before_the_run_for_every_agent(
        name: str, agent: str, bad: tuple[str, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key, value, allowed = bad
    run_dir = tmp_path / "run"
    model = ["--model", "scripted"] if get_suite(name).agent(agent).needs_model else []
    rc = main(["run", name, "--agent", agent, *model, "--split", "demo", "--limit", "1", "-q",
               "-o", f"{key}={value}", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith(f"error: option {key}=") and allowed in err[0], err
    assert not run_dir.exists()


def test_suites_json_carries_each_suites_options_schema(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["suites", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    for name in SUITES:
        schema = rows[name]["schema"]
        assert schema == get_suite(name).options_model().json_schema()
        assert set(schema["properties"]) == {spec.name for spec in get_suite(name).options_model().specs}


def test_a_suite_options_class_is_its_one_declaration():
    from typing import Literal

    from buildbench.harness.option_model import ModelOptions, option

    class DemoOptions(ModelOptions):
        max_steps: int = option("int", "actions allowed", default=40, minimum=1, maximum=500, unit="actions")
        scope: Literal["all", "early"] = option("str", "which tests decide", default="all")
        keep: int | None = option("int-or-full", "turns kept", minimum=0)
        views: str = option("set", "views drawn", default="frame", choices=("frame", "facade"))

    specs = {spec.name: spec for spec in DemoOptions.specs}
    assert list(specs)[-4:] == ["max_steps", "scope", "keep", "views"] and "top_p" in specs  # common first
    assert (specs["max_steps"].minimum, specs["max_steps"].maximum, specs["max_steps"].unit) == (1, 500, "actions")
    assert specs["scope"].choices == ("all", "early") and specs["views"].choices == ("frame", "facade")
    parsed = DemoOptions.parse({"max_steps": "7", "keep": "full", "views": "facade,frame"}, where="demo")
    assert (parsed.max_steps, parsed.scope, parsed.keep, parsed.views) == (7, "all", None, "facade,frame")
    assert parsed.given() == {"max_steps": 7, "keep": None, "views": "facade,frame"}
    with pytest.raises(ConfigError, match=r"option max_steps='0': must be >= 1"):
        DemoOptions.parse({"max_steps": "0"}, where="demo")
    with pytest.raises(ConfigError, match=r"option scope='x': expected one of all, early"):
        DemoOptions.parse({"scope": "x"}, where="demo")
    schema = DemoOptions.json_schema()["properties"]["max_steps"]
    assert (schema["default"], schema["minimum"], schema["maximum"], schema["x-unit"]) == (40, 1, 500, "actions")


def test_top_p_reaches_the_model_request():
    from buildbench.harness.option_model import ModelOptions

    assert ModelOptions.parse({"top_p": "0.9"}, where="x").agent_settings() == {"top_p": 0.9}
    with pytest.raises(ConfigError, match="top_p"):
        ModelOptions.parse({"top_p": "0"}, where="x")


def test_a_rule_among_options_is_one_config_error_line():
    from pydantic import model_validator

    from buildbench.harness.option_model import ModelOptions, option

    class PairOptions(ModelOptions):
        plans: str = option("str", "plans", default="model", choices=("model", "reference"))
        constraints: str = option("str", "constraints", default="given", choices=("given", "identify"))

        @model_validator(mode="after")
        def _reference_plans_need_given_constraints(self) -> PairOptions:
            if self.plans == "reference" and self.constraints != "given":
                raise ValueError("plans=reference needs constraints=given")
            return self

    with pytest.raises(ConfigError, match=r"^options for pair: plans=reference needs constraints=given$"):
        PairOptions.parse({"plans": "reference", "constraints": "identify"}, where="pair")
