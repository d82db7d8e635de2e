"""What DreamHouse's renders, metrics and packs agree on, below all of them: the two
conditions, the five view names, the render size and which members can be drawn.

:mod:`.views` re-exports every name here.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .model import Structure

Condition = Literal["frame", "facade"]
CONDITIONS: tuple[str, ...] = ("frame", "facade")
#: Image order of Prompt 0 Part 1.
VIEW_NAMES: tuple[str, ...] = ("front", "back", "left", "right", "front_right")
#: Paper §7.1: 512×512 renders.
IMAGE_SIZE_PX = 512


def drawable(structure: Structure) -> np.ndarray:
    """Boolean mask of members with finite, non-negative sizes and a finite, non-singular
    transform: the ones that can be drawn. The others (which the validator reports) are left
    out of renders."""
    from buildbench.render.scene import well_conditioned  # not at import: metrics need no GL stack

    sizes, mats = structure.sizes_m, structure.matrices
    with np.errstate(all="ignore"):
        ok = np.all(np.isfinite(sizes), axis=1) & np.all(sizes >= 0, axis=1)
        ok &= np.all(np.isfinite(mats), axis=(1, 2))
        ok &= np.all(np.abs(mats[:, 3] - [0.0, 0.0, 0.0, 1.0]) <= 1e-9, axis=1)
        lin = np.where(ok[:, None, None], mats[:, :3, :3], np.eye(3))
        ok &= well_conditioned(lin)
    return ok
