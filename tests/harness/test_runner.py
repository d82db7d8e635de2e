"""Runner: both concurrency modes, determinism, resume, and a SIGKILL in the middle of a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from buildbench.harness import ConfigError, RunConfig, Runner, Store, run_report

BUILDBENCH = [sys.executable, "-m", "buildbench"]


def _config(**kw):
    base = dict(suite="example", agent="reference", protocol="refine", split="demo", seed=3)
    base.update(kw)
    return RunConfig(**base)


def test_pool_and_loop_give_identical_episodes(tmp_path):
    a = Runner(_config(workers=2), tmp_path / "pool").run()
    b = Runner(_config(workers=0), tmp_path / "loop").run()
    assert a.ran == b.ran == 6
    assert a.summary["metrics"] == b.summary["metrics"]
    assert a.summary["metrics"]["passed"] == 1.0
    with Store(tmp_path / "pool") as s1, Store(tmp_path / "loop") as s2:
        e1 = [(e.task_id, e.seed, e.outcome) for e in s1.episodes()]
        e2 = [(e.task_id, e.seed, e.outcome) for e in s2.episodes()]
    assert e1 == e2


def test_resume_skips_finished_and_refuses_changes(tmp_path):
    Runner(_config(limit=3), tmp_path).run()
    with pytest.raises(ConfigError, match="--resume"):
        Runner(_config(), tmp_path).run()
    with pytest.raises(ConfigError, match="agent"):
        Runner(_config(agent="short"), tmp_path, resume=True).run()
    result = Runner(_config(), tmp_path, resume=True).run()
    assert (result.ran, result.skipped, result.total) == (3, 3, 6)
    assert run_report(tmp_path)["episodes"] == 6


def test_samples_have_distinct_seeds(tmp_path):
    Runner(_config(samples=3, limit=2), tmp_path).run()
    with Store(tmp_path) as store:
        seeds = [e.seed for e in store.episodes()]
    assert len(seeds) == 6 and len(set(seeds)) == 6


def test_agent_failure_is_an_episode_status_not_a_crash(tmp_path):
    result = Runner(_config(agent="floating", protocol="one-shot"), tmp_path).run()
    assert result.summary["status"] == {"ok": 6}
    assert result.summary["metrics"]["passed"] == 0.0


def test_model_agent_without_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="needs a model"):
        Runner(_config(agent="llm"), tmp_path).run()


@pytest.mark.parametrize("agent,workers", [("slow-reference", 2), ("reference", 2)])
def test_sigkill_then_resume_gives_every_episode_exactly_once(tmp_path, agent, workers):
    # 25 tasks x 2 samples: the kill lands after 10 episodes with 40 still to come (the poll
    # overshoots by a few at most), the resume plays the rest.
    run_dir = tmp_path / "run"
    args = BUILDBENCH + ["run", "example", "--agent", agent, "--protocol", "one-shot", "--samples", "2",
                         "--limit", "25", "--run-dir", str(run_dir), "--concurrency", "3", "--workers", str(workers),
                         "-o", "delay_s=0.03", "-q"]
    proc = subprocess.Popen(args, start_new_session=True)
    db = run_dir / Store.FILENAME
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if db.exists():
            with Store(run_dir) as s:
                if s.count() >= 10:
                    break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(run_dir) as s:
        partial = s.count()
    assert 10 <= partial < 50, partial
    subprocess.run(args + ["--resume"], check=True, timeout=120)
    with Store(run_dir) as s:
        keys = [(e.task_id, e.sample) for e in s.episodes()]
    assert len(keys) == 50 and len(set(keys)) == 50


def test_bad_protocol_option_is_a_config_error_before_any_episode(tmp_path):
    with pytest.raises(ConfigError, match="max_steps"):
        Runner(_config(options={"max_steps": -1}), tmp_path / "run").run()
    assert not (tmp_path / "run").exists()
