"""Where the evaluator puts a machine before the run (released simulation scripts, spec 3.3–3.5).

* Ground tasks (Transport, Lift): centred horizontally on the mean of the
  block centres, then "Set Ground" — we lower or raise it until its lowest
  point touches z = 0.
* Support: turned 90° about the vertical when its north–south extent does
  not exceed the gap and its east–west extent is at least as large, centred
  horizontally, and raised so its lowest block centre is at height 6.
* The cargo goes 3 units above the highest block centre, over the origin.

"Block centre" is the centre of a block's body (its outline shape).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from buildbench.suites.buildarena.library.bodies import BodyGraph
from buildbench.suites.buildarena.library.geometry import WorldShape

SUPPORT_LOWEST_CENTRE_Z = 6.0
"""Support: the lowest block centre starts at this height (released code: ``Global y = 6 - bottom_y``)."""

CARGO_ABOVE_TOP = 3.0
"""The Ballast is added this far above the highest block centre (released code)."""

_QUARTER_TURN = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class Placement:
    """A rigid placement of the machine: ``x' = rotation @ x + offset``.

    Attributes:
        rotation: 3x3 rotation about the vertical.
        offset: Translation (m).
        top_centre_z: Highest block centre after placement (m).
    """

    rotation: np.ndarray
    offset: np.ndarray
    top_centre_z: float


def lowest_point(shape: WorldShape) -> float:
    """Lowest z of a placed box or cylinder."""
    if shape.kind == "box":
        half = 0.5 * np.asarray(shape.size)
        return float(shape.center[2] - np.abs(shape.rotation[2, :]) @ half)
    radius, height = shape.size[0], shape.size[2]
    axis_z = abs(float(shape.rotation[2, 2]))
    return float(shape.center[2] - radius * np.sqrt(max(0.0, 1.0 - axis_z**2)) - 0.5 * height * axis_z)


def _centres(graph: BodyGraph) -> np.ndarray:
    return np.array([b.shape.center for b in graph.bodies], dtype=float).reshape(-1, 3)


def on_ground(graph: BodyGraph) -> Placement:
    """Centre horizontally and rest the lowest point on z = 0."""
    centres = _centres(graph)
    mean = centres.mean(axis=0)
    low = min(lowest_point(b.shape) for b in graph.bodies)
    offset = np.array([-mean[0], -mean[1], -low])
    return Placement(np.eye(3), offset, float(centres[:, 2].max() + offset[2]))


def over_gap(graph: BodyGraph, gap: float) -> Placement:
    """Support placement: turn to span the gap if needed, centre, lowest centre at height 6."""
    centres = _centres(graph)
    extent = centres.max(axis=0) - centres.min(axis=0)
    rotation = _QUARTER_TURN if extent[1] <= gap and extent[0] >= extent[1] else np.eye(3)
    turned = centres @ rotation.T
    mean = turned.mean(axis=0)
    offset = np.array([-mean[0], -mean[1], SUPPORT_LOWEST_CENTRE_Z - turned[:, 2].min()])
    return Placement(rotation, offset, float(turned[:, 2].max() + offset[2]))
