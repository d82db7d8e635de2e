"""A run whose store write fails mid-way (a full disk) stops at once: the episodes in flight, and
the processes playing them, are killed; the command prints its one error line and exits 2 in
seconds (it used to wait for each in-flight episode's wall limit, hours); the run folder resumes
to the same scores as a fresh run. Each run is a subprocess with a timeout, so that a regression
fails here instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from buildbench.harness import Store

# The store's write fails as SQLite's does on a full disk, inside the store's own transaction.
DRIVER = textwrap.dedent('''
    import os
    import sqlite3
    import sys

    from buildbench.cli.main import main
    from buildbench.harness.store import Store

    def add_episode(self, episode):
        with self._tx():
            raise sqlite3.OperationalError("database or disk is full")

    if __name__ == "__main__":
        if os.environ.get("BB_TEST_DISK_FULL"):
            Store.add_episode = add_episode
        sys.exit(main(sys.argv[1:]))
''')

# The first call is answered; with BB_TEST_HOLD the others wait an hour (episodes in flight).
MODEL = textwrap.dedent('''
    import asyncio
    import os

    calls = [0]

    async def answer(messages, tools=None, **options):
        calls[0] += 1
        if os.environ.get("BB_TEST_HOLD") and calls[0] > 1:
            await asyncio.sleep(3600)
        return '{"blocks": []}'
''')


def _run(tmp_path: Path, run_dir: Path, extra: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    driver, model = tmp_path / "driver.py", tmp_path / "model.py"
    driver.write_text(DRIVER, encoding="utf-8")
    model.write_text(MODEL, encoding="utf-8")
    args = [sys.executable, str(driver), "run", "example", "--split", "demo", "--seed", "3",
            "--run-dir", str(run_dir), "-q", *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, **env})


def _metrics(run_dir: Path) -> dict[tuple[str, int], tuple[str, dict[str, float]]]:
    with Store(run_dir) as store:
        return {(e.task_id, e.sample): (e.status, e.metrics) for e in store.episodes()}


@pytest.mark.parametrize("how", [
    ["--agent", "llm", "--protocol", "one-shot", "--concurrency", "4", "--workers", "0"],  # played apart
    ["--agent", "reference", "--workers", "2"],  # worker pool
], ids=["apart", "pool"])
def test_a_store_that_fails_mid_run_stops_the_run_at_once_and_resumes(tmp_path: Path, how: list[str]) -> None:
    extra = [*how, "--model", f"python:{tmp_path / 'model.py'}:answer"] if "llm" in how else how
    run_dir = tmp_path / "run"
    failed = _run(tmp_path, run_dir, extra, {"BB_TEST_DISK_FULL": "1", "BB_TEST_HOLD": "1"})
    assert failed.returncode == 2, failed.stderr
    lines = failed.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write run store"), failed.stderr
    assert "database or disk is full" in lines[0]
    assert _metrics(run_dir) == {}  # nothing half-written: every episode plays again on resume

    resumed = _run(tmp_path, run_dir, [*extra, "--resume"], {})
    fresh = _run(tmp_path, tmp_path / "fresh", extra, {})
    assert resumed.returncode == fresh.returncode, (resumed.stderr, fresh.stderr)
    assert len(_metrics(run_dir)) == 6
    assert _metrics(run_dir) == _metrics(tmp_path / "fresh")


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the run's processes")
def test_episode_processes_end_when_the_harness_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the harness mid-run: episode processes waiting for model answers end too (their
    parent, the forkserver, outlives the harness, so die_with_parent alone would not end them)."""
    (tmp_path / "driver.py").write_text(DRIVER, encoding="utf-8")
    (tmp_path / "model.py").write_text(MODEL, encoding="utf-8")
    args = [sys.executable, str(tmp_path / "driver.py"), "run", "example", "--split", "demo", "--agent", "llm",
            "--protocol", "one-shot", "--concurrency", "4", "--workers", "0", "--run-dir", str(tmp_path / "run"),
            "-q", "--model", f"python:{tmp_path / 'model.py'}:answer"]
    run = subprocess.Popen(args, cwd=tmp_path, env={**os.environ, "BB_TEST_HOLD": "1"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        seen: set[int] = set()
        while time.monotonic() < deadline and len(seen) < 4:  # forkserver, episode processes, their workers
            time.sleep(0.5)
            seen = _descendants(run.pid)
        assert len(seen) >= 4, f"the run started no episode processes: {seen}"
        time.sleep(2)  # the held episodes are waiting for their model answers
        seen = _descendants(run.pid)
    finally:
        run.kill()
        run.wait(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(map(_running, seen)):
        time.sleep(0.5)
    left = [pid for pid in seen if _running(pid)]
    for pid in left:  # not to leave them behind when this fails
        os.kill(pid, 9)
    assert not left, f"processes of the killed run still running: {left}"
