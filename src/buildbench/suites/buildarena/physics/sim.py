"""The pieces of one control tick: controls, thrust and heating, cargo ramp, weld breaking.

``simulation.Simulation`` runs them tick by tick (reset, step N ticks, read the state) and
``simulation.run_scene`` runs a whole scene.

Deterministic: a fixed step, no randomness, one thread; the same machine,
scene and config give a bit-identical trajectory (MuJoCo is deterministic
for a given binary).

Welds: blocks joined by intact welds move as one rigid group; after each
tick the weld loads come from MuJoCo's inverse dynamics and the groups'
frame analysis (``stress``), pass through the welds' response lag, and
every weld over its threshold breaks. A break that splits a group rebuilds
the model with the new groups and carries the state over
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
from .groups import WeldAnalysis
from .scene import Cargo, Scene
from .stress import wrench_bound
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
    """

    trajectory: Trajectory
    broken: list[BrokenWeld] = field(default_factory=list)
    diverged_at_s: float | None = None
    wall_s: float = 0.0
    steps: int = 0
    diverged_reason: str | None = None
    timestep_s: float = 0.0
    retries: list[tuple[float, float, str]] = field(default_factory=list)


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


def _rope_loads(compiled: Compiled, data: mujoco.MjData) -> dict[int, np.ndarray]:
    """Rope tension on the rope ends' bodies: body id → (force, torque about its centre), world frame."""
    loads: dict[int, np.ndarray] = {}
    rows = np.flatnonzero(data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON)
    for rope in compiled.ropes:
        tension = float(data.efc_force[rows[data.efc_id[rows] == rope.tendon]].sum())
        if tension == 0.0:
            continue
        ends = data.site_xpos[list(rope.sites)]
        span = ends[1] - ends[0]
        pull = tension * span / max(float(np.linalg.norm(span)), 1e-9)
        for body, point, force in ((rope.bodies[0], ends[0], pull), (rope.bodies[1], ends[1], -pull)):
            wrench = np.concatenate([force, np.cross(point - data.xipos[body], force)])
            loads[body] = loads.get(body, 0.0) + wrench
    return loads


