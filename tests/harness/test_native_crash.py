"""Native crashes of env or scorer code end that episode as an error; the run goes on.

The ``crashy`` suite (``crash_suite/``, installed here through its entry point as a third-party
suite would be) segfaults or aborts in the env step of two tasks and in the scorer of a third,
among four that play normally. Every way a run plays episodes stores the four, the three crashed
ones as errors whose line names the signal, and exits normally: the worker pool (a scripted
agent, the default), ``--workers 0`` and a model-backed agent (episodes played apart,
`buildbench.harness.apart`, their model calls answered by the harness from a scripted
OpenAI-compatible server on loopback). Scoring in a process of its own (`score_isolated`) keeps a
scorer's crash from reaching the run; ``--resume`` plays the crashed episodes again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness.isolated import IsolationLimits, call_isolated
from buildbench.harness.store import Store
from buildbench.llm import ScriptedServer

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


def _cli(args: list[str], pythonpath: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")])),
           **extra}
    return subprocess.run([sys.executable, "-m", "buildbench", *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=cwd)


def _episodes(run_dir: Path) -> dict[str, Any]:
    store = Store(run_dir)
    try:
        return {ep.task_id: ep for ep in store.episodes()}
    finally:
        store.close()


def _check_crashes_contained(ran: subprocess.CompletedProcess[str], run_dir: Path, path: str, tmp_path: Path) -> None:
    assert ran.returncode in (0, 1), ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr, ran.stderr[-3000:]
    episodes = _episodes(run_dir)
    assert sorted(episodes) == sorted(["ok-1", "ok-2", "ok-3", "ok-4", "segv-env", "abort-env", "abort-score"])
    for name in ("ok-1", "ok-2", "ok-3", "ok-4"):
        assert episodes[name].status == "ok" and episodes[name].metrics == {"passed": 1.0}, episodes[name]
    for name, signal in (("segv-env", "SIGSEGV"), ("abort-env", "SIGABRT")):
        ep = episodes[name]
        assert ep.status == "error" and ep.error_kind == "crash", (ep.status, ep.error)
        # The signal is known first hand (the isolated child waits for the work's process), never
        # the forkserver's "exit code 255" that full-suite load once produced.
        assert f"the process running this episode died: the isolated process died ({signal})" in (ep.error or "")
    scored = episodes["abort-score"]
    assert scored.status == "error" and scored.error_kind == "scorer", (scored.status, scored.error)
    assert "ScorerCrash" in (scored.error or "") and "SIGABRT" in (scored.error or "")
    report = json.loads(_cli(["report", str(run_dir), "--json"], path, tmp_path).stdout)
    assert report["episodes"] == 7 and report["unscored"] == 3


def test_native_crashes_in_pool_workers_are_errors_of_their_episodes(tmp_path: Path) -> None:
    path = _install(tmp_path / "site")
    run_dir = tmp_path / "run"
    ran = _cli(["run", "crashy", "--split", "default", "--workers", "2", "--run-dir", str(run_dir), "-q"], path,
               tmp_path)
    _check_crashes_contained(ran, run_dir, path, tmp_path)


def test_native_crashes_with_no_workers_are_errors_and_resume_plays_them_again(tmp_path: Path) -> None:
    path = _install(tmp_path / "site")
    run_dir = tmp_path / "run"
    args = ["run", "crashy", "--split", "default", "--workers", "0", "--run-dir", str(run_dir), "-q"]
    _check_crashes_contained(_cli(args, path, tmp_path), run_dir, path, tmp_path)
    before = _episodes(run_dir)
    resumed = _cli([*args, "--resume"], path, tmp_path, CRASHY_CALM="1")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    after = _episodes(run_dir)
    # The two episodes whose process crashed played again (and now pass); the scorer's crash is an
    # error of the scorer, kept; the four finished ones were skipped, their records unchanged.
    assert after["segv-env"].status == after["abort-env"].status == "ok"
    assert after["abort-score"].error == before["abort-score"].error
    assert all(after[n].to_dict() == before[n].to_dict() for n in ("ok-1", "ok-2", "ok-3", "ok-4"))


def _say(request: Any) -> str:
    return "hello"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_native_crashes_of_model_backed_episodes_are_errors_and_the_run_goes_on(tmp_path: Path, workers: str) -> None:
    """The LLM agent's episodes, env steps crashing after the model answered: each crash is its
    episode's error; every model call was made by the harness (the server saw one per episode)."""
    path = _install(tmp_path / "site")
    run_dir = tmp_path / "run"
    with ScriptedServer(_say) as server:
        ran = _cli(["run", "crashy", "--split", "default", "--agent", "llm", "--model",
                    f"vllm:scripted@{server.base_url}", "--workers", workers, "--run-dir", str(run_dir), "-q",
                    "-o", "max_retries=0"], path, tmp_path)
        calls = len(server.requests)
    _check_crashes_contained(ran, run_dir, path, tmp_path)
    assert calls == 7
    episodes = _episodes(run_dir)
    assert episodes["ok-1"].steps[0].action_text == "hello" and episodes["ok-1"].usage.get("requests") == 1
    assert episodes["segv-env"].metadata["model_calls"] == 1


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
