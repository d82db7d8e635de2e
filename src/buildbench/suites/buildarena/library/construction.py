"""Build and refine commands: start, attach, connect, remove, reset, twist, shift, flip.

Messages are the released library's (spec 2.3, 2.4) except where the
released code crashed or skipped a check; those messages are ours and are
listed in the suite README.
"""

from __future__ import annotations

import numpy as np

from buildbench.suites.buildarena.model import STARTING_BLOCK, Block, FaceRef, Machine, load_catalogue

from ..catalogue import MAX_COORDINATE
from .bench import Bench, Outcome, block_key, finite_number, vector3
from .captions import block_caption, block_label, connector_caption, machine_summary
from .frames import axis_angle, start_rotation, to_virtual, wrap_angle
from .geometry import Z_AXIS, child_rotation, face_center, face_normal, spec_of

NOT_STARTED = "The machine has not been started, please start the machine first."


def _fail(text: str) -> Outcome:
    return Outcome(text, ok=False)


def _overlap_text(subject: str, block: Block, hits: list[str], bench: Bench) -> str:
    lines = [
        f"Operation failed! The {subject} overlaps with existing blocks and it's been restored to previous state already, please try again"
    ]
    for other_id in hits:
        lines.append(
            f"Overlapping detected between {block_label(block)} and {block_label(bench.machine.blocks[other_id])}"
        )
    return "\n".join(lines)


def _capacity_error(bench: Bench) -> str | None:
    if bench.machine.num_blocks >= bench.rules.max_blocks:
        return f"The machine already has {bench.machine.num_blocks} blocks, the maximum is {bench.rules.max_blocks}, please try again."
    return None


def _within_world(points: np.ndarray) -> bool:
    return bool(np.all(np.abs(points) <= MAX_COORDINATE))


def start(
    bench: Bench, init_shift: object = None, init_rotation: object = None, note: str | None = None
) -> Outcome:
    """Create the Starting Block (ID 1), shifted by ``init_shift`` (real frame) and rotated by ``[yaw, pitch, roll]`` degrees.

    Args:
        bench: The workbench.
        init_shift: ``[east, north, up]`` offset in units (default none).
        init_rotation: ``[yaw, pitch, roll]`` in degrees (default none).
        note: Summary of the machine, shown by ``get_machine_summary``.
    """
    machine = bench.machine
    if machine.is_assembly:
        return _fail(
            "An assembly has no starting block of its own, use 'add_machine' to add sub-structures instead, please try again."
        )
    if machine.started:
        return _fail("Machine already exists\n" + machine_summary(machine))
    shift = [0.0, 0.0, 0.0] if init_shift is None else vector3(init_shift)
    rotation = [0.0, 0.0, 0.0] if init_rotation is None else vector3(init_rotation)
    if shift is None or not _within_world(np.array(shift)):
        return _fail(
            f"init_shift must be a list of three finite numbers within ±{MAX_COORDINATE:g}, got {init_shift!r}, please try again."
        )
    if rotation is None:
        return _fail(
            f"init_rotation must be a list of three finite angles [yaw, pitch, roll] in degrees, got {init_rotation!r}, please try again."
        )
    block = Block(
        id=str(machine.next_id),
        type=STARTING_BLOCK,
        position=to_virtual(np.array(shift)),
        rotation=start_rotation(*rotation),
    )
    machine.blocks[block.id] = block
    machine.next_id += 1
    machine.started = True
    machine.note = note
    bench.index.set(block)
    text = f"You have successfully added {block_label(block)}.\nExisting Blocks: {machine.num_blocks}\n{block_caption(machine, block)}"
    return Outcome(text, ok=True, changed=True)


def _coinciding_face(block: Block, point: np.ndarray, normal: np.ndarray) -> str | None:
    for face in spec_of(block).faces:
        same_place = float(np.max(np.abs(face_center(block, face.label) - point))) <= 1e-6
        if same_place and abs(float(face_normal(block, face.label) @ normal)) > 1.0 - 1e-6:
            return face.label
    return None


