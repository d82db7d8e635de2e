"""What a simulation runs in besides the machine: placement, ground, terrain, cargo, duration.

Tasks build a ``Scene`` (``tasks.py``); the physics layer only reads it.
Real frame ``[east, north, up]``, units = metres, mass units = kg.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StaticBox:
    """A fixed box of terrain.

    Attributes:
        center: Centre (m).
        size: Full extents along x, y, z (m).
    """

    center: tuple[float, float, float]
    size: tuple[float, float, float]


@dataclass(frozen=True)
class Cargo:
    """The Ballast: a free box whose mass ramps linearly (released Lua script, spec 1.4).

    ``mass(t) = start + (max - start) * clamp((t - delay) / ramp, floor, 1)``.

    Attributes:
        size: Full extents along x, y, z (m).
        center: Initial centre (m).
        mass_start: Mass before the ramp (5 in the original).
        mass_max: Mass at the end of the ramp (50 Transport, 1500 Support).
        ramp_s: Ramp duration (2 s Transport, 15 s Support).
        delay_s: When the ramp starts (0.5 s).
        floor: Lower clamp of the ramp fraction (0.005 in the Lua script).
    """

    size: tuple[float, float, float]
    center: tuple[float, float, float]
    mass_start: float
    mass_max: float
    ramp_s: float
    delay_s: float = 0.5
    floor: float = 0.005

    def mass(self, t: float) -> float:
        """Cargo mass at time ``t`` seconds (plain floats: called every control tick)."""
        frac = min(1.0, max(self.floor, (t - self.delay_s) / self.ramp_s))
        return self.mass_start + (self.mass_max - self.mass_start) * frac


@dataclass(frozen=True)
class FireAll:
    """Press every Water Cannon's fire action from ``start_s`` for ``hold_s`` (Lift Lv.2/3 protocol)."""

    start_s: float
    hold_s: float


@dataclass(frozen=True)
class Scene:
    """Everything around the machine.

    Attributes:
        duration_s: Simulated time.
        placement_rotation: 3x3 rotation applied to the machine (about its origin) before translation.
        placement_offset: Translation applied after rotation (m).
        ground: Whether a ground plane lies at z = 0.
        terrain: Static boxes (Support levels).
        cargo: The Ballast, or None.
        fire_all: Fire every cannon on a fixed schedule instead of the machine's keys.
        stop_below_z: End the run at the first logged sample where the cargo's
            centre is below this height (m): the Support rule is decided
            then, and the heavy cargo crushing light debris on the ground
            afterwards is both irrelevant and numerically violent.
    """

    duration_s: float
    placement_rotation: np.ndarray
    placement_offset: np.ndarray
    ground: bool = True
    terrain: tuple[StaticBox, ...] = ()
    cargo: Cargo | None = None
    fire_all: FireAll | None = None
    stop_below_z: float | None = None
