"""Which tick loop runs a simulation: the C loop of ``_tick.c`` or the Python loop of ``simulation``.

The C loop (``_tick.Kernel``) takes consecutive ticks exactly as ``Simulation._advance`` does and leaves
a tick to Python wherever Python decides: a key event or the run's last tick (the whole tick), a
divergence test that is not clearly passed or an energy test due (after the step), a weld over its limit
(after the weld analysis, ``_welds.c``: Python breaks it). Each operation keeps numpy's order and
rounding, so results are bit for bit the Python loop's.

It runs where the extension was built (``setup.py``; optional) against the headers of the MuJoCo that
is loaded, and calls that very library's functions (their addresses, from the library file in the
``mujoco`` package). ``BUILDBENCH_NATIVE=0`` or a missing or mismatched build run the Python loop;
``RunOutput.tick_loop`` says which ran and why.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from . import welds
from .build import Compiled
from .divergence import ENERGY_GROWTH
from .groups import WeldAnalysis
from .sim import _QUIET_MARGIN

if TYPE_CHECKING:
    from .simulation import Simulation

NATIVE = "native"
STOP_BEFORE, STOP_STEPPED, STOP_CHECKED, STOP_DONE = 0, 1, 2, 3
"""Where ``Kernel.run`` left the last tick: not begun, stepped, divergence-tested, the run over (``_tick.c``)."""

LAYOUT = 6
"""The arrays, numbers and registers :func:`kernel` and :func:`run` hand over (``_tick.c``'s ``LAYOUT``)."""

Kernel = Any
"""``_tick.Kernel``: the C loop of one simulation's model, arrays and weld analysis."""

_FUNCTIONS = ("mj_step", "mj_rnePostConstraint", "mj_geomDistance", "mju_norm", "mj_mulM")


@cache
def _loaded() -> tuple[ModuleType, tuple[int, ...]] | str:
    """The extension and MuJoCo's function addresses, or why the Python loop runs."""
    try:
        from . import _tick  # type: ignore[attr-defined]
    except ImportError as exc:
        return f"python: the C tick loop is not built ({exc})"
    if getattr(_tick, "LAYOUT", None) != LAYOUT:
        return "python: the C tick loop was built from other sources (rebuild it: setup.py build_ext)"
    if _tick.MJ_VERSION != mujoco.mj_version():
        return f"python: the C tick loop was built for MuJoCo {_tick.MJ_VERSION}, this is {mujoco.mj_version()}"
    # The library the bindings link (libmujoco.so.X / libmujoco.X.dylib / mujoco.dll): loading it again by its
    # path gives the same copy, so the kernel calls the very functions the bindings do.
    folder = Path(mujoco.__file__).parent
    libraries = sorted(p for p in folder.iterdir() if p.name.startswith("libmujoco") or p.name == "mujoco.dll")
    if not libraries:
        return "python: MuJoCo's library file is not in the mujoco package"
    library = ctypes.CDLL(str(libraries[0]))
    addresses = tuple(int(ctypes.cast(getattr(library, name), ctypes.c_void_p).value or 0) for name in _FUNCTIONS)
    # Where MuJoCo keeps its error handler: the kernel puts its own there while it runs (``run``).
    user_error = ctypes.addressof(ctypes.c_void_p.in_dll(library, "mju_user_error"))
    return _tick, (*addresses, user_error)


def tick_loop(compiled: Compiled) -> str:
    """``NATIVE`` where the C loop can run ``compiled``, else ``"python: <why>"``."""
    if os.environ.get("BUILDBENCH_NATIVE", "1") == "0":
        return "python: BUILDBENCH_NATIVE=0"
    loaded = _loaded()
    return loaded if isinstance(loaded, str) else NATIVE


def _index(values: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))


_WELD_INDICES = ("nodes", "roots", "span_stops", "cannon_acts", "subtree_nodes", "subtree_starts", "cannon_nodes",
                 "parts", "w_rows", "w_starts", "w_columns", "g_rows", "g_starts", "g_columns", "rope_tendons",
                 "rope_sites", "rope_bodies", "rope_nodes", "pending_rope_nodes")
_WELD_NUMBERS = ("weights", "reference", "reference_thrust", "pending_world", "pending_turns", "pending_thrust",
                 "state", "limits", "signs", "levers", "arms", "cannon_axes", "inverses", "w_values", "g_values",
                 "reach", "pending_rope_loads")


