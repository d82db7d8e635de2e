"""MuJoCo's limits and errors in a BuildArena run are verdicts: a full arena (contacts or constraints
dropped) or a ``FatalError`` ends the run like a divergence, named, at the same tick in the C loop and the
Python loop, without a retry; a limit is the machine's failure, another MuJoCo error unscored unless the
blame rule holds. The same holds where MuJoCo cannot build the model or take its first ``mj_forward``: a run
stopped at 0 s, never a machine with nothing to simulate. MuJoCo's warnings go to logging, never to
``MUJOCO_LOG.TXT`` in the working directory."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import mujoco
import pytest

from buildbench.harness import Episode, Task
from buildbench.suites.buildarena import check, designs
from buildbench.suites.buildarena.check import DIVERGED, SimulationDiverged, simulate
from buildbench.suites.buildarena.controller import not_moving
from buildbench.suites.buildarena.env import BuildArenaEnv
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.outcome import OUTCOME_FORMAT, BuildArenaOutcome, history_list
from buildbench.suites.buildarena.physics import DEFAULT_CONFIG, mjcf, simulation
from buildbench.suites.buildarena.physics.divergence import DivergenceWatch, log_mujoco_warnings
from buildbench.suites.buildarena.physics.simulation import ModelRefused
from buildbench.suites.buildarena.report import summarize
from buildbench.suites.buildarena.score import score_episode


@pytest.fixture
def in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _arena(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """Every model gets ``size`` bytes of arena, whatever its blocks."""
    monkeypatch.setattr(mjcf, "ARENA_BASE_BYTES", size)
    monkeypatch.setattr(mjcf, "ARENA_BYTES_PER_BODY", 0)


def _bridge_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    """The Support Lv.1 reference bridge in both loops: (reason, when, steps, retries, detail) of each."""
    machine = designs.build(designs.REFERENCE["support-1"]())
    out: list[tuple[object, ...]] = []
    for loop in ("1", "0"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", loop)
        result = simulate(machine, "support-1")
        assert result.status == DIVERGED and not result.passed and result.indicator == 0.0
        m = result.metrics
        out.append((m["diverged_reason"], m["diverged_at_s"], m["steps"], m["retries"], m["diverged_detail"],
                    result.reason, result.machine_caused))
    return out


@pytest.mark.parametrize(("size", "reason", "said"), [
    # Room for the contacts but not their constraints: MuJoCo drops them (the cargo would sink through).
    (100 << 10, "memory", "had no room for the constraints of 72 contacts: it dropped them"),
    # Too few for the contacts: MuJoCo drops some, then stops with an out-of-memory FatalError.
    (50 << 10, "contacts", "was full at 64 contacts: it dropped further contacts; then MuJoCo: mj_stackAlloc: out "
                           "of memory"),
])
def test_a_full_arena_ends_the_run_as_the_machines_failure_in_either_loop(
        size: int, reason: str, said: str, monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    _arena(monkeypatch, size)
    native, python = _bridge_runs(monkeypatch)
    assert native == python
    got, when, steps, retries, detail, text, blamed = native
    assert (got, when, steps, retries) == (reason, pytest.approx(0.32), 32, 0)  # no finer step: it cannot help
    assert said in str(detail) and said in str(text) and f"stopped ({reason}) at 0.32 s" in str(text)
    assert blamed and "its failure" in str(text)
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_a_machine_past_the_arena_is_scored_a_failure(monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    _arena(monkeypatch, 100 << 10)
    machine = designs.build(designs.REFERENCE["support-1"]())
    outcome = BuildArenaOutcome(task_id="support-1", approved=True, final="m", machine=history_list(machine),
                                physics=DEFAULT_CONFIG.record())
    metrics = score_episode(Task(id="support-1", suite="buildarena", inputs={}, target={}), outcome)
    assert metrics["simulated"] == 1.0 and metrics["passed"] == 0.0 and metrics["diverged"] == 1.0
    assert metrics["sim_retries"] == 0.0 and metrics["sim_limit"] == 1.0


def test_the_closed_loop_feedback_names_the_limit(monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    # The episode goes on (before: MuJoCo's FatalError ended it as an unscored error, its state lost).
    _arena(monkeypatch, 100 << 10)
    env = BuildArenaEnv(Task("support-1", "buildarena"))
    machine = designs.build(designs.REFERENCE["support-1"]())
    monkeypatch.setattr(env, "product", lambda: machine)
    evaluation = env.evaluate()
    assert evaluation.result is not None and not evaluation.passed
    assert "failed — the simulation stopped (memory) at 0.32 s" in evaluation.text
    assert "had no room for the constraints of 72 contacts" in evaluation.text


def test_another_mujoco_error_stops_the_run_unscored(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(model: mujoco.MjModel, data: mujoco.MjData, nstep: int = 1) -> None:
        if data.time > 0.5:
            raise mujoco.FatalError("mj_something: bad thing\n  more")
        mujoco.mj_step(model, data, nstep)

    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    monkeypatch.setattr(simulation, "mujoco", type("M", (), {"mj_step": staticmethod(failing),
                                                               "FatalError": mujoco.FatalError,
                                                               "MjData": mujoco.MjData,
                                                               "mj_forward": mujoco.mj_forward}))
    machine = designs.build(designs.REFERENCE["lift-1"]())
    result = simulate(machine, "lift-1")
    assert result.status == DIVERGED and not result.scored and result.metrics["retries"] == 0
    assert result.metrics["diverged_reason"] == "mujoco"
    assert result.metrics["diverged_detail"] == "MuJoCo: mj_something: bad thing more"
    assert "stopped (mujoco)" in result.reason and "an infrastructure fault, not scored" in result.reason
    outcome = BuildArenaOutcome(task_id="lift-1", approved=True, final="m", machine=history_list(machine),
                                physics=DEFAULT_CONFIG.record())
    with pytest.raises(SimulationDiverged, match="mj_something"):
        score_episode(Task(id="lift-1", suite="buildarena", inputs={}, target={}), outcome)


def test_the_watch_reads_the_warning_counters() -> None:
    model = mujoco.MjModel.from_xml_string('<mujoco><worldbody><body><freejoint/><geom size="1"/></body>'
                                           '</worldbody></mujoco>')
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    watch = DivergenceWatch(dataclasses.replace(DEFAULT_CONFIG, divergence_check_ticks=1))
    assert watch.check(model, data, data.time) is None and watch.detail is None
    data.warning[mujoco.mjtWarning.mjWARN_CNSTRFULL].number = 1
    assert watch.check(model, data, data.time) == "memory" and "dropped them" in str(watch.detail)
    data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].number = 1
    data.warning[mujoco.mjtWarning.mjWARN_CONTACTFULL].lastinfo = 9
    assert watch.check(model, data, data.time) == "contacts" and "full at 9 contacts" in str(watch.detail)


def test_mujoco_warnings_go_to_logging_for_every_mujoco_user(in_tmp: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Any model in the process, not only BuildArena's: eight boxes on the ground, too little arena for the
    # constraints of their 32 contacts.
    boxes = "".join(f'<body pos="{1.2 * i} 0 0.49"><freejoint/><geom type="box" size=".5 .5 .5"/></body>'
                    for i in range(8))
    model = mujoco.MjModel.from_xml_string(f'<mujoco><size memory="24K"/><worldbody><geom type="plane" size="0 0 1"/>'
                                           f'{boxes}</worldbody></mujoco>')
    data = mujoco.MjData(model)
    with caplog.at_level(logging.WARNING, logger="buildbench.mujoco"):
        mujoco.mj_step(model, data, 5)
    assert data.warning[mujoco.mjtWarning.mjWARN_CNSTRFULL].number == 5
    assert any(r.message.startswith("MuJoCo: ") for r in caplog.records)
    assert not (in_tmp / "MUJOCO_LOG.TXT").exists()


def test_a_warning_handler_set_by_another_user_stays() -> None:
    ours = mujoco.get_mju_user_warning()
    seen: list[str] = []
    try:
        mujoco.set_mju_user_warning(seen.append)
        log_mujoco_warnings()
        assert mujoco.get_mju_user_warning() == seen.append
    finally:
        mujoco.set_mju_user_warning(ours)


def _two_wheels() -> Machine:
    """The starting block with a Powered Wheel east and west: its wheels touch the ground from the start."""
    calls: list[dict[str, Any]] = [{"op": "start", "params": {}}]
    calls += [{"op": "attach_block_to", "params": {"base_block": 1, "face": face, "new_block": "Powered Wheel"}}
              for face in "AB"]
    return designs.build(designs.Design("two wheels", calls))


def _outcome(task_id: str, machine: Machine) -> BuildArenaOutcome:
    return BuildArenaOutcome(task_id=task_id, approved=True, final="m", machine=history_list(machine),
                             physics=DEFAULT_CONFIG.record())


# Arenas of the two-wheel machine under MuJoCo 3.17 (constraints.txt), each where one step of building and
# starting the model first needs more: its compiler's derivatives (about 9.7 KB), the overlap test's
# distance query while the scene is built (16,832 bytes of stack), the first mj_forward's collision (the same
# request atop the contacts' 272 bytes, up to 17,104).
@pytest.mark.parametrize(("size", "built", "said"), [
    (6_000, False, "MuJoCo: Error: engine error: mj_stackAlloc: out of memory"),
    (13_000, False, "MuJoCo: mj_stackAlloc: out of memory"),
    (16_980, True, "MuJoCo: mj_stackAlloc: out of memory"),
    (1 << 50, False, "MuJoCo: Error: engine error: Could not allocate memory"),  # no host has a petabyte
])
def test_a_model_mujoco_cannot_build_or_start_is_the_machines_failure(
        size: int, built: bool, said: str, monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    _arena(monkeypatch, size)
    machine = _two_wheels()
    if built:  # the simulation exists, stopped at 0 s, and stays readable
        sim = check.simulation(machine, "transport-1")
        assert sim.done and sim.state().done and sim.state().tick == 0 and sim.step(5).tick == 0
    else:
        with pytest.raises(ModelRefused, match="out of memory|Could not allocate"):
            check.simulation(machine, "transport-1")
    for loop in ("1", "0"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", loop)
        result = simulate(machine, "transport-1")
        assert result.status == DIVERGED and result.machine_caused and result.scored and not result.passed
        m = result.metrics
        assert (m["diverged_reason"], m["diverged_at_s"], m["steps"], m["retries"]) == ("memory", 0.0, 0, 0)
        assert str(m["diverged_detail"]).startswith(said) and "\n" not in m["diverged_detail"]
        assert "the simulation stopped (memory) at 0.00 s" in result.reason and "its failure" in result.reason
        assert result.trajectory.time.size == 0 and "Ballast" not in result.trajectory.ids
    metrics = score_episode(Task(id="transport-1", suite="buildarena", inputs={}, target={}),
                            _outcome("transport-1", machine))
    # Judged and failed, told apart from an empty submission (``simulated`` 0) and from a divergence.
    assert (metrics["simulated"], metrics["passed"], metrics["diverged"], metrics["sim_limit"]) == (1, 0, 1, 1)


def test_another_error_of_mujocos_compiler_is_unscored(monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    # MJCF that MuJoCo rejects (a negative arena): our model writer's fault, not the machine's.
    _arena(monkeypatch, -5)
    machine = designs.build(designs.REFERENCE["lift-1"]())
    result = simulate(machine, "lift-1")
    assert result.status == DIVERGED and not result.scored and result.metrics["diverged_reason"] == "mujoco"
    assert str(result.metrics["diverged_detail"]).startswith("MuJoCo: XML Error:")
    assert "an infrastructure fault, not scored" in result.reason
    with pytest.raises(SimulationDiverged, match="stopped \\(mujoco\\)"):
        score_episode(Task(id="lift-1", suite="buildarena", inputs={}, target={}), _outcome("lift-1", machine))


def test_the_closed_loop_feedback_names_a_model_mujoco_could_not_build(
        monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    _arena(monkeypatch, 6_000)
    env = BuildArenaEnv(Task("transport-1", "buildarena"))
    machine = _two_wheels()
    monkeypatch.setattr(env, "product", lambda: machine)
    evaluation = env.evaluate()
    assert evaluation.result is not None and not evaluation.passed
    assert "failed — the simulation stopped (memory) at 0.00 s" in evaluation.text
    assert "No trajectory was recorded." in evaluation.text


def test_the_report_counts_runs_stopped_by_mujoco_apart_from_divergences() -> None:
    def episode(i: int, **kw: object) -> Episode:
        outcome = {"format": OUTCOME_FORMAT, "task_id": "lift-2", "physics": DEFAULT_CONFIG.stamp()}
        return Episode(task_id="lift-2", sample=i, suite="buildarena", agent="a", protocol="workflow", seed=0,
                       outcome=outcome, **kw)  # type: ignore[arg-type]

    judged = {"simulated": 1.0, "passed": 0.0, "diverged": 0.0, "sim_limit": 0.0}
    episodes = [episode(0, metrics=judged),
                episode(1, metrics={**judged, "diverged": 1.0}),
                episode(2, metrics={**judged, "diverged": 1.0, "sim_limit": 1.0}),
                episode(3, metrics={**judged, "diverged": 1.0, "sim_limit": 1.0}),
                episode(4, status="error", error="SimulationDiverged: the simulation diverged (nan) at 1.00 s"),
                episode(5, status="error", error="SimulationDiverged: the simulation stopped (mujoco) at 0.00 s")]
    summary = summarize(episodes)
    (row,) = summary["tables"]["Physics profile and diverged simulations"]
    assert {k: v for k, v in row.items() if k not in ("physics", "sha256")} == {
        "episodes": 6, "judged": 1, "diverged (machine)": 1, "diverged (unscored)": 1,
        "sim limit (machine)": 2, "sim limit (unscored)": 1}
    assert (summary["diverged"], summary["sim_limits"]) == (2, 3)


def test_a_run_with_nothing_logged_is_not_taken_for_a_machine_that_does_not_move(
        monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    # The control trials stop once a revised machine does not move; a model MuJoCo refused logged nothing.
    _arena(monkeypatch, 6_000)
    result = simulate(_two_wheels(), "transport-1")
    assert result.trajectory.time.size == 0 and not not_moving(result.trajectory)


def test_pieces_mujoco_cannot_compile_stop_the_run_in_either_loop(
        monkeypatch: pytest.MonkeyPatch, in_tmp: Path) -> None:
    # The Support Lv.1 bridge with welds that break at once: its pieces (more bodies, more dofs) need more
    # arena for MuJoCo's compiler than the whole bridge did (before: a ValueError out of the step, which the
    # scorer took for a machine with nothing to simulate).
    _arena(monkeypatch, 60_000)
    machine = designs.build(designs.REFERENCE["support-1"]())
    weak = dataclasses.replace(DEFAULT_CONFIG, weld_break_torque_nm=0.001)
    runs = []
    for loop in ("1", "0"):
        monkeypatch.setenv("BUILDBENCH_NATIVE", loop)
        result = simulate(machine, "support-1", config=weak)
        m = result.metrics
        assert result.status == DIVERGED and result.machine_caused and m["broken_welds"] > 0
        assert m["diverged_reason"] == "memory" and m["retries"] == 0
        assert str(m["diverged_detail"]).startswith("MuJoCo: Error: engine error: mj_stackAlloc: out of memory")
        runs.append((m["diverged_at_s"], m["steps"], m["broken_welds"], result.reason, result.trajectory.time.size))
    assert runs[0] == runs[1]
