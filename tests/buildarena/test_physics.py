"""Physics of the open BuildArena simulator against analytic results, weld breaking and determinism."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulate
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.model import ControlEntry, Machine
from buildbench.suites.buildarena.physics import (
    DEFAULT_CONFIG,
    Cargo,
    FireAll,
    PhysicsConfig,
    Scene,
    StaticBox,
    run_scene,
    sim,
)
from buildbench.suites.buildarena.physics.build import compile_scene, rebuild
from buildbench.suites.buildarena.physics.stress import WeldNetwork, stack, weld_network
from buildbench.suites.buildarena.physics.welds import weld_loads
from buildbench.suites.buildarena.tasks import TASKS, scene_for

G = DEFAULT_CONFIG.gravity_mps2
DT = DEFAULT_CONFIG.timestep_s
VACUUM = dataclasses.replace(DEFAULT_CONFIG, linear_drag_per_s=0.0, quadratic_drag_per_m=0.0, angular_drag_per_s=0.0)
"""The default physics without drag, for the analytic laws of motion."""


def _machine(*calls: tuple[str, dict]) -> Machine:
    bench = Workbench()
    assert bench.call("start").ok
    for op, params in calls:
        outcome = bench.call(op, params)
        assert outcome.ok, outcome.text
    return bench.machine


def _scene(duration: float, z: float, **kw: object) -> Scene:
    return Scene(duration, np.eye(3), np.array([0.0, 0.0, z]), **kw)  # type: ignore[arg-type]


def test_free_fall_matches_half_g_t_squared() -> None:
    run = run_scene(_machine(), _scene(2.0, 100.0, ground=False), config=VACUUM)
    traj = run.trajectory
    expected = 100.0 - 0.5 * G * traj.time**2
    # Semi-implicit Euler lags the exact parabola by g·dt·t/2.
    assert np.all(np.abs(traj.series("1")[:, 2] - expected) <= 0.6 * G * DT * traj.time + 1e-9)
    assert traj.time[-1] == pytest.approx(2.0)
    assert traj.time.size == 51  # 25 Hz including t = 0


def test_drag_bounds_a_fall_at_its_terminal_velocity_whatever_the_mass() -> None:
    k = DEFAULT_CONFIG.quadratic_drag_per_m
    terminal = np.sqrt(G / k)
    heavy = _machine(*[("attach_block_to", {"base_block": 1, "face": f, "new_block": "Small Wooden Block"})
                       for f in "ABCD"])
    for machine in (_machine(), heavy):
        traj = run_scene(machine, _scene(20.0, 5000.0, ground=False)).trajectory
        z = traj.series("1")[:, 2]
        speed = -np.diff(z) / np.diff(traj.time)
        assert speed.max() < terminal * 1.001
        assert speed[-1] == pytest.approx(terminal, rel=0.02)  # 20 s is ~6 time constants


def test_heated_rocket_climbs_half_twr_minus_one_g_t_squared() -> None:
    machine = designs.build(designs.Design("twin", designs.twin_rocket()))
    twr = 2 * 1.6 * 8.6 / machine.mass
    run = run_scene(machine, _scene(2.0, 0.0, ground=False, fire_all=FireAll(0.0, 10.0)), config=VACUUM)
    assert run.trajectory.burning.all()
    rise = run.trajectory.series("1")[:, 2] - run.trajectory.series("1")[0, 2]
    expected = 0.5 * (twr - 1.0) * G * run.trajectory.time**2
    assert rise[-1] == pytest.approx(expected[-1], rel=0.01)
    assert np.allclose(run.trajectory.series("1")[:, :2], 0.0, atol=1e-6)  # symmetric: no drift


def test_cold_cannons_push_with_the_weight_of_1_6_units_each() -> None:
    machine = _machine(
        ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Water Cannon"}),
        ("attach_block_to", {"base_block": 1, "face": "B", "new_block": "Water Cannon"}),
    )
    twr = 2 * 1.6 / machine.mass  # 3.2 / 3.25: just short of hovering
    run = run_scene(machine, _scene(2.0, 0.0, ground=False, fire_all=FireAll(0.0, 10.0)), config=VACUUM)
    assert not run.trajectory.burning.any()
    drop = run.trajectory.series("1")[-1, 2] - run.trajectory.series("1")[0, 2]
    assert drop == pytest.approx(0.5 * (twr - 1.0) * G * 2.0**2, rel=0.02)


def test_wheel_ground_speed_is_100_rpm_times_radius() -> None:
    machine = designs.build(designs.Design("car", designs.vehicle()))
    result = simulate(machine, "transport-1", duration_s=3.0)
    traj = result.trajectory
    window = (traj.time >= 1.5) & (traj.time <= 3.0)
    north = traj.series("1")[window, 1]
    speed = (north[-1] - north[0]) / (traj.time[window][-1] - traj.time[window][0])
    omega = DEFAULT_CONFIG.wheel_rpm * 2 * np.pi / 60
    assert speed == pytest.approx(omega * 1.0, rel=0.03)


def test_wheels_brake_when_the_key_is_released() -> None:
    machine = designs.build(designs.Design("car", designs.vehicle()))
    result = simulate(machine, "transport-1", control=[ControlEntry(0.0, "UpArrow", 1.5)], duration_s=4.0)
    traj = result.trajectory
    north = traj.series("1")[:, 1]
    assert north[np.isclose(traj.time, 1.48)][0] > 8.0  # it was driving at ~10 m/s
    # Locked wheels skid to a stop (friction 1: ~1 s from 10 m/s), then the brake holds it.
    after = north[traj.time >= 3.0]
    assert after[-1] - after[0] < 0.05


def _cantilever(config: PhysicsConfig) -> tuple[mujoco.MjModel, mujoco.MjData, object]:
    """A wooden block sticking out east over the edge of a pillar, held only by its weld to the start.

    A second block on top of the start keeps the group's centre of mass over the pillar.
    """
    machine = _machine(
        ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"}),
        ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}),
    )
    pillar = StaticBox((-1.0, 0.0, -0.5), (3.0, 3.0, 1.0))
    scene = _scene(1.0, 0.5 - config.collision_gap_m / 2, ground=False, terrain=(pillar,))
    compiled = compile_scene(machine, scene, config)
    return compiled.model, mujoco.MjData(compiled.model), compiled


def test_cantilever_weld_carries_m_g_and_m_g_lever() -> None:
    model, data, compiled = _cantilever(DEFAULT_CONFIG)
    mujoco.mj_step(model, data, 400)
    ids, force, torque = weld_loads(compiled, data)
    k = int(np.flatnonzero(np.array(compiled.weld_names)[ids] == "3->1.A")[0])
    weight = 0.3 * G
    assert force[k] == pytest.approx(weight, rel=0.01)
    assert torque[k] == pytest.approx(weight * 0.5, rel=0.02)  # weld at the face, mass 0.5 beyond


# Blocks are rigid and the weld's static load is exact: 3 % either side of it decides.
@pytest.mark.parametrize(("factor", "breaks"), [(0.97, True), (1.03, False)])
def test_weld_breaks_exactly_above_its_threshold(factor: float, breaks: bool) -> None:
    static_torque = 0.3 * G * 0.5
    config = dataclasses.replace(DEFAULT_CONFIG, weld_break_torque_nm=factor * static_torque)
    machine = _machine(
        ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"}),
        ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}),
    )
    pillar = StaticBox((-1.0, 0.0, -0.5), (3.0, 3.0, 1.0))
    scene = _scene(1.5, 0.5 - config.collision_gap_m / 2, ground=False, terrain=(pillar,))
    run = run_scene(machine, scene, config=config)
    broken = [b.label for b in run.broken]
    tip = run.trajectory.series("3")[-1, 2]
    if breaks:
        assert broken[:1] == ["3->1.A"] and tip < -1.0
        assert run.broken[0].torque_nm > config.weld_break_torque_nm
    else:
        assert broken == [] and tip == pytest.approx(0.5, abs=0.05)


def test_winch_rope_catches_a_block_whose_weld_broke() -> None:
    config = dataclasses.replace(DEFAULT_CONFIG, weld_break_torque_nm=0.5)  # the cantilever snaps at once
    machine = _machine(
        ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"}),
        ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}),
        ("connect_blocks", {"block_a": 3, "face_a": "E", "block_b": 2, "face_b": "C", "connector": "Winch"}),
    )
    pillar = StaticBox((-1.0, 0.0, -0.5), (3.0, 3.0, 1.0))
    run = run_scene(
        machine, _scene(2.0, 0.5 - config.collision_gap_m / 2, ground=False, terrain=(pillar,)), config=config
    )
    assert "3->1.A" in [b.label for b in run.broken]
    # Rope from the far block's east face to the top of block 2 (length ~2.1): it hangs, it does not fall.
    assert -4.5 < run.trajectory.series("3")[-1, 2] < -0.5


def test_same_machine_and_seed_give_identical_trajectories() -> None:
    machine = designs.build(designs.REFERENCE["support-3"]())
    first = simulate(machine, "support-3", seed=3, duration_s=1.5)
    second = simulate(machine, "support-3", seed=3, duration_s=1.5)
    assert np.array_equal(first.trajectory.position, second.trajectory.position)
    assert np.array_equal(first.trajectory.ballast_mass, second.trajectory.ballast_mass)
    assert first.trajectory.to_csv() == second.trajectory.to_csv()


def test_cargo_mass_ramp_follows_the_lua_script() -> None:
    cargo = Cargo((2.5, 2.5, 1.5), (0, 0, 3), mass_start=5.0, mass_max=50.0, ramp_s=2.0)
    assert cargo.mass(0.0) == pytest.approx(5 + 45 * 0.005)
    assert cargo.mass(1.5) == pytest.approx(27.5)
    assert cargo.mass(2.5) == pytest.approx(50.0)
    assert cargo.mass(30.0) == pytest.approx(50.0)


def test_trajectory_logs_burning_mass_and_unity_ordered_csv() -> None:
    machine = designs.build(designs.REFERENCE["transport-2"]())
    result = simulate(machine, "transport-2", duration_s=0.2)
    traj = result.trajectory
    assert traj.ids[-1] == "Ballast" and traj.ballast_mass[0] == pytest.approx(5.225)
    first = traj.to_csv().splitlines()[0].split(", ")
    assert first[:2] == ["0.00", "ID_1"]
    # Unity order: the third number is the height.
    assert float(first[3]) == pytest.approx(traj.series("1")[0, 2], abs=1e-4)


def test_welded_neighbours_do_not_collide_but_others_do() -> None:
    machine = _machine(("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}))
    compiled = compile_scene(machine, _scene(1.0, 5.0), DEFAULT_CONFIG)
    excluded = {(int(p) >> 16, int(p) & 0xFFFF) for p in compiled.model.exclude_signature}
    a, b = (compiled.model.body(n).id for n in ("b1", "b2"))
    assert (min(a, b), max(a, b)) in excluded


def test_config_rejects_contacts_stiffer_than_two_steps() -> None:
    with pytest.raises(ValueError, match="2\\*timestep"):
        dataclasses.replace(DEFAULT_CONFIG, contact_timeconst_s=0.001)


def test_speed_limit_catches_one_fast_component_and_nan_but_not_a_large_norm() -> None:
    limit = DEFAULT_CONFIG.max_speed_mps
    assert sim._too_fast(np.array([0.0, 1.0, limit]), limit)
    assert sim._too_fast(np.array([0.0, np.nan]), limit)
    assert not sim._too_fast(np.full(4, 0.9 * limit), limit)  # norm 1.8·limit, every component below
    assert not sim._too_fast(np.zeros(6), limit)


def test_thrust_stops_on_the_tick_the_fire_key_is_released() -> None:
    machine = designs.build(designs.Design("twin", designs.twin_rocket()))
    run = run_scene(machine, _scene(1.5, 0.0, ground=False, fire_all=FireAll(0.0, 0.5)), config=VACUUM)
    traj = run.trajectory
    z = traj.series("1")[:, 2]
    step = traj.time[1] - traj.time[0]
    accel = np.diff(z, 2) / step**2
    climbing = accel[traj.time[1:-1] < 0.45]
    falling = accel[traj.time[1:-1] > 0.6]
    assert np.all(climbing > 0.0)
    assert np.allclose(falling, -G, atol=0.01)  # the welds relax for a few ticks after the release


_UNIT_WELD = np.array([[1.0, 1.0 / 12.0]])
_LINE = np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]])


def _pair_network() -> WeldNetwork:
    """Node 1 at x = 1 welded to node 0 at x = 0.5."""
    return weld_network(
        _LINE[:2],
        np.array([-1, 0]),
        np.array([-1, 0]),
        np.zeros(3),
        np.array([[0, 1]]),
        np.array([[0.5, 0, 0]]),
        _UNIT_WELD,
    )


def _triangle_network(scale: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> WeldNetwork:
    """Three nodes in a row, welded 0–1, 1–2 and 0–2 directly (the last closes a loop)."""
    return weld_network(
        _LINE,
        np.array([-1, 0, 1]),
        np.array([-1, 0, 1]),
        np.zeros(3),
        np.array([[0, 1], [1, 2], [0, 2]]),
        np.array([[0.5, 0, 0], [1.5, 0, 0], [1.0, 0, 0]]),
        _UNIT_WELD * np.array(scale)[:, None],
    )


def _in_weld_order(network: WeldNetwork, rows: np.ndarray) -> np.ndarray:
    out = np.empty_like(rows)
    out[network.welds] = rows
    return out


def test_frame_analysis_gives_statics_on_a_tree_and_shares_a_loop_by_stiffness() -> None:
    # A block hanging off node 0 at x = 1, welded at x = 0.5: it must receive its weight and the lever torque.
    # Block wrenches as MuJoCo gives them: (torque about the origin, force); node 1 needs +1 N up.
    # Node 0's own wrench never matters: no weld lies beyond the root.
    blocks = np.array([[9.0, 9, 9, 9, 9, 9], [0, -1.0, 0, 0, 0, 1.0]])
    assert np.allclose(_pair_network().wrenches(blocks), [[0, 0, 1.0, 0, -0.5, 0]])
    # A pull on node 2 of the triangle splits 1/3 over the two-weld path.
    pull = np.zeros((3, 6))
    pull[2, 3] = -1.0  # node 2 is pulled west

    def shares(scale: tuple[float, float, float]) -> np.ndarray:
        network = _triangle_network(scale)
        return _in_weld_order(network, network.wrenches(pull))[:, 0]

    assert np.allclose(shares((1.0, 1.0, 1.0)), [-1 / 3, -1 / 3, -2 / 3])
    assert np.allclose(shares((1.0, 1.0, 4.0)), [-1 / 9, -1 / 9, -8 / 9])  # a stiffer direct weld takes more
    # The same pull as a force the block wrenches do not count (thrust): the welds deliver the opposite.
    thrust = _triangle_network()
    pushed = thrust.wrenches(np.zeros((3, 6)), np.array([2]), np.array([[-1.0, 0, 0, 0, 0, 0]]))
    assert np.allclose(_in_weld_order(thrust, pushed)[:, 0], [1 / 3, 1 / 3, 2 / 3])


def test_stacked_networks_give_each_group_its_own_welds() -> None:
    looped, pair = _triangle_network(), _pair_network()
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 6)), rng.normal(size=(2, 6))
    both = stack([pair, looped, pair])
    out = both.wrenches(np.concatenate([b, a, b]))
    expected = np.concatenate([pair.wrenches(b), looped.wrenches(a), pair.wrenches(b)])
    expected_welds = np.concatenate([pair.welds, looped.welds + 1, pair.welds + 4])
    assert sorted(both.welds.tolist()) == list(range(5))
    for weld, row in zip(expected_welds, expected, strict=True):
        assert np.allclose(out[list(both.welds).index(weld)], row)


def test_a_block_without_the_weld_to_its_parent_is_rejected() -> None:
    with pytest.raises(ValueError, match="joins it to its parent"):
        weld_network(
            np.array([[0.0, 0, 0], [1.0, 0, 0], [5.0, 0, 0]]),
            np.array([-1, 0, 0]),
            np.array([-1, 0, -1]),
            np.zeros(3),
            np.array([[0, 1]]),
            np.array([[0.5, 0, 0]]),
            np.array([[1.0, 1.0 / 12.0]]),
        )


def test_cannon_welds_carry_thrust_less_the_cannons_own_weight_and_inertia() -> None:
    machine = designs.build(designs.Design("twin", designs.twin_rocket()))
    scene = _scene(1.0, 0.0, ground=False, fire_all=FireAll(0.0, 10.0))
    result = run_scene(machine, scene)
    assert result.trajectory.burning.all() and not result.broken
    compiled = compile_scene(machine, scene, DEFAULT_CONFIG)
    model, data = compiled.model, mujoco.MjData(compiled.model)
    thrust = 1.6 * G * 8.6
    data.ctrl[list(compiled.cannon_actuators.values())] = thrust
    mujoco.mj_step(model, data, 20)
    ids, force, _ = weld_loads(compiled, data)
    total_mass = float(model.body_subtreemass[compiled.groups[0].root])
    accel = 2 * thrust / total_mass - G
    for cannon in compiled.cannon_actuators:
        weld = [k for k, name in enumerate(compiled.weld_names) if name.startswith(f"{cannon}->")][0]
        mass = float(model.body_mass[model.body(f"b{cannon}").id])
        assert force[list(ids).index(weld)] == pytest.approx(thrust - mass * (accel + G), rel=1e-3)


def test_a_break_splits_the_group_and_the_pieces_move_on_smoothly() -> None:
    config = dataclasses.replace(DEFAULT_CONFIG, weld_break_torque_nm=0.5)
    machine = _machine(
        ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Small Wooden Block"}),
        ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Small Wooden Block"}),
    )
    pillar = StaticBox((-1.0, 0.0, -0.5), (3.0, 3.0, 1.0))
    scene = _scene(1.0, 0.5 - config.collision_gap_m / 2, ground=False, terrain=(pillar,))
    run = run_scene(machine, scene, config=config)
    assert run.broken[0].label == "3->1.A"
    tip = run.trajectory.series("3")
    # 25 Hz samples of a block that falls from rest: no jump at the rebuild, just free fall.
    steps = np.linalg.norm(np.diff(tip, axis=0), axis=1)
    assert steps.max() < G * run.trajectory.time[-1] * 0.04 + 0.01
    assert tip[-1, 2] < -1.0
    assert np.allclose(run.trajectory.series("1")[-1], run.trajectory.series("1")[0], atol=0.02)


def test_the_weld_response_keeps_a_landing_cargo_from_snapping_a_bridge() -> None:
    machine = designs.build(designs.REFERENCE["support-3"]())
    held = simulate(machine, "support-3", duration_s=1.5)
    instant = simulate(
        machine, "support-3", duration_s=1.5, config=dataclasses.replace(DEFAULT_CONFIG, weld_response_s=0.0)
    )
    assert held.metrics["broken_welds"] == 0
    # Read unfiltered, the one-tick impact of the 5-unit cargo landing breaks welds.
    assert instant.metrics["broken_welds"] > 0 and instant.metrics["first_break_s"] < 1.0


def test_a_break_that_leaves_the_group_whole_keeps_the_model() -> None:
    machine = designs.build(designs.REFERENCE["support-3"]())
    compiled = compile_scene(machine, scene_for(TASKS["support-3"], machine), DEFAULT_CONFIG)
    data = mujoco.MjData(compiled.model)
    mujoco.mj_step(compiled.model, data, 5)
    brace = next(k for k, weld in enumerate(compiled.layout.welds) if weld.brace)
    intact = compiled.intact.copy()
    intact[brace] = False
    kept, same_data = rebuild(compiled, data, intact)
    assert kept.model is compiled.model and same_data is data
    assert brace not in kept.analysis.welds and brace in compiled.analysis.welds
    # A leaf block's only weld: the block falls off as a group of its own, and the model is rebuilt.
    leaf = next(
        k
        for k, weld in enumerate(compiled.layout.welds)
        if not weld.brace
        and sum(w.first == weld.second or w.second == weld.second for w in compiled.layout.welds) == 1
    )
    intact = compiled.intact.copy()
    intact[leaf] = False
    split, state = rebuild(compiled, data, intact)
    assert split.model is not compiled.model and len(split.groups) == len(compiled.groups) + 1
    assert state.time == pytest.approx(data.time)


def test_the_arena_grows_with_the_machine() -> None:
    # MuJoCo's default arena stopped a legal 2,203-block deck on flat ground with an out-of-memory error
    # (6.7-8.1 KB per block in use); each model now gets a base plus a share per block.
    from buildbench.suites.buildarena.check import simulation
    from buildbench.suites.buildarena.physics.mjcf import ARENA_BASE_BYTES, ARENA_BYTES_PER_BODY

    for span in (2, 30):
        machine = designs.build(designs.Design(f"deck {span}", designs.beam_bridge(span)))
        sim = simulation(machine, "lift-1", duration_s=0.1)
        bodies = len(sim.compiled.layout.graph.bodies)  # blocks but braces
        assert 0.7 * len(machine.blocks) < bodies <= len(machine.blocks)
        assert sim.model.narena == ARENA_BASE_BYTES + ARENA_BYTES_PER_BODY * bodies
