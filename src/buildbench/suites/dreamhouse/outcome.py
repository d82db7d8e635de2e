"""What a DreamHouse episode produces: the final frame as compact JSON and the episode's effort."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.harness.outcome import OutcomeRecord

from .model import Structure


@dataclass
class DreamHouseOutcome(OutcomeRecord):
    """``DreamHouseEnv.outcome()``, typed.

    Attributes:
        structure: The final frame as :func:`compact_structure` writes it: ``names``, ``sizes_m``
            (member extents, metres) and ``transforms`` (the top 3 rows of each member's 4x4
            pose, metres for the translation column).
        attempts: Actions the env applied or tried (count).
        invalid_actions: Actions that could not be read or applied (count).
        script_errors: Scripts that raised (count).
        condition: The input condition (``frame``, ``image``, …).
        profile: The validation profile the frame is checked under (``paper``, …).
        executor: Which executor ran scripts (``fast``, ``blender``).
        renderer: The renderer of views and fidelity (``raster``, ``gl``, ``cycles``).
        protocol: The protocol's bookkeeping (plan, retries, actions), sent through ``note``.
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    SUITE = "dreamhouse"

    structure: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0
    invalid_actions: int = 0
    script_errors: int = 0
    condition: str = "frame"
    profile: str = "paper"
    executor: str = "fast"
    # Episodes always record theirs (the run's ``renderer`` option, ``raster`` by default); an outcome
    # stored without one predates the option and was drawn by GL, so re-scoring it draws with GL.
    renderer: str = "gl"
    protocol: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def built(self) -> Structure:
        """The final frame as a :class:`Structure`."""
        return structure_from_compact(self.structure)


def compact_structure(structure: Structure) -> dict[str, Any]:
    """A structure as compact JSON: names, sizes and the top 3 rows of each transform (6 decimals)."""
    return {
        "names": list(structure.names),
        "sizes_m": np.round(structure.sizes_m, 6).tolist(),
        "transforms": np.round(structure.matrices[:, :3, :], 6).tolist(),
    }


def structure_from_compact(data: dict[str, Any]) -> Structure:
    """Inverse of :func:`compact_structure`."""
    names = list(data.get("names", []))
    n = len(names)
    mats = np.tile(np.eye(4), (n, 1, 1))
    if n:
        mats[:, :3, :] = np.asarray(data["transforms"], dtype=np.float64).reshape(n, 3, 4)
    return Structure.from_arrays(names, np.asarray(data.get("sizes_m", []), dtype=np.float64).reshape(n, 3), mats)
