"""Assembly commands: place saved machines as sub-structures A, B, … of one assembly (spec 2.6).

A sub-structure's blocks get compound ids ``<letter>_<id>``; blocks added in
the assembly itself get plain ids from the assembly's own counter. Unlike
the released code, a shift or rotation that would overlap is refused and
nothing moves, and a failed ``add_machine`` records nothing.
"""

from __future__ import annotations

import string

import numpy as np

from buildbench.suites.buildarena.model import Block, FaceRef, Machine, SubStructure

from .bench import Bench, Outcome, vector3
from .captions import block_label, machine_summary
from .construction import forget_block
from .frames import start_rotation, to_virtual

NOT_ASSEMBLY = "Assembly commands are only available while assembling sub-structures, please try again."


def _renamed(block: Block, letter: str) -> Block:
    def ref(r: FaceRef) -> FaceRef:
        return FaceRef(f"{letter}_{r.block}", r.face)

    return Block(
        id=f"{letter}_{block.id}",
        type=block.type,
        position=block.position.copy(),
        rotation=block.rotation.copy(),
        note=block.note,
        attached_to=None if block.attached_to is None else ref(block.attached_to),
        links={k: ref(v) for k, v in block.links.items()},
        ends=None if block.ends is None else (ref(block.ends[0]), ref(block.ends[1])),
        flipped=block.flipped,
        keys={k: list(v) for k, v in block.keys.items()},
        group=letter,
    )


def _overlaps(bench: Bench, moved: list[Block], letter: str) -> list[tuple[Block, str]]:
    order = [i for i, b in bench.machine.blocks.items() if b.group != letter]
    hits: list[tuple[Block, str]] = []
    for block in moved:
        hits += [(block, other) for other in bench.index.overlapping(block, order)]
    return hits


def _overlap_text(bench: Bench, letter: str, hits: list[tuple[Block, str]]) -> str:
    lines = [
        f"Operation failed! The sub-structure {letter} overlaps with existing blocks and it's been restored to previous state already, please try again"
    ]
    for block, other in hits:
        lines.append(
            f"Overlapping detected between {block_label(block)} and {block_label(bench.machine.blocks[other])}"
        )
    return "\n".join(lines)


def _next_letter(machine: Machine) -> str | None:
    used = set(machine.substructures)
    return next((c for c in string.ascii_uppercase if c not in used), None)


def add_machine(
    bench: Bench, machine_id: object, init_shift: object = None, init_rotation: object = None
) -> Outcome:
    """Add a saved machine as the next sub-structure, optionally shifted (real frame) and rotated ``[yaw, pitch, roll]``."""
    if not bench.machine.is_assembly:
        return Outcome(NOT_ASSEMBLY, ok=False)
    saved = bench.saved.get(str(machine_id))
    if saved is None:
        return Outcome(
            f"Machine {machine_id} not found, available machines: {', '.join(bench.saved) or 'none'}, please try again.",
            ok=False,
        )
    shift = [0.0, 0.0, 0.0] if init_shift is None else vector3(init_shift)
    rotation = [0.0, 0.0, 0.0] if init_rotation is None else vector3(init_rotation)
    if shift is None or rotation is None:
        return Outcome(
            "init_shift and init_rotation must be lists of three finite numbers, please try again.", ok=False
        )
    letter = _next_letter(bench.machine)
    if letter is None:
        return Outcome("The assembly already has 26 sub-structures, please try again.", ok=False)
    sub = bench.rebuild(saved.history, {"init_shift": shift, "init_rotation": rotation})
    blocks = [_renamed(b, letter) for b in sub.blocks.values()]
    hits = _overlaps(bench, blocks, letter)
    if hits:
        return Outcome(_overlap_text(bench, letter, hits), ok=False)
    for block in blocks:
        bench.machine.blocks[block.id] = block
        bench.index.set(block)
    bench.machine.substructures[letter] = SubStructure(
        letter, str(machine_id), (shift[0], shift[1], shift[2]), (rotation[0], rotation[1], rotation[2])
    )
    text = f"You have successfully added sub-structure {letter} using machine {machine_id}\n{machine_summary(bench.machine)}"
    return Outcome(text, ok=True, changed=True)


