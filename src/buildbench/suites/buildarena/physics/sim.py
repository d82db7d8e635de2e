"""The pieces of one control tick: controls, thrust and heating, cargo ramp, weld breaking.

``simulation.Simulation`` runs them tick by tick (reset, step N ticks, read the state) and
``simulation.run_scene`` runs a whole scene.

Deterministic: a fixed step, no randomness, one thread; the same machine,
scene and config give a bit-identical trajectory (MuJoCo is deterministic
for a given binary).

Welds: blocks joined by intact welds move as one rigid group; after each
tick every weld over its threshold breaks (``welds``). A break that splits a
group rebuilds the model with the new groups and carries the state over
(``build.rebuild``); otherwise only the weld analysis changes.

Speed: per tick, constant cargo mass and unchanged thrust are not
re-applied, heating is tested only while a cannon fires or a sample is
due, and the speed test first bounds all velocities with one norm; each
shortcut decides exactly as the full test would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np
from threadpoolctl import ThreadpoolController

from buildbench.suites.buildarena.model import ControlEntry, Machine

from .build import Compiled
from .config import PhysicsConfig
from .scene import Cargo, Scene
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
        diverged_at_s: Time the solver diverged in the last attempt (the run stopped there), else None.
        wall_s: Wall seconds the loop took (compilation and every attempt included).
        steps: Physics steps taken (last attempt).
        diverged_reason: Why the last attempt diverged (``divergence``), else None.
        timestep_s: The physics step of the last attempt.
        retries: ``(timestep_s, diverged_at_s, reason)`` of every earlier attempt (each diverged).
        tick_loop: Which tick loop ran: ``"native"`` (the C loop) or ``"python"`` with the reason (``native``).
        diverged_detail: What MuJoCo reported when a limit or an error stopped the last attempt
            (``divergence.NO_RETRY``), else None.
    """

    trajectory: Trajectory
    broken: list[BrokenWeld] = field(default_factory=list)
    diverged_at_s: float | None = None
    wall_s: float = 0.0
    steps: int = 0
    diverged_reason: str | None = None
    timestep_s: float = 0.0
    retries: list[tuple[float, float, str]] = field(default_factory=list)
    tick_loop: str = "python"
    diverged_detail: str | None = None


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
            [omega * (active(w, "spinning_forward") - active(w, "spinning_backward")) for w in wheels]
        )
        rows_c.append([float(active(c, "hold_to_fire")) for c in cannons])
    return _Schedule(
        np.array(bounds),
        np.array(rows_w, dtype=float).reshape(len(bounds), len(wheels)),
        np.array(rows_c, dtype=float).reshape(len(bounds), len(cannons)),
    )


def heated(compiled: Compiled, model: mujoco.MjModel, data: mujoco.MjData, n_cannons: int) -> np.ndarray:
    """Which cannons touch any torch's heating sphere, shape (n_cannons,).

    A cannon is heated when the signed distance between its full-size box
    and a flame sphere (radius ``torch_heat_radius``) is ≤ 0 (block
    descriptions, App. E.2: "all objects in this area will be heated").
    """
    hot = np.zeros(n_cannons, dtype=bool)
    for cannon, hull, flame in compiled.heat_pairs:
        if not hot[cannon] and mujoco.mj_geomDistance(model, data, hull, flame, 0.01, None) <= 0.0:
            hot[cannon] = True
    return hot


_QUIET_MARGIN = 1.0 - 1e-9
"""Relative margin of the speed pre-test, far above the rounding of a sum of squares."""


def _too_fast(qvel: np.ndarray, max_speed: float) -> bool:
    """Whether any generalized velocity reaches ``max_speed`` (or is NaN).

    The Euclidean norm bounds every component and costs one call; the exact
    component test runs only when the norm does not clear the limit.
    """
    if mujoco.mju_norm(qvel) < _QUIET_MARGIN * max_speed:
        return False
    return not np.abs(qvel).max(initial=0.0) < max_speed


_FOUR = np.arange(4)


