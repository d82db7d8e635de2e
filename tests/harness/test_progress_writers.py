"""Progress of long commands other than runs: off a terminal, whole log lines and no carriage returns.

A carriage return in a log file glues every update into one run-on line ("1/2 tasks rendered2/2…");
the commands below report through :class:`Progress` as a run does.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from buildbench.harness.progress import Progress

BIM_FIXTURE = Path(__file__).parents[1] / "bimedit" / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


def _buildbench(*args: str | Path) -> tuple[int, str, bytes]:
    """Runs the real entry point with stdout and stderr on pipes (never a terminal)."""
    res = subprocess.run([sys.executable, "-m", "buildbench", *map(str, args)], capture_output=True, timeout=300,
                         check=False)
    return res.returncode, res.stdout.decode(), res.stderr


def _progress_lines(stderr: bytes, prefix: str) -> list[str]:
    assert b"\r" not in stderr, stderr  # bytes: text mode would turn "\r" into a newline
    return [line for line in stderr.decode().splitlines() if line.startswith(prefix)]


def test_counts_of_any_unit_may_jump_and_say_nothing_of_unscored_episodes() -> None:
    stream = io.StringIO()
    with Progress(True, 9, "gen", stream=stream, interactive=False, interval_s=0.0, unit="tasks") as bar:
        for done in (3, 6, 9):
            bar.update(done, f"group {done}")
    lines = stream.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == ["progress gen: 3/9 tasks", "progress gen: 6/9 tasks",
                                                      "progress gen: 9/9 tasks"]
    assert all("unscored" not in line for line in lines)
    quiet = io.StringIO()
    with Progress(False, 9, "gen", stream=quiet, interactive=False, interval_s=0.0, unit="tasks") as bar:
        bar.update(9)
    assert quiet.getvalue() == "" and bar.done == 0


def test_dreamhouse_pack_logs_lines_off_a_terminal(tmp_path: Path) -> None:
    code, out, err = _buildbench("dreamhouse", "pack", "--split", "demo", "--limit", "2", "--out",
                                 tmp_path / "p.dhpack")
    assert code == 0, err
    lines = _progress_lines(err, "progress dreamhouse pack: ")
    assert lines and lines[-1].startswith("progress dreamhouse pack: 2/2 tasks rendered, "), err
    assert out.strip() == f"wrote 2 tasks to {tmp_path / 'p.dhpack'}"


def test_bimedit_generate_logs_lines_off_a_terminal(tmp_path: Path) -> None:
    code, out, err = _buildbench("bimedit", "generate", "--ifc", BIM_FIXTURE, "--n", "2", "--out", tmp_path / "out")
    assert code == 0, err
    lines = _progress_lines(err, "progress bimedit generate: ")
    assert lines and lines[-1].startswith("progress bimedit generate: 2/2 tasks, "), err
    assert f"wrote 2 tasks to {tmp_path / 'out' / 'tasks.jsonl'}" in out
