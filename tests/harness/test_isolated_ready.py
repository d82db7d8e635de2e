"""Isolated calls served by processes kept ready (`buildbench.harness.isolated.kept_ready`): each call still gets a
process and a memory group of its own, sees the environment of the call, keeps its limits, and nothing is left once
the block ends."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from buildbench.harness import isolated_ready
from buildbench.harness.isolated import IsolationLimits, call_isolated, kept_ready
from buildbench.sandbox._memory import GROUP_PREFIX, _own_group

LIMITS = IsolationLimits(wall_s=60.0, cpu_s=30, memory_mb=512)


def _whoami(name: str) -> tuple[int, str, str | None]:
    """This process's pid, its memory group (where it has one) and an environment variable."""
    groups = Path("/proc/self/cgroup").read_text().splitlines()
    memory = next((line.split(":", 2)[2] for line in groups if "memory" in line.split(":")[1].split(",")), "")
    return os.getpid(), memory, os.environ.get(name)


def _burn_cpu() -> None:
    while True:
        pass


def _fill_memory(mb: int) -> int:
    chunks = [bytearray(1024 * 1024) for _ in range(mb)]
    return len(chunks)


def _groups() -> set[str]:
    found = _own_group("memory")
    return set() if found is None else {p.name for p in found[0].glob(f"{GROUP_PREFIX}{os.getpid()}-*")}


def _kept_children() -> int:
    """Processes started for calls and not yet finished, across the keepers of this process."""
    with isolated_ready._lock:
        keepers = list(isolated_ready._keepers.values())
    return sum(k.ready.qsize() + k.used.qsize() for k in keepers)


def test_each_call_gets_a_fresh_process_and_group_and_the_calls_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _groups()
    with kept_ready(LIMITS, script_free=True, count=2):
        time.sleep(0.5)  # the keeper has started its processes: they were made before this variable was set
        monkeypatch.setenv("BUILDBENCH_READY_PROBE", "at the call")
        answers = [call_isolated(_whoami, ("BUILDBENCH_READY_PROBE",), LIMITS, script_free=True) for _ in range(4)]
    assert all(a.status == "ok" for a in answers), answers
    pids = [a.value[0] for a in answers]
    groups = [a.value[1] for a in answers]
    assert len(set(pids)) == 4, pids
    assert all(a.value[2] == "at the call" for a in answers)
    if _own_group("memory") is not None and os.geteuid() == 0:  # a cgroup per call, never shared
        assert all(GROUP_PREFIX in g for g in groups), groups
        assert len(set(groups)) == 4, groups
    # the block's end finished every process it made and removed their groups
    assert _kept_children() == 0
    assert _groups() <= before
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_kept_process_holds_the_calls_limits() -> None:
    tight = IsolationLimits(wall_s=60.0, cpu_s=1, memory_mb=128)
    with kept_ready(tight, script_free=True, count=1):
        time.sleep(0.5)  # its process was started (and forked its worker) before the call
        started = time.process_time()
        cpu = call_isolated(_burn_cpu, (), tight, script_free=True)
        memory = call_isolated(_fill_memory, (400,), tight, script_free=True)
        fine = call_isolated(_fill_memory, (16,), tight, script_free=True)
    assert cpu.status == "limit" and "CPU time limit: 1 s" in (cpu.error or ""), cpu
    assert memory.status == "limit", memory
    assert fine.status == "ok" and fine.value == 16, fine
    assert time.process_time() - started < 5  # the parent only waited


def test_other_calls_start_their_own_and_a_failed_call_leaves_no_process() -> None:
    with kept_ready(LIMITS, script_free=True, count=1):
        time.sleep(0.3)
        other = call_isolated(_whoami, ("HOME",), IsolationLimits(wall_s=60.0, cpu_s=30, memory_mb=None))
        raised = call_isolated(int, ("not a number",), LIMITS, script_free=True)
        ok = call_isolated(len, ("abc",), LIMITS, script_free=True)
    assert other.status == "ok"
    assert raised.status == "error" and isinstance(raised.exception, ValueError)
    assert ok.value == 3
    assert _kept_children() == 0


def test_the_forkserver_holds_the_suites_records_made_and_frozen(tmp_path: Path) -> None:
    # In a script of its own: the test process's server may have been started by an earlier test.
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent("""
        from buildbench.harness.isolated import IsolationLimits, call_isolated

        CHECK = ("__import__('gc').get_freeze_count() > 0 and "
                 "__import__('buildbench.suites.example.spaces', fromlist=['x']).TowerAction in "
                 "__import__('buildbench.harness.record', fromlist=['x'])._SCHEMAS")

        if __name__ == "__main__":
            done = call_isolated(eval, (CHECK,), IsolationLimits(wall_s=120.0, cpu_s=60, memory_mb=None),
                                 preload=("buildbench.suites.example.suite",), script_free=True)
            print(done.status, done.value)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "True"], out.stdout + out.stderr


def test_a_records_schema_is_made_once_and_each_caller_gets_its_own_copy() -> None:
    from buildbench.harness.record import _ADAPTERS, warm_records
    from buildbench.suites.example.spaces import TowerAction

    warm_records()
    first = TowerAction.json_schema()
    assert first == _ADAPTERS[TowerAction].json_schema()
    first["properties"].clear()
    assert TowerAction.json_schema() == _ADAPTERS[TowerAction].json_schema() != first


def test_no_more_processes_are_kept_than_calls_to_come() -> None:
    def kept() -> int:
        with isolated_ready._lock:
            keepers = list(isolated_ready._keepers.values())
        return sum(k.ready.qsize() for k in keepers)

    with kept_ready(LIMITS, script_free=True, count=8, calls=3):
        deadline = time.monotonic() + 20
        while kept() < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        assert kept() == 3  # not 8
        assert call_isolated(len, ("ab",), LIMITS, script_free=True).value == 2
        time.sleep(0.3)
        assert kept() == 2  # one call done, two to come: none made for it


def test_a_kept_process_that_died_while_waiting_is_replaced() -> None:
    with kept_ready(LIMITS, script_free=True, count=1):
        deadline = time.monotonic() + 20
        while _kept_children() < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        with isolated_ready._lock:
            keeper = next(iter(isolated_ready._keepers.values()))
        keeper.failed = RuntimeError("the test: make no more")  # the dead one is the only one kept
        waiting = keeper.ready.get()
        waiting.process.kill()
        waiting.process.join(5)
        keeper.ready.put(waiting)
        done = call_isolated(len, ("abc",), LIMITS, script_free=True)
    assert done.status == "ok" and done.value == 3, done
