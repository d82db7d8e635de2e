"""Besiege interop for users who own the game: the embedded Lua control script and the trajectory log.

``lua_script`` writes the control and logging script the released exporter
embeds in a ``.bsg`` (Lua Scripting Mod): key emulators for the keys of the
control sequence, presses and releases at their times in the 100 Hz fixed
update, the cargo mass ramp (``mass = 5 + (max − 5)·clamp((t − 0.5)/ramp,
0.005, 1)``), and every 4th frame (25 Hz) one log line per tracked block,
``t, ID_k, x, y, z`` with y up (Unity), plus ``t, ID_k, true|false`` for
tracked Water Cannons (heated) and ``t, ID_Ballast, mass``.

``read_trajectory_csv`` reads such a log (as copied from the game's console,
duplicates and any order allowed) into a ``Trajectory`` in our real frame, so
the verifier's rules and the trajectory metrics run on a real Besiege run.
The script follows the released exporter's use of the mod's API; it cannot be
checked without the game.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from buildbench.jsonio import finite_float

from .model import STARTING_BLOCK, ControlEntry
from .physics import Trajectory

LOG_RATE_HZ = 25
FIXED_RATE_HZ = 100
CARGO_MASS_MIN = 5.0
CARGO_RAMP_START_S = 0.5
CARGO_RAMP_FLOOR = 0.005


@dataclass(frozen=True)
class TrackedBlock:
    """A block the script logs.

    Attributes:
        block_id: Our block id (logged as ``ID_<block_id>``; ``Ballast`` for the cargo).
        ref_key: The block's ``bmt-lua_ref_key`` in the ``.bsg`` (None: the starting block, index 0).
        type: Block type name (Water Cannons also log their heated state).
    """

    block_id: str
    ref_key: str | None
    type: str


@dataclass(frozen=True)
class CargoRamp:
    """The cargo's mass slider: from 5 to ``mass_max`` over ``ramp_s`` seconds, starting at 0.5 s."""

    ref_key: str
    mass_max: float
    ramp_s: float


def _key_var(key: str) -> str:
    return "key_" + re.sub(r"[^A-Za-z0-9]", "_", key).lower()


def lua_script(controls: Sequence[ControlEntry], tracked: Sequence[TrackedBlock], cargo: CargoRamp | None,
               stamp: str = "buildbench") -> str:
    """The Lua text of a ``.bsg``'s ``lua_data`` (XML-escaping is the caller's)."""
    keys = sorted({c.key for c in controls})
    lines = [f"-- Written by {stamp}: controls, cargo ramp and a {LOG_RATE_HZ} Hz block log",
             "local frame_count = 0", f"local refresh_rate = {LOG_RATE_HZ}"]
    lines += [f"local {_key_var(k)} = machine.new_key_emulator('{k}')" for k in keys]
    if cargo is not None:
        lines += [f'local cargo_ref_key = "{cargo.ref_key}"', f"local mass_min = {CARGO_MASS_MIN:.1f}",
                  f"local mass_max = {cargo.mass_max:.1f}", f"local ramp_duration = {cargo.ramp_s:.1f}",
                  "local cargo_control = nil", "local mass_value = mass_min"]
    lines += ["local function play()"]
    if cargo is not None:
        lines += ["  cargo_control = machine.get_refs_control(cargo_ref_key)"]
    lines += ["end", "local function update() end", "local function late_update() end",
              "local function fixed_update()", "  frame_count = frame_count + 1",
              f"  local current_time = frame_count / {FIXED_RATE_HZ}"]
    if cargo is not None:
        lines += [f"  local ramp = math.max(math.min((current_time - {CARGO_RAMP_START_S}) / ramp_duration, 1.0), "
                  f"{CARGO_RAMP_FLOOR})",
                  "  mass_value = mass_min + (mass_max - mass_min) * ramp",
                  '  cargo_control.set_slider("mass", mass_value)']
    for entry in controls:
        var = _key_var(entry.key)
        lines += [f"  if current_time >= {entry.time:.1f} then {var}.start() end",
                  f"  if current_time >= {entry.time + entry.hold_for:.1f} then {var}.stop() end"]
    lines += [f"  if frame_count % ({FIXED_RATE_HZ} / refresh_rate) == 0 then",
              "    local info = machine.get_machine_info()"]
    for block in tracked:
        handle = f"b_{re.sub(r'[^A-Za-z0-9]', '_', block.block_id)}"
        lookup = "0" if block.ref_key is None else f'"{block.ref_key}"'
        label = f"ID_{block.block_id}"
        lines += [f"    local {handle} = info.get_block_info({lookup})",
                  f"    local {handle}_p = {handle}.position()"]
        if block.type == "Water Cannon":
            lines.append(f'    print(string.format("%.2f, %s, %s", current_time, "{label}", '
                         f"tostring({handle}.burning())))")
        if block.type == "Ballast" and cargo is not None:
            lines.append(f'    print(string.format("%.2f, %s, %.4f", current_time, "{label}", mass_value))')
        lines.append(f'    print(string.format("%.2f, %s, %.4f, %.4f, %.4f", current_time, "{label}", '
                     f"{handle}_p.x, {handle}_p.y, {handle}_p.z))")
    lines += ["  end", "end", "local function on_gui() end",
              "return {play = play, update = update, late_update = late_update, fixed_update = fixed_update, "
              "on_gui = on_gui}"]
    return "\n".join(lines)


