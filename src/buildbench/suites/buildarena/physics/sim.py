"""The simulation loop: controls, thrust and heating, cargo ramp, weld breaking, 25 Hz log.

Deterministic: a fixed step, no randomness, one thread; the same machine,
scene and config give a bit-identical trajectory (MuJoCo is deterministic
for a given binary).
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field

import mujoco
import numpy as np

from buildbench.suites.buildarena.model import ControlEntry, Machine

from .build import Compiled, compile_scene
from .config import DEFAULT_CONFIG, PhysicsConfig
from .scene import Scene
from .trajectory import Trajectory

KEY_TIME_QUANTUM_S = 0.1
"""The Lua script formatted press/release times to 0.1 s (spec 1.4)."""


@dataclass(frozen=True)
class BrokenWeld:
    """A weld that broke.

    Attributes:
        label: ``child->base.face`` or ``brace <id>``.
        time_s: When it broke.
        force_n: Its constraint force at that moment.
        torque_nm: Its constraint torque at that moment.
    """

    label: str
    time_s: float
    force_n: float
    torque_nm: float


@dataclass(frozen=True)
class RunOutput:
    """What one simulation produced.

    Attributes:
        trajectory: The 25 Hz log.
        broken: Welds that broke, in order.
        diverged_at_s: Time the solver diverged (the run stopped there), else None.
        wall_s: Wall seconds the loop took (compilation included).
        steps: Physics steps taken.
    """

    trajectory: Trajectory
    broken: list[BrokenWeld] = field(default_factory=list)
    diverged_at_s: float | None = None
    wall_s: float = 0.0
    steps: int = 0


@dataclass(frozen=True)
class _Schedule:
    """Piecewise-constant actuator commands: ``values[i]`` holds from ``times[i]`` on."""

    times: np.ndarray
    wheel_ctrl: np.ndarray
    cannon_on: np.ndarray


def _quantize(t: float) -> float:
    return round(t / KEY_TIME_QUANTUM_S) * KEY_TIME_QUANTUM_S


def _schedule(
    machine: Machine, compiled: Compiled, scene: Scene, control: list[ControlEntry], config: PhysicsConfig
) -> _Schedule:
    """Turn key presses into wheel speeds (rad/s) and cannon on/off over time."""
    wheels = list(compiled.wheel_actuators)
    cannons = list(compiled.cannon_actuators)
    presses = [(_quantize(c.time), _quantize(c.time + c.hold_for), c.key) for c in control]
    if scene.fire_all is not None:
        start = scene.fire_all.start_s
        presses = [(start, start + scene.fire_all.hold_s, "<fire-all>")]
    bounds = sorted({0.0, *(p[0] for p in presses), *(p[1] for p in presses)})
    omega = config.wheel_rpm * 2.0 * np.pi / 60.0
    rows_w, rows_c = [], []
    for t in bounds:
        held = {key for start, end, key in presses if start <= t + 1e-9 < end}

        def active(block_id: str, action: str, held: set[str] = held) -> bool:
            if "<fire-all>" in held and action == "hold_to_fire":
                return True
            return any(k in held for k in machine.blocks[block_id].keys.get(action, []))

        rows_w.append(
            [
                omega * (active(w, "spinning_forward") - active(w, "spinning_backward"))
                for w in wheels
            ]
        )
        rows_c.append([float(active(c, "hold_to_fire")) for c in cannons])
    return _Schedule(
        np.array(bounds),
        np.array(rows_w, dtype=float).reshape(len(bounds), len(wheels)),
        np.array(rows_c, dtype=float).reshape(len(bounds), len(cannons)),
    )


def heated(compiled: Compiled, data: mujoco.MjData, radius: float) -> np.ndarray:
    """Which cannons touch any torch's heating sphere (sphere vs oriented box), shape (n_cannons,)."""
    if compiled.torch_bodies.size == 0 or compiled.cannon_bodies.size == 0:
        return np.zeros(compiled.cannon_bodies.size, dtype=bool)
    t_rot = data.xmat[compiled.torch_bodies].reshape(-1, 3, 3)
    flames = data.xpos[compiled.torch_bodies] + np.einsum("nij,nj->ni", t_rot, compiled.torch_flame_local)
    c_rot = data.xmat[compiled.cannon_bodies].reshape(-1, 3, 3)
    rel = flames[None, :, :] - data.xpos[compiled.cannon_bodies][:, None, :]
    local = np.einsum("cji,ctj->cti", c_rot, rel)
    half = compiled.cannon_half[:, None, :]
    gap = local - np.clip(local, -half, half)
    return bool_any(np.einsum("cti,cti->ct", gap, gap) <= radius * radius)


def bool_any(hits: np.ndarray) -> np.ndarray:
    """Row-wise any over torches."""
    return hits.any(axis=1)


