"""A machine as rigid bodies and joints in the real frame: the hand-off to the physics layer.

Everything here is in the real frame ``[east, north, up]`` (z up, as MuJoCo
expects), lengths in Besiege units (one unit = one metre downstream), masses
in Besiege mass units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from buildbench.suites.buildarena.model import FaceRef, Machine

from .frames import to_real
from .geometry import WorldShape, body_shape_real, face_center, face_normal, spec_of, spin_axis


@dataclass(frozen=True)
class Body:
    """One solid block.

    Attributes:
        id: Block id.
        type: Block type name.
        mass: Mass (Besiege mass units).
        shape: Body shape (unshrunk outline) placed in the real frame.
        spin_axis: Unit wheel spin axis (flip applied), else None.
        pointer: Unit pointing direction of a torch or cannon, else None.
    """

    id: str
    type: str
    mass: float
    shape: WorldShape
    spin_axis: np.ndarray | None
    pointer: np.ndarray | None


@dataclass(frozen=True)
class Joint:
    """A weld between a block and the block it was attached to.

    Attributes:
        child: Attached block id.
        base: Base block id.
        base_face: Base face label.
        point: Base face centre (weld anchor).
        normal: Base face outward normal.
    """

    child: str
    base: str
    base_face: str
    point: np.ndarray
    normal: np.ndarray


@dataclass(frozen=True)
class Link:
    """A Brace or Winch between two faces (skipped when an end block was removed).

    Attributes:
        id: Connector id.
        type: ``Brace`` or ``Winch``.
        mass: Connector mass (constant, independent of length).
        a: First face.
        b: Second face.
        point_a: Centre of face ``a``.
        point_b: Centre of face ``b``.
    """

    id: str
    type: str
    mass: float
    a: FaceRef
    b: FaceRef
    point_a: np.ndarray
    point_b: np.ndarray


@dataclass(frozen=True)
class BodyGraph:
    """Bodies, welds and connector links of one machine."""

    bodies: list[Body]
    joints: list[Joint]
    links: list[Link]


def body_graph(machine: Machine) -> BodyGraph:
    """Describe ``machine`` as bodies and joints for a physics engine."""
    bodies, links = [], []
    for block in machine.blocks.values():
        spec = spec_of(block)
        if spec.is_connector:
            if block.ends is None:
                continue
            start, end = block.ends
            a, b = machine.joined_block(block, start), machine.joined_block(block, end)
            if a is None or b is None:
                continue
            pa, pb = to_real(face_center(a, start.face)), to_real(face_center(b, end.face))
            links.append(Link(block.id, block.type, spec.mass, start, end, pa, pb))
            continue
        axis = spin_axis(block)
        pointer = None if spec.descriptor is None else to_real(block.rotation @ np.array(spec.vec_base))
        bodies.append(
            Body(
                block.id,
                block.type,
                spec.mass,
                body_shape_real(block),
                None if axis is None else to_real(axis),
                pointer,
            )
        )
    joints = []
    for edge in machine.attachments():
        base = machine.blocks[edge.base]
        point = to_real(face_center(base, edge.base_face))
        joints.append(
            Joint(edge.child, edge.base, edge.base_face, point, to_real(face_normal(base, edge.base_face)))
        )
    return BodyGraph(bodies, joints, links)
