"""The ``buildbench`` command as a user meets it: help everywhere, one-line errors, JSON reports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from buildbench.cli import cli, main

BB = [sys.executable, "-m", "buildbench"]


def _run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(BB + list(args), capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args", [[], ["suites"], ["tasks"], ["run"], ["report"], ["export"], ["demo"]])
def test_help_everywhere(args, capsys):
    assert main(args + ["--help"]) == 0
    assert "Usage:" in capsys.readouterr().out


def test_suite_groups_have_help(capsys):
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        assert main([name, "--help"]) == 0, name
    capsys.readouterr()


@pytest.mark.parametrize("args,needle", [
    (["run", "nosuch"], "unknown suite 'nosuch'"),
    (["run", "example", "--agent", "nobody"], "unknown agent 'nobody'"),
    (["run", "example", "--split", "huge"], "has no split 'huge'"),
    (["run", "example", "-o", "novalue"], "is not KEY=VALUE"),
    (["run", "example", "--resume"], "--resume needs --run-dir"),
    (["report", "/nonexistent/run"], "not a buildbench run"),
    (["tasks", "example", "--limit", "0"], "Invalid value"),
])
def test_errors_are_one_clear_line(args, needle):
    proc = _run(*args)
    assert proc.returncode != 0
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) <= 3


def test_run_report_json_and_export(tmp_path):
    run_dir = tmp_path / "r"
    proc = _run("run", "example", "--split", "demo", "--limit", "2", "--run-dir", str(run_dir), "-q")
    assert proc.returncode == 0, proc.stderr
    rep = _run("report", str(run_dir), "--json")
    data = json.loads(rep.stdout)
    assert data["episodes"] == 2 and data["metrics"]["passed"] == 1.0
    assert _run("export", str(run_dir), "--format", "parquet").returncode == 0
    assert (run_dir / "episodes.parquet").exists()


def test_suites_and_tasks_listing():
    listed = json.loads(_run("suites", "--json").stdout)
    assert "example" in {s["name"] for s in listed}
    lines = _run("tasks", "example", "--split", "demo", "--json").stdout.splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["id"].startswith("tower_")
