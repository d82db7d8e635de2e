"""Natural-language captions the library returns, worded as in the released code.

Direction and spin wording follow the released ``describe_orientation`` /
``describe_spin`` (spec 2.2); numbers are printed with numpy in the same
styles, rounded to 0.01 with negative zeros removed (the released code
printed floating-point sign noise such as ``-0.0°`` and unrounded connector
endpoints; we print clean numbers, otherwise identical text).
"""

from __future__ import annotations

import math

import numpy as np

from buildbench.suites.buildarena.model import STARTING_BLOCK, Block, Machine

from .frames import fmt_face, fmt_fixed, fmt_plain, fmt_position, to_real
from .geometry import block_center, face_center, face_normal, pointer_direction, spec_of, spin_axis

_CARDINAL = ("North", "East", "South", "West")
_QUADRANT = ("N {d}° E", "E {d}° S", "S {d}° W", "W {d}° N")
_GRAVITY = np.array([0.0, 0.0, -1.0])


def _one_decimal(x: float) -> str:
    r = round(x, 1)
    return f"{r + 0.0:.1f}"


def describe_orientation(v_real: np.ndarray) -> str:
    """``<North with 0.0° pitch>``, ``<N 30.0° E with 0.0° pitch>``, ``<straight up>``…"""
    x, y, z = (float(c) for c in v_real)
    if abs(x) < 1e-6 and abs(y) < 1e-6:
        return "<straight up>" if z > 0 else "<straight down>"
    azimuth = round(math.degrees(math.atan2(x, y)) % 360.0, 1) % 360.0
    pitch = math.degrees(math.atan2(z, math.hypot(x, y)))
    if azimuth % 90.0 == 0.0:
        heading = _CARDINAL[int(azimuth // 90.0)]
    else:
        quadrant = int(azimuth // 90.0)
        heading = _QUADRANT[quadrant].format(d=_one_decimal(azimuth - 90.0 * quadrant))
    return f"<{heading} with {_one_decimal(pitch)}° pitch>"


def describe_spin(axis_real: np.ndarray) -> str:
    """Wheel caption: rolling direction and camber, or a horizontal spin."""
    axis = np.asarray(axis_real, dtype=float)
    axis = axis / np.linalg.norm(axis)
    tilt = 90.0 - math.degrees(math.acos(float(np.clip(axis @ _GRAVITY, -1.0, 1.0))))
    if abs(tilt) < 60.0:
        rolling = np.cross(axis, _GRAVITY)
        camber = round(tilt) + 0
        return f"Rolling towards {describe_orientation(rolling)} with {camber}° camber"
    sense = "counterclockwise" if axis[2] > 0 else "clockwise"
    return f"Almost horizontal spinning {sense} around with the axis pointing at {describe_orientation(axis)}"


def block_label(block: Block) -> str:
    """``<ID n: Name>``."""
    return f"<ID {block.id}: {block.type}>"


def _header(block: Block) -> str:
    note = "The starting block" if block.type == STARTING_BLOCK and block.note is None else block.note
    return f"({note}) {block_label(block)}" if note else block_label(block)


def _descriptor_lines(block: Block) -> list[str]:
    spec = spec_of(block)
    if spec.descriptor is None:
        return []
    centre = to_real(block_center(block))
    direction = to_real(pointer_direction(block))
    pointing = describe_orientation(direction)
    if spec.descriptor == "torch":
        heat = fmt_fixed(centre + direction)
        return [f"Pointing at {pointing}", f"Heating up a spherical area with radius 0.3 around {heat}"]
    inlet, outlet = fmt_fixed(centre - 0.75 * direction), fmt_fixed(centre + direction)
    return [
        f"Pointing at {pointing}",
        f"Inlet is at {inlet}, outlet is at {outlet}, sprays towards {pointing}",
    ]


def connector_caption(machine: Machine, block: Block) -> str:
    """``<ID n: Brace>`` + ``Connecting <ID a: …> at [..] and <ID b: …> at [..].``

    A removed end shows the removed block and its last face centre, as the released
    code did, even once another block took its id.

    Raises:
        ValueError: ``block`` joins no faces (only a malformed machine document has such a connector).
    """
    if block.ends is None:
        raise ValueError(f"connector {block.id} <{block.type}> joins no faces")
    parts = []
    for ref in block.ends:
        other = machine.joined_block(block, ref)
        if other is None:
            kind, point = block.detached_end(ref) or ("removed block", [float("nan")] * 3)
            parts.append(f"<ID {ref.block}: {kind}> at {fmt_plain(to_real(np.array(point)))}")
        else:
            parts.append(f"{block_label(other)} at {fmt_plain(to_real(face_center(other, ref.face)))}")
    return f"{_header(block)}\nConnecting {parts[0]} and {parts[1]}.\t"


def face_lines(block: Block) -> list[str]:
    """``Face label: X, Face center: [..], Facing towards <..>`` for each free face."""
    lines = []
    for face in spec_of(block).faces:
        if face.label in block.links:
            continue
        centre = fmt_face(to_real(face_center(block, face.label)))
        facing = describe_orientation(to_real(face_normal(block, face.label)))
        lines.append(f"Face label: {face.label}, Face center: {centre}, Facing towards {facing}")
    return lines


def control_lines(block: Block) -> list[str]:
    """``Controllable Locomotion:`` and one ``Action: a, Key: k1, k2`` line per action."""
    lines = ["Controllable Locomotion: "]
    for action in spec_of(block).actions:
        lines.append(f"Action: {action}, Key: {', '.join(block.keys.get(action, []))}")
    return lines


def block_caption(machine: Machine, block: Block, *, faces: bool = True, controls: bool = False) -> str:
    """The caption of one block as the released ``Block.__str__`` variants print it."""
    spec = spec_of(block)
    if spec.is_connector:
        return connector_caption(machine, block)
    lines = [_header(block), f"Position: {fmt_position(to_real(block_center(block)))}"]
    lines += _descriptor_lines(block)
    axis = spin_axis(block)
    if axis is not None:
        lines.append(describe_spin(to_real(axis)))
    free = face_lines(block) if faces else []
    if free:
        lines += ["Attachable Faces:", *free]
    if controls and spec.actions:
        lines += control_lines(block)
    return "\n".join(lines)


def machine_summary(machine: Machine) -> str:
    """``get_machine_summary`` text: count, note, every caption without faces."""
    captions = [block_caption(machine, b, faces=False) for b in machine.blocks.values()]
    return "\n".join(
        [f"Existing Blocks: {machine.num_blocks}", "", f"Machine Summary: {machine.note}", *captions]
    )
