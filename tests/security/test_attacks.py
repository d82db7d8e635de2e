"""Every attack kind, through each suite's real agent path: contained, and the harness still works.

Each test runs hostile code as agent code (see ``conftest.py`` for the three paths), asserts
what the sandbox must prevent, then that the same env still runs ordinary code afterwards.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from pathlib import Path

import pytest

from buildbench.sandbox._disk import folder_bytes

from .conftest import BWRAP, DISK_MB, WALL_S, Target, needs_bwrap, needs_sandbox_uid

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-buildbench-canary-7d1f0c"
# Set before any target starts: the sandboxes must not get it however they are started.
os.environ["BUILDBENCH_CANARY_API_KEY"] = SECRET

REPORT = "import json as _j\ndef report(x):\n    print('@@' + _j.dumps(x), flush=True)\n"


def _processes_of(uid: int, live_only: bool = False) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (FileNotFoundError, ProcessLookupError):
            continue
        if not (live_only and zombie):
            found.append(int(pid))
    return found


def test_infinite_loop_times_out(target: Target) -> None:
    assert target.healthy()  # the worker runs: its start (roomy, see roomy_starts) is not timed here
    t0 = time.monotonic()
    out = target.run("while True:\n    pass\n")
    assert out.status == "timeout", out
    assert time.monotonic() - t0 < WALL_S + 3
    assert target.healthy()


def test_memory_bomb_is_a_memory_status(roomy_target: Target) -> None:
    # The subject is the memory limit: the wall limit must not end the bomb first on a slow machine
    # (seen in CI: a fresh BIM-Edit worker's start plus 1.5 GiB of page faults passed 4 s).
    out = roomy_target.run("hoard = []\nwhile True:\n    hoard.append(bytearray(16 << 20))\n")
    assert out.status == "memory", out
    assert roomy_target.healthy()


@needs_bwrap
def test_fork_bomb_is_stopped_and_cleaned_up(target: Target) -> None:
    uid = target.run(REPORT + "import os\nreport(os.getuid())").report
    # (The bomb that swallows the error and runs into the wall limit is in test_sandbox_isolation.py.)
    out = target.run("import os\nwhile True:\n    os.fork()\n")
    assert out.status == "error" and "BlockingIOError" in out.error, out
    if os.geteuid() == 0:
        # Only the supervisor and the runner live on: every bomb child is gone (zombies until
        # the runner's next request collects them).
        assert len(_processes_of(uid, live_only=True)) <= 2
    assert target.healthy()
    assert target.healthy()  # the zombies no longer hold process slots
    if os.geteuid() == 0:
        assert len(_processes_of(uid)) <= 2


@needs_bwrap
def test_network_is_unreachable(target: Target) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.2)
        port = server.getsockname()[1]
        code = REPORT + (
            "import socket\nseen = {}\n"
            f"for host, port in (('127.0.0.1', {port}), ('1.1.1.1', 53), ('::1', {port})):\n"
            "    try:\n        socket.create_connection((host, port), timeout=1).close()\n"
            "        seen[host] = 'connected'\n"
            "    except OSError as exc:\n        seen[host] = type(exc).__name__\n"
            "report(seen)\n"
        )
        out = target.run(code)
        with pytest.raises(TimeoutError):
            server.accept()
    assert out.status == "ok", out
    assert "connected" not in out.report.values()
    assert target.healthy()


def test_secrets_of_the_environment_are_not_passed_on(target: Target) -> None:
    out = target.run(REPORT + "import os\nreport(dict(os.environ))")
    assert out.status == "ok", out
    assert SECRET not in str(out.report) and "BUILDBENCH_CANARY_API_KEY" not in out.report
    assert target.healthy()


@needs_bwrap
def test_no_process_environment_in_proc_holds_secrets(target: Target) -> None:
    code = REPORT + (
        "import os\nleaks = []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()] + ['self']:\n"
        "    try:\n        data = open(f'/proc/{pid}/environ', 'rb').read()\n"
        "    except OSError:\n        continue\n"
        f"    if {SECRET.encode()!r} in data:\n        leaks.append(pid)\n"
        "report(leaks)\n"
    )
    out = target.run(code)
    assert out.status == "ok" and out.report == [], out
    assert target.healthy()


@needs_bwrap
def test_host_files_cannot_be_read(target: Target, canary: Path) -> None:
    probes = ["/etc/shadow", "/root/.ssh", "/root/.bashrc", os.path.expanduser("~/.ssh"), str(REPO / "pyproject.toml"),
              str(REPO / ".git" / "config"), str(REPO / "tests"), str(REPO.parent / "shared"),
              str(canary / "secret.txt"), "/proc/1/root/etc/shadow"]
    code = REPORT + (
        "import os\nseen = {}\n"
        f"for path in {probes!r}:\n"
        "    try:\n"
        "        if os.path.isdir(path):\n            os.listdir(path)\n"
        "        else:\n            open(path, 'rb').read(16)\n"
        "        seen[path] = 'readable'\n"
        "    except OSError as exc:\n        seen[path] = type(exc).__name__\n"
        "report(seen)\n"
    )
    out = target.run(code)
    assert out.status == "ok", out
    assert not [p for p, v in out.report.items() if v == "readable"], out.report
    assert target.healthy()


@needs_bwrap
def test_writes_outside_the_work_folder_fail(target: Target, canary: Path) -> None:
    tag = f"escape-{os.getpid()}-{time.monotonic_ns()}"
    targets = [str(canary / "secret.txt"), str(canary / tag), f"/etc/{tag}", f"/usr/{tag}", str(REPO / tag),
               f"/tmp/{tag}", f"/dev/shm/{tag}"]
    code = REPORT + (
        "seen = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n        open(path, 'w').write('x')\n        seen[path] = 'written'\n"
        "    except OSError as exc:\n        seen[path] = type(exc).__name__\n"
        "report(seen)\n"
    )
    out = target.run(code)
    assert out.status == "ok", out
    written = [p for p, v in out.report.items() if v == "written"]
    assert set(written) <= {f"/tmp/{tag}", f"/dev/shm/{tag}"}  # the sandbox's own, in memory
    for path in targets[1:]:
        assert not os.path.exists(path), path
    assert target.healthy()


def test_huge_output_is_capped(target: Target) -> None:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = target.run("import os, sys\nblock = b'y' * (1 << 20)\nfor _ in range(100):\n    os.write(1, block)\n")
    assert out.status == "ok", out
    assert len(out.stdout) <= 200_000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < rss + 100_000  # KiB
    assert target.healthy()


def test_segfault_is_a_crash(target: Target) -> None:
    out = target.run("import ctypes\nctypes.string_at(0)\n")
    assert out.status == "crash", out
    assert target.healthy()


@needs_bwrap
@pytest.mark.parametrize("victim", ["os.getppid()", "1", "-1"])
def test_killing_the_parent_only_ends_the_sandbox(target: Target, victim: str) -> None:
    out = target.run(f"import os, signal\nos.kill({victim}, signal.SIGKILL)\nimport time\ntime.sleep(1)\n")
    assert out.status in ("killed", "crash", "error"), out
    assert target.healthy()


@needs_bwrap
def test_ptrace_of_the_supervisor_is_refused(target: Target) -> None:
    code = REPORT + (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n"
        "seen = {}\n"
        "for pid in (os.getppid(), 1):\n"
        "    seen[f'attach {pid}'] = (libc.ptrace(16, pid, None, None), os.strerror(ctypes.get_errno()))\n"
        "    for what in ('mem', 'fd', 'environ'):\n"
        "        try:\n            p = f'/proc/{pid}/{what}'\n"
        "            os.listdir(p) if what == 'fd' else open(p, 'rb').read(1)\n"
        "            seen[f'{what} {pid}'] = 'open'\n"
        "        except OSError as exc:\n            seen[f'{what} {pid}'] = type(exc).__name__\n"
        "report(seen)\n"
    )
    out = target.run(code)
    assert out.status == "ok", out
    attaches = [v for k, v in out.report.items() if k.startswith("attach")]
    assert all(result == -1 for result, _ in attaches), out.report
    assert "open" not in [v for k, v in out.report.items() if not k.startswith("attach")], out.report
    assert target.healthy()


@needs_bwrap
def test_daemons_and_threads_do_not_run_between_calls(target: Target) -> None:
    code = (
        "import os, threading, time\n"
        "def beat(name):\n    while True:\n"
        "        with open(name, 'a') as f:\n            f.write('x')\n        time.sleep(0.02)\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        beat('fill-daemon')\n    os._exit(0)\n"
        "threading.Thread(target=beat, args=('fill-thread',), daemon=True).start()\n"
        "time.sleep(0.3)\n"
    )
    out = target.run(code)
    assert out.status == "ok", out
    sizes = [(target.workdir / n).stat().st_size for n in ("fill-daemon", "fill-thread")]
    assert min(sizes) > 0  # both ran during the call
    time.sleep(0.5)
    assert [(target.workdir / n).stat().st_size for n in ("fill-daemon", "fill-thread")] == sizes
    assert target.healthy()


def test_links_fifos_and_devices_are_never_followed(target: Target, canary: Path) -> None:
    code = REPORT + (
        "import os, stat\nseen = {}\n"
        f"os.symlink({str(canary)!r}, 'fill-canary')\nos.symlink('/', 'fill-root')\n"
        f"os.symlink({str(canary / 'secret.txt')!r}, 'fill-secret')\nos.mkfifo('fill-fifo')\n"
        "for name, make in (('fill-dev', lambda: os.mknod('fill-dev', stat.S_IFCHR | 0o666, os.makedev(1, 5))),\n"
        "                   ('fill-hard', lambda: os.link('/etc/passwd', 'fill-hard'))):\n"
        "    try:\n        make()\n        seen[name] = 'made'\n"
        "    except OSError as exc:\n        seen[name] = type(exc).__name__\n"
        "report(seen)\n"
    )
    out = target.run(code)
    assert out.status == "ok", out
    if BWRAP:
        assert out.report == {"fill-dev": "PermissionError", "fill-hard": out.report["fill-hard"]}
        assert out.report["fill-hard"] != "made"
    # The harness measures and hands the folder back without following any of them...
    assert folder_bytes(str(target.workdir)) < 1 << 20
    assert target.healthy()
    assert (canary / "secret.txt").read_text() == "canary-secret" and Path("/usr/bin").is_dir()


def test_a_worker_removing_its_folder_never_follows_links(canary: Path) -> None:
    from buildbench.sandbox import Worker

    from .conftest import ISOLATION, LIMITS

    with Worker(limits=LIMITS, isolation=ISOLATION) as worker:
        out = worker.call(f"import os\nos.symlink({str(canary)!r}, 'c')\nos.symlink('/usr', 'u')\nos.mkfifo('f')")
        assert out.status == "ok", out
        folder = worker.workdir
    assert not folder.exists()
    assert (canary / "secret.txt").read_text() == "canary-secret" and Path("/usr/bin").is_dir()


#: Calls an unbounded fill may take to pass the cap. Each runs to the wall limit or the disk
#: limit and keeps what it wrote, so a machine too loaded to make 4096 empty files (16 MiB of
#: entries) within one call's 4 s still gets there: the test asserts the outcome, not the speed.
FILL_CALLS = 12
#: The fill's names: not ``fill*``, which the targets' own clean-up scripts remove, so that no
#: call loses what an earlier one wrote.
HOARD = "hoard"


@pytest.mark.parametrize("kind", ["many files", "one file", "empty files"])
def test_disk_fill_is_a_limit_and_stays_near_the_cap(target: Target, kind: str) -> None:
    # names of a call's own, so a later call adds to what an earlier one left
    code = f"import os\nname = '{HOARD}-' + os.urandom(4).hex()\n" + {
        "many files": "i = 0\nwhile True:\n    open(f'{name}-{i}', 'wb').write(b'x' * (1 << 20))\n    i += 1\n",
        "one file": "with open(name, 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n",
        "empty files": "i = 0\nwhile True:\n    os.close(os.open(f'{name}-{i}', os.O_CREAT | os.O_WRONLY))\n"
                       "    i += 1\n",
    }[kind]
    try:
        for _ in range(FILL_CALLS):
            out = target.run(code)
            if out.status != "timeout":
                break
            # the wall limit came first: only with the folder under the cap, or a breach went unreported
            assert folder_bytes(str(target.workdir)) <= DISK_MB << 20, out
        assert out.status == "limit", out
        assert "disk limit" in out.error
        # The folder holds at most the cap plus what was written in one measuring interval. Empty
        # files count 4 KiB each but cost only an inode, and the walk that measures a folder of
        # 10^5 entries is what falls behind on a loaded machine: bounded, more loosely.
        slack_mb = 1500 if kind == "empty files" else 200
        assert folder_bytes(str(target.workdir)) < (DISK_MB + slack_mb) << 20
    finally:
        # removed from here, not by a script: the target's episode stays as the fill left it; also
        # when an assert failed, so that the module's later tests on this target start clean
        for entry in os.scandir(target.workdir):
            if entry.name.startswith(HOARD):
                os.remove(entry.path)
    assert target.healthy()


def test_a_folder_over_the_cap_when_the_wall_limit_ends_a_call_is_the_disk_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fill no measurement during the call saw (here: none is made) is measured once the
    process is stopped: the disk limit's, not a timeout after which the next call would keep it."""
    from buildbench.sandbox import Limits, Worker, _process

    from .conftest import ISOLATION

    def unwatched(self: object, deadline: float, disk_at_start: int) -> None:
        time.sleep(max(0.0, deadline - time.monotonic()))
        raise _process.FrameTimeout("no reply before the wall-clock limit")

    limits = Limits(wall_s=3.0, cpu_s=3, memory_mb=1024, max_processes=32, disk_mb=1)
    with Worker(limits=limits, isolation=ISOLATION) as worker:
        assert worker.call("result = 1").status == "ok"  # started, unpatched
        monkeypatch.setattr(_process.SandboxProcess, "_await_reply", unwatched)
        # two files of 0.6 MiB (one past the cap would meet RLIMIT_FSIZE), then the wall limit
        out = worker.call("import time\nfor n in 'ab':\n    open(n, 'wb').write(b'x' * (600 << 10))\n"
                          "time.sleep(60)\n")
    assert out.status == "limit", out
    assert "over the disk limit of 1 MiB" in (out.error or "") and "wall-clock limit of 3 s" in (out.error or "")


