"""``buildbench buildarena replay | simulate | export-bsg`` as subprocesses, and the report tables."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from buildbench.harness import RunConfig, Runner, print_report, run_report
from buildbench.harness import suite as suite_registry
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.cli import cli
from buildbench.suites.buildarena.export import history_json

CLI = [sys.executable, "-m", "buildbench.suites.buildarena.cli"]


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def engine_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("machines") / "engine.json"
    path.write_text(history_json(designs.build(designs.Design("engine", designs.heated_engine()))))
    return path


def test_replay_prints_one_line_per_call_list(tmp_path):
    lines = [
        [{"op": "start", "params": {}},
         {"op": "attach_block_to", "params": {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"}},
         {"op": "attach_block_to", "params": {"base_block": 1, "face": "E", "new_block": "Torch"}}],
        [{"op": "twist_block", "params": {"block_id": 1, "angle": 90}}],
    ]
    calls = tmp_path / "calls.jsonl"
    calls.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n{broken\n")
    out = _cli("replay", str(calls))
    assert out.returncode == 2, out.stderr  # the broken line is reported, the others still replayed
    assert out.stderr.splitlines() == [f"error: {calls} line 4: invalid JSON at column 2: "
                                       "Expecting property name enclosed in double quotes"]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 3
    first = rows[0]
    assert [r["ok"] for r in first["results"]] == [True, True, False]
    assert "already occupied" in first["results"][2]["text"]
    assert [(b["id"], b["type"]) for b in first["blocks"]] == [("1", "Starting Block"), ("2", "Small Wooden Block")]
    assert first["blocks"][1]["position"] == [0.0, 1.0, 0.0] and len(first["blocks"][1]["rotation"]) == 4
    assert rows[1]["results"][0]["text"] == "Specified block 1 not found, please try again."
    assert "invalid JSON" in rows[2]["error"]
    piped = _cli("replay", "-", stdin=json.dumps(lines[0]))
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == first


def test_simulate_reports_pass_indicator_and_trajectory(engine_file):
    out = _cli("simulate", str(engine_file), "--task", "lift-1", "--duration", "0.2", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["passed"] is True and report["indicator"] == pytest.approx(13.76 / 2.75)
    assert report["trajectory"]["samples"] == 6 and "1" in report["trajectory"]["end"]
    text = _cli("simulate", str(engine_file), "--task", "lift-1", "--duration", "0.2")
    assert text.stdout.startswith("task lift-1: PASS") and "indicator: 5.0036" in text.stdout


@pytest.mark.parametrize("args,message", [
    (["--task", "fly-9"], "unknown task 'fly-9'"),
    (["--task", "lift-1", "--duration", "0"], "Invalid value for '--duration'"),
])
def test_simulate_rejects_bad_options(engine_file, args, message):
    out = CliRunner().invoke(cli, ["simulate", str(engine_file), *args])
    assert out.exit_code == 2 and message in out.output
    assert isinstance(out.exception, SystemExit)  # a usage error, not a crash


@pytest.mark.parametrize("content,message", [
    ("{not json", "is not valid JSON (line 1"),
    ('{"blocks": []}', "expected a history list"),
    ('[{"params": {}}]', "history must be a JSON list"),
    ('{"format": "something/9"}', "not a buildarena machine document"),
])
def test_bad_machine_files_get_one_line_errors(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_text(content)
    out = CliRunner().invoke(cli, ["export-bsg", str(path)])
    assert out.exit_code == 1 and message in out.output and isinstance(out.exception, SystemExit)


def test_missing_files_are_reported(tmp_path):
    for args in (["replay", str(tmp_path / "none.jsonl")], ["export-bsg", str(tmp_path / "none.json")]):
        out = CliRunner().invoke(cli, args)
        assert out.exit_code != 0 and "none.json" in out.output and isinstance(out.exception, SystemExit)


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_replay_of_an_empty_file_is_an_input_error(tmp_path, content):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(content)
    out = CliRunner().invoke(cli, ["replay", str(calls)])
    assert out.exit_code == 2
    assert out.output == f"error: {calls}: no call lists (the file is empty)\n"


def test_export_bsg_writes_besiege_xml(engine_file, tmp_path):
    out = _cli("export-bsg", str(engine_file))
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("<Block id=") == 3 and 'name="engine"' in out.stdout
    target = tmp_path / "engine.bsg"
    written = _cli("export-bsg", str(engine_file), "--out", str(target), "--name", "rocket")
    assert written.returncode == 0 and '<Machine version="1" bsgVersion="1.4" name="rocket">' in target.read_text()


def test_report_prints_paper_tables(tmp_path, monkeypatch, capsys):
    assert "buildarena" in suite_registry.suite_names()  # registered through the package's entry points
    config = RunConfig(suite="buildarena", agent="reference", protocol="workflow", split="lift-1", samples=2,
                       workers=0, options={"sim_duration_s": 0.2})
    Runner(config, tmp_path).run()
    report = run_report(tmp_path)
    titles = list(report["tables"])
    assert titles[0].startswith("Table 2") and titles[1].startswith("Table 3")
    lift = [r for r in report["tables"][titles[0]] if r["task"] == "Lift"]
    assert lift[0]["source"] == "ours (MuJoCo)" and lift[0]["SR % L1/L2/L3"] == "100.0 / — / —"
    assert lift[0]["parts L1/L2/L3"] == "3.0 / — / —"
    assert lift[1]["source"] == "ours: 95 % interval" and lift[1]["SR % L1/L2/L3"] == "[100.0, 100.0] / — / —"
    assert {r["model"] for r in lift[2:]} >= {"Grok-4", "GPT-4o"} and len(lift) == 10
    grok = next(r for r in lift if r["model"] == "Grok-4")
    assert (grok["parts L1/L2/L3"], grok["indicator L1/L2/L3"]) == ("4.8 / 6.8 / 1.1", "1.8 / 890.6 / 86.5")
    cost = next(r for r in report["tables"][titles[1]] if r["model"] == "Seed-1.6" and r["task"] == "Lift")
    assert cost["requests L1/L2/L3"] == "35.0 / 35.8 / 50.3"
    print_report(report)
    printed = capsys.readouterr().out
    assert "Besiege)" in printed and "Table 3" in printed and "Grok-4" in printed


def test_main_cli_mounts_the_suite_group_and_runs_it(tmp_path, monkeypatch):
    from buildbench.cli.main import cli as main_cli

    assert "buildarena" in suite_registry.suite_names()  # registered through the package's entry points
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps([{"op": "start", "params": {}}]) + "\n")
    out = CliRunner().invoke(main_cli, ["buildarena", "replay", str(calls)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["blocks"][0]["type"] == "Starting Block"
    run = CliRunner().invoke(main_cli, ["run", "buildarena", "--split", "lift-1", "--workers", "0", "--quiet",
                                        "--run-dir", str(tmp_path / "run"), "-o", "sim_duration_s=0.2"])
    assert run.exit_code == 0, run.output
    assert json.loads(CliRunner().invoke(main_cli, ["report", str(tmp_path / "run"), "--json"]).output)[
        "metrics"]["passed"] == 1.0


def test_machine_documents_and_episode_outcomes_are_accepted(tmp_path):
    from buildbench.harness import Action, Task
    from buildbench.suites.buildarena.env import BuildArenaEnv

    machine = designs.build(designs.Design("engine", designs.heated_engine()))
    document = tmp_path / "machine.json"
    document.write_text(json.dumps(machine.to_json()))
    task = Task("lift-1", "buildarena")
    env = BuildArenaEnv(task)
    env.reset(task)
    for call in designs.heated_engine():
        env.step(Action(data=call))
    env.approve("1")
    env.set_final("1")
    outcome = tmp_path / "outcome.json"
    outcome.write_text(json.dumps(env.outcome().to_dict()))
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({**env.outcome().to_dict(), "machine": []}))
    runner = CliRunner()
    for path in (document, outcome):
        out = runner.invoke(cli, ["export-bsg", str(path)])
        assert out.exit_code == 0 and out.output.count("<Block id=") == 3, out.output
    out = runner.invoke(cli, ["export-bsg", str(empty)])
    assert out.exit_code == 1 and "the episode produced no machine" in out.output
