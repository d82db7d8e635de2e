"""A daemon (fork, ``setsid``, fork again) leaves its session and process group. Under the plain
process backend nothing killed it: the supervisor swept strays only in a PID namespace of its own,
and ``killpg`` reached only its group, so the daemon ran between calls and after ``close`` (a process
outliving the run). The supervisor is now a subreaper that kills every stray of its tree after each
call, and stopping a sandbox kills its whole tree first. One scan of ``/proc`` could also miss a
child forked just as its parent died; a sweep now ends only after two scans in a row find nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from buildbench.sandbox import Limits, Worker

from .conftest import BWRAP

LIMITS = Limits(wall_s=3.0, cpu_s=3, memory_mb=512)
BACKENDS = ["process", *(["bwrap"] if BWRAP else [])]
DAEMON = (
    "import os, time\n"
    "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
    "        while True:\n            with open('beat-{n}', 'a') as f:\n                f.write('x')\n"
    "            time.sleep(0.02)\n"
    "    os._exit(0)\n"
    "time.sleep(0.2)\n"
)


def _still(folder: Path, name: str) -> bool:
    """True when nothing writes to ``folder/name`` any more (it was written before)."""
    before = (folder / name).stat().st_size
    assert before > 0
    time.sleep(0.4)
    return (folder / name).stat().st_size == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_daemon_dies_with_its_call(backend: str, tmp_path: Path) -> None:
    with Worker(limits=LIMITS, isolation=backend, workdir=tmp_path) as worker:  # type: ignore[arg-type]
        for n in range(3):  # several: one sweep used to miss the daemon now and then
            out = worker.call(DAEMON.format(n=n) + "result = 1")
            assert out.status == "ok", out
            assert _still(tmp_path, f"beat-{n}")
        out = worker.call(DAEMON.format(n="t") + "while True:\n    pass\n")  # the call is killed
        assert out.status == "timeout", out
        assert _still(tmp_path, "beat-t")
        out = worker.call(DAEMON.format(n="c") + "result = 2")
        assert out.status == "ok" and out.result == 2, out
    assert _still(tmp_path, "beat-c")  # and nothing outlives close()