def weld_loads(compiled: Compiled, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Equality ids of active welds with their constraint force (N) and torque (N·m).

    Equality rows come first in ``efc_force``, six per active weld, in
    equality order; torque = 0.5 · torquescale · ‖rotational rows‖
    (MuJoCo's weld parameterisation; torquescale is 1 here).
    """
    ne = data.ne
    if ne == 0:
        empty = np.zeros(0)
        return np.zeros(0, dtype=int), empty, empty
    rows = data.efc_force[:ne].reshape(-1, 6)
    ids = data.efc_id[:ne:6]
    force = np.sqrt(np.einsum("ij,ij->i", rows[:, :3], rows[:, :3]))
    torque = 0.5 * np.sqrt(np.einsum("ij,ij->i", rows[:, 3:], rows[:, 3:]))
    return ids, force, torque


def run_scene(
    machine: Machine,
    scene: Scene,
    control: list[ControlEntry] | None = None,
    config: PhysicsConfig = DEFAULT_CONFIG,
) -> RunOutput:
    """Simulate ``machine`` in ``scene`` and log it at ``config.log_hz``.

    Args:
        machine: The machine (its key bindings drive the control sequence).
        scene: Placement, terrain, cargo, duration.
        control: Timed key presses; default the machine's own sequence.
        config: Physics settings.
    """
    wall0 = _time.perf_counter()
    compiled = compile_scene(machine, scene, config)
    model = compiled.model
    data = mujoco.MjData(model)
    sched = _schedule(machine, compiled, scene, machine.control_sequence if control is None else control, config)
    wheel_idx = np.array(list(compiled.wheel_actuators.values()), dtype=int)
    cannon_idx = np.array(list(compiled.cannon_actuators.values()), dtype=int)
    thrust = config.cannon_recoil_mass_units * config.gravity_mps2
    cargo = scene.cargo
    cb = compiled.cargo_body
    if cargo is not None:
        m0 = float(model.body_mass[cb])
        inertia0 = model.body_inertia[cb].copy()
        invw0 = model.body_invweight0[cb].copy()
        dofs = slice(model.body_dofadr[cb], model.body_dofadr[cb] + model.body_dofnum[cb])
        dof_invw0 = model.dof_invweight0[dofs].copy()
    n_steps = int(round(scene.duration_s / config.timestep_s))
    per_log = config.steps_per_log
    n_log = n_steps // per_log + 1
    log_bodies = np.array([b.body for b in compiled.blocks] + ([cb] if cb >= 0 else []), dtype=int)
    positions = np.zeros((n_log, log_bodies.size, 3))
    burning = np.zeros((n_log, cannon_idx.size), dtype=bool)
    masses = np.zeros(n_log if cb >= 0 else 0)
    times = np.arange(n_log) * (per_log * config.timestep_s)
    broken: list[BrokenWeld] = []
    next_event, event = 0, -1
    diverged = None
    mujoco.mj_forward(model, data)
    hot = heated(compiled, data, config.torch_heat_radius)
    cannon_on = np.zeros(cannon_idx.size)
    logged = 0
    for step in range(n_steps + 1):
        t = step * config.timestep_s
        while next_event < sched.times.size and sched.times[next_event] <= t + 1e-9:
            event, next_event = next_event, next_event + 1
            data.ctrl[wheel_idx] = sched.wheel_ctrl[event]
            cannon_on = sched.cannon_on[event]
        if cargo is not None:
            mass = float(cargo.mass(t))
            model.body_mass[cb] = mass
            model.body_inertia[cb] = inertia0 * (mass / m0)
            model.body_invweight0[cb] = invw0 * (m0 / mass)
            model.dof_invweight0[dofs] = dof_invw0 * (m0 / mass)
        if cannon_idx.size:
            hot = heated(compiled, data, config.torch_heat_radius)
            data.ctrl[cannon_idx] = cannon_on * thrust * np.where(hot, config.steam_factor, 1.0)
        if step % per_log == 0:
            positions[logged] = data.xpos[log_bodies]
            burning[logged] = hot
            if cargo is not None:
                masses[logged] = model.body_mass[cb]
            logged += 1
        if step == n_steps:
            break
        mujoco.mj_step(model, data)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0:
            diverged = t
            break
        ids, force, torque = weld_loads(compiled, data)
        snap = (force > compiled.weld_break_force[ids]) | (torque > compiled.weld_break_torque[ids])
        if snap.any():
            for k in np.flatnonzero(snap):
                eq = int(ids[k])
                data.eq_active[eq] = 0
                broken.append(BrokenWeld(compiled.weld_names[eq], t, float(force[k]), float(torque[k])))
    traj = Trajectory(
        time=times[:logged],
        ids=[b.block_id for b in compiled.blocks] + (["Ballast"] if cb >= 0 else []),
        types=[b.type for b in compiled.blocks] + (["Ballast"] if cb >= 0 else []),
        position=positions[:logged],
        cannon_ids=list(compiled.cannon_actuators),
        burning=burning[:logged],
        ballast_mass=masses[:logged],
    )
    return RunOutput(traj, broken, diverged, _time.perf_counter() - wall0, step)
