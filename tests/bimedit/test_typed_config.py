"""BIM-Edit on the typed configuration: one options class (the listing it replaced, unchanged), bad
values refused as one line before a run, the env's controls as typed methods logged as before, and
the outcome typed from the env through the store to the scorer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import (
    Action,
    ConfigError,
    EpisodeContext,
    RunConfig,
    Task,
    execute_episode,
    get_suite,
)
from buildbench.harness.runner import stored_outcome
from buildbench.harness.suite import RunChoice
from buildbench.suites.bimedit.env import BimEditEnv
from buildbench.suites.bimedit.options import BimEditOptions
from buildbench.suites.bimedit.outcome import BimEditOutcome
from buildbench.suites.bimedit.suite import CODE_AGENTS

from .test_env_tool import call, door_task  # noqa: F401 (the fixture)

#: ``buildbench suites --json``'s options and defaults of bimedit before the options class (the
#: OptionSpec tuple it replaced), written out so that a change to any of them is seen.
LISTED_BEFORE = {
    "max_calls": ("int in [1, 10000]: tool calls per episode (20 in the paper) (default 20)", 20),
    "call_timeout_s": ("float in [0.001, 86400]: seconds per tool call (120 in the paper) (default 120)", 120.0),
    "memory_mb": ("int in [64, 65536]: sandbox memory per call, MiB (default 4096)", 4096),
    "disk_mb": ("int in [1, 262144]: work-folder quota of the sandbox, MiB (default 2048)", 2048),
    "max_output_chars": ("int in [0, 10000000]: tool output shown to the agent (default 20000)", 20_000),
    "action_format": ("code | structured: how the agent edits (default code)", "code"),
    "isolation": ("auto | bwrap | process: sandbox backend (default auto)", "auto"),
    "reload_per_call": ("bool: reload the model before every call (default false)", False),
    "strict": ("bool: score in strict mode (collateral damage counts) (default false)", False),
    "retries": ("int in [0, 100]: inference retries after an API error (default 1)", 1),
    "retry_delay_s": ("float in [0, 3600]: seconds between inference retries (default 30)", 30.0),
    "prompts": ("str: folder of prompt files replacing the suite's own (same file names) (default none)", None),
    "degrade": ("float in [0, 1]: fraction of the reference answer the degraded agent corrupts (default 0.5)", 0.5),
}


def test_the_options_class_lists_what_the_suite_declared_before() -> None:
    suite = get_suite("bimedit")
    assert suite.options is BimEditOptions and suite.options_model() is BimEditOptions
    specs = suite.option_specs()
    assert {s.name: (s.describe(), s.default) for s in specs} == LISTED_BEFORE
    assert [s.name for s in specs] == list(LISTED_BEFORE)
    defaults = BimEditOptions()
    assert {name: getattr(defaults, name) for name in LISTED_BEFORE} == {k: v[1] for k, v in LISTED_BEFORE.items()}
    assert type(defaults.call_timeout_s) is float and type(defaults.max_calls) is int


@pytest.mark.parametrize("raw, message", [
    ({"max_calls": "0"}, "option max_calls='0': must be >= 1"),
    ({"action_format": "yaml"}, "option action_format='yaml': expected one of code, structured"),
    ({"isolation": "docker"}, "option isolation='docker': expected one of auto, bwrap, process"),
    ({"retry_delay_s": "-1"}, "option retry_delay_s='-1': must be >= 0"),
    ({"strict": "maybe"}, "option strict='maybe'"),
])
def test_a_bad_value_is_one_config_error_line(raw: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        get_suite("bimedit").parse_options(raw)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_bad_value_through_run_is_one_error_line_and_exit_2(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "bimedit", "--agent", "noop", "--split", "demo", "--limit", "1", "-q",
               "-o", "call_timeout_s=0", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error: option call_timeout_s=") and ">= 0.001" in err[0]
    assert not run_dir.exists()


@pytest.mark.parametrize("agent", sorted(CODE_AGENTS))
def test_a_code_agent_with_the_structured_tools_is_refused_before_the_run(
        agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "bimedit", "--agent", agent, "--split", "demo", "--limit", "1", "-q",
               "-o", "action_format=structured", "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith(f"error: agent {agent!r} edits through execute_ifc_code")
    assert not run_dir.exists()


def test_the_agents_that_need_no_code_tool_pass_the_run_check() -> None:
    suite = get_suite("bimedit")
    structured = suite.parse_options({"action_format": "structured"})
    assert suite.check_run is not None
    for agent in set(suite.agents) - set(CODE_AGENTS):
        suite.check_run(RunChoice(agent, "tool-loop", "demo", structured))
    for agent in suite.agents:
        suite.check_run(RunChoice(agent, "tool-loop", "demo", suite.parse_options({})))


def test_the_env_lists_its_controls_by_name_with_their_docs() -> None:
    controls = BimEditEnv().controls
    assert {name: (c.doc, c.cpu_bound) for name, c in controls.items()} == {
        "keep_model_in": ("keep the committed model in a folder (before reset)", False),
        "record_failure": ("note a failure seen outside the env (API errors)", False),
    }


def test_controls_are_typed_calls_logged_as_protocol_steps(door_task: Task, tmp_path: Path) -> None:  # noqa: F811
    env = BimEditEnv()
    ctx = EpisodeContext(task=door_task, seed=0)

    async def play() -> None:
        await ctx.control(env.keep_model_in, str(tmp_path / "kept"))
        await ctx.reset(env)
        await ctx.control(env.record_failure, "api", "api_error: boom")

    try:
        asyncio.run(play())
        logged = [(s.role, json.loads(s.action_text or "{}"), s.info) for s in ctx.steps]
        assert logged == [
            ("protocol", {"control": "keep_model_in", "args": {"folder": str(tmp_path / "kept")}},
             {"control": "keep_model_in", "result": None}),
            ("protocol", {"control": "record_failure", "args": {"kind": "api", "detail": "api_error: boom"}},
             {"control": "record_failure", "result": None}),
        ]
        outcome = env.outcome()
        assert (outcome.failure, outcome.failure_detail) == ("api", "api_error: boom")
    finally:
        env.close()


def test_the_outcome_is_the_record_end_to_end(door_task: Task, tmp_path: Path) -> None:  # noqa: F811
    suite = get_suite("bimedit")
    env = BimEditEnv(suite.parse_options({"strict": "true"}), output_dir=tmp_path / "kept")
    try:
        env.reset(door_task)
        env.step(call(door_task.target["oracle_code"] + "\ncommit()"))
        env.step(Action(text="done"))
        outcome = env.outcome()
    finally:
        env.close()
    assert isinstance(outcome, BimEditOutcome) and outcome.strict and outcome.committed
    assert outcome.model_path == str((tmp_path / "kept" / "committed.ifc").resolve())
    stored = json.loads(json.dumps(stored_outcome(outcome)))  # what the store keeps
    assert suite.read_outcome(stored) == outcome
    assert suite.score(door_task, suite.read_outcome(stored)) == suite.score(door_task, outcome)
    assert suite.score(door_task, outcome)["solved"] == 1.0


def test_a_run_stores_the_outcome_the_scorer_reads_back(tmp_path: Path) -> None:
    suite = get_suite("bimedit")
    task = suite.load_tasks("demo", 0)[0]
    config = RunConfig(suite="bimedit", agent="oracle", protocol="tool-loop", split="demo", limit=1, workers=0,
                       options={"max_calls": 2})
    episode = asyncio.run(execute_episode(config, task, 0, tmp_path))
    assert episode.status == "ok", episode.error
    typed = suite.read_outcome(episode.outcome)
    assert isinstance(typed, BimEditOutcome) and typed.to_dict() == episode.outcome
    assert typed.model_path is not None and Path(typed.model_path).is_file()
    assert suite.score(task, typed) == pytest.approx(episode.metrics) and episode.metrics["solved"] == 1.0
