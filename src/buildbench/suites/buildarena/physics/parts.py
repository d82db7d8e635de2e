"""A block's MuJoCo pieces: collider, mass and inertia, wheel disc, heating geom.

They depend on the block and the config only, so ``parts`` works them out
once per layout and every (re)build of the model reuses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np

from buildbench.suites.buildarena.library.bodies import Body

from .layout import Layout


@dataclass(frozen=True)
class Disc:
    """The spinning part of a Powered Wheel: a body on a hinge under the welded hub.

    Attributes:
        mass: Disc mass (mass units).
        inertia: Principal moments in the block frame.
        axis: Hinge axis in the block frame (unit); positive control rolls
            the wheel the captioned way.
    """

    mass: float
    inertia: list[float]
    axis: list[float]


@dataclass(frozen=True)
class Part:
    """What one block adds to the model, in its own frame.

    Attributes:
        mass: Mass of the block's body (the hub's share for a wheel).
        inertia: Its principal moments (block frame, centre of the block).
        collider: ``add_geom`` arguments of its collider (on the disc for a wheel).
        disc: A wheel's disc, else None.
        sensor: ``add_geom`` arguments of its non-colliding heat geom (a
            cannon's full-size hull, a torch's flame sphere), else None.
    """

    mass: float
    inertia: list[float]
    collider: dict[str, Any]
    disc: Disc | None
    sensor: dict[str, Any] | None


def box_inertia(mass: float, full: np.ndarray) -> np.ndarray:
    """Principal moments of a solid box of full size ``full`` (m)."""
    a, b, c = full
    return mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])


def _cylinder_inertia(mass: float, radius: float, height: float) -> np.ndarray:
    side = mass * (3 * radius * radius + height * height) / 12.0
    return np.array([side, side, 0.5 * mass * radius * radius])


def torch_display_centre(torch: Body) -> np.ndarray:
    """A torch's displayed centre (real frame, unplaced): the flame sits one unit beyond it (App. E.2).

    The outline box is shifted 0.25 along the pointer from the displayed centre (torch YAML:
    translation [0, 0.25, 0] along ``vec_base``).
    """
    return np.asarray(torch.shape.center) - 0.25 * np.asarray(torch.pointer)


def parts(layout: Layout) -> dict[str, Part]:
    """Every block's part, by block id (worked out on first use, then kept in ``layout.parts``)."""
    if not layout.parts:
        layout.parts.update({body.id: _part(layout, body) for body in layout.graph.bodies})
    return layout.parts


def _part(layout: Layout, body: Body) -> Part:
    cfg = layout.config
    shape, mass = body.shape, layout.masses[body.id]
    if shape.kind == "box":
        half = 0.5 * np.array(shape.size)
        inertia = box_inertia(mass, 2 * half)
        size = np.maximum(half - 0.5 * cfg.collision_gap_m, 0.5 * half)
        collider = {"type": mujoco.mjtGeom.mjGEOM_BOX, "size": size.tolist()}
    else:
        radius, height = shape.size[0], shape.size[2]
        half = np.array([radius, radius, 0.5 * height])
        inertia = _cylinder_inertia(mass, radius, height)
        half_len = max(0.5 * (height - cfg.collision_gap_m), 0.25 * height)
        collider = {"type": mujoco.mjtGeom.mjGEOM_CYLINDER, "size": [radius, half_len, 0.0]}
    collider["name"] = f"g{body.id}"
    disc = None
    if body.spin_axis is not None:
        share = cfg.wheel_hub_mass_fraction
        rot = np.asarray(layout.scene.placement_rotation, dtype=float)
        # Positive control = rolling the captioned way: angular velocity -spin_axis (see sim docs).
        axis = layout.poses[body.id][1].T @ (rot @ -np.asarray(body.spin_axis))
        disc = Disc((1 - share) * mass, (inertia * (1 - share)).tolist(), axis.tolist())
        mass, inertia = share * mass, inertia * share
    return Part(mass, inertia.tolist(), collider, disc, _sensor(layout, body, half))


def _sensor(layout: Layout, body: Body, half: np.ndarray) -> dict[str, Any] | None:
    """Non-colliding geom for the heating test: a cannon's full box, a torch's flame sphere."""
    sensor: dict[str, Any] = {"contype": 0, "conaffinity": 0, "group": 3}
    if body.type == "Water Cannon":
        return {**sensor, "type": mujoco.mjtGeom.mjGEOM_BOX, "size": half.tolist(), "name": f"hull{body.id}"}
    if body.type == "Torch":
        centre, rot = layout.poses[body.id]
        placed = np.asarray(layout.scene.placement_rotation, dtype=float)
        offset = np.asarray(layout.scene.placement_offset, dtype=float)
        flame = placed @ (torch_display_centre(body) + np.asarray(body.pointer)) + offset
        return {
            **sensor,
            "type": mujoco.mjtGeom.mjGEOM_SPHERE,
            "size": [layout.config.torch_heat_radius, 0.0, 0.0],
            "pos": (rot.T @ (flame - centre)).tolist(),
            "name": f"flame{body.id}",
        }
    return None
