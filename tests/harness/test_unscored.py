"""Errors are never scores: episodes without a result stay out of the means, the run says so,
and options are checked before the first episode."""

from __future__ import annotations

import json
import socket

import pytest

from buildbench.cli import main
from buildbench.harness import ConfigError, RunConfig, Runner, run_report
from buildbench.harness.options import COMMON_OPTIONS, OptionSpec, check_options


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def _dead_endpoint_config(**kw) -> RunConfig:
    base = dict(suite="example", agent="llm", protocol="one-shot", split="demo", limit=2,
                model=f"vllm:scripted@http://127.0.0.1:{_dead_port()}/v1",
                options={"max_retries": 0, "timeout_s": 2})
    base.update(kw)
    return RunConfig(**base)


def test_api_errors_are_not_scored_nor_averaged(tmp_path):
    result = Runner(_dead_endpoint_config(), tmp_path / "run").run()
    assert result.summary["status"] == {"api_error": 2}
    assert result.summary["unscored"] == 2
    assert result.summary["metrics"] == {}  # not a pass rate of 0
    rep = run_report(tmp_path / "run")
    assert rep["unscored"] == 2 and rep["metrics"] == {}


def test_errors_as_failures_counts_them_as_zero(tmp_path):
    Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=2,
                     workers=0), tmp_path / "ok").run()
    rep = run_report(tmp_path / "ok", errors_as_failures=True)
    assert rep["metrics"]["passed"] == 1.0 and rep["unscored"] == 0
    Runner(_dead_endpoint_config(), tmp_path / "dead").run()
    rep = run_report(tmp_path / "dead", errors_as_failures=True)
    assert rep["unscored"] == 2 and rep["status"] == {"api_error (counted as failed)": 2}  # said so
    assert rep["metrics"]["passed"] == 0.0 and rep["metrics"]["height_ratio"] == 0.0


def test_errors_as_failures_never_fill_a_lower_is_better_metric() -> None:
    from buildbench.harness.episode import Episode
    from buildbench.harness.suite import counted_as_failures

    crashed = Episode(task_id="bedroom_000", sample=0, suite="scenerevis", agent="a", protocol="p", seed=0,
                      status="error")
    (ep,) = counted_as_failures("scenerevis", [crashed])
    # The suite's failing values only: no valid placement; a collision rate of 0 would make a
    # crashed episode look flawless, so it stays n/a.
    assert ep.metrics["valid_placement"] == 0.0 and ep.metrics["collision_free"] == 0.0
    assert "collision_rate" not in ep.metrics and ep.metadata["counted_as_failure"] == "error"


def test_run_exits_nonzero_when_no_episode_has_a_result(tmp_path, capsys):
    port = _dead_port()
    rc = main(["run", "example", "--agent", "llm", "--protocol", "one-shot", "--split", "demo", "--limit", "1",
               "--model", f"vllm:scripted@http://127.0.0.1:{port}/v1", "-o", "max_retries=0",
               "--run-dir", str(tmp_path / "run"), "-q"])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.startswith("error: no episode produced a result (1 api_error)")


@pytest.mark.parametrize("option,needle", [
    ("bogus=1", "unknown option 'bogus' for suite 'example'; options: "),
    ("history=banana", "option history='banana': expected an integer or 'full'"),
    ("max_steps=abc", "option max_steps='abc': expected an integer"),
    ("max_steps=0", "option max_steps='0': must be >= 1"),
    ("temperature=nan", "option temperature='nan': expected a finite number"),
    ("tools=maybe", "option tools='maybe': expected true or false"),
])
def test_bad_options_are_refused_by_name(tmp_path, capsys, option, needle):
    rc = main(["run", "example", "--run-dir", str(tmp_path / "run"), "-q", "-o", option])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_option_values_are_parsed_once():
    out = check_options({"history": "full", "tools": "yes", "max_steps": "3", "delay_s": 1},
                        [OptionSpec("max_steps", "int", minimum=1), OptionSpec("delay_s", "float")],
                        where="suite 'x'")
    assert out == {"history": None, "tools": True, "max_steps": 3, "delay_s": 1.0}
    assert {o.name for o in COMMON_OPTIONS} >= {"max_tokens", "temperature", "timeout_s"}
    with pytest.raises(ConfigError, match="option max_shift=-1: must be >= 0"):
        check_options({"max_shift": -1}, [OptionSpec("max_shift", "float-or-none", minimum=0.0)], where="x")
    assert check_options({"max_shift": "none"}, [OptionSpec("max_shift", "float-or-none")], where="x") == {
        "max_shift": None}


def test_every_builtin_suite_declares_its_options():
    listed = {row["name"]: row for row in json.loads(_suites_json())}
    assert "sim_duration_s" in listed["buildarena"]["options"]
    assert "executor" in listed["dreamhouse"]["options"]
    assert "max_calls" in listed["bimedit"]["options"]


def _suites_json() -> str:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "buildbench", "suites", "--json"], capture_output=True,
                          text=True, timeout=120, check=True).stdout
