"""Containment under the bwrap backend: fork bombs, network, filesystem, processes."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import buildbench
from buildbench.sandbox import Envelope, Limits, Worker, _launch, run_code, sandbox_available

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bwrap unusable: {sandbox_available().detail}"
)

TIGHT = Limits(wall_s=5, cpu_s=5, memory_mb=512, max_processes=16)


def _processes_of(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid``."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                pids.append(int(pid))
        except FileNotFoundError:
            continue
    return pids


def _bomb(code: str, limits: Limits) -> tuple[Envelope, int]:
    """Run ``code`` in a fresh bwrap worker; return its envelope and the sandbox uid."""
    with Worker(limits=limits, isolation="bwrap") as worker:
        uid = worker.call("import os\nresult = os.getuid()").result
        envelope = worker.call(code)
    return envelope, uid


def test_fork_bomb_is_contained() -> None:
    envelope, uid = _bomb("import os\nwhile True:\n    os.fork()\n", TIGHT)
    # The pid limit makes fork() fail with EAGAIN inside the user code.
    assert envelope.status == "error"
    assert envelope.error is not None and envelope.error.startswith("BlockingIOError")
    assert envelope.duration_s < 5
    assert uid != 0 and _processes_of(uid) == []  # everything the bomb made is gone


def test_fork_bomb_that_ignores_errors_times_out_and_is_cleaned_up() -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    envelope, uid = _bomb(code, Limits(wall_s=1.5, cpu_s=5, max_processes=16))
    assert envelope.status == "timeout"
    assert uid != 0 and _processes_of(uid) == []


def test_threads_count_against_the_process_limit() -> None:
    code = (
        "import threading, time\nthreads = []\n"
        "for _ in range(100):\n    t = threading.Thread(target=time.sleep, args=(2,), daemon=True)\n"
        "    t.start()\n    threads.append(t)\n"
    )
    envelope = run_code(code, limits=TIGHT, isolation="bwrap")
    assert envelope.status == "error"
    assert "can't start new thread" in (envelope.error or "")


def test_network_is_unreachable_and_server_sees_nothing() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.3)
        port = server.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        envelope = run_code(code, limits=TIGHT, isolation="bwrap")
        assert envelope.status == "error"
        assert (envelope.error or "").split(":")[0] in ("OSError", "ConnectionRefusedError")
        with pytest.raises(TimeoutError):
            server.accept()


@pytest.mark.parametrize(
    "target",
    [
        "/work/main/sandbox-escape-{tag}",
        "/etc/sandbox-escape-{tag}",
        "/root/sandbox-escape-{tag}",
        "/tmp/../usr/sandbox-escape-{tag}",
    ],
)
def test_writing_outside_the_workdir_fails(target: str, tmp_path: Path) -> None:
    path = target.format(tag=uuid.uuid4().hex)
    envelope = run_code(f"open({path!r}, 'w').write('x')", limits=TIGHT, isolation="bwrap", workdir=tmp_path)
    assert envelope.status == "error"
    assert envelope.error is not None and envelope.error.split(":")[0] in (
        "OSError",
        "PermissionError",
        "FileNotFoundError",
    )
    assert not os.path.exists(path)


def test_private_tmp_and_hidden_home(tmp_path: Path) -> None:
    scratch = f"/tmp/sandbox-scratch-{uuid.uuid4().hex}"
    marker = tmp_path / "host-secret.txt"
    marker.write_text("secret")
    code = (
        "import os\n"
        f"result = {{'host_tmp_visible': os.path.exists({str(marker)!r}),"
        " 'root_home': sorted(os.listdir('/root')) if os.path.isdir('/root') else None,"
        " 'uid': os.getuid(), 'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),"
        " 'stdlib': os.__file__, 'mine': open(os.path.join(os.getcwd(), 'mine.txt')).read()}\n"
        f"open({scratch!r}, 'w').write('ok')\n"
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    envelope = run_code(code, limits=TIGHT, isolation="bwrap", workdir=workdir, files={"mine.txt": "m"})
    assert envelope.status == "ok", envelope
    seen = envelope.result
    assert seen["mine"] == "m"  # the work folder is reachable by absolute path
    assert seen["stdlib"] == os.__file__  # the same Python installation as the parent
    assert seen["uid"] != 0
    # The workdir (under the host's /tmp) is there, the rest of the host's /tmp is not.
    assert not seen["host_tmp_visible"]
    assert ".ssh" not in (seen["root_home"] or [])
    assert len(seen["pids"]) <= 3  # bwrap's init, the interpreter, maybe its reaper
    assert not os.path.exists(scratch)  # the sandbox's /tmp was its own


REPO = Path(__file__).resolve().parents[1]


def test_only_the_interpreter_and_named_paths_are_visible(tmp_path: Path) -> None:
    """No checkout, run folder, home or mounted data: only what the code needs."""
    readable = tmp_path / "inputs"
    readable.mkdir()
    (readable / "task.json").write_text("{}")
    (tmp_path / "run-folder").mkdir()
    probes = {
        "tests": str(REPO / "tests"), "makefile": str(REPO / "Makefile"), "git": str(REPO / ".git"),
        "shared": str(REPO.parent / "shared"), "run_folder": str(tmp_path / "run-folder"),
        "home_root": "/root/.bashrc", "srv": "/srv", "mnt": "/mnt", "opt": "/opt", "var": "/var",
    }
    code = (
        "import os, json\n"
        f"probes = {probes!r}\n"
        "result = {k: os.path.exists(v) for k, v in probes.items()}\n"
        f"result['input'] = open({str(readable / 'task.json')!r}).read()\n"
        "import numpy, buildbench\n"
        "result['imports'] = True\n"
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    envelope = run_code(code, limits=TIGHT, isolation="bwrap", workdir=workdir, readable=(readable,))
    assert envelope.status == "ok", envelope
    seen = envelope.result
    assert seen.pop("input") == "{}" and seen.pop("imports") is True
    assert not any(seen.values()), {k: v for k, v in seen.items() if v}


def test_worker_memory_limit_restarts_and_machine_stays_healthy() -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with Worker(limits=Limits(wall_s=5, memory_mb=256), isolation="bwrap") as worker:
        worker.call("x = 1")
        bomb = worker.call("b = bytearray(1 << 30)")
        assert bomb.status == "memory"
        after = worker.call("result = 'x' in globals()")
        assert after.worker_restarted and after.result is False
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < rss_before + 50_000  # KiB


def test_100mb_of_stdout_keeps_parent_memory_bounded() -> None:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = "import os\nblock = b'y' * (1 << 20)\nfor _ in range(100):\n    os.write(1, block)\n"
    envelope = run_code(code, limits=Limits(wall_s=20, output_bytes=1_000_000), isolation="bwrap")
    assert envelope.status == "ok"
    assert envelope.stdout_truncated and len(envelope.stdout) == 1_000_000
    assert envelope.duration_s < 15
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < rss_before + 50_000  # KiB


def test_worker_outlives_the_thread_that_started_it() -> None:
    # bwrap's --die-with-parent follows the forking *thread*; a worker first used from
    # a short-lived thread must not die when that thread ends.
    with Worker(limits=TIGHT, isolation="bwrap") as worker:
        thread = threading.Thread(target=worker.call, args=("x = 41",))
        thread.start()
        thread.join()
        later = worker.call("result = x + 1")
    assert later.status == "ok" and later.result == 42 and not later.worker_restarted


def test_sandbox_dies_with_the_parent(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, threading\n"
        "from buildbench.sandbox import Limits, Worker\n"
        f"worker = Worker(limits=Limits(wall_s=60), workdir={str(tmp_path)!r})\n"
        "print(worker.call('import os\\nresult = os.getuid()').result, flush=True)\n"
        "threading.Thread(target=worker.call, args=('import time\\ntime.sleep(60)',)).start()\n"
        "sys.stdin.readline()\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert parent.stdout is not None
    uid = int(parent.stdout.readline())
    assert _processes_of(uid)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    while _processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_of(uid) == []


def test_runs_on_a_bwrap_without_tmpfs_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_launch, "_bwrap_has_size_option", lambda: False)
    assert "--size" not in _launch.plan_launch("bwrap", "/tmp/job", TIGHT, 3, 4).argv
    envelope = run_code("open('/tmp/scratch', 'w').write('x')\nresult = 1", limits=TIGHT, isolation="bwrap")
    assert envelope.status == "ok" and envelope.result == 1


@pytest.mark.skipif(not sandbox_available(), reason="bwrap unusable")
def test_a_virtualenv_reached_through_a_linked_folder_runs_sandboxed(tmp_path: Path) -> None:
    # The sandbox mounts resolved paths; an interpreter named through a link to the virtualenv
    # (a worktree's `.venv -> ../main/.venv`) must still be found inside.
    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    code = ("from buildbench.sandbox import run_code\n"
            "env = run_code('result = 6 * 7', isolation='bwrap')\n"
            "print(env.status, env.result)")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(Path(buildbench.__file__).resolve().parents[1])})
    assert out.stdout.split() == ["ok", "42"], out.stderr[-2000:]