@dataclass
class _Cargo:
    """Run-time state of the cargo's mass ramp.

    The cargo body's mass follows the ramp up to ``cap``; the weight beyond
    it is a downward force on the cargo as large as what holds the cargo
    can bear (``hold``). MuJoCo's constraint softness scales with inverse
    mass, and a cargo hundreds of times heavier than the 0.3-unit blocks
    it rests on made the contacts launch it (measured on braced decks at
    200–400 units); a bounded inertia keeps them stable.
    """

    cargo: Cargo
    body: int
    cap: float
    gravity: float
    mass0: float
    inertia0: np.ndarray
    invweight0: np.ndarray
    dofs: slice
    dof_invweight0: np.ndarray
    drag_rows: np.ndarray
    drag0: np.ndarray
    applied: float = float("nan")
    body_mass: float = float("nan")

    @classmethod
    def of(cls, model: mujoco.MjModel, cargo: Cargo, body: int, config: PhysicsConfig, drag_dofs: np.ndarray,
           drag: np.ndarray) -> _Cargo:
        dofs = slice(int(model.body_dofadr[body]), int(model.body_dofadr[body] + model.body_dofnum[body]))
        rows = np.flatnonzero((drag_dofs >= dofs.start) & (drag_dofs < dofs.stop))
        return cls(
            cargo,
            body,
            config.cargo_inertial_mass_cap,
            config.gravity_mps2,
            float(model.body_mass[body]),
            model.body_inertia[body].copy(),
            model.body_invweight0[body].copy(),
            dofs,
            model.dof_invweight0[dofs].copy(),
            rows,
            drag[:, rows].copy(),
        )

    def apply(self, model: mujoco.MjModel, data: mujoco.MjData, t: float, drag: np.ndarray) -> float:
        """Set the cargo's mass (and extra weight) for time ``t``; returns the full mass.

        Inertia and constraint weights scale with the body mass, as
        ``mj_setConst`` would compute for a lone free body, and so does its
        drag coefficients (``drag``: linear and quadratic, columns ``drag_rows``).
        """
        mass = self.cargo.mass(t)
        if mass == self.applied:
            # Before and after the ramp the mass is constant: the model already holds it.
            return mass
        self.applied = mass
        body_mass = min(mass, self.cap)
        if body_mass != self.body_mass:
            self.body_mass = body_mass
            ratio = body_mass / self.mass0
            model.body_mass[self.body] = body_mass
            model.body_inertia[self.body] = self.inertia0 * ratio
            model.body_invweight0[self.body] = self.invweight0 / ratio
            model.dof_invweight0[self.dofs] = self.dof_invweight0 / ratio
            drag[:, self.drag_rows] = self.drag0 * ratio  # drag follows the body's inertia (Unity's law)
        return mass

    def hold(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Set the weight beyond the cap (a downward force on the cargo) from what holds it in the last step.

        With ``C`` the upward force of the cargo's contacts, ``M`` its mass and ``m`` the capped body mass,
        the extra weight is ``(M - m)·g·min(1, C / (M·g))``; then the capped body accelerates as
        ``g - C/M``, exactly as the full mass would, as long as ``C ≤ M·g``: a cargo at rest on a bridge
        weighs ``M·g`` on it, one that nothing holds falls at ``g``. (A constant extra weight made a
        1,400-unit cargo fall at 27 g when the Support Lv.1 reference bridge broke, smash through its
        pieces, and the solver diverge.) The contact forces are the last step's, one tick behind.
        """
        extra = self.applied - self.body_mass
        if not extra > 0:
            data.xfrc_applied[self.body, 2] = 0.0
            return
        support = 0.0
        ncon = data.ncon
        if ncon:
            contact = data.contact
            sides = model.geom_bodyid[contact.geom[:ncon]] == self.body
            mine = np.flatnonzero(sides[:, 0] | sides[:, 1])
            address = contact.efc_address[mine]
            live = address >= 0  # excluded contacts carry no force
            mine, address = mine[live], address[live]
            # Pyramidal cones, condim 3 (as ``mjcf`` writes every contact): four rows per contact whose sum is
            # the normal force and whose differences times the friction are the two tangential forces (what
            # ``mj_contactForce`` computes, to rounding); the frame's rows are the contact axes in world axes.
            rows = data.efc_force[address[:, None] + _FOUR]
            mu = contact.friction[mine, :2]
            local = np.empty((mine.size, 3))
            local[:, 0] = rows.sum(axis=1)
            np.multiply(np.subtract(rows[:, 0], rows[:, 1], out=local[:, 1]), mu[:, 0], out=local[:, 1])
            np.multiply(np.subtract(rows[:, 2], rows[:, 3], out=local[:, 2]), mu[:, 1], out=local[:, 2])
            # The contact axes' upward parts; summed as ``np.einsum("ki,ki->k")`` adds them with this strided
            # operand (in order; the holds of the recorded runs), in plain ufuncs, which cost less than einsum.
            ups = local * contact.frame[mine].reshape(-1, 3, 3)[:, :, 2]
            up = ups[:, 0] + ups[:, 1]
            up += ups[:, 2]
            # The force acts on the contact's second geom; the cargo is pushed up by what it rests on.
            np.negative(up, out=up, where=~sides[mine, 1])
            support = float(up.sum())
        share = min(max(support / (self.applied * self.gravity), 0.0), 1.0)
        data.xfrc_applied[self.body, 2] = -extra * self.gravity * share


def _log_bodies(compiled: Compiled) -> np.ndarray:
    """Body ids of the logged blocks in machine order, then the cargo's."""
    cb = compiled.cargo_body
    return np.array([b.body for b in compiled.blocks] + ([cb] if cb >= 0 else []), dtype=int)


_BLAS = ThreadpoolController()