def _group(bench: Bench, letter: object) -> list[Block] | None:
    if not isinstance(letter, str) or letter not in bench.machine.substructures:
        return None
    return [b for b in bench.machine.blocks.values() if b.group == letter]


def remove_machine(bench: Bench, machine_index: object) -> Outcome:
    """Remove sub-structure ``machine_index`` (a letter) with all its blocks."""
    if not bench.machine.is_assembly:
        return Outcome(NOT_ASSEMBLY, ok=False)
    members = _group(bench, machine_index)
    if members is None:
        return Outcome(f"Sub-structure {machine_index} not found, please try again.", ok=False)
    for block in members:
        forget_block(bench, block)
    del bench.machine.substructures[str(machine_index)]
    return Outcome(f"You have successfully removed sub-structure {machine_index}.", ok=True, changed=True)


def _move_group(
    bench: Bench, letter: str, rotation: np.ndarray, pivot: np.ndarray, offset: np.ndarray
) -> Outcome | None:
    members = _group(bench, letter) or []
    moved = [
        Block(
            id=b.id,
            type=b.type,
            position=rotation @ (b.position - pivot) + pivot + offset,
            rotation=rotation @ b.rotation,
        )
        for b in members
    ]
    hits = _overlaps(bench, moved, letter)
    if hits:
        return Outcome(_overlap_text(bench, letter, hits), ok=False)
    for block, new in zip(members, moved, strict=True):
        block.position, block.rotation = new.position, new.rotation
        bench.index.set(block)
    return None


def shift_machine(bench: Bench, machine_index: object, position: object) -> Outcome:
    """Translate sub-structure ``machine_index`` by ``position`` ``[dx, dy, dz]`` (real frame, units)."""
    if not bench.machine.is_assembly:
        return Outcome(NOT_ASSEMBLY, ok=False)
    if _group(bench, machine_index) is None:
        return Outcome(f"Sub-structure {machine_index} not found, please try again.", ok=False)
    offset = vector3(position)
    if offset is None:
        return Outcome(
            f"position must be a list of three finite numbers, got {position!r}, please try again.", ok=False
        )
    letter = str(machine_index)
    failed = _move_group(bench, letter, np.eye(3), np.zeros(3), to_virtual(np.array(offset)))
    if failed:
        return failed
    sub = bench.machine.substructures[letter]
    new_shift = tuple(s + o for s, o in zip(sub.shift, offset, strict=True))
    bench.machine.substructures[letter] = SubStructure(
        letter, sub.machine_id, (new_shift[0], new_shift[1], new_shift[2]), sub.rotation
    )
    return Outcome(
        f"You have successfully shifted sub-structure {letter} by {list(offset)}.\n{machine_summary(bench.machine)}",
        ok=True,
        changed=True,
    )


def rotate_machine(bench: Bench, machine_index: object, rotation: object) -> Outcome:
    """Set the rotation of sub-structure ``machine_index`` to ``[yaw, pitch, roll]`` degrees about its starting block."""
    if not bench.machine.is_assembly:
        return Outcome(NOT_ASSEMBLY, ok=False)
    if _group(bench, machine_index) is None:
        return Outcome(f"Sub-structure {machine_index} not found, please try again.", ok=False)
    angles = vector3(rotation)
    if angles is None:
        return Outcome(
            f"rotation must be [yaw, pitch, roll] in degrees, got {rotation!r}, please try again.", ok=False
        )
    letter = str(machine_index)
    sub = bench.machine.substructures[letter]
    delta = start_rotation(*angles) @ start_rotation(*sub.rotation).T
    pivot = (
        bench.machine.blocks[f"{letter}_1"].position.copy()
        if f"{letter}_1" in bench.machine.blocks
        else np.zeros(3)
    )
    failed = _move_group(bench, letter, delta, pivot, np.zeros(3))
    if failed:
        return failed
    bench.machine.substructures[letter] = SubStructure(
        letter, sub.machine_id, sub.shift, (angles[0], angles[1], angles[2])
    )
    return Outcome(
        f"You have successfully rotated sub-structure {letter} to {list(angles)} degrees.\n{machine_summary(bench.machine)}",
        ok=True,
        changed=True,
    )