def attach_block_to(
    bench: Bench, base_block: object, face: str, new_block: str, note: str | None = None
) -> Outcome:
    """Attach a new block of type ``new_block`` at the centre of face ``face`` of ``base_block``.

    Args:
        bench: The workbench.
        base_block: Id of the block to attach to.
        face: Letter of a free face of that block.
        new_block: Block type name.
        note: Label shown in captions.
    """
    machine = bench.machine
    if not machine.started and not machine.is_assembly:
        return _fail(NOT_STARTED)
    spec = load_catalogue().get(new_block)
    if spec is not None and spec.is_connector:
        return _fail(
            "Connectors can not be attached to a single face. Use 'connect_blocks' to connect two faces instead."
        )
    if (
        spec is None
        or spec.name == STARTING_BLOCK
        or (spec.disabled and not bench.rules.allow_disabled_blocks)
    ):
        return _fail(f"Block {new_block} not available, please try again.")
    base = bench.find(base_block)
    if base is None:
        return _fail(f"Base block {block_key(base_block)} not found, please try again.")
    if spec_of(base).face(face) is None:
        return _fail(f"Base block {base.id} {base.type} does not have face {face}, please try again.")
    if face in base.links:
        return _fail(
            f"Face {face} of base block {base.id} {base.type} is already occupied, please try again."
        )
    full = _capacity_error(bench)
    if full:
        return _fail(full)
    point = face_center(base, face)
    block = Block(
        id=str(machine.next_id),
        type=spec.name,
        position=point,
        rotation=child_rotation(base, face),
        note=note,
    )
    block.keys = {action: [] for action in spec.actions}
    hits = bench.index.overlapping(block, bench.machine.blocks)
    if hits:
        return _fail(_overlap_text(f"new block <{spec.name}>", block, hits, bench))
    own = _coinciding_face(block, point, face_normal(base, face))
    base.links[face] = FaceRef(block.id, own or "")
    if own is not None:
        block.links[own] = FaceRef(base.id, face)
    block.attached_to = FaceRef(base.id, face)
    machine.blocks[block.id] = block
    machine.next_id += 1
    bench.index.set(block)
    text = f"You have successfully added {block_label(block)}.\nExisting Blocks: {machine.num_blocks}\n{block_caption(machine, block)}"
    return Outcome(text, ok=True, changed=True)


def connect_blocks(
    bench: Bench,
    block_a: object,
    face_a: str,
    block_b: object,
    face_b: str,
    connector: str,
    note: str | None = None,
) -> Outcome:
    """Join face ``face_a`` of ``block_a`` and face ``face_b`` of ``block_b`` with a Brace or Winch.

    Args:
        bench: The workbench.
        block_a: Id of the first block.
        face_a: Face letter on the first block.
        block_b: Id of the second block.
        face_b: Face letter on the second block.
        connector: ``Brace`` or ``Winch``.
        note: Label shown in captions.
    """
    machine = bench.machine
    if not machine.started and not machine.is_assembly:
        return _fail(NOT_STARTED)
    spec = load_catalogue().get(connector)
    if spec is not None and not spec.is_connector and not spec.disabled:
        return _fail("Basic blocks can not be used as connectors, please try again.")
    ends: list[tuple[Block, str]] = []
    for raw_id, label in ((block_a, face_a), (block_b, face_b)):
        found = bench.find(raw_id)
        if found is None:
            return _fail(f"Block {block_key(raw_id)} not found, please try again.")
        ends.append((found, label))
    for found, label in ends:
        if not spec_of(found).faces:
            return _fail(f"Block {found.id} {found.type} does not have any faces, please try again.")
        if spec_of(found).face(label) is None:
            return _fail(f"Block {found.id} {found.type} does not have face {label}, please try again.")
    if spec is None or not spec.is_connector:
        names = ", ".join(load_catalogue().connectors())
        return _fail(f"Connector {connector} not available, use one of: {names}, please try again.")
    (a, fa), (b, fb) = ends
    start_point = face_center(a, fa)
    if float(np.linalg.norm(face_center(b, fb) - start_point)) < 0.01:
        return _fail("The two faces are too close to each other, please try again.")
    full = _capacity_error(bench)
    if full:
        return _fail(full)
    rotation = child_rotation(a, fa)
    span = rotation.T @ (face_center(b, fb) - start_point)
    block = Block(
        id=str(machine.next_id),
        type=spec.name,
        position=start_point,
        rotation=rotation,
        note=note,
        ends=(FaceRef(a.id, fa), FaceRef(b.id, fb)),
        span=[float(v) for v in span],
    )
    machine.blocks[block.id] = block
    machine.next_id += 1
    text = f"You have successfully added {block_label(block)}.\nExisting Blocks: {machine.num_blocks}\n{connector_caption(machine, block)}"
    return Outcome(text, ok=True, changed=True)


