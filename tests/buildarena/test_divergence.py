"""No verdict from a numerical blow-up: the divergence tests, the finer-step retries, the ``diverged`` status
and its blame rule, and the reference designs and negative controls never diverging (every level at full
length; a seeded slice of the variants, whose full sweep is ``tools/buildarena_sweep.py``)."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.suites.buildarena import designs, variants
from buildbench.suites.buildarena.check import DIVERGED, SimulationDiverged, simulate
from buildbench.suites.buildarena.levels import TASKS
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.outcome import BuildArenaOutcome, history_list
from buildbench.suites.buildarena.physics import DEFAULT_CONFIG, Scene
from buildbench.suites.buildarena.physics.divergence import DivergenceWatch
from buildbench.suites.buildarena.physics.simulation import Simulation
from buildbench.suites.buildarena.score import score_episode


def _box_model() -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><geom type="plane" size="0 0 1"/><body pos="0 0 1"><freejoint/>'
        '<geom type="box" size="0.5 0.5 0.5" mass="1"/></body></worldbody></mujoco>')
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def test_the_watch_names_speed_nan_energy_and_penetration() -> None:
    config = dataclasses.replace(DEFAULT_CONFIG, divergence_check_ticks=1)
    model, data = _box_model()
    watch = DivergenceWatch(config)
    assert watch.check(model, data, data.time) is None  # the energy baseline
    data.qvel[2] = 5.0
    assert watch.check(model, data, data.time) is None  # 12.5 J/kg more: a thrust could do that
    data.qvel[2] = 100.0
    assert watch.check(model, data, data.time) == "energy"  # 5,000 J/kg within one check
    data.qvel[2] = 2.0 * config.max_speed_mps
    assert watch.check(model, data, data.time) == "speed"
    data.qvel[2] = np.nan
    assert watch.check(model, data, data.time) == "nan"
    data.qvel[2] = 0.0
    assert watch.check(model, data, data.time + 1.0) == "reset"  # the clock did not advance
    data.qpos[2] = 0.5 - 2 * config.max_penetration_m  # sunk a block deep into the ground
    mujoco.mj_forward(model, data)
    assert DivergenceWatch(config).check(model, data, data.time) == "penetration"


def _falling_block() -> tuple[Machine, Scene]:
    bench = Workbench()
    assert bench.call("start").ok
    return bench.machine, Scene(2.0, np.eye(3), np.array([0.0, 0.0, 50.0]), ground=False)


def test_a_run_that_diverges_is_retried_with_finer_steps_then_marked() -> None:
    machine, scene = _falling_block()
    # A free fall passes 5 m/s after ~0.5 s: with this bound every attempt "diverges" there.
    strict = dataclasses.replace(DEFAULT_CONFIG, max_speed_mps=5.0)
    run = Simulation(machine, scene, [], strict).run()
    assert run.diverged_at_s == pytest.approx(0.5, abs=0.02) and run.diverged_reason == "speed"
    assert [dt for dt, _, _ in run.retries] == [0.01, 0.005] and run.timestep_s == 0.0025
    assert run.trajectory.time[-1] <= run.diverged_at_s
    calm = Simulation(machine, scene, [], DEFAULT_CONFIG).run()
    assert calm.diverged_at_s is None and calm.retries == [] and calm.timestep_s == DEFAULT_CONFIG.timestep_s


def test_a_diverged_run_is_unscored_unless_the_machine_broke_just_before() -> None:
    machine = designs.build(designs.REFERENCE["lift-2"]())
    strict = dataclasses.replace(DEFAULT_CONFIG, max_speed_mps=20.0)  # the rocket passes 20 units/s
    result = simulate(machine, "lift-2", config=strict)
    assert result.status == DIVERGED and not result.passed and result.indicator == 0.0
    assert not result.machine_caused and not result.scored
    assert "an infrastructure fault, not scored" in result.reason
    assert result.metrics["retries"] == strict.divergence_retries and result.metrics["status"] == DIVERGED
    outcome = BuildArenaOutcome(task_id="lift-2", approved=True, final="m", machine=history_list(machine),
                                physics=strict.record())
    task = Task(id="lift-2", suite="buildarena", inputs={}, target={})
    with pytest.raises(SimulationDiverged, match="diverged"):
        score_episode(task, outcome)
    # A bridge that snaps under its own weight, its pieces falling into the gap: a blow-up within a second
    # of a break is the machine's doing.
    bridge = designs.build(designs.REFERENCE["support-1"]())
    weak = dataclasses.replace(DEFAULT_CONFIG, max_speed_mps=4.0, weld_break_torque_nm=1.0)
    broken = simulate(bridge, "support-1", config=weak)
    assert broken.status == DIVERGED and broken.machine_caused and broken.scored and not broken.passed
    assert "the machine caused it" in broken.reason


def test_the_recorded_profile_rescores_the_episode() -> None:
    machine = designs.build(designs.REFERENCE["lift-1"]())
    outcome = BuildArenaOutcome(task_id="lift-1", approved=True, final="m", machine=history_list(machine),
                                physics=DEFAULT_CONFIG.record())
    metrics = score_episode(Task(id="lift-1", suite="buildarena", inputs={}, target={}), outcome)
    assert metrics["passed"] == 1.0 and metrics["diverged"] == 0.0 and metrics["sim_retries"] == 0.0


def _control(task_id: str) -> designs.Design:
    level = variants.level_of(task_id)
    name = next(n for n, (t, _) in designs.NEGATIVE.items() if t == level)
    return designs.control_design(task_id, name)


@pytest.mark.parametrize("task_id", list(TASKS))
def test_references_pass_and_controls_fail_every_level_at_full_length_without_a_retry(task_id: str) -> None:
    reference = simulate(designs.build(designs.REFERENCE[task_id]()), task_id)
    control = simulate(designs.build(_control(task_id)), task_id)
    assert reference.passed, reference.reason
    assert not control.passed, control.reason
    for result in (reference, control):
        assert result.status == "ok" and result.metrics["retries"] == 0, result.reason
        assert result.metrics["physics"] == "besiege-1"


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v.id for v in variants.generate(11, 16)])
def test_a_seeded_slice_of_variants_never_diverges(variant: str) -> None:
    """Two variants per varied level (``tools/buildarena_sweep.py --per-level 100`` runs the full sweep)."""
    for design in (designs.REFERENCE[variant](), _control(variant)):
        result = simulate(designs.build(design), variant)
        assert result.status == "ok" and result.metrics["retries"] == 0, (variant, result.reason)
    assert not simulate(designs.build(_control(variant)), variant).passed


def test_the_report_counts_episodes_per_profile_and_their_divergences() -> None:
    from buildbench.harness import Episode
    from buildbench.suites.buildarena.outcome import OUTCOME_FORMAT
    from buildbench.suites.buildarena.report import summarize

    def episode(i: int, **kw: object) -> Episode:
        outcome = {"format": OUTCOME_FORMAT, "task_id": "lift-2", "physics": DEFAULT_CONFIG.stamp()}
        return Episode(task_id="lift-2", sample=i, suite="buildarena", agent="reference", protocol="workflow", seed=0,
                       outcome=outcome, **kw)  # type: ignore[arg-type]

    episodes = [episode(0, metrics={"simulated": 1.0, "passed": 1.0}),
                episode(1, metrics={"simulated": 1.0, "diverged": 1.0}),
                episode(2, status="error", error="scorer failed: SimulationDiverged: the simulation diverged")]
    summary = summarize(episodes)
    (row,) = summary["tables"]["Physics profile and diverged simulations"]
    assert row == {"physics": "besiege-1", "sha256": DEFAULT_CONFIG.sha256[:12], "episodes": 3, "judged": 1,
                   "diverged (machine)": 1, "diverged (unscored)": 1, "sim limit (machine)": 0,
                   "sim limit (unscored)": 0}
    assert summary["diverged"] == 2 and summary["sim_limits"] == 0
