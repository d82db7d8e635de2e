"""Native crashes of env or scorer code end that episode as an error; the run goes on.

The ``crashy`` suite (``crash_suite/``, installed here through its entry point as a third-party
suite would be) segfaults or aborts in the env step of two tasks and in the scorer of a third,
among four that play normally. A run with worker processes (the default) stores the four, the
three crashed ones as errors whose line says the process died, and exits normally; scoring in a
process of its own (`score_isolated`) keeps a scorer's crash from reaching the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from buildbench.harness.isolated import IsolationLimits, call_isolated
from buildbench.harness.store import Store

CRASHY = Path(__file__).resolve().parent / "crash_suite"


def _install(site: Path) -> str:
    """Write the crash suite's dist-info into ``site`` as an installer would; the PYTHONPATH to use."""
    meta = tomllib.loads((CRASHY / "pyproject.toml").read_text())["project"]
    dist = site / f"buildbench_crash_suite-{meta['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
             for group, eps in meta["entry-points"].items()]
    (dist / "entry_points.txt").write_text("\n".join(lines))
    return os.pathsep.join([str(site), str(CRASHY)])


def _cli(args: list[str], pythonpath: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


def test_native_crashes_are_errors_of_their_episodes_and_the_run_goes_on(tmp_path: Path) -> None:
    path = _install(tmp_path / "site")
    run_dir = tmp_path / "run"
    ran = _cli(["run", "crashy", "--split", "default", "--workers", "2", "--run-dir", str(run_dir), "-q"], path,
               tmp_path)
    assert ran.returncode in (0, 1), ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    store = Store(run_dir)
    try:
        episodes = {ep.task_id: ep for ep in store.episodes()}
    finally:
        store.close()
    assert sorted(episodes) == sorted(["ok-1", "ok-2", "ok-3", "ok-4", "segv-env", "abort-env", "abort-score"])
    for name in ("ok-1", "ok-2", "ok-3", "ok-4"):
        assert episodes[name].status == "ok" and episodes[name].metrics == {"passed": 1.0}, episodes[name]
    for name, signal in (("segv-env", "SIGSEGV"), ("abort-env", "SIGABRT")):
        ep = episodes[name]
        assert ep.status == "error" and ep.error_kind == "crash", (ep.status, ep.error)
        assert f"the process running this episode died: the isolated process died ({signal})" in (ep.error or "")
    scored = episodes["abort-score"]
    assert scored.status == "error" and scored.error_kind == "scorer", (scored.status, scored.error)
    assert "ScorerCrash" in (scored.error or "") and "SIGABRT" in (scored.error or "")
    report = json.loads(_cli(["report", str(run_dir), "--json"], path, tmp_path).stdout)
    assert report["episodes"] == 7 and report["unscored"] == 3


def _spin() -> None:
    while True:
        pass


def _hoard() -> None:
    hoard = []
    while True:
        hoard.append(bytearray(32 << 20))


def _answer(x: int) -> int:
    return x + 1


@pytest.mark.parametrize("fn", [_spin, _hoard], ids=["cpu", "memory"])
def test_an_isolated_call_over_its_limit_gets_status_limit(fn: object) -> None:
    done = call_isolated(fn, (), IsolationLimits(wall_s=20, cpu_s=1, memory_mb=256))  # type: ignore[arg-type]
    assert done.status == "limit", done
    assert (done.error or "").split(":")[0] in {"CPU time limit", "memory limit", "wall-clock limit"}


def test_an_isolated_call_returns_its_value() -> None:
    assert call_isolated(_answer, (41,)).value == 42