def forget_block(bench: Bench, block: Block) -> None:
    """Delete ``block`` and free the faces it occupied.

    Blocks and connectors joined to it keep its last face centres in ``detached``: an
    assembly may hand the id out again (a re-used sub-structure letter), and a later
    block with that id is not joined to them.
    """
    neighbours = [*block.links.values(), *([block.attached_to] if block.attached_to else [])]
    for ref in neighbours:
        other = bench.machine.blocks.get(ref.block)
        if other is not None:
            for label, back in list(other.links.items()):
                if back.block == block.id:
                    del other.links[label]
    for other in bench.machine.blocks.values():
        for ref in [*(other.ends or ()), *([other.attached_to] if other.attached_to else [])]:
            if ref.block == block.id and other.detached_end(ref) is None:
                other.detached[ref.key] = (block.type, [float(v) for v in face_center(block, ref.face)])
    del bench.machine.blocks[block.id]
    bench.index.discard(block.id)


def remove_block(bench: Bench, block_id: object) -> Outcome:
    """Remove a block and the connectors with an end on it; faces they occupied become attachable again. The
    Starting Block can not be removed.

    The released library left those connectors in the machine with one end gone (``Rules.drop_links`` off, as in
    its profile): nothing to hold, never simulated, yet each counted in the machine's parts and block limit (a block
    roped and removed 100 times made a 5-block machine of 105 parts)."""
    block = bench.find(block_id)
    if block is not None and block.type == STARTING_BLOCK:
        return _fail("The Starting Block can not be removed")
    if block is None:
        return _fail(f"Specified block {block_key(block_id)} not found, please try again.")
    links = [other for other in bench.machine.blocks.values() if bench.rules.drop_links
             and other.ends is not None and any(ref.block == block.id for ref in other.ends)]
    for gone in (block, *links):
        forget_block(bench, gone)
    also = f" and the connectors on it: {', '.join(block_label(link) for link in links)}" if links else ""
    return Outcome(f"You have successfully removed {block_label(block)}{also}.", ok=True, changed=True)


def reset(bench: Bench) -> Outcome:
    """Remove everything; the machine must be started again."""
    bench.machine = Machine(is_assembly=bench.machine.is_assembly)
    bench.reindex()
    return Outcome("The machine has been reset, please start again.", ok=True, changed=True)


def _moved(bench: Bench, block: Block, position: np.ndarray, rotation: np.ndarray) -> list[str]:
    trial = Block(id=block.id, type=block.type, position=position, rotation=rotation)
    return bench.index.overlapping(trial, bench.machine.blocks)


def _apply_pose(bench: Bench, block: Block, position: np.ndarray, rotation: np.ndarray) -> None:
    block.position = position
    block.rotation = rotation
    bench.index.set(block)
    bench.move_to_end(block.id)


