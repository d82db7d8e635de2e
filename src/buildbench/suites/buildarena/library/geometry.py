"""Block geometry: face centres and normals, displayed centres, pointers, spin axes, world shapes.

Formulas from the released code (spec 2.2): a face centre is
``R · (rel_pos ⊙ shape) + position`` and its normal ``R · n``; a block attached
to a face gets ``position = face centre`` and ``R = R_base · SA(vec_base_base → n_local)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from buildbench.suites.buildarena.model import Block, BlockSpec, FaceSpec, ShapeSpec, load_catalogue

from .frames import rotation_to_real, shortest_arc, to_real

Z_AXIS = np.array([0.0, 0.0, 1.0])


class UnknownFaceError(LookupError):
    """A face label the block's type does not have (commands check labels first, so this is a defect)."""


def spec_of(block: Block) -> BlockSpec:
    """The catalogue spec of ``block``."""
    return load_catalogue().specs[block.type]


def face_spec(block: Block, label: str) -> FaceSpec:
    """Face ``label`` of ``block``'s type.

    Raises:
        UnknownFaceError: The type has no such face (``Torch has no face A``).
    """
    face = spec_of(block).face(label)
    if face is None:
        raise UnknownFaceError(f"{block.type} has no face {label}")
    return face


def face_center(block: Block, label: str) -> np.ndarray:
    """Global virtual centre of face ``label``."""
    local = np.array(face_spec(block, label).rel_pos) * np.array(spec_of(block).shape)
    return block.rotation @ local + block.position


def face_normal(block: Block, label: str) -> np.ndarray:
    """Global virtual outward normal of face ``label``."""
    return block.rotation @ np.array(face_spec(block, label).normal)


def child_rotation(base: Block, label: str) -> np.ndarray:
    """Rotation of a block attached to face ``label`` of ``base``."""
    normal = np.array(face_spec(base, label).normal)
    return base.rotation @ shortest_arc(np.array(spec_of(base).vec_base), normal)


def block_center(block: Block) -> np.ndarray:
    """Displayed centre in the virtual frame: attach point + ``center_offset`` along local +z.

    Unlike the released code (which measured from the base face, so shifts and
    later moves of the base were ignored), this follows the block itself.
    """
    return block.position + block.rotation @ (Z_AXIS * spec_of(block).center_offset)


def pointer_direction(block: Block) -> np.ndarray:
    """Global virtual pointing direction ``R · vec_base`` of a torch or cannon."""
    return block.rotation @ np.array(spec_of(block).vec_base)


def spin_axis(block: Block) -> np.ndarray | None:
    """Global virtual spin axis of a wheel (sign flipped by ``flip_spin``), else None."""
    spec = spec_of(block)
    if spec.spin_face is None:
        return None
    sign = spec.spin_sign * (-1.0 if block.flipped else 1.0)
    return sign * face_normal(block, spec.spin_face)


@dataclass(frozen=True)
class WorldShape:
    """A shape placed in the world.

    Attributes:
        kind: ``"box"`` or ``"cylinder"`` (cylinder axis = local z).
        size: Box full extents, or ``(radius, radius, height)`` for a cylinder (units).
        center: World centre (units).
        rotation: 3x3 rotation local → world.
    """

    kind: str
    size: tuple[float, float, float]
    center: np.ndarray
    rotation: np.ndarray


def _place(shape: ShapeSpec, block: Block) -> WorldShape:
    size = shape.extents if shape.kind == "box" else (shape.radius, shape.radius, shape.height)
    return WorldShape(
        shape.kind, size, block.position + block.rotation @ np.array(shape.centre), block.rotation
    )


def collider_shape(block: Block) -> WorldShape | None:
    """The block's collider in the virtual frame, or None for connectors."""
    spec = spec_of(block)
    if spec.collider is None or spec.collider.is_empty:
        return None
    return _place(spec.collider, block)


def body_shape_real(block: Block) -> WorldShape:
    """The block's full body (outline, not shrunk) in the real frame, for physics.

    Local sizes are given in swapped local axes so that the returned rotation
    is proper (``P R P``): a box's ``size`` is its extents along the real
    local x, y, z; a cylinder's axis is the rotation's third column.
    """
    spec = spec_of(block)
    shape = spec.outline
    centre_v = block.position + block.rotation @ np.array(shape.centre)
    rot_real = rotation_to_real(block.rotation)
    if shape.kind == "box":
        ext = shape.extents
        return WorldShape("box", (ext[0], ext[2], ext[1]), to_real(centre_v), rot_real)
    # Cylinder axis is virtual-local z = swapped-local y; rotate it onto local z.
    to_axis = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    return WorldShape(
        "cylinder", (shape.radius, shape.radius, shape.height), to_real(centre_v), rot_real @ to_axis
    )
