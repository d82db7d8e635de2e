"""A run driven by a hostile model through the public CLI: it finishes, leaks nothing, kills
nothing of the harness, leaves no process or work folder behind and each of its processes stays
small.

The model is an OpenAI-compatible endpoint on 127.0.0.1 whose every answer is a BIM-Edit
``execute_ifc_code`` call with one attack, then a final text.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from buildbench.harness import Store
from buildbench.llm import ScriptedServer, ServerReply, ServerRequest, ServerToolCall

from .conftest import needs_bwrap

pytest.importorskip("ifcopenshell", reason="BIM-Edit needs ifcopenshell")

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-hostile-run-canary-51c3"
#: The run's limit per tool call. A call after an attack that killed the worker first starts a new
#: one (IfcOpenShell's import and the model's open, a request of its own under this limit): at
#: load ~12 on 2 cores such a restart took 1.6-2.1 s (0.7 s quiet), close to the 3 s this was,
#: and a restart past it turns the next attack's expected status into a timeout.
CALL_TIMEOUT_S = 8.0
#: (attack, the call statuses that mean it was contained). The model swap comes last: a worker
#: restarted after it finds no model to load.
ATTACKS = [
    ("import os\nprint(dict(os.environ))\nprint([open(f'/proc/{p}/environ','rb').read() for p in os.listdir('/proc')"
     " if p.isdigit()])", {"error"}),
    ("print(open('/etc/shadow').read())", {"error"}),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", {"timeout", "error"}),
    # On a loaded machine (load 13 on 2 cores) filling 1.5 GB takes past call_timeout_s: either ends it.
    ("hoard = []\nwhile True:\n    hoard.append(bytearray(64 << 20))", {"memory", "timeout"}),
    ("i = 0\nwhile True:\n    open(f'fill-{i}', 'wb').write(b'x' * (1 << 20))\n    i += 1", {"limit"}),
    ("import os\nfor n in os.listdir('.'):\n    if n.startswith('fill-'):\n        os.remove(n)", {"ok"}),
    ("import os, signal\nos.kill(-1, signal.SIGKILL)", {"killed", "crash"}),
    ("import os\nif os.fork() == 0:\n    os.setsid()\n    while True:\n        open('beat', 'a').write('x')", {"ok"}),
    ("import os, struct\nfor fd in range(3, 64):\n    try:\n        os.write(fd, struct.pack('>I', 15) + b'{\"status\":\"ok\"}')\n"
     "    except OSError:\n        pass", {"crash"}),
    ("import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=1)", {"error"}),
    ("while True:\n    pass", {"timeout"}),
    ("import os\nos.remove(MODEL_PATH)\nos.symlink('/etc/shadow', MODEL_PATH)", {"ok"}),
]



def hostile(request: ServerRequest) -> ServerReply:
    """One attack per turn (counted by the tool results so far), then a final answer."""
    done = sum(1 for m in request.messages if m.get("role") == "tool")
    if done < len(ATTACKS):
        return ServerReply(tool_calls=(ServerToolCall("execute_ifc_code", {"code": ATTACKS[done][0]}),))
    return ServerReply(text="Done.")


@needs_bwrap
@pytest.mark.slow
def test_a_hostile_model_run_finishes_and_leaks_nothing(tmp_path: Path) -> None:
    # A short private TMPDIR: the forkserver's socket lives there and AF_UNIX paths are
    # limited to 107 bytes, which pytest-xdist's tmp_path can exceed.
    temp = Path(tempfile.mkdtemp(prefix="bbsec-"))
    try:
        _hostile_run(tmp_path, temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _hostile_run(tmp_path: Path, temp: Path) -> None:
    env = {**os.environ, "BUILDBENCH_CACHE": str(tmp_path / "cache"), "TMPDIR": str(temp),
           "HOSTILE_CANARY_API_KEY": SECRET}
    env.pop("BUILDBENCH_ALLOW_UNSANDBOXED", None)  # the real default: sandbox or refuse
    with ScriptedServer(hostile) as server:
        run, peaks = _run_measured(
            [sys.executable, "-m", "buildbench", "run", "bimedit", "--agent", "llm", "--split", "demo",
             "--limit", "1", "--model", f"vllm:hostile@{server.base_url}", "--run-dir", str(tmp_path / "run"),
             "-q", "-o", f"call_timeout_s={CALL_TIMEOUT_S:g}", "-o", "memory_mb=1536", "-o", "max_calls=30",
             "-o", "disk_mb=64"],
            env=env, timeout_s=240,
        )
        seen_by_model = json.dumps([r.body for r in server.requests])
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(server.requests) == len(ATTACKS) + 1  # every attack answered, then the final turn
    (episode,) = Store(tmp_path / "run").episodes()
    statuses = episode.outcome["call_status"]
    assert [status in allowed for status, (_, allowed) in zip(statuses, ATTACKS, strict=True)] == [True] * len(ATTACKS), \
        statuses
    stored = b"".join(p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file())
    for leak in (SECRET, "root:"):
        assert leak not in seen_by_model and leak.encode() not in stored
    committed = next((tmp_path / "run").rglob("committed.ifc"), None)
    assert committed is None or committed.read_bytes().startswith(b"ISO-10303-21")
    assert list(temp.iterdir()) == []  # every work folder removed
    # Each process of the run stayed small: the harness, the forkserver, the episode's process and
    # the isolated scorer (about 200 MB each when measured) below 1 GiB; the sandbox's processes
    # below their memory_mb (1536 MiB, RLIMIT_AS; the hoarding attack takes them to about 1.3 GB).
    # Measured per process (VmHWM): a child's ru_maxrss starts at its parent's resident size (fork
    # copies it, exec keeps it), so a run started by a 3 GB pytest worker "peaked" at 3.3 GB.
    sandbox = {cmd: kib for cmd, kib in peaks.items() if "buildbench.sandbox._child" in cmd or "bwrap" in cmd}
    harness = {cmd: kib for cmd, kib in peaks.items() if cmd not in sandbox}
    assert harness and max(harness.values()) < 1024 * 1024, sorted(harness.items(), key=lambda kv: -kv[1])[:3]
    assert max(sandbox.values(), default=0) < 1536 * 1024, sorted(sandbox.items(), key=lambda kv: -kv[1])[:3]


def _run_measured(argv: list[str], env: dict[str, str], timeout_s: float
                  ) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    """Run ``argv``; its result and the peak resident size (VmHWM, KiB) of each process of its
    tree, keyed ``"pid command"``, sampled every 50 ms (a process that grows to a size worth
    noting lives longer than that; VmHWM keeps its peak between samples)."""
    peaks: dict[str, int] = {}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=err, text=True)
        stop = threading.Event()
        sampler = threading.Thread(target=_sample, args=(proc.pid, peaks, stop), daemon=True)
        sampler.start()
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        finally:
            stop.set()
            sampler.join()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read()), peaks


def _sample(root: int, peaks: dict[str, int], stop: threading.Event) -> None:
    while not stop.wait(0.05):
        for pid in _tree(root):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue  # gone meanwhile
            hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
            key = f"{pid} {command[:160]}"
            peaks[key] = max(peaks.get(key, 0), hwm)


def _tree(root: int) -> list[int]:
    """``root`` and every process below it now."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found