class TrajectoryCsvError(ValueError):
    """A log line that is not ``t, ID_k, x, y, z`` / ``t, ID_k, true|false`` / ``t, ID_Ballast, mass``."""


def _parse_line(number: int, line: str) -> tuple[float, str, list[str]]:
    fields = [f.strip() for f in line.split(",")]
    if len(fields) not in (3, 5) or not fields[1].startswith("ID_"):
        # a quoted excerpt: the line may be a whole JSON document, and the error stays one readable line
        got = line if len(line) <= 60 else line[:57] + "..."
        raise TrajectoryCsvError(f"line {number}: expected 't, ID_k, x, y, z' or 't, ID_k, value', got {got!r}")
    return _finite(number, fields[0], "time "), fields[1][3:], fields[2:]


def _finite(number: int, text: str, what: str = "") -> float:
    try:
        return finite_float(text)
    except ValueError as exc:
        raise TrajectoryCsvError(f"line {number}: {what}{text!r} {exc}") from None


def read_trajectory_csv(text: str, types: Mapping[str, str] | None = None) -> Trajectory:
    """A Besiege Lua log as a ``Trajectory`` (real frame ``[east, north, up]``).

    Samples are the times at which every logged block has a position; later
    duplicates of a line replace earlier ones. ``types`` names each id's
    block type (default: ``Ballast`` for the cargo, the starting block for
    ``1``, else unknown).

    Raises:
        TrajectoryCsvError: A malformed line (with its number), or no complete sample.
    """
    positions: dict[float, dict[str, tuple[float, float, float]]] = defaultdict(dict)
    burning: dict[float, dict[str, bool]] = defaultdict(dict)
    mass: dict[float, float] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        time, block, values = _parse_line(number, raw)
        if len(values) == 3:
            x, y_up, z = (_finite(number, v) for v in values)
            positions[time][block] = (x, z, y_up)
        elif values[0].lower() in ("true", "false"):
            burning[time][block] = values[0].lower() == "true"
        else:
            mass[time] = _finite(number, values[0])
    ids = sorted({b for sample in positions.values() for b in sample}, key=_id_order)
    times = [t for t in sorted(positions) if all(b in positions[t] for b in ids)]
    if not times:
        raise TrajectoryCsvError("no time at which every logged block has a position")
    cannons = sorted({b for sample in burning.values() for b in sample}, key=_id_order)
    names = dict(types or {})
    return Trajectory(
        time=np.array(times),
        ids=ids,
        types=[names.get(b, "Ballast" if b == "Ballast" else STARTING_BLOCK if b == "1" else "unknown")
               for b in ids],
        position=np.array([[positions[t][b] for b in ids] for t in times], dtype=float),
        cannon_ids=cannons,
        burning=np.array([[burning.get(t, {}).get(c, False) for c in cannons] for t in times], dtype=bool)
        .reshape(len(times), len(cannons)),
        ballast_mass=_mass_at(times, mass),
    )


def _id_order(block: str) -> tuple[int, str]:
    return (int(block), "") if block.isdigit() else (1 << 30, block)


def _mass_at(times: list[float], mass: dict[float, float]) -> np.ndarray:
    """The last logged mass at or before each sample time (the first one before any; empty without mass lines)."""
    if not mass:
        return np.zeros(0)
    logged = np.array(sorted(mass))
    values = np.array([mass[t] for t in logged])
    index = np.searchsorted(logged, np.array(times), side="right") - 1
    return values[np.maximum(index, 0)]