def _twist_axis(bench: Bench, block: Block) -> np.ndarray:
    # Released behaviour: the axis is the base face's *current* normal, so a
    # block on a base that was twisted later turns about the base's new normal.
    ref = block.attached_to if block.ends is None else block.ends[0]
    base = bench.machine.joined_block(block, ref) if ref is not None else None
    if base is None or ref is None:
        return block.rotation @ Z_AXIS
    return face_normal(base, ref.face)


def twist_block(bench: Bench, block_id: object, angle: object) -> Outcome:
    """Rotate a block by ``angle`` degrees about its attach-face normal (right-handed, virtual frame).

    Args:
        bench: The workbench.
        block_id: Id of the block.
        angle: Degrees; wrapped to (-180, 180].
    """
    block = bench.find(block_id)
    if block is None:
        return _fail(f"Specified block {block_key(block_id)} not found, please try again.")
    degrees = finite_number(angle)
    if degrees is None:
        return _fail(f"The twist angle must be a finite number of degrees, got {angle!r}, please try again.")
    if block.type == STARTING_BLOCK:
        return _fail(
            f"The block {block.id} <{block.type}> is not attached to any face and can not be twisted, please try again."
        )
    axis = _twist_axis(bench, block)
    rotation = axis_angle(axis, wrap_angle(degrees)) @ block.rotation
    hits = _moved(bench, block, block.position, rotation)
    if hits:
        return _fail(_overlap_text(f"block {block.id} <{block.type}>", block, hits, bench))
    _apply_pose(bench, block, block.position.copy(), rotation)
    caption = block_caption(bench.machine, block)
    return Outcome(
        f"The block {block.id} <{block.type}> is twisted by {angle} degrees. \n {caption}",
        ok=True,
        changed=True,
    )


def shift_block(bench: Bench, block_id: object, shift_real: object) -> Outcome:
    """Translate a block by ``[dx, dy, dz]`` units (real frame), each within ``rules.max_shift``.

    Args:
        bench: The workbench.
        block_id: Id of the block.
        shift_real: ``[east, north, up]`` offset in units.
    """
    block = bench.find(block_id)
    if block is None:
        return _fail(f"Specified block {block_key(block_id)} not found, please try again.")
    shift = vector3(shift_real)
    if shift is None:
        return _fail(
            f"shift_real must be a list of three finite numbers [dx, dy, dz], got {shift_real!r}, please try again."
        )
    limit = bench.rules.max_shift
    if limit is not None and max(abs(s) for s in shift) > limit:
        return _fail(
            f"Each component of shift_real must be within [-{limit}, {limit}], got {shift_real!r}; "
            "too much offset would detach the block, please try again."
        )
    position = block.position + to_virtual(np.array(shift))
    if not _within_world(position):
        return _fail(
            f"The shift {shift_real!r} moves the block beyond ±{MAX_COORDINATE:g} units, please try again."
        )
    hits = _moved(bench, block, position, block.rotation)
    if hits:
        return _fail(_overlap_text(f"block {block.id} <{block.type}>", block, hits, bench))
    _apply_pose(bench, block, position, block.rotation)
    caption = block_caption(bench.machine, block)
    # Echo the offset as given (ints stay ints), as the released message did.
    given = shift_real if isinstance(shift_real, list | tuple) else shift
    shown = "[" + ", ".join(repr(v) for v in given) + "]"
    return Outcome(
        f"The block {block.id} <{block.type}> is shifted by {shown}. \n {caption}", ok=True, changed=True
    )


def flip_spin(bench: Bench, block_id: object) -> Outcome:
    """Reverse the spin direction of a powered wheel."""
    block = bench.find(block_id)
    if block is None:
        return _fail(f"Specified block {block_key(block_id)} not found, please try again.")
    if spec_of(block).spin_face is None:
        return _fail(f"The block {block.id} <{block.type}> does not spin, please try again.")
    block.flipped = not block.flipped
    caption = block_caption(bench.machine, block)
    return Outcome(f"The block {block.id} <{block.type}> is flipped. \n {caption}", ok=True, changed=True)