def _network(analysis: WeldAnalysis) -> dict[str, np.ndarray]:
    """The weld network's arrays as ``_welds.h``'s ``Net`` takes them: the loop parts' matrices one after
    another, and per part a row of ``parts`` saying where its own begin (``PART_*``)."""
    net, loops = analysis.network, analysis.network.loops
    # Each part's offsets into the joined arrays, as running sums of Python ints (a kernel is built after
    # every break: numpy's cumsum of short lists costs more than the sums).
    parts, w_rows, w_entries, g_rows, g_entries, inverses = [], 0, 0, 0, 0, 0
    for p in loops:
        weighted, give_up = p.weighted, p.give_up
        parts.append([p.tree.start, p.rows.start, p.inverse.shape[0], w_rows, weighted.rows.size, w_entries,
                      weighted.values.size, g_rows, give_up.rows.size, g_entries, give_up.values.size, inverses])
        w_rows, w_entries = w_rows + weighted.rows.size, w_entries + weighted.values.size
        g_rows, g_entries = g_rows + give_up.rows.size, g_entries + give_up.values.size
        inverses += p.inverse.size

    def joined(pieces: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(pieces) if pieces else np.zeros(0)

    numbers = {
        "signs": net.signs, "levers": net.levers, "arms": net.arms, "cannon_axes": analysis.cannon_axes,
        "inverses": joined([p.inverse.reshape(-1) for p in loops]),
        "w_values": joined([p.weighted.values for p in loops]), "g_values": joined([p.give_up.values for p in loops]),
    }
    indices = {
        "subtree_nodes": net.subtree_nodes, "subtree_starts": net.subtree_starts,
        "cannon_nodes": analysis.cannon_nodes, "parts": parts,
        "w_rows": joined([p.weighted.rows for p in loops]), "w_starts": joined([p.weighted.starts for p in loops]),
        "w_columns": joined([p.weighted.columns for p in loops]), "g_rows": joined([p.give_up.rows for p in loops]),
        "g_starts": joined([p.give_up.starts for p in loops]), "g_columns": joined([p.give_up.columns for p in loops]),
    }
    return ({name: np.ascontiguousarray(np.asarray(v, dtype=float).reshape(-1)) for name, v in numbers.items()}
            | {name: _index(v) for name, v in indices.items()})


def _ropes(compiled: Compiled, analysis: WeldAnalysis) -> dict[str, np.ndarray]:
    """The ropes as ``_tick.c``'s ``rope_inputs`` takes them: per rope its tendon, per end its site, body and
    node (-1 where the body is in no group with welds)."""
    ends = [(site, body) for rope in compiled.ropes for site, body in zip(rope.sites, rope.bodies, strict=True)]
    return {"rope_tendons": _index([rope.tendon for rope in compiled.ropes]),
            "rope_sites": _index([site for site, _ in ends]), "rope_bodies": _index([body for _, body in ends]),
            "rope_nodes": _index([analysis.node(body) for _, body in ends])}


def kernel(sim: Simulation) -> Kernel:
    """The C loop of ``sim`` as it is now (its model, data, arrays and weld analysis: build it anew after a break)."""
    loaded = _loaded()
    assert not isinstance(loaded, str)
    tick, addresses = loaded
    config, ramp, response = sim.config, sim._ramp, sim._response
    analysis = response.analysis
    arrays: dict[str, np.ndarray] = {
        "drag_dofs": _index(sim._drag_dofs), "drag": sim._drag, "log_bodies": _index(sim._log_bodies),
        "positions": sim._positions, "burning": sim._burning, "masses": sim._masses,
        "cannons": _index(sim._cannon_idx), "heat_pairs": _index(sim.compiled.heat_pairs),
        "cannon_on": sim._cannon_on, "hot": sim._hot, "hot_set": sim._hot_set,
        "bodies": sim._watch.bind(sim.model),
    }
    numbers: dict[str, float] = {
        "steps": sim._steps, "tick_s": sim._tick_s, "log_every": sim._log_every, "n_ticks": sim.n_ticks,
        "thrust": sim._thrust, "steam": config.steam_factor, "max_speed": config.max_speed_mps,
        "quiet": _QUIET_MARGIN, "check_ticks": config.divergence_check_ticks,
        "max_penetration": config.max_penetration_m, "energy_jump": config.energy_jump_j_per_kg,
        "energy_growth": ENERGY_GROWTH,
        "stop_z": float("nan") if sim._stop_z is None else sim._stop_z,
    }
    if ramp is None:
        arrays |= {"inertia0": np.zeros(0), "invweight0": np.zeros(0), "dof_invweight0": np.zeros(0),
                   "drag_rows": _index([]), "drag0": np.zeros(0)}
        numbers |= dict.fromkeys(("cap", "gravity", "mass0", "mass_start", "mass_max", "ramp_s", "delay_s",
                                  "floor", "dof_start"), 0.0) | {"cargo_body": -1}
    else:
        cargo = ramp.cargo
        arrays |= {"inertia0": ramp.inertia0, "invweight0": ramp.invweight0, "dof_invweight0": ramp.dof_invweight0,
                   "drag_rows": _index(ramp.drag_rows), "drag0": ramp.drag0}
        numbers |= {"cargo_body": ramp.body, "cap": ramp.cap, "gravity": ramp.gravity, "mass0": ramp.mass0,
                    "mass_start": cargo.mass_start, "mass_max": cargo.mass_max, "ramp_s": cargo.ramp_s,
                    "delay_s": cargo.delay_s, "floor": cargo.floor, "dof_start": ramp.dofs.start}
    numbers |= {"refer_below": welds._REFER_BELOW, "backoff_max": welds._BACKOFF_MAX}
    if analysis is None:
        numbers |= {"per_force": 0.0, "per_torque": 0.0}
        arrays |= {name: _index([]) for name in _WELD_INDICES}
        arrays |= {name: np.zeros(0) for name in _WELD_NUMBERS}
        numbers |= {"welds": 0, "gain": 0.0, "room": 0, "margin": 0.0}
    else:
        arrays |= {"nodes": _index(analysis.bodies), "roots": _index(response.roots),
                   "span_stops": _index([nodes.stop for _, nodes in analysis.spans]),
                   "cannon_acts": _index(analysis.cannon_acts), "weights": response.weights,
                   "reference": response.reference, "reference_thrust": response.reference_thrust,
                   "pending_world": response.pending_world, "pending_turns": response.pending_turns,
                   "pending_thrust": response.pending_thrust, "state": response.state, "limits": response.limits,
                   "reach": response.reach, "pending_rope_nodes": response.pending_rope_nodes,
                   "pending_rope_loads": response.pending_rope_loads}
        arrays |= _network(analysis) | _ropes(sim.compiled, analysis)
        numbers |= {"welds": 1, "gain": response.gain, "room": response.room, "margin": welds._BOUND_MARGIN,
                    "per_force": response.per_force, "per_torque": response.per_torque}
    return tick.Kernel(addresses, sim.model._address, sim.data._address, arrays,
                       {name: float(value) for name, value in numbers.items()})


def run(sim: Simulation, kernel: Kernel, limit: int) -> int:
    """Up to ``limit`` ticks of ``sim`` in ``kernel``; returns where it left the last (``STOP_*``)."""
    ramp, response, watch, events = sim._ramp, sim._response, sim._watch, sim._events
    nan = float("nan")
    regs = (sim._tick, events[sim._next_event] if sim._next_event < len(events) else float("inf"), sim._firing,
            sim._cannon_dirty, nan if ramp is None else ramp.applied, nan if ramp is None else ramp.body_mass,
            sim._mass, sim._logged, watch.ticks, watch.energy, response.decay, response.level, response.lag,
            response.skipped, response.pending, response.wait, response.refers, response.backoff, response.worst,
            response.reference_worst, response.reference_ropes)
    try:
        stop, regs = kernel.run(regs, limit)
    except RuntimeError as exc:  # a MuJoCo error: raised as MuJoCo's own bindings raise it, the tick where it was
        message, regs = exc.args
        _write_back(sim, regs)
        raise mujoco.FatalError(message) from None
    _write_back(sim, regs)
    return int(stop)


def _write_back(sim: Simulation, regs: tuple[Any, ...]) -> None:
    ramp, response, watch = sim._ramp, sim._response, sim._watch
    (sim._tick, _, firing, dirty, applied, body_mass, sim._mass, sim._logged, watch.ticks, watch.energy, response.decay,
     response.level, response.lag, response.skipped, response.pending, response.wait, response.refers,
     response.backoff, response.worst, response.reference_worst, response.reference_ropes) = regs
    sim._firing, sim._cannon_dirty = bool(firing), bool(dirty)
    if ramp is not None:
        ramp.applied, ramp.body_mass = applied, body_mass