@needs_sandbox_uid
def test_disk_fill_through_a_deleted_open_file_is_a_limit(target: Target) -> None:
    code = (
        "import os\nfiles = []\n"
        "for i in range(64):\n    f = open(f'fill-{i}', 'wb')\n    os.unlink(f'fill-{i}')\n    files.append(f)\n"
        "    f.write(b'x' * (4 << 20))\n    f.flush()\n"
        "import time\ntime.sleep(3.5)\n"  # under the 4 s wall limit, long enough for a loaded monitor
    )
    out = target.run(code)
    assert out.status == "limit", out
    assert target.healthy()


def test_forged_reply_frames_are_refused(target: Target) -> None:
    code = (
        "import os, json, struct\n"
        "member = {'name': 'FORGED', 'location': [0, 0, 0], 'dimensions': [1, 1, 1],\n"
        "          'bbox_world_corners': [[0, 0, 0]] * 8, 'matrix_world': [[1, 0, 0, 0]] * 4}\n"
        "inner = json.dumps({'status': 'ok', 'members': [member], 'error': None, 'traceback': None, 'cpu_s': 0})\n"
        "def frame(d):\n    b = json.dumps(d).encode()\n    return struct.pack('>I', len(b)) + b\n"
        "for fd in range(3, 256):\n"
        "    for message in ({'status': 'ok', 'result_json': inner}, {'status': 'ok', 'result_json': inner,\n"
        "                    'nonce': 'guess', 'token': 'guess'}):\n"
        "        try:\n            os.write(fd, frame(message))\n"
        "        except OSError:\n            pass\n"
        "result = 'FORGED'\n"
    )
    out = target.run(code)
    assert out.status in ("crash", "error"), out
    assert "FORGED" not in out.stdout
    if target.name == "dreamhouse":
        assert "FORGED" not in [m["name"] for m in target.last.members]
    assert target.healthy()
