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
  ~1.2x per 0.1 s once it moves), a blow-up adds orders of magnitude within a few steps. The first
  interval measures from rest, and a tick whose welds break runs the test at once (a blow-up snaps welds;
  the rebuilt model's energy is the next baseline);
* ``penetration``: a contact is deeper than ``max_penetration_m`` (soft contacts gave way: a body
  sank into or through another) or a Winch rope stretched that much beyond its length.

The limits and the next three are tested every tick (one norm, three warning counters), the others every
``divergence_check_ticks`` ticks (one ``mj_mulM`` and two vector minima).

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
        jump = energy - previous
        return previous >= 0 and jump > self.config.energy_jump_j_per_kg and energy > ENERGY_GROWTH * previous

    def _slow_checks(self, model: mujoco.MjModel, data: mujoco.MjData) -> str | None:
        depth = self.config.max_penetration_m
        if data.ncon and float(data.contact.dist[: data.ncon].min()) < -depth:
            return "penetration"
        if model.ntendon and float((data.ten_length - model.tendon_range[:, 1]).max()) > depth:
            return "penetration"
        return "energy" if self.energy_jumped(model, data) else None
