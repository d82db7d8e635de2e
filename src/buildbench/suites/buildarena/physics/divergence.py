"""Telling a numerical blow-up from physics, cheaply, after every control tick.

A run has diverged when any of these holds (the first that does names the reason):

* ``contacts`` / ``memory``: MuJoCo's arena was full, so it dropped contacts (``mjWARN_CONTACTFULL``) or
  the constraints of contacts (``mjWARN_CNSTRFULL``): the physics from there on is wrong. These are
  limits (``LIMITS``): a finer step cannot help, so no retry. MuJoCo's ``FatalError`` out of arena memory
  stops a run as ``memory`` too, any other as ``mujoco``, whether it comes in a tick
  (``simulation.Simulation.step``), in the first ``mj_forward`` of ``reset`` or while MuJoCo builds the model
  (``simulation.ModelRefused``: its compiler out of memory, an arena too big to allocate);
* ``reset``: MuJoCo reset the data itself (its clock went back) after a bad acceleration;
* ``nan``: a velocity is NaN or infinite, or MuJoCo warned of a bad acceleration (``mjWARN_BADQACC``);
* ``speed``: a generalized velocity exceeds ``max_speed_mps``;
* ``energy``: within one check interval (``divergence_check_ticks``) the kinetic energy per unit of
  the scene's mass grew by more than ``energy_jump_j_per_kg`` *and* to more than four times what it
  was: thrust, motors and gravity add energy smoothly (a rocket's kinetic energy grows at most
  ~1.2x per 0.1 s once it moves), a blow-up adds orders of magnitude within a few steps. The same rule
  holds for each free body on its own, with half its squared linear speed as its energy per unit of
  mass: the scene's test alone let a blow-up in a light part of a heavy machine pass (a 1.6-unit brace
  pair beside a 100-block beam flew at 150 units/s, under the bound once divided by the whole mass).
  The largest per-body jump of an interval is 148 J/kg over the reference designs and 582 J/kg over
  hostile designs that do not blow up, 3,736 J/kg in that blow-up. The first interval measures from
  rest, and a tick whose welds break runs the tests at once (a blow-up snaps welds; the rebuilt model's
  energies are the next baselines);
* ``penetration``: a contact is deeper than ``max_penetration_m`` (soft contacts gave way: a body
  sank into or through another) or a Winch rope stretched that much beyond its length.

The limits and the next three are tested every tick (one norm, three warning counters), the others every
``divergence_check_ticks`` ticks (one ``mj_mulM``, two vector minima and a pass over the free bodies).

MuJoCo writes its warnings to ``MUJOCO_LOG.TXT`` in the working directory (the user's folder) unless a
handler is set: importing this module sets one that logs them (logger ``buildbench.mujoco``) where no
other handler is set. The verdicts read the warning counters, never the handler, so another handler set
by another MuJoCo user in the process changes nothing here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import mujoco
import numpy as np

from .config import PhysicsConfig
from .sim import _too_fast

ENERGY_GROWTH = 4.0
"""An energy jump counts only when the kinetic energy also grew by more than this factor."""
LIMITS = frozenset({"contacts", "memory"})
"""Reasons that are MuJoCo's arena limits: the machine needs more than its blocks' share (``mjcf``)."""
NO_RETRY = LIMITS | {"mujoco"}
"""Reasons a finer step cannot change: the run is not simulated again."""

_CONTACTFULL, _CNSTRFULL = mujoco.mjtWarning.mjWARN_CONTACTFULL, mujoco.mjtWarning.mjWARN_CNSTRFULL
_LOG = logging.getLogger("buildbench.mujoco")


def _log_warning(message: str) -> None:
    _LOG.warning("MuJoCo: %s", message)


def log_mujoco_warnings() -> None:
    """MuJoCo's warnings to logging instead of ``MUJOCO_LOG.TXT`` in the working directory, unless another
    handler is set (that one stays)."""
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_log_warning)


log_mujoco_warnings()


@dataclass
class DivergenceWatch:
    """The divergence tests of one run (see the module docstring); ``check`` after every tick."""

    config: PhysicsConfig
    energy: float = 0.0
    """The kinetic energy (per unit of mass) at the last energy test, the baseline of the next; a run starts at
    rest, so the first test measures from zero. -1: no baseline."""
    ticks: int = 0
    bodies: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Each free body's energy per unit of mass (half its squared linear speed) at the last energy test, in the
    order of the model's free joints: the baselines of the next. The C loop (``native``) updates it in place."""
    _model: mujoco.MjModel | None = None
    _free: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _scratch: np.ndarray = field(default_factory=lambda: np.zeros(0))
    detail: str | None = None
    """What MuJoCo reported, once ``check`` named a limit."""
    _data: mujoco.MjData | None = None
    _badqacc: object = None
    _full: tuple[object, object] = (None, None)

    def check(self, model: mujoco.MjModel, data: mujoco.MjData, expected_time: float) -> str | None:
        """The reason the run diverged in the tick just taken, or None."""
        if data is not self._data:
            # Live views of the warning counters: reading them each tick costs no lookup.
            self._data, self._badqacc = data, data.warning[mujoco.mjtWarning.mjWARN_BADQACC]
            self._full = (data.warning[_CONTACTFULL], data.warning[_CNSTRFULL])
        contacts, constraints = self._full
        if contacts.number or constraints.number:  # type: ignore[attr-defined]
            return self.limit(model, data)
        if abs(data.time - expected_time) > 1e-6:
            return "reset"
        if self._badqacc.number:  # type: ignore[attr-defined]
            return "nan"
        if _too_fast(data.qvel, self.config.max_speed_mps):
            return "nan" if not np.isfinite(data.qvel).all() else "speed"
        self.ticks += 1
        if self.ticks % self.config.divergence_check_ticks:
            return None
        return self._slow_checks(model, data)

    def limit(self, model: mujoco.MjModel, data: mujoco.MjData) -> str | None:
        """``contacts`` or ``memory`` where MuJoCo warned of a full arena (``detail`` says what it dropped), else None."""
        contacts, constraints = data.warning[_CONTACTFULL], data.warning[_CNSTRFULL]
        arena = f"MuJoCo's arena of {model.narena:,} bytes"
        if contacts.number:
            self.detail = f"{arena} was full at {contacts.lastinfo:,} contacts: it dropped further contacts"
            return "contacts"
        if constraints.number:
            self.detail = f"{arena} had no room for the constraints of {data.ncon:,} contacts: it dropped them"
            return "memory"
        return None

    def rebased(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """The energy baseline of a rebuilt model (masses and dofs changed), measured now: forgetting it let a
        blow-up that broke welds go unseen (a 400-unit brace flung its machine 86 units up at 150 units/s, the
        run judged) since the next test took the exploded state as its baseline."""
        self.energy = -1.0
        self.energy_jumped(model, data)

    def bind(self, model: mujoco.MjModel) -> np.ndarray:
        """The per-body baselines of ``model`` (at rest where it is a new model, as a run starts), as the C
        loop takes them."""
        if model is not self._model:
            self._model = model
            free = np.flatnonzero(model.jnt_type == mujoco.mjtJoint.mjJNT_FREE)
            self._free = np.asarray(model.jnt_dofadr[free], dtype=np.int64)
            self.bodies = np.zeros(self._free.size)
        return self.bodies

    def _body_energies(self, data: mujoco.MjData) -> np.ndarray:
        """Half each free body's squared linear speed, summed in the C loop's order (x, y, then z)."""
        v = data.qvel
        x, y, z = v[self._free], v[self._free + 1], v[self._free + 2]
        return 0.5 * ((x * x + y * y) + z * z)

    def energy_jumped(self, model: mujoco.MjModel, data: mujoco.MjData) -> bool:
        """The energy test (the module docstring) against the baseline, which becomes the energy now. Welds that
        break run it too, before the rebuild forgets the baseline: a blow-up snaps welds in the tick it happens."""
        if self._scratch.size != model.nv:
            self._scratch = np.zeros(model.nv)
        mujoco.mj_mulM(model, data, self._scratch, data.qvel)
        # Products summed by numpy's pairwise sum, not a BLAS dot (whose rounding depends on the machine's
        # kernel): the C tick loop (``native``) computes the same energy.
        np.multiply(data.qvel, self._scratch, out=self._scratch)
        energy = 0.5 * float(self._scratch.sum()) / max(float(model.body_mass.sum()), 1e-9)
        previous, self.energy = self.energy, energy
        limit = self.config.energy_jump_j_per_kg
        jumped = previous >= 0 and energy - previous > limit and energy > ENERGY_GROWTH * previous
        before = self.bind(model)
        bodies = self._body_energies(data)
        if previous >= 0:
            jumped |= bool(((bodies - before > limit) & (bodies > ENERGY_GROWTH * before)).any())
        before[:] = bodies  # in place: the C loop holds this array
        return jumped

    def _slow_checks(self, model: mujoco.MjModel, data: mujoco.MjData) -> str | None:
        depth = self.config.max_penetration_m
        if data.ncon and float(data.contact.dist[: data.ncon].min()) < -depth:
            return "penetration"
        if model.ntendon and float((data.ten_length - model.tendon_range[:, 1]).max()) > depth:
            return "penetration"
        return "energy" if self.energy_jumped(model, data) else None
