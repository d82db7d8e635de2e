"""Regressions from a new user's pass over ``buildbench dreamhouse``, run as subprocesses of the
real entry point: bad input gives one ``error:`` line naming what and where, exit status 2,
and no traceback; help texts read as plain text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from buildbench.harness.episode import Episode
from buildbench.harness.store import Store

BUILDBENCH = [sys.executable, "-m", "buildbench", "dreamhouse"]


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BUILDBENCH, *map(str, args)], capture_output=True, text=True, timeout=120)


def _one_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


def _stored_run(run_dir: Path, suite: str) -> Path:
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": suite, "agent": "reference"}})
        store.add_episode(Episode(task_id="t-1", sample=0, suite=suite, agent="reference", protocol="one-shot",
                                  seed=0, metrics={"passed": 1.0}))
    return run_dir


def test_generate_refuses_a_huge_n_at_once_naming_the_flag(tmp_path: Path) -> None:
    line = _one_error(_cli("generate", "--n", "99999999999999999999", "--out", tmp_path / "d"))
    assert "'--n'" in line and "1000000" in line
    assert not (tmp_path / "d").exists()


def test_report_refuses_a_run_of_another_suite(tmp_path: Path) -> None:
    run = _stored_run(tmp_path / "bim", "bimedit")
    line = _one_error(_cli("report", run))
    assert line.startswith(f"error: {run} is a bimedit run, not dreamhouse")


def test_report_refuses_a_folder_that_is_no_run(tmp_path: Path) -> None:
    line = _one_error(_cli("report", tmp_path))
    assert line == f"error: {tmp_path}: not a buildbench run (no run.sqlite)"


def test_report_reads_a_dreamhouse_run(tmp_path: Path) -> None:
    out = _cli("report", _stored_run(tmp_path / "dh", "dreamhouse"), "--json")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""


@pytest.mark.parametrize("command", ["validate", "generate", "render", "pack", "unpack", "report", "serve"])
def test_help_shows_no_rst_markup(command: str) -> None:
    out = _cli(command, "--help")
    assert out.returncode == 0, out.stderr
    assert "``" not in out.stdout


def test_every_option_has_help() -> None:
    from buildbench.suites.dreamhouse.cli import cli

    missing = [f"{name} {param.opts[0]}" for name, command in cli.commands.items() for param in command.params
               if isinstance(param, click.Option) and not param.help]
    assert missing == []
    out = _cli("pack", "--help")
    assert out.returncode == 0, out.stderr
    assert "Blender Cycles" in " ".join(out.stdout[out.stdout.index("--renderer"):].split())
