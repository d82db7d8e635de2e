"""A machine whose model MuJoCo cannot build (``simulation.ModelRefused``), played through the Gymnasium
env as RL code plays it: the closed-loop evaluation and the score are the agent's failure with the reason
named (an arena too small: the machine's; MJCF MuJoCo rejects: an unscored fault, never a score), not a
crash; the env's ``simulation()`` raises ModelRefused (not a ValueError) with the stopped run, as its
docstring says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.harness import Task
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import SimulationDiverged
from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.physics import mjcf
from buildbench.suites.buildarena.physics.simulation import ModelRefused


def _two_wheels_on_transport(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, arena: int) -> Any:
    """A BuildArena gym env where every model gets ``arena`` bytes, after the agent built the starting
    block with two powered wheels and named it final and approved (controls, as RL code does)."""
    gymnasium = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
    import buildbench.gym  # noqa: F401  (registers the ids)

    monkeypatch.chdir(tmp_path)  # MuJoCo must leave no MUJOCO_LOG.TXT behind
    monkeypatch.setattr(mjcf, "ARENA_BASE_BYTES", arena)
    monkeypatch.setattr(mjcf, "ARENA_BYTES_PER_BODY", 0)
    env = gymnasium.make("buildbench/BuildArena-v0", task="transport-1", split="transport-1", seed=0)
    env.reset()
    calls = [{"name": "start", "arguments": {}}] + [
        {"name": "attach_block_to", "arguments": {"base_block": 1, "face": face, "new_block": "Powered Wheel"}}
        for face in "AB"]
    for call in calls:
        assert env.step(json.dumps({"tool_calls": [call]}))[4]["ok"] is True
    for control in ("set_final", "approve"):
        env.step(json.dumps({"control": control, "args": {"machine_id": "1"}}))
    return env


def test_an_arena_too_small_is_the_agents_failure_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = _two_wheels_on_transport(monkeypatch, tmp_path, 6_000)  # too small to compile the model
    obs, reward, terminated, truncated, info = env.step(json.dumps({"control": "evaluate_round", "args": {}}))
    assert "failed — the simulation stopped (memory) at 0.00 s" in obs["text"]
    assert "out of memory" in obs["text"] and "its failure" in obs["text"] and "invalid" not in info
    metrics = env.unwrapped.score()
    assert {k: metrics[k] for k in ("passed", "simulated", "diverged", "sim_limit")} == {
        "passed": 0.0, "simulated": 1.0, "diverged": 1.0, "sim_limit": 1.0}
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    env.close()


def test_a_model_mujoco_rejects_is_unscored_never_a_score(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env = _two_wheels_on_transport(monkeypatch, tmp_path, -5)  # MJCF that MuJoCo's parser rejects
    obs, *_ = env.step(json.dumps({"control": "evaluate_round", "args": {}}))
    assert "the simulation stopped (mujoco) at 0.00 s" in obs["text"] and "not scored" in obs["text"]
    with pytest.raises(SimulationDiverged, match=r"stopped \(mujoco\)"):  # unscored: an error, no metrics
        env.unwrapped.score()
    env.close()


@pytest.mark.parametrize(("arena", "reason"), [(6_000, "memory"), (-5, "mujoco")])
def test_the_envs_steppable_simulation_raises_model_refused_with_the_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, arena: int, reason: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mjcf, "ARENA_BASE_BYTES", arena)
    monkeypatch.setattr(mjcf, "ARENA_BYTES_PER_BODY", 0)
    calls: list[dict[str, Any]] = [{"op": "start", "params": {}}] + [
        {"op": "attach_block_to", "params": {"base_block": 1, "face": face, "new_block": "Powered Wheel"}}
        for face in "AB"]
    machine = designs.build(designs.Design("two wheels", calls))
    env = BuildArenaEnv(Task("transport-1", "buildarena"))  # RL code's own env, stepped tick by tick
    monkeypatch.setattr(env, "product", lambda: machine)
    with pytest.raises(ModelRefused) as refused:
        env.simulation()
    assert not isinstance(refused.value, ValueError)  # RL code reads the stopped run off it
    assert (refused.value.output.diverged_reason, refused.value.output.diverged_at_s) == (reason, 0.0)
