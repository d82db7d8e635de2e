"""DreamHouse's two retry counts have a name each: ``step_retries`` is the protocol's Table 6 retries
after a failed attempt, ``max_retries`` the common retries of a failed model request. Each changes only
what it names; a run that gives ``max_retries`` alone (written when it also set the protocol's retries)
is refused with the new name before it starts, from ``-o`` and from a run file alike."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import ConfigError, EpisodeContext, get_suite
from buildbench.suites.dreamhouse import protocols
from buildbench.suites.dreamhouse.env import make_env
from buildbench.suites.dreamhouse.protocols import TABLE6, budget_from_options, make_protocol
from buildbench.suites.dreamhouse.tasks import make_task

SUITE = get_suite("dreamhouse")
OPTS = {"action_format": "json", "images": "off"}
REFUSED = ("option max_retries no longer sets the protocol's retries after a failed attempt: give step_retries=N "
           "for those; max_retries (retries of a failed model request) is taken only beside step_retries")


@pytest.mark.parametrize("name", sorted(TABLE6))
def test_step_retries_sets_only_the_protocols_retries(name: str) -> None:
    options = SUITE.parse_options({"step_retries": "2"})
    assert budget_from_options(name, options) == replace(TABLE6[name], step_retries=2)
    assert options.client_settings() == {}  # the model client keeps its own retries
    assert budget_from_options(name, SUITE.parse_options({})) == TABLE6[name]


@pytest.mark.parametrize("name", sorted(TABLE6))
def test_max_retries_sets_only_the_model_clients_retries(name: str) -> None:
    plain = SUITE.parse_options({"step_retries": "4"})
    with_client = SUITE.parse_options({"step_retries": "4", "max_retries": "7"})
    assert budget_from_options(name, with_client) == budget_from_options(name, plain)
    assert with_client.client_settings()["retry"].max_attempts == 8 and plain.client_settings() == {}


def _retries(task: object, options: dict[str, object]) -> int:
    """The retries a failing agent got under planner-atomic (the protocol's own count)."""
    parsed = SUITE.parse_options(options)
    env = make_env(task, parsed)
    try:
        agent = SUITE.agent("fault-no-roof").factory(task, None, parsed)
        asyncio.run(make_protocol("planner-atomic", parsed).run(env, agent, EpisodeContext(task=task, seed=0,
                                                                                           options=parsed)))
        return int(env.outcome().protocol["retries"])
    finally:
        env.close()


def test_a_failing_agent_gets_step_retries_whatever_max_retries_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocols, "visual_scorer", lambda: None)
    task = make_task("RN_01_0001")
    assert _retries(task, {**OPTS, "step_retries": 1}) == 1
    assert _retries(task, {**OPTS, "step_retries": 1, "max_retries": 9}) == 1
    assert _retries(task, {**OPTS, "step_retries": 3, "max_retries": 0}) == 3


@pytest.mark.parametrize("raw", [{"max_retries": "2"}, {"max_retries": 0, "images": "off"}])
def test_max_retries_alone_is_refused_with_the_new_name(raw: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as refused:
        SUITE.parse_options(raw)
    assert str(refused.value) == f"options for suite 'dreamhouse': {REFUSED}"


def test_other_suites_keep_max_retries_as_the_model_requests_retries() -> None:
    for name in ("example", "scenerevis", "legoeval", "bimedit"):
        options = get_suite(name).parse_options({"max_retries": "2"})
        assert options.client_settings()["retry"].max_attempts == 3, name
        assert "step_retries" not in type(options).model_fields, name


def test_an_old_minus_o_exits_2_with_one_error_line_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "dreamhouse", "--split", "demo", "--limit", "1", "-q", "-o", "images=off",
               "-o", "max_retries=3", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and err == [f"error: options for suite 'dreamhouse': {REFUSED}"]
    assert not run_dir.exists()


def test_an_old_run_file_exits_2_with_the_new_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "old-run.json"
    run_file.write_text(json.dumps({"suite": "dreamhouse", "split": "demo", "limit": 1,
                                    "options": {"images": "off", "max_retries": 2}}), encoding="utf-8")
    run_dir = tmp_path / "run"
    rc = main(["run", "--config", str(run_file), "-q", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: ") and "give step_retries=N" in err[0], err
    assert not run_dir.exists()


def test_the_help_names_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "dreamhouse", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "step_retries" in text and "retries after a failed attempt" in text
    assert "max_retries" in text and "retries of a failed model request" in text
