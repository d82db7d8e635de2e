"""Nothing outlives a run: a ``kill -9`` of ``buildbench run`` takes every process it started
with it, sandboxes die with their parent, and the next run removes the work folders left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from buildbench.harness import RunConfig, Runner
from buildbench.sandbox import Worker, _worker
from buildbench.sandbox.lifetime import clean_stale_workdirs

REPO = Path(__file__).resolve().parents[2]


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(pid))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        kids = tree.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            continue
    return alive


def _wait_gone(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _alive(pids)


@pytest.mark.slow
def test_kill_9_of_a_run_leaves_no_process(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [sys.executable, "-m", "buildbench", "run", "example", "--agent", "reference", "--workers", "2",
         "-o", "delay_s=60", "--run-dir", str(tmp_path / "run"), "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 60
        started: list[int] = []
        while time.monotonic() < deadline:
            started = _descendants(run.pid)
            if len(started) >= 4:  # resource tracker, forkserver and two workers
                break
            time.sleep(0.1)
        assert len(started) >= 4, f"the run did not start its pool: {started}"
        time.sleep(0.5)
        started = _descendants(run.pid)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    left = _wait_gone(started)
    for pid in left:  # do not leave them to the next test either
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_a_plain_process_sandbox_dies_with_its_parent(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        from buildbench.sandbox import Limits, Worker
        worker = Worker(limits=Limits(wall_s=60), isolation="process", workdir={str(tmp_path)!r})
        envelope = worker.call("import os\\nresult = [os.getpid(), os.getppid()]")
        print(*envelope.result, flush=True)
        sys.stdin.readline()
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    assert parent.stdout is not None
    runner, supervisor = map(int, parent.stdout.readline().split())
    assert _alive([runner, supervisor]) == [runner, supervisor]
    parent.kill()
    parent.wait()
    assert _wait_gone([runner, supervisor]) == []


def _old_folder(root: Path, name: str, age_s: float = 3600) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "data.bin").write_bytes(b"x" * 100)
    past = time.time() - age_s
    os.utime(folder, (past, past))
    return folder


def test_leftover_work_folders_are_removed_by_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("keep")
    temp = tmp_path / "tmp"
    temp.mkdir()
    stale = _old_folder(temp, "buildbench-sandbox-stale")
    os.symlink(canary, stale / "link")
    locked_in = stale / "locked"
    locked_in.mkdir()
    (locked_in / "f").write_text("x")
    locked_in.chmod(0)
    os.utime(stale, (time.time() - 3600,) * 2)
    bim = _old_folder(temp, "bimedit-stale")
    fresh = temp / "buildbench-sandbox-fresh"
    fresh.mkdir()
    other = _old_folder(temp, "something-else")
    scratch = _old_folder(temp, "bimedit-score-abc")  # a scorer's scratch: no worker locks it
    in_use = _old_folder(temp, "buildbench-sandbox-in-use")
    with Worker(workdir=in_use, isolation="process"):
        os.utime(in_use, (time.time() - 3600,) * 2)
        monkeypatch.setattr("tempfile.tempdir", str(temp))
        Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=1, workers=0),
               tmp_path / "run").run()
        assert not stale.exists() and not bim.exists()
        assert fresh.exists() and other.exists() and in_use.exists() and scratch.exists()
    assert (canary / "keep.txt").read_text() == "keep"
    assert clean_stale_workdirs(temp) == [in_use]  # released with its worker


def test_agent_code_is_refused_without_bwrap_unless_opted_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from buildbench.harness import Action
    from buildbench.sandbox import SandboxUnavailable
    from buildbench.suites.dreamhouse.env import make_env
    from buildbench.suites.dreamhouse.options import DreamHouseOptions
    from buildbench.suites.dreamhouse.tasks import make_task

    monkeypatch.setattr(_worker, "_bwrap_problem", lambda: "bubblewrap (bwrap) is not installed")
    monkeypatch.delenv("BUILDBENCH_ALLOW_UNSANDBOXED", raising=False)
    task = make_task("RN_01_0001")
    env = make_env(task, DreamHouseOptions(images="off"))
    env.reset(task)
    try:
        with pytest.raises(SandboxUnavailable) as refused:
            env.step(Action(data={"code": "import bpy"}))
    finally:
        env.close()
    message = str(refused.value)
    assert "\n" not in message and "apt-get install bubblewrap" in message and "BUILDBENCH_ALLOW_UNSANDBOXED=1" in message
