"""Fit a physics profile's free constants to trajectories recorded in Besiege (``buildbench buildarena calibrate``).

Each recording (a Lua log or a Block Tracker CSV, :mod:`.trajectories`) is paired with the
machine that made it and simulated in the task's scene with the profile's constants scaled by
factors; the factors that make the simulated motion closest to the recorded one are found by a
bounded search, and the result is written as a new profile.

**Residuals.** The ids both logs share are compared at the recorded sample times (the
simulated log interpolated; held at its last sample where the simulation stopped earlier).
Positions are compared as displacements from each block's first sample, so where the game
placed the machine does not matter. Quantities: ``position`` (RMS of the 3-D displacement
error, units), ``height`` and ``horizontal`` (its vertical and horizontal parts) and, for a
tracker recording, ``integrity`` (RMS difference between the tracker's health-based integrity
and our share of intact welds: a proxy, as our blocks take no damage short of breaking off).
The fit minimises ``sqrt(position² + (INTEGRITY_WEIGHT · integrity)²)`` (RMS over the pairs).

**Search.** Each free name (a profile constant or group, e.g. ``weld_strength``, ``drag``,
``wheel_torque``) gets a factor within bounds (default ``DEFAULT_BOUNDS``), searched in log
space: a grid first (``GRID_POINTS`` per constant), then bounded least squares
(``scipy.optimize.least_squares``, trust region, finite differences) from the best grid
point, capped at ``max_evals`` more simulation rounds. Simulations are deterministic, so the
fit is. Weld strength moves the objective only where a weld breaks, in steps: the grid finds
the step, but finite differences see no slope on it, so such a fit is only as fine as the grid.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .model import Machine
from .physics import PhysicsConfig, Trajectory
from .physics.profile import Entry, PhysicsProfile, ProfileError, parse_profile
from .trajectories import Recording, RecordingError, controls_from_keys

DEFAULT_BOUNDS = (0.1, 10.0)
GRID_POINTS = {1: 9, 2: 5}
"""Grid points per free constant by the number of free constants (3 each beyond two)."""
INTEGRITY_WEIGHT = 10.0
"""Units of position error that a fully broken machine (integrity off by 1) weighs."""


class CalibrationError(ValueError):
    """Bad input to the fit (a free constant, bounds, a machine that cannot be simulated): one line."""


@dataclass(frozen=True)
class FreeConstant:
    """A profile name the fit scales, with the factor's bounds."""

    name: str
    low: float = DEFAULT_BOUNDS[0]
    high: float = DEFAULT_BOUNDS[1]


@dataclass(frozen=True)
class Pair:
    """A recording and the machine that made it, in a task's scene."""

    recording: Recording
    machine: Machine
    task_id: str


def parse_free(texts: Sequence[str], profile: PhysicsProfile) -> list[FreeConstant]:
    """``NAME`` or ``NAME=LOW:HIGH`` (factor bounds) items, comma-separated or repeated.

    Raises:
        CalibrationError: An unknown name, a constant that is zero or not a number (a factor
            cannot move it), or bounds that are not ``0 < LOW < HIGH`` finite numbers.
    """
    out: list[FreeConstant] = []
    for item in (part.strip() for text in texts for part in text.split(",")):
        if not item:
            continue
        name, sep, bounds = item.partition("=")
        members = profile.groups.get(name, (name,))
        if any(m not in profile.entries for m in members):
            known = ", ".join([*sorted(profile.groups), *sorted(profile.entries)])
            raise CalibrationError(f"--free {name}: not a constant or group of profile {profile.name} (known: {known})")
        values = [profile.entries[m].value for m in members]
        if any(isinstance(v, (str, tuple, bool)) for v in values) or not any(values):
            raise CalibrationError(f"--free {name}: {' '.join(f'{m}={v!r}' for m, v in zip(members, values, strict=True))} "
                                   f"in profile {profile.name}; the fit scales values, so it needs non-zero numbers")
        low, high = DEFAULT_BOUNDS
        if sep:
            lo_text, colon, hi_text = bounds.partition(":")
            try:
                low, high = float(lo_text), float(hi_text)
            except ValueError:
                low = high = math.nan
            if not colon or not (math.isfinite(low) and math.isfinite(high) and 0 < low < high):
                raise CalibrationError(f"--free {item}: bounds must be factors 0 < LOW < HIGH, e.g. {name}=0.25:4")
        if any(f.name == name for f in out):
            raise CalibrationError(f"--free {name}: given twice")
        if not sep:  # the default bounds, narrowed to what the simulation accepts
            low, high = _valid_factor(profile, name, 1.0, low), _valid_factor(profile, name, 1.0, high)
        for end in (low, high):
            if not _accepts(profile, name, end):
                raise CalibrationError(f"--free {item}: the simulation refuses factor {end:g} "
                                       f"({_refusal(profile, name, end)}); give narrower bounds")
        out.append(FreeConstant(name, low, high))
    if not out:
        raise CalibrationError("give at least one --free constant (e.g. --free drag)")
    return out


