"""A full disk (``RLIMIT_FSIZE``: a write past it fails with EFBIG, as on a full disk), a store
that cannot be written, and files that hold nothing usable: one ``error:`` line naming the file,
exit status 2, and the run folder as it was (a new run leaves nothing that blocks the next
try; an existing run resumes after it and scores the same).

The CLI runs in a child process under the limit and a timeout, so a hang fails the test.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from buildbench.cli.main import main


def _run(limit: int = 2) -> list[str]:
    return ["run", "example", "--limit", str(limit), "--workers", "0", "-q"]


def _cli(args: list[str], cwd: Path, file_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))

    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True, timeout=180,
                          cwd=cwd, preexec_fn=limit)


def _one_error(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.mark.timeout(400)
@pytest.mark.parametrize("kib", [8, 32, 40])
def test_a_full_disk_at_the_start_of_a_run_leaves_nothing_that_blocks_the_next(kib: int, tmp_path: Path) -> None:
    # 8 and 32 KiB: SQLite cannot open the store; 40: it can, but not write the run's manifest.
    _one_error(_cli([*_run(), "--run-dir", "run"], tmp_path, kib * 1024), "cannot ", f"run{'/'}run.sqlite")
    assert not (tmp_path / "run").exists()
    done = _cli([*_run(), "--run-dir", "run"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.timeout(400)
def test_a_full_disk_while_resuming_keeps_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli([*_run(1), "--run-dir", "run"], tmp_path).returncode == 0
    before = (tmp_path / "run" / "run.sqlite").stat().st_size
    _one_error(_cli([*_run(), "--run-dir", "run", "--resume"], tmp_path, before), "run store run/run.sqlite")
    done = _cli([*_run(), "--run-dir", "run", "--resume"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = _cli([*_run(), "--run-dir", "fresh"], tmp_path)
    assert fresh.returncode == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "run"), "--json"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert main(["report", str(tmp_path / "fresh"), "--json"]) == 0
    assert resumed["metrics"] == json.loads(capsys.readouterr().out)["metrics"] and resumed["episodes"] == 2


def test_an_immutable_store_is_named_and_kept(tmp_path: Path) -> None:
    assert _cli([*_run(1), "--run-dir", "run"], tmp_path).returncode == 0
    store = tmp_path / "run" / "run.sqlite"
    before = store.read_bytes()
    # chattr +i: what stops root (a file mode does not); not every file system has it.
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(store)]).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        _one_error(_cli([*_run(), "--run-dir", "run", "--resume"], tmp_path), "run store run/run.sqlite")
    finally:
        subprocess.run(["chattr", "-i", str(store)], check=True)
    assert store.read_bytes() == before


def test_a_replay_file_with_no_recorded_call_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "calls.jsonl").write_bytes(b'{"key": "ab')  # a record cut short: its only line
    done = _cli([*_run(), "--model", "openai:gpt-4o", "--replay", "calls.jsonl", "--run-dir", "run"], tmp_path)
    assert done.stderr.splitlines()[-1] == f"error: --replay {tmp_path / 'calls.jsonl'}: holds no recorded call " \
                                           "(empty, or its one line was cut short)"
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    # The warning about the cut line is one line too, not Python's two (our source line shown).
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["warning", "error"], done.stderr


def test_an_empty_chains_file_exports_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chains.jsonl").write_text("")
    assert main(["scenerevis", "export", str(tmp_path / "chains.jsonl"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'chains.jsonl'}: no chains (the file holds no record)\n"
    assert not (tmp_path / "out").exists()
