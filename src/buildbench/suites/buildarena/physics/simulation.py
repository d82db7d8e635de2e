"""A machine in a scene as a steppable object: reset, step N control ticks, read the state.

``Simulation`` is the loop of :mod:`.sim` cut at tick boundaries, so RL code and the
analysers can advance a run a few ticks at a time and look at it in between, and
``run_scene`` (what the checker and the env use) is ``Simulation(...).run()``. Stepping in
pieces gives the same trajectory, bit for bit, as one ``run``.

One control tick is ``config.steps_per_tick`` physics steps (``tick_s`` seconds). Each tick
applies key presses, the cargo mass, cannon heating and thrust and the bodies' drag, logs when
due, advances the physics, tests for divergence (``divergence``), then breaks every weld whose
force or torque exceeds its threshold.

Divergence: a tick that fails a divergence test ends the run there (``diverged_at_s`` and the
reason). :meth:`Simulation.run` then simulates the whole run again from the start with a finer
step and more solver iterations (``PhysicsConfig.refined``), at most ``divergence_retries``
times; the output says how many attempts it took and, when every attempt diverged, when and
why the last one did. Stepping with :meth:`Simulation.step` never retries. A MuJoCo limit (its
arena full: contacts or constraints dropped) ends the run the same way, and so does a MuJoCo
``FatalError`` (``memory`` when out of arena memory, else ``mujoco``), with what MuJoCo reported
(``diverged_detail``); a finer step cannot change these, so they are not retried
(``divergence.NO_RETRY``). The simulation stays readable (``state``, ``output``). The same holds for a
model MuJoCo cannot compile when welds broke (its pieces need more arena than the whole machine did) and for a
``FatalError`` in :meth:`Simulation.reset`'s first ``mj_forward``: the run stops at 0 s. Where MuJoCo
refuses to build the model at all (its compiler's error, or a ``FatalError`` while the scene is built; the
arena grows with the blocks, so a machine too big for its arena meets it here first) there is nothing to
step: the constructor (or ``reset``) raises :class:`ModelRefused`, whose ``output`` is that of a run
stopped at 0 s with the same reasons (``memory`` when out of memory, else ``mujoco``).

Speed: where the C tick loop is built, consecutive ticks run in it (``native``: the same
operations in the same order, bit for bit) and come back here only for what Python decides
(key events, the energy test's verdict, breaks); ``tick_loop`` and
``RunOutput.tick_loop`` say which loop ran. This module's ``_advance`` is the reference.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass

import mujoco
import numpy as np

from buildbench.suites.buildarena.library.bodies import BodyGraph, body_graph
from buildbench.suites.buildarena.model import ControlEntry, Machine

from . import native
from .build import Compiled, compile_scene, rebuild
from .config import DEFAULT_CONFIG, PhysicsConfig
from .divergence import NO_RETRY, DivergenceWatch
from .scene import Scene
from .sim import (
    _BLAS,
    BrokenWeld,
    RunOutput,
    _Cargo,
    _log_bodies,
    _schedule,
    heated,
)
from .trajectory import Trajectory
from .welds import _WeldResponse


class ModelRefused(RuntimeError):
    """MuJoCo could not build the model of the machine in its scene: ``output`` is the run, stopped at 0 s
    with its reason (``memory`` or ``mujoco``) and what MuJoCo reported (``RunOutput.diverged_detail``)."""

    def __init__(self, output: RunOutput) -> None:
        super().__init__(output.diverged_detail)
        self.output = output


def _mujoco_stop(error: Exception) -> tuple[str, str]:
    """The reason and the one-line report of a MuJoCo error (its report spans lines)."""
    message = "MuJoCo: " + " ".join(str(error).split())
    # "out of memory": its arena (stack) is full; "could not allocate": the arena itself is too big to have.
    lowered = message.lower()
    return ("memory" if "out of memory" in lowered or "could not allocate" in lowered else "mujoco"), message


@dataclass(frozen=True)
class SimState:
    """The simulation between two ticks.

    Attributes:
        tick: Control ticks done.
        time_s: Simulated time (s).
        done: The run is over (its duration reached, the cargo fell below the stop height, or
            the solver diverged); further steps do nothing.
        ids: Logged ids: block ids in machine order, then ``"Ballast"`` if there is cargo.
        position: Their centres ``[east, north, up]`` (m), shape (len(ids), 3).
        velocity: Generalized velocities (MuJoCo ``qvel``; m/s and rad/s), a copy.
        broken: Welds broken so far, in order.
        diverged_at_s: When the solver diverged, else None.
    """

    tick: int
    time_s: float
    done: bool
    ids: list[str]
    position: np.ndarray
    velocity: np.ndarray
    broken: tuple[BrokenWeld, ...]
    diverged_at_s: float | None


class Simulation:
    """``machine`` in ``scene``, advanced by :meth:`step` (see the module docstring).

    Args:
        machine: The machine (its key bindings drive the control sequence).
        scene: Placement, terrain, cargo, duration.
        control: Timed key presses; default the machine's own sequence.
        config: Physics settings.
        graph: The machine's body graph when the caller already has it.
    """

    def __init__(self, machine: Machine, scene: Scene, control: list[ControlEntry] | None = None,
                 config: PhysicsConfig = DEFAULT_CONFIG, graph: BodyGraph | None = None) -> None:
        self.machine, self.scene, self.base_config = machine, scene, config
        self.presses = machine.control_sequence if control is None else control
        self._graph = body_graph(machine) if graph is None else graph
        self._attempts: list[tuple[float, float, str]] = []
        self._wall_before = 0.0
        self._use(config)
        self.reset()

    def _use(self, config: PhysicsConfig) -> None:
        self.config = config
        # The config's derived numbers, read once: they are properties, and a tick is short.
        self._steps = config.steps_per_tick
        self._tick_s = self._steps * config.timestep_s
        self._log_every = config.ticks_per_log

    @property
    def tick_s(self) -> float:
        """Seconds per control tick."""
        return self._tick_s

    def reset(self) -> SimState:
        """Compile the scene and put the machine at its start (time 0, nothing logged).

        Raises:
            ValueError: The machine has no solid block.
            ModelRefused: MuJoCo could not build its model (see the module docstring).
        """
        # The frame analysis's small matrix products gain nothing from BLAS threads, whose
        # spinning workers would take a second core from a parallel run (and from MuJoCo here).
        with _BLAS.limit(limits=1, user_api="blas"):
            return self._reset()

    def _reset(self) -> SimState:
        wall0 = _time.perf_counter()
        config, scene = self.config, self.scene
        try:
            compiled = compile_scene(self.machine, scene, config, self._graph)
            data = mujoco.MjData(compiled.model)
        except (ValueError, mujoco.FatalError) as exc:
            if not self._graph.bodies:  # the layout's own ValueError: nothing to simulate
                raise
            # Otherwise only MuJoCo raises here: its compiler (ValueError), a query of the built model or
            # the allocation of its data (arena).
            raise self._refused(exc, wall0) from exc
        self.compiled = compiled
        self.model = compiled.model
        self._set_data(data)
        self._sched = _schedule(self.machine, compiled, scene, self.presses, config)
        self._wheel_idx = np.array(list(compiled.wheel_actuators.values()), dtype=int)
        self._cannon_idx = np.array(list(compiled.cannon_actuators.values()), dtype=int)
        self._thrust = config.cannon_recoil_mass_units * config.gravity_mps2
        self._use_drag(compiled)
        self._ramp = None if scene.cargo is None else _Cargo.of(
            self.model, scene.cargo, compiled.cargo_body, config, compiled.drag_dofs, self._drag)
        self.n_ticks = int(round(scene.duration_s / self.tick_s))
        n_log = self.n_ticks // self._log_every + 1
        self._log_bodies = _log_bodies(compiled)
        self._stop_z = scene.stop_below_z if compiled.cargo_body >= 0 else None
        self._positions = np.zeros((n_log, self._log_bodies.size, 3))
        self._burning = np.zeros((n_log, self._cannon_idx.size), dtype=bool)
        self._masses = np.zeros(n_log if compiled.cargo_body >= 0 else 0)
        self._broken: list[BrokenWeld] = []
        self._intact = compiled.intact.copy()
        self._events = self._sched.times.tolist()
        self._next_event = 0
        self._diverged: float | None = None
        self._reason: str | None = None
        self._detail: str | None = None
        self._watch = DivergenceWatch(config)
        failed: mujoco.FatalError | None = None
        try:
            mujoco.mj_forward(self.model, self.data)
        except mujoco.FatalError as exc:
            failed = exc
        self._hot = np.zeros(self._cannon_idx.size, dtype=bool)
        self._cannon_on = np.zeros(self._cannon_idx.size)
        self._firing = False
        self._cannon_dirty = self._cannon_idx.size > 0
        self._hot_set = np.zeros(self._cannon_idx.size, dtype=bool)
        self._response = _WeldResponse.of(self._intact.size, self.tick_s, config)
        self.tick_loop = native.tick_loop(self.compiled)
        self._kernel: native.Kernel | None = None
        self._logged = 0
        self._mass = 0.0
        self._tick = 0
        self._done = False
        if failed is not None:
            self._stopped(failed)
        self._wall_s = _time.perf_counter() - wall0
        return self.state()

    def _refused(self, error: Exception, wall0: float) -> ModelRefused:
        """The run of a model MuJoCo could not build: stopped at 0 s, nothing logged."""
        reason, message = _mujoco_stop(error)
        bodies = self._graph.bodies
        ids = [b.id for b in bodies] + (["Ballast"] if self.scene.cargo is not None else [])
        cannons = [b.id for b in bodies if b.type == "Water Cannon"]
        traj = Trajectory(time=np.zeros(0), ids=ids, types=[b.type for b in bodies] + ids[len(bodies):],
                          position=np.zeros((0, len(ids), 3)), cannon_ids=cannons,
                          burning=np.zeros((0, len(cannons)), dtype=bool), ballast_mass=np.zeros(0))
        wall = self._wall_before + _time.perf_counter() - wall0
        return ModelRefused(RunOutput(traj, [], 0.0, wall, 0, reason, self.config.timestep_s, [*self._attempts],
                                      "none: MuJoCo could not build the model", message))

    def _set_data(self, data: mujoco.MjData) -> None:
        self.data = data

    def _use_drag(self, compiled: Compiled) -> None:
        # Rows: linear and quadratic coefficients per dof of ``drag_dofs`` (``build.drag_of``); the views
        # shaped one row per free body serve the tick's arithmetic, done in place in buffers (and in the
        # data's own arrays where the dofs are one run, as they are as compiled).
        dofs = self._drag_dofs = compiled.drag_dofs
        self._drag = np.vstack([compiled.drag_linear, compiled.drag_quadratic])
        self._drag_lin, self._drag_quad = self._drag[0].reshape(-1, 6), self._drag[1].reshape(-1, 6)
        run = slice(int(dofs[0]), int(dofs[0]) + dofs.size) if dofs.size else slice(0, 0)
        self._drag_run = run if np.array_equal(dofs, np.arange(run.start, run.stop)) else None
        self._drag_v = np.zeros((dofs.size // 6, 6))
        self._drag_speed = np.zeros(dofs.size // 6)
        self._drag_squares = np.zeros((dofs.size // 6, 3))
        self._drag_factor = np.zeros((dofs.size // 6, 6))
        self._drag_force = np.zeros((dofs.size // 6, 6))

    def _apply_drag(self) -> None:
        """Drag (``build.drag_of``), held over the tick: six dofs per free body, speed from the first three."""
        data, run = self.data, self._drag_run
        if run is not None:
            v, force = data.qvel[run].reshape(-1, 6), data.qfrc_applied[run].reshape(-1, 6)
        else:
            v, force = self._drag_v, self._drag_force
            np.take(data.qvel, self._drag_dofs, out=v.reshape(-1))
        speed, factor, squares = self._drag_speed, self._drag_factor, self._drag_squares
        # The squared speed as ``np.einsum("bi,bi->b", v, v)`` adds the products (the first and the third,
        # then the second; the drag of the recorded runs), in plain ufuncs, which cost less than einsum's parsing.
        np.multiply(v[:, :3], v[:, :3], out=squares)
        np.add(squares[:, 0], squares[:, 2], out=speed)
        np.add(speed, squares[:, 1], out=speed)
        np.sqrt(speed, out=speed)
        # -(linear + quadratic·speed)·v, operation by operation as written.
        np.multiply(self._drag_quad, speed[:, None], out=factor)
        np.add(self._drag_lin, factor, out=factor)
        np.negative(factor, out=factor)
        np.multiply(factor, v, out=force)
        if run is None:
            data.qfrc_applied[self._drag_dofs] = force.reshape(-1)

    def __getstate__(self) -> dict[str, object]:
        # The C loop holds addresses of this model and data: a copy (``copy.deepcopy``, pickle) builds its own.
        return {**self.__dict__, "_kernel": None}

    @property
    def done(self) -> bool:
        return self._done

    def step(self, n_ticks: int = 1) -> SimState:
        """Advance up to ``n_ticks`` control ticks (fewer when the run ends); returns the new state.

        Raises:
            ValueError: ``n_ticks`` is negative.
        """
        if n_ticks < 0:
            raise ValueError(f"step: n_ticks must be >= 0, got {n_ticks}")
        wall0 = _time.perf_counter()
        with _BLAS.limit(limits=1, user_api="blas"):  # as in reset
            try:
                if self.tick_loop == native.NATIVE:
                    end = self._tick + n_ticks
                    while not self._done and self._tick < end:
                        self._run_native(end - self._tick)
                else:
                    for _ in range(n_ticks):
                        if self._done:
                            break
                        self._advance()
            except mujoco.FatalError as exc:
                self._stopped(exc)
        self._wall_s += _time.perf_counter() - wall0
        return self.state()

    def run(self) -> RunOutput:
        """Step to the end of the run and return what it produced; a run that diverged is simulated
        again from the start with a finer step (see the module docstring)."""
        self.step(self.n_ticks + 1 - self._tick)
        while (self._diverged is not None and self._reason not in NO_RETRY
               and len(self._attempts) < self.base_config.divergence_retries):
            self._attempts.append((self.config.timestep_s, self._diverged, self._reason or ""))
            self._wall_before += self._wall_s
            self._use(self.base_config.refined(len(self._attempts)))
            self.reset()
            self.step(self.n_ticks + 1 - self._tick)
        return self.output()

    def state(self) -> SimState:
        """Where the run is now (copies; the simulation goes on unchanged)."""
        ids = [b.block_id for b in self.compiled.blocks] + (["Ballast"] if self.compiled.cargo_body >= 0 else [])
        return SimState(self._tick, self._tick * self.tick_s, self._done, ids,
                        self.data.xpos[self._log_bodies].copy(), self.data.qvel.copy(), tuple(self._broken),
                        self._diverged)

    def output(self) -> RunOutput:
        """The log so far (the whole run's once :attr:`done`)."""
        compiled = self.compiled
        cargo = compiled.cargo_body >= 0
        logged = self._logged
        traj = Trajectory(
            time=np.arange(logged) * (self._log_every * self._tick_s),
            ids=[b.block_id for b in compiled.blocks] + (["Ballast"] if cargo else []),
            types=[b.type for b in compiled.blocks] + (["Ballast"] if cargo else []),
            position=self._positions[:logged],
            cannon_ids=list(compiled.cannon_actuators),
            burning=self._burning[:logged],
            ballast_mass=self._masses[:logged],
        )
        return RunOutput(traj, list(self._broken), self._diverged, self._wall_before + self._wall_s,
                         self._tick * self._steps, self._reason, self.config.timestep_s,
                         [*self._attempts], self.tick_loop, self._detail)

    def _advance(self) -> None:
        """One control tick; marks the run done where the loop of a whole run would stop."""
        data, tick_s = self.data, self._tick_s
        t = self._tick * tick_s
        sched, events = self._sched, self._events
        while self._next_event < len(events) and events[self._next_event] <= t + 1e-9:
            data.ctrl[self._wheel_idx] = sched.wheel_ctrl[self._next_event]
            self._cannon_on[...] = sched.cannon_on[self._next_event]  # in place, as ``_hot``: the C loop holds them
            self._firing = bool(self._cannon_on.any())
            self._cannon_dirty = self._cannon_idx.size > 0
            self._next_event += 1
        if self._ramp is not None:
            self._mass = self._ramp.apply(self.model, data, t, self._drag)
            self._ramp.hold(self.model, data)
        log_due = self._tick % self._log_every == 0
        # Heating sets the thrust only while a cannon fires; otherwise it is needed for the log alone.
        cannons = self._cannon_idx
        if cannons.size and (log_due or self._firing or self._cannon_dirty):
            self._hot[...] = heated(self.compiled, self.model, data, cannons.size)
            if self._cannon_dirty or not np.array_equal(self._hot, self._hot_set):
                steam = self.config.steam_factor
                data.ctrl[cannons] = self._cannon_on * self._thrust * np.where(self._hot, steam, 1.0)
                self._cannon_dirty = False
                self._hot_set[...] = self._hot
        if log_due:
            self._log()
            if self._stop_z is not None and data.xpos[self.compiled.cargo_body, 2] < self._stop_z:
                self._done = True
                return
        if self._tick == self.n_ticks:
            self._done = True
            return
        if self._drag_dofs.size:
            self._apply_drag()
        mujoco.mj_step(self.model, data, self._steps)
        self._stepped(t)

    def _stepped(self, t: float) -> None:
        """The rest of the tick from ``t`` once stepped: the divergence test, then the weld test."""
        reason = self._watch.check(self.model, self.data, t + self._tick_s)
        if reason is not None:
            self._diverged, self._reason, self._detail = t, reason, self._watch.detail
            self._done = True
            return
        self._checked(t)

    def _stopped(self, error: mujoco.FatalError) -> None:
        """MuJoCo stopped the tick under way (both loops leave ``_tick`` at it), or the first ``mj_forward`` of
        ``reset`` (tick 0): the run ends there."""
        reason, message = _mujoco_stop(error)
        # A full arena it warned of first is the cause (dropped contacts leave no room for the solver).
        full = self._watch.limit(self.model, self.data)
        if full is not None:
            reason, message = full, f"{self._watch.detail}; then {message}"
        self._diverged, self._reason, self._detail = self._tick * self._tick_s, reason, message
        self._done = True

    def _checked(self, t: float, analysed: bool = False) -> None:
        self._break_welds(t, analysed)
        if not self._done:
            self._tick += 1

    def _run_native(self, limit: int) -> None:
        """Up to ``limit`` ticks in the C loop, and the tick it left to Python finished here (``native``)."""
        if self._kernel is None:
            self._response.prepare(self.compiled)
            self._kernel = native.kernel(self)
        end = self._tick + limit
        stop = native.run(self, self._kernel, limit)
        t = self._tick * self._tick_s
        if stop == native.STOP_DONE:
            self._done = True
        elif stop == native.STOP_STEPPED:
            self._stepped(t)
        elif stop == native.STOP_CHECKED:
            # The C loop ran the tick's weld analysis: a weld is over its limit.
            self._checked(t, analysed=True)
        elif self._tick < end:  # a tick the C loop does not take (a key event, the last tick): all of it here
            self._advance()

    def _log(self) -> None:
        row = self._logged
        self._positions[row] = self.data.xpos[self._log_bodies]
        self._burning[row] = self._hot
        if self._ramp is not None:
            self._masses[row] = self._mass
        self._logged += 1

    def _break_welds(self, t: float, analysed: bool = False) -> None:
        snapped = self._response.snapped(self.compiled, self.data, analysed)
        if not snapped:
            return
        self._kernel = None  # the welds, and maybe the model, change
        for weld, force, torque in snapped:
            self._intact[weld] = False
            self._broken.append(BrokenWeld(self.compiled.weld_names[weld], t + self._tick_s, force, torque))
        if self._watch.energy_jumped(self.model, self.data):
            # A blow-up in this tick snapped them: the run diverged here (the rebuild would forget the baseline).
            self._diverged, self._reason, self._detail = t, "energy", None
            self._done = True
            return
        try:
            self.compiled, data = rebuild(self.compiled, self.data, self._intact)
        except ValueError as exc:
            # Only MuJoCo's compiler raises it there: the pieces' model (more bodies, more dofs) needs more
            # arena than the whole machine's did. It stops the tick under way as MuJoCo's errors do (``step``).
            raise mujoco.FatalError(str(exc)) from exc
        if self.compiled.model is not self.model:
            self.model = self.compiled.model
            self._set_data(data)
            self._log_bodies = _log_bodies(self.compiled)
            self._use_drag(self.compiled)
            self._watch.rebased(self.model, self.data)
            if self._ramp is not None:
                self._ramp = _Cargo.of(self.model, self._ramp.cargo, self.compiled.cargo_body, self.config,
                                       self.compiled.drag_dofs, self._drag)


def run_scene(
    machine: Machine,
    scene: Scene,
    control: list[ControlEntry] | None = None,
    config: PhysicsConfig = DEFAULT_CONFIG,
    graph: BodyGraph | None = None,
) -> RunOutput:
    """Simulate ``machine`` in ``scene`` to the end and log it at ``config.log_hz`` (see :class:`Simulation`)."""
    return Simulation(machine, scene, control, config, graph).run()