def _refusal(profile: PhysicsProfile, name: str, factor: float) -> str | None:
    try:
        PhysicsConfig.from_profile(profile.with_overrides({name: f"{factor!r}x"}))
    except ProfileError as exc:
        return str(exc)
    return None


def _accepts(profile: PhysicsProfile, name: str, factor: float) -> bool:
    return _refusal(profile, name, factor) is None


def _valid_factor(profile: PhysicsProfile, name: str, inside: float, outside: float) -> float:
    """``outside`` when the simulation accepts it, else the factor nearest it (to 1 %, in log
    space) that it accepts, searched from ``inside`` (accepted)."""
    if _accepts(profile, name, outside):
        return outside
    good, bad = math.log(inside), math.log(outside)
    while abs(bad - good) > 0.01:
        mid = 0.5 * (good + bad)
        good, bad = (mid, bad) if _accepts(profile, name, math.exp(mid)) else (good, mid)
    return math.exp(good)


def profile_with(profile: PhysicsProfile, free: Sequence[FreeConstant], factors: Sequence[float]) -> PhysicsProfile:
    """``profile`` with each free constant scaled by its factor."""
    return profile.with_overrides({f.name: f"{x!r}x" for f, x in zip(free, factors, strict=True)})


def _interp(sim_t: np.ndarray, sim_p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``sim_p`` (T, 3) at times ``t``, linear, held at the ends."""
    return np.stack([np.interp(t, sim_t, sim_p[:, k]) for k in range(3)], axis=1)


@dataclass(frozen=True)
class Residuals:
    """One pair's comparison: RMS per quantity and the error vector the fit minimises.

    ``vector`` holds every displacement error component over ``sqrt(ids · samples)`` and every
    integrity error times ``INTEGRITY_WEIGHT`` over ``sqrt(samples)``, so its squared norm is
    ``position² + (INTEGRITY_WEIGHT · integrity)²``.
    """

    quantities: dict[str, float]
    vector: np.ndarray


def residuals(recording: Recording, traj: Trajectory, intact_share: np.ndarray | None = None) -> Residuals:
    """Compare a recording with a simulated log (see the module docstring).

    Args:
        intact_share: Our share of intact welds at each of ``traj``'s samples (for ``integrity``).

    Raises:
        CalibrationError: The logs share no block id.
    """
    rec = recording.trajectory
    shared = [i for i in rec.ids if i in traj.ids]
    if not shared:
        raise CalibrationError(f"{recording.path}: no block id in common with the simulation "
                               f"(recorded {', '.join(rec.ids)}; simulated {', '.join(traj.ids)})")
    t = rec.time
    errors = []
    for block in shared:
        recorded = rec.series(block) - rec.series(block)[0]
        simulated = _interp(traj.time, traj.series(block), t)
        errors.append(recorded - (simulated - simulated[0]))
    err = np.stack(errors)  # (ids, T, 3)
    quantities = {
        "position": float(np.sqrt(np.mean(np.sum(err**2, axis=2)))),
        "height": float(np.sqrt(np.mean(err[..., 2] ** 2))),
        "horizontal": float(np.sqrt(np.mean(np.sum(err[..., :2] ** 2, axis=2)))),
    }
    parts = [err.ravel() / math.sqrt(err.shape[0] * err.shape[1])]
    if recording.integrity is not None and intact_share is not None and traj.time.size:
        gap = recording.integrity - np.interp(t, traj.time, intact_share)
        quantities["integrity"] = float(np.sqrt(np.mean(gap**2)))
        parts.append(INTEGRITY_WEIGHT * gap / math.sqrt(gap.size))
    return Residuals(quantities, np.concatenate(parts))


def simulate_pair(pair: Pair, config: PhysicsConfig) -> tuple[Trajectory, np.ndarray]:
    """Simulate the pair's machine over its recording's span; the log and the intact-weld share.

    Raises:
        CalibrationError: The machine cannot be simulated in the task (no solid block, unknown blocks,
            a model MuJoCo cannot build: its arena does not depend on the constants fitted).
    """
    from .check import simulation
    from .physics.simulation import ModelRefused

    rec = pair.recording
    control = controls_from_keys(rec) or None
    duration = max(float(rec.trajectory.time[-1]), 2.0 / config.log_hz)
    try:
        sim = simulation(pair.machine, pair.task_id, control=control, config=config, duration_s=duration)
    except ValueError as exc:
        raise CalibrationError(f"{rec.path}: cannot simulate the machine on {pair.task_id}: {exc}") from None
    except ModelRefused as refused:
        raise CalibrationError(f"{rec.path}: cannot simulate the machine on {pair.task_id}: MuJoCo could not build "
                               f"its model ({refused.output.diverged_reason}: {refused})") from None
    welds = max(1, int(sim.compiled.intact.size))
    out = sim.run()
    traj = out.trajectory
    broken_at = np.array(sorted(b.time_s for b in out.broken))
    share = 1.0 - np.searchsorted(broken_at, traj.time, side="right") / welds
    return traj, share


@dataclass(frozen=True)
class _Eval:
    pairs: tuple[Pair, ...]
    profile: PhysicsProfile
    free: tuple[FreeConstant, ...]
    factors: tuple[float, ...]


def _evaluate(job: _Eval) -> list[Residuals]:
    """Residuals of every pair at one set of factors (a process-pool task)."""
    config = PhysicsConfig.from_profile(profile_with(job.profile, job.free, job.factors))
    out = []
    for pair in job.pairs:
        traj, share = simulate_pair(pair, config)
        out.append(residuals(pair.recording, traj, share))
    return out


def _vector(per_pair: list[Residuals]) -> np.ndarray:
    return np.concatenate([r.vector for r in per_pair]) / math.sqrt(len(per_pair))


def objective(per_pair: list[Residuals]) -> float:
    """What the fit minimises: the RMS over pairs of ``sqrt(position² + (INTEGRITY_WEIGHT·integrity)²)``."""
    return float(np.linalg.norm(_vector(per_pair)))


@dataclass
class Fit:
    """The fit's answer: factors of the free constants, residuals at the start (factors 1) and
    at the fit, and the simulation rounds it took."""

    free: list[FreeConstant]
    factors: list[float]
    start: list[Residuals]
    best: list[Residuals]
    evaluations: int
    profile: PhysicsProfile
    trace: list[tuple[list[float], float]] = field(default_factory=list)


class _Spent(Exception):
    """The evaluation budget is spent (stops the refinement)."""


def fit(pairs: Sequence[Pair], profile: PhysicsProfile, free: Sequence[FreeConstant], *, max_evals: int = 40,
        workers: int = 1) -> Fit:
    """Fit the factors of ``free`` to ``pairs`` (see the module docstring).

    Args:
        max_evals: Simulation rounds (one round simulates every pair) of the refinement after
            the grid, finite-difference steps included.
        workers: Processes for the grid (the refinement is sequential).
    """
    from scipy.optimize import least_squares

    from buildbench.parallel import map_ordered

    free_t, pairs_t = tuple(free), tuple(pairs)
    lows = np.log([f.low for f in free])
    highs = np.log([f.high for f in free])
    cache: dict[tuple[float, ...], list[Residuals]] = {}
    trace: list[tuple[list[float], float]] = []

    def key(u: Sequence[float] | np.ndarray) -> tuple[float, ...]:
        return tuple(round(float(x), 9) for x in np.clip(u, lows, highs))

    def record(u: tuple[float, ...], result: list[Residuals]) -> None:
        cache[u] = result
        trace.append(([math.exp(x) for x in u], objective(result)))

    n = len(free_t)
    points = GRID_POINTS.get(n, 3)
    axes = [np.linspace(lo, hi, points) for lo, hi in zip(lows, highs, strict=True)]
    origin = key([0.0] * n)
    grid = [origin, *[g for g in (key(u) for u in np.array(np.meshgrid(*axes, indexing="ij")).reshape(n, -1).T)
                      if g != origin]]
    jobs = [_Eval(pairs_t, profile, free_t, tuple(math.exp(x) for x in u)) for u in grid]
    for u, result in zip(grid, map_ordered(_evaluate, jobs, workers=workers), strict=True):
        record(u, result)
    budget = len(cache) + max_evals

    def vector(u: np.ndarray) -> np.ndarray:
        k = key(u)
        if k not in cache:
            if len(cache) >= budget:
                raise _Spent
            record(k, _evaluate(_Eval(pairs_t, profile, free_t, tuple(math.exp(x) for x in k))))
        return _vector(cache[k])

    start_u = min(cache, key=lambda k: (objective(cache[k]), float(np.abs(k).sum()), k))
    if max_evals > 0 and start_u is not None:
        try:
            # Gauss-Newton in log factors follows the narrow valleys that trading one constant
            # against another makes (drag against thrust); a 1 % step is far above the noise.
            least_squares(vector, np.array(start_u), bounds=(lows, highs), method="trf", diff_step=0.01,
                          x_scale=1.0, max_nfev=max_evals, xtol=1e-4, ftol=1e-8)
        except _Spent:
            pass
    # Among equal residuals the factors nearest the profile's own win: no change without evidence.
    best_u = min(cache, key=lambda k: (objective(cache[k]), float(np.abs(k).sum()), k))
    factors = [math.exp(x) for x in best_u]
    return Fit(list(free_t), factors, cache[origin], cache[best_u], len(cache),
               profile_with(profile, free_t, factors), trace)


def _toml_value(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(repr(float(v)) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def profile_toml(profile: PhysicsProfile, *, name: str, description: str) -> str:
    """``profile`` as a profile file (the format ``physics.profile.parse_profile`` reads)."""
    lines = ["# Written by `buildbench buildarena calibrate`.", "[profile]", f"name = {json.dumps(name)}",
             f"version = {profile.version}", f"description = {json.dumps(description, ensure_ascii=False)}", ""]
    if profile.groups:
        lines.append("[groups]")
        lines += [f"{k} = [{', '.join(json.dumps(m) for m in v)}]" for k, v in profile.groups.items()]
        lines.append("")
    for key, entry in profile.entries.items():
        lines += [f"[values.{key}]", f"value = {_toml_value(entry.value)}", f"unit = {json.dumps(entry.unit)}",
                  f"source = {json.dumps(entry.source)}", f"note = {json.dumps(entry.note, ensure_ascii=False)}", ""]
    return "\n".join(lines)


def calibrated_profile(result: Fit, base: PhysicsProfile, sources: Sequence[str], name: str) -> tuple[PhysicsProfile, str]:
    """The fitted profile with each fitted value sourced to the recordings, and its TOML text."""
    entries = dict(result.profile.entries)
    files = ", ".join(os.path.basename(s) for s in sources)
    for f, x in zip(result.free, result.factors, strict=True):
        for member in base.groups.get(f.name, (f.name,)):
            old = base.entries[member]
            entries[member] = Entry(entries[member].value, old.unit, "besiege",
                                    f"fitted to Besiege recordings ({files}) by buildbench buildarena calibrate: "
                                    f"{f.name} × {x:.4g} of {base.name}'s {old.value!r}; position residual "
                                    f"{objective(result.start):.3g} → {objective(result.best):.3g} units")
    fitted = PhysicsProfile(name, base.version, entries, base.groups, "", base.description)
    text = profile_toml(fitted, name=name, description=f"{base.name} with {', '.join(f.name for f in result.free)} "
                        f"fitted to {files}")
    try:
        parse_profile(text, name)
    except ProfileError as exc:  # our writer and their reader must agree
        raise CalibrationError(f"the written profile does not read back: {exc}") from None
    return fitted, text


def load_pair_machine(path: Path) -> Machine:
    """The machine of ``--machine``: a history JSON (1.0 or 2.0, valid or full), a machine
    document or an episode outcome.

    Raises:
        RecordingError: Not a regular file or over the size cap, a record with blocks our physics
            does not model, or one our library refuses.
        click.ClickException: (from ``cli.load_machine``) another unreadable file.
    """
    from buildbench.jsonio import parse_json

    from .machine_files import load_machine
    from .trajectories import read_recording_text
    from .trajectories.records import machine_of, read_record

    text = read_recording_text(path)
    try:
        raw = parse_json(text)
    except ValueError:
        return load_machine(path)  # its one-line error says why
    if isinstance(raw, list) or (isinstance(raw, dict) and ("operation_history" in raw or "operations" in raw)):
        return machine_of(read_record(path))
    return load_machine(path)


__all__ = ["CalibrationError", "FreeConstant", "Pair", "RecordingError", "fit", "parse_free", "residuals"]
