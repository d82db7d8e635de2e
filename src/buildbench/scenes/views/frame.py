"""From the scenes' y-up frame to :mod:`buildbench.render`'s z-up world.

The scene model is y up with floor plans in ``(x, z)``, north = +z, east = +x (AI2-THOR's
Unity frame, which is left-handed). :mod:`buildbench.render` is a right-handed z-up world.
Two fixed maps, both exact:

* :data:`THOR_FRAME` ``(x, y, z) → (x, z, y)``: seen from above, east (+x) is to the right
  and north (+z) is up, as in AI2-THOR's own top-down map. It is a reflection of the
  coordinates, which is what turns Unity's left-handed frame into a right-handed one; the
  renderer keeps mirrored boxes wound outward, so nothing else changes.
* :data:`REVIS_FRAME` ``(x, y, z) → (x, −z, y)``: SceneReVis's Blender import, a proper
  rotation; seen from above +x is right and +z points *down* the image, as in the
  SceneReVis renders its model was trained on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


class ViewInputError(ValueError):
    """A view was asked for something the scene does not have (unknown id, bad size…)."""


@dataclass(frozen=True)
class Frame:
    """A linear map from scene coordinates to render-world coordinates.

    Attributes:
        name: For messages.
        matrix: ``(3, 3)``; render point = ``matrix @ scene point``.
    """

    name: str
    matrix: FloatArray

    def points(self, points_scene: FloatArray) -> FloatArray:
        """Scene points ``(..., 3)`` in the render world."""
        return np.asarray(points_scene, dtype=float) @ self.matrix.T

    def up(self) -> FloatArray:
        """The scene's up (+y) in the render world."""
        return self.matrix[:, 1].copy()


THOR_FRAME = Frame("thor", np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
REVIS_FRAME = Frame("revis", np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]))


def yaw_rotation(front_xz: tuple[float, float]) -> FloatArray:
    """``(3, 3)`` scene rotation about +y whose local +z (the front) is ``front_xz``."""
    fx, fz = front_xz
    n = math.hypot(fx, fz) or 1.0
    fx, fz = fx / n, fz / n
    # Columns are the local axes: x = (fz, 0, -fx) so that x × y = front.
    return np.array([[fz, 0.0, fx], [0.0, 1.0, 0.0], [-fx, 0.0, fz]])


def check_px(px: int, where: str) -> int:
    """The image size, checked: an int in [16, 4096]."""
    if isinstance(px, bool) or not isinstance(px, (int, np.integer)) or not 16 <= int(px) <= 4096:
        raise ViewInputError(f"{where}: px must be an integer in [16, 4096], got {px!r}")
    return int(px)
