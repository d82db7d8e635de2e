"""A run driven by a hostile model through the public CLI: it finishes, leaks nothing, kills
nothing of the harness, leaves no process or work folder behind and stays small.

The model is an OpenAI-compatible endpoint on 127.0.0.1 whose every answer is a BIM-Edit
``execute_ifc_code`` call with one attack, then a final text.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from buildbench.harness import Store
from buildbench.llm import ScriptedServer, ServerReply, ServerRequest, ServerToolCall

from .conftest import needs_bwrap

pytest.importorskip("ifcopenshell", reason="BIM-Edit needs ifcopenshell")

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-hostile-run-canary-51c3"
#: (attack, the call statuses that mean it was contained). The model swap comes last: a worker
#: restarted after it finds no model to load.
ATTACKS = [
    ("import os\nprint(dict(os.environ))\nprint([open(f'/proc/{p}/environ','rb').read() for p in os.listdir('/proc')"
     " if p.isdigit()])", {"error"}),
    ("print(open('/etc/shadow').read())", {"error"}),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", {"timeout", "error"}),
    ("hoard = []\nwhile True:\n    hoard.append(bytearray(64 << 20))", {"memory"}),
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
        run, maxrss_kib = _run_measured(
            [sys.executable, "-m", "buildbench", "run", "bimedit", "--agent", "llm", "--split", "demo",
             "--limit", "1", "--model", f"vllm:hostile@{server.base_url}", "--run-dir", str(tmp_path / "run"),
             "-q", "-o", "call_timeout_s=3", "-o", "memory_mb=1536", "-o", "max_calls=30",
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
    # The largest process of the run (harness, sandbox or the isolated scorer) stayed below 4 GiB.
    # Alone it peaks near 200 MB; once, under a loaded full suite, a process of the run reached
    # 3.3 GB. That peak is not yet explained (the sandbox is capped at memory_mb by RLIMIT_AS, so it
    # is the harness or the scorer child): the session note asks for it to be found.
    assert maxrss_kib < 4 * 1024 * 1024, maxrss_kib


def _run_measured(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``argv`` and return its result with the peak resident size (KiB) of it and its
    descendants alone: ``RUSAGE_CHILDREN`` of this process would also count every child an
    earlier test on the same worker spawned."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, env=env, cwd=REPO, stdout=out, stderr=err, text=True)
        try:
            _, status, usage = _wait4(proc.pid, timeout_s)
        except TimeoutError:
            proc.kill()
            proc.wait()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(argv, proc.returncode, out.read(), err.read()), usage.ru_maxrss


def _wait4(pid: int, timeout_s: float) -> tuple[int, int, resource.struct_rusage]:
    deadline = time.monotonic() + timeout_s
    while True:
        reaped, status, usage = os.wait4(pid, os.WNOHANG)
        if reaped == pid:
            return reaped, status, usage
        if time.monotonic() > deadline:
            raise TimeoutError(f"{pid} still running after {timeout_s} s")
        time.sleep(0.1)
