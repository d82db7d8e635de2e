"""The trajectory log: the table the released Lua script printed, as arrays.

The original logged at 25 Hz ``t, ID_k, x, y, z`` (Unity order, y = up) for
tracked blocks, ``t, ID_k, burning`` for water cannons and
``t, ID_Ballast, mass`` for the cargo (spec 1.4). We log every block and
keep the real frame (z = up) in the arrays; ``to_csv`` writes the
original's Unity-ordered lines.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TypedDict

import numpy as np


class TrajectorySummary(TypedDict):
    """``Trajectory.summary()``: sample count, duration (s), and each id's first and last
    centre ``[east, north, up]`` (m, rounded to mm); both maps are empty without samples."""

    samples: int
    duration_s: float
    start: dict[str, list[float]]
    end: dict[str, list[float]]


@dataclass(frozen=True)
class Trajectory:
    """Sampled motion of one simulation.

    Attributes:
        time: Sample times (s), shape (T,).
        ids: Logged ids: block ids in machine order, then ``"Ballast"`` if there is cargo.
        types: Block type name per id.
        position: Centres in the real frame ``[east, north, up]`` (m), shape (T, len(ids), 3).
        cannon_ids: Water Cannon ids, in the order of ``burning``'s columns.
        burning: Whether each cannon is heated, shape (T, len(cannon_ids)).
        ballast_mass: Cargo mass (mass units) per sample, shape (T,); empty without cargo.
    """

    time: np.ndarray
    ids: list[str]
    types: list[str]
    position: np.ndarray
    cannon_ids: list[str]
    burning: np.ndarray
    ballast_mass: np.ndarray

    def series(self, block_id: str) -> np.ndarray:
        """Positions of one id over time, shape (T, 3).

        Raises:
            KeyError: When ``block_id`` was not logged.
        """
        if block_id not in self.ids:
            raise KeyError(f"block {block_id!r} is not in the trajectory (logged: {', '.join(self.ids)})")
        return self.position[:, self.ids.index(block_id), :]

    def ids_of_type(self, type_name: str) -> list[str]:
        """Logged ids whose block type is ``type_name``."""
        return [i for i, t in zip(self.ids, self.types, strict=True) if t == type_name]

    def to_csv(self) -> str:
        """The original Lua log format: ``t, ID_k, x, y, z`` with y = height, plus burning and mass lines."""
        out = io.StringIO()
        for k, t in enumerate(self.time):
            for j, block in enumerate(self.ids):
                x, y, z = self.position[k, j]
                out.write(f"{t:.2f}, ID_{block}, {x:.4f}, {z:.4f}, {y:.4f}\n")
            for j, block in enumerate(self.cannon_ids):
                out.write(f"{t:.2f}, ID_{block}, {str(bool(self.burning[k, j])).lower()}\n")
            if self.ballast_mass.size:
                out.write(f"{t:.2f}, ID_Ballast, {self.ballast_mass[k]:.4f}\n")
        return out.getvalue()

    def summary(self) -> TrajectorySummary:
        """A short JSON-ready description (samples, duration, start and end of each id)."""
        return {
            "samples": int(self.time.size),
            "duration_s": float(self.time[-1]) if self.time.size else 0.0,
            "start": {i: [round(float(v), 3) for v in self.position[0, j]] for j, i in enumerate(self.ids)}
            if self.time.size
            else {},
            "end": {i: [round(float(v), 3) for v in self.position[-1, j]] for j, i in enumerate(self.ids)}
            if self.time.size
            else {},
        }