def weld_loads(compiled: Compiled, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of intact welds with their force (N) and torque about their anchor (N·m)."""
    if compiled.analysis is None:
        return np.zeros(0, dtype=int), np.zeros(0), np.zeros(0)
    loads = _weld_magnitudes(compiled, compiled.analysis, data)
    return compiled.analysis.welds, loads[:, 0], loads[:, 1]


def _weld_magnitudes(compiled: Compiled, analysis: WeldAnalysis, data: mujoco.MjData) -> np.ndarray:
    """Force (N) and torque (N·m) magnitudes per row of ``analysis`` (``compiled``'s), shape (n_welds, 2)."""
    return _magnitudes(analysis, _node_wrenches(compiled, analysis, data))


def _magnitudes(analysis: WeldAnalysis, own: np.ndarray) -> np.ndarray:
    """:func:`_weld_magnitudes` from the nodes' wrenches (:func:`_node_wrenches`)."""
    both = analysis.network.weld_wrenches(own).reshape(-1, 2, 3)
    return np.sqrt(np.einsum("wki,wki->wk", both, both))


def _node_wrenches(compiled: Compiled, analysis: WeldAnalysis, data: mujoco.MjData) -> np.ndarray:
    """Per node of ``analysis``, the wrench its welds deliver to it (``WeldNetwork.own``), a new array.

    MuJoCo's inverse dynamics (``mj_rnePostConstraint``) gives, per body,
    the wrench its parent delivers to it and its children (``cfrc_int``): a
    group's blocks are childless children of its root, so that is what the
    group delivers to each of them (the root's own is never needed: no
    weld lies beyond it). The groups' frame analysis (``stress``) turns
    these, in each group's frame, into weld wrenches. Thrust and rope
    tension act through an actuator and a tendon, which the inverse
    dynamics does not count as external forces, so they are passed in beside.
    """
    mujoco.mj_rnePostConstraint(compiled.model, data)
    # (torque, force) rows per node, world frame → its group's frame (row vectors times the rotation).
    if len(analysis.spans) == 1:  # one group, the common case: one product, no copy per group
        turn = data.xmat[analysis.spans[0][0]].reshape(3, 3)
        blocks = (data.cfrc_int[analysis.bodies].reshape(-1, 3) @ turn).reshape(-1, 6)
    else:
        blocks = data.cfrc_int[analysis.bodies]
        for root, nodes in analysis.spans:
            blocks[nodes] = (blocks[nodes].reshape(-1, 3) @ data.xmat[root].reshape(3, 3)).reshape(-1, 6)
    pushed, loads = analysis.cannon_nodes, None
    if pushed.size:
        loads = np.zeros((pushed.size, 6))
        loads[:, :3] = data.actuator_force[analysis.cannon_acts, None] * analysis.cannon_axes
    if compiled.ropes:
        pushed, loads = _with_ropes(analysis, compiled, data, pushed, loads)
    return analysis.network.own(blocks, pushed, loads)


def _with_ropes(
    analysis: WeldAnalysis,
    compiled: Compiled,
    data: mujoco.MjData,
    nodes: np.ndarray,
    loads: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Add rope tension to the extra loads: one row per node, in each node's group frame."""
    extra = {int(k): row for k, row in zip(nodes, loads if loads is not None else [], strict=True)}
    for body, wrench in _rope_loads(compiled, data).items():
        node = analysis.node(body)
        if node >= 0:
            turned = (wrench.reshape(2, 3) @ data.xmat[analysis.frame(node)].reshape(3, 3)).reshape(6)
            extra[node] = extra.get(node, 0.0) + turned
    return np.array(list(extra), dtype=int), np.array(list(extra.values())).reshape(-1, 6)


_BOUND_MARGIN = 1.0 - 1e-6
"""How far below its limit the bound must keep every weld to skip the exact analysis: far above the
rounding of the analysis and of the lag (relative errors of a few 1e-16 per operation)."""

_BACKOFF_MAX = 64
"""Ticks at most between a failed bound and the next try (the bound costs a little every tick it is tried)."""

_PENDING_FLOATS = 4_000_000
"""At most this many node-wrench numbers (32 MB) wait for the exact analysis; then it catches up."""


@dataclass
class _WeldResponse:
    """Weld loads as the break test reads them: the quasi-static load, smoothed over the welds' response time.

    The frame analysis gives the load that rigid blocks would transmit at
    this instant; a real (or Besiege's springy) weld network needs about a
    natural period to build that load up, so an impact lasting one step
    (a bridge dropped onto its supports, a cargo landing) does not reach
    the welds in full. Each weld's force and torque follow a first-order
    lag with time constant ``config.weld_response_s``; a steady load is
    read in full.

    ``state`` and ``limits`` follow the rows of ``analysis`` (force, torque
    per weld); ``held`` keeps every weld's state across a change of analysis.

    Speed: the exact analysis of a tick is put off while a bound proves that
    no weld can break in it. The analysis is linear, so a weld's load is at
    most its load ``W`` at a reference tick (the last one analysed exactly)
    plus ``a·F + b·T`` (``WeldNetwork.bounds``; ``F``, ``T`` sum the norms of
    the nodes' force and torque changes since that tick); the lag is linear
    and monotone, so since the last exact state ``s0`` a weld's state is at
    most ``decay·s0 + (1 - decay)·W + a·lag(F) + b·lag(T)`` (``lag`` starting
    from 0, ``decay`` the lag's factor to the power of the ticks since). While
    that stays below ``_BOUND_MARGIN`` of every limit (a test of a few numbers
    per tick, with each term's largest ratio to its limit) the ticks' node
    wrenches wait in ``pending``; the exact analysis then runs on them in
    order, as it would have tick by tick, when the bound no longer holds,
    before the analysis changes and when too many wait. After a failed bound
    the analysis runs tick by tick for a while (``backoff`` ticks, doubled
    each time the bound fails soon again), and its last tick becomes the
    reference. ``state`` is then exactly what the tick-by-tick analysis gives,
    and every weld breaks in the same tick. (Loads change little from tick to
    tick while nothing breaks, so the changes bound them far more closely
    than the loads themselves, whose norms add up where they cancel.)
    """

    gain: float
    held: np.ndarray
    analysis: WeldAnalysis | None = None
    state: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    limits: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    pending: list[np.ndarray] = field(default_factory=list)
    # The bound since the last exact state: worst ``s0``/limit, the reference tick's node wrenches (None:
    # zero) and worst ``W``/limit, the largest ratios per unit of F and T, the decay of ``s0`` and the lagged
    # F and T.
    worst: float = float("inf")
    reference: np.ndarray | None = None
    reference_worst: float = 0.0
    per_force: float = float("inf")
    per_torque: float = float("inf")
    decay: float = 1.0
    force: float = 0.0
    torque: float = 0.0
    room: int = 0
    skipped: int = 0
    wait: int = 0
    backoff: int = 1

    @classmethod
    def of(cls, n_welds: int, tick_s: float, config: PhysicsConfig) -> _WeldResponse:
        gain = 1.0 - float(np.exp(-tick_s / config.weld_response_s)) if config.weld_response_s > 0 else 1.0
        return cls(gain, np.zeros((n_welds, 2)))

    def _follow(self, compiled: Compiled) -> None:
        """Re-index the state after the welds were regrouped (a break)."""
        if self.analysis is not None:
            self._catch_up()
            self.held[self.analysis.welds] = self.state
        self.analysis = compiled.analysis
        if self.analysis is not None:
            ids = self.analysis.welds
            self.state = self.held[ids]
            self.limits = np.column_stack([compiled.weld_break_force[ids], compiled.weld_break_torque[ids]])
            with np.errstate(divide="ignore", invalid="ignore"):  # a zero limit gives inf or NaN: no skipping
                per = self.analysis.network.bounds / self.limits[:, :, None]
            self.per_force, self.per_torque = float(np.max(per[:, :, 0])), float(np.max(per[:, :, 1]))
            self.room = _PENDING_FLOATS // max(self.analysis.bodies.size * 6, 1)
            self.wait, self.skipped = 0, 0
            self._restart(None, None)

    def _restart(self, own: np.ndarray | None, magnitudes: np.ndarray | None) -> None:
        """Start the bound from the exact state, with the reference tick's node wrenches and weld loads."""
        with np.errstate(divide="ignore", invalid="ignore"):
            self.worst = float(np.max(self.state / self.limits, initial=0.0))
            self.reference_worst = 0.0 if magnitudes is None else float(np.max(magnitudes / self.limits,
                                                                                initial=0.0))
        self.reference = own
        self.decay, self.force, self.torque = 1.0, 0.0, 0.0

    def _catch_up(self) -> None:
        """Run the exact analysis on the ticks put off, in order."""
        assert self.analysis is not None
        for own in self.pending:
            self.state += self.gain * (_magnitudes(self.analysis, own) - self.state)
        self.pending.clear()

    def snapped(self, compiled: Compiled, data: mujoco.MjData) -> list[tuple[int, float, float]]:
        """``(weld index, force N, torque N·m)`` of every intact weld over its threshold (NaN counts as over)."""
        if compiled.analysis is not self.analysis:
            self._follow(compiled)
        if self.analysis is None:
            return []
        own = _node_wrenches(compiled, self.analysis, data)
        gain, restart = self.gain, False
        if self.wait:  # the bound failed lately: no bound, the exact analysis as it comes
            self.wait -= 1
            restart = not self.wait
        else:
            force, torque = wrench_bound(own if self.reference is None else own - self.reference)
            self.force += gain * (force - self.force)
            self.torque += gain * (torque - self.torque)
            self.decay *= 1.0 - gain
            bound = (self.decay * self.worst + (1.0 - self.decay) * self.reference_worst
                     + self.force * self.per_force + self.torque * self.per_torque)
            if bound <= _BOUND_MARGIN and len(self.pending) < self.room:  # False for NaN
                self.pending.append(own)
                self.skipped += 1
                return []
            self._catch_up()
            # Back off: a bound that failed after few skipped ticks is not tried for twice as long as before.
            self.backoff = 1 if self.skipped >= _BACKOFF_MAX else min(2 * self.backoff, _BACKOFF_MAX)
            self.wait, self.skipped = self.backoff, 0
        magnitudes = _magnitudes(self.analysis, own)
        self.state += gain * (magnitudes - self.state)
        if restart:
            self._restart(own, magnitudes)
        held = self.state <= self.limits
        if held.all():
            return []
        over = np.flatnonzero(~held.all(axis=1))
        return [(int(self.analysis.welds[k]), float(self.state[k, 0]), float(self.state[k, 1])) for k in over]


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
        if data.ncon:
            bodies = model.geom_bodyid[data.contact.geom[: data.ncon]]
            mine = np.flatnonzero((bodies == self.body).any(axis=1))
            mine = mine[data.contact.efc_address[mine] >= 0]  # excluded contacts carry no force
            # Pyramidal cones, condim 3 (as ``mjcf`` writes every contact): four rows per contact whose sum is
            # the normal force and whose differences times the friction are the two tangential forces (what
            # ``mj_contactForce`` computes, to rounding); the frame's rows are the contact axes in world axes.
            rows = data.efc_force[data.contact.efc_address[mine, None] + np.arange(4)]
            mu = data.contact.friction[mine, :2]
            local = np.column_stack([rows.sum(axis=1), (rows[:, 0] - rows[:, 1]) * mu[:, 0],
                                     (rows[:, 2] - rows[:, 3]) * mu[:, 1]])
            up = np.einsum("ki,ki->k", local, data.contact.frame[mine].reshape(-1, 3, 3)[:, :, 2])
            # The force acts on the contact's second geom; the cargo is pushed up by what it rests on.
            support = float(np.where(bodies[mine, 1] == self.body, up, -up).sum())
        share = min(max(support / (self.applied * self.gravity), 0.0), 1.0)
        data.xfrc_applied[self.body, 2] = -extra * self.gravity * share


def _log_bodies(compiled: Compiled) -> np.ndarray:
    """Body ids of the logged blocks in machine order, then the cargo's."""
    cb = compiled.cargo_body
    return np.array([b.body for b in compiled.blocks] + ([cb] if cb >= 0 else []), dtype=int)


_BLAS = ThreadpoolController()
