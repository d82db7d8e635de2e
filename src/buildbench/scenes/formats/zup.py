"""Z-up formats (SceneEval's scene state, I-Design, LayoutVLM) <-> our y-up frame.

The formats' world is right-handed with z up and the floor on (x, y); ours is right-handed
with y up and the floor on (x, z). The proper rotation ``(X, Y, Z) -> (X, Z, -Y)`` maps
one to the other, so a turn about their +z is the same turn about our +y and nothing is
mirrored (left of stays left of).
"""

from __future__ import annotations

import numpy as np

from buildbench.scenes.model import Point2

#: Their coordinates -> ours: ``ours = ZUP_TO_YUP @ theirs``.
ZUP_TO_YUP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def to_ours(p: tuple[float, float, float] | list[float]) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in p)
    return (x, z, 0.0 - y)


def to_theirs(p: tuple[float, float, float]) -> tuple[float, float, float]:
    x, y, z = p
    return (x, 0.0 - z, y)


def floor_to_ours(x: float, y: float) -> Point2:
    return (float(x), 0.0 - float(y))


def floor_to_theirs(p: Point2) -> tuple[float, float]:
    return (p[0], 0.0 - p[1])
