"""BuildArena domain types: the block catalogue and the machine.

Units and frames (spec 1.2, released code):

* Lengths are **Besiege units**: 1 unit = the edge of a Small Wooden Block.
  The physics layer treats one unit as one metre.
* Masses are **Besiege mass units** (the YAML ``weight``); a Water Cannon's
  recoil is quoted as the weight of 1.6 mass units at normal gravity.
* The **virtual** frame ``[east, up, north]`` (Unity, y-up) stores every
  pose and is written to ``.bsg`` files. The **real** frame
  ``[east, north, up]`` is what the model reads and writes. Conversion swaps
  the 2nd and 3rd axes (``to_real``/``to_virtual`` in ``library.frames``).

The catalogue (``catalogue.py``, re-exported here) is loaded from the
released block YAML files shipped in ``data/blocks/`` (CC BY-NC 4.0, see
``data/README.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.limits import limit

from .catalogue import (
    CANNON_RECOIL_MASS_UNITS,
    COLLIDER_SCALE,
    STARTING_BLOCK,
    STEAM_FACTOR,
    TORCH_HEAT_RADIUS,
    WHEEL_RPM,
    BlockKind,
    BlockSpec,
    Catalogue,
    FaceSpec,
    ShapeSpec,
    load_catalogue,
)

__all__ = [
    "CANNON_RECOIL_MASS_UNITS",
    "COLLIDER_SCALE",
    "STARTING_BLOCK",
    "STEAM_FACTOR",
    "TORCH_HEAT_RADIUS",
    "WHEEL_RPM",
    "Attachment",
    "Block",
    "BlockKind",
    "BlockSpec",
    "Catalogue",
    "ControlEntry",
    "FaceRef",
    "FaceSpec",
    "HistoryEntry",
    "Machine",
    "Rules",
    "ShapeSpec",
    "SubStructure",
    "load_catalogue",
]


@dataclass(frozen=True)
class Rules:
    """Checks that differ between our library and the released one.

    Attributes:
        max_shift: Largest ``|component|`` of one ``shift_block`` offset in
            units; the released docstring says 0.5 but never enforced it.
            None disables the check.
        allow_disabled_blocks: Whether disabled blocks (the Ballast) may be
            attached; the released code allowed it.
        max_blocks: Most blocks (connectors included) one machine may hold.
        drop_links: Whether ``remove_block`` also removes the connectors with an end on the block; the
            released code left them, one end gone.
    """

    max_shift: float | None = 0.5
    allow_disabled_blocks: bool = False
    max_blocks: int = field(default_factory=lambda: limit("machine_blocks"))
    drop_links: bool = True

    @classmethod
    def released(cls) -> Rules:
        """Rules that accept every history the released library accepted."""
        return cls(max_shift=None, allow_disabled_blocks=True, drop_links=False)


@dataclass(frozen=True)
class FaceRef:
    """One face of one block.

    Attributes:
        block: Block id (string, possibly compound like ``A_2``).
        face: Face label.
    """

    block: str
    face: str

    @property
    def key(self) -> str:
        """``<block>:<face>``, this face's key in ``Block.detached``."""
        return f"{self.block}:{self.face}"


@dataclass
class Block:
    """A placed block.

    Attributes:
        id: Block id (``"1"`` is the starting block).
        type: Catalogue name.
        position: Attach point in the virtual frame (units): the centre of the
            face it was attached to (shifts included); for the starting block
            its centre; for connectors the first endpoint.
        rotation: 3x3 rotation, block-local to virtual world; local +z is the
            attach-face normal.
        note: Model-supplied label shown in captions.
        attached_to: Base face this block was attached to (None for a
            starting block and for connectors).
        links: Occupied faces of this block, each mapped to the face on the
            other block it is joined to.
        ends: The two faces a connector joins (None for other blocks).
        span: For a connector, its second end in its own local frame
            (units), fixed when connected; the connector is a rigid object
            that twist/shift move as a whole (released ``.bsg`` semantics).
        detached: Faces this block joins (a connector's ends, the base face)
            whose block was removed: ``FaceRef.key`` → (type name, last virtual
            centre of that face). The released code kept showing a removed
            end's last face, even once another block took its id (a re-used
            sub-structure letter); such a newcomer is not joined.
        flipped: Wheel spin direction toggled by ``flip_spin``.
        keys: Control keys bound to each action.
        group: Sub-structure letter inside an assembly, else None.
    """

    id: str
    type: str
    position: np.ndarray
    rotation: np.ndarray
    note: str | None = None
    attached_to: FaceRef | None = None
    links: dict[str, FaceRef] = field(default_factory=dict)
    ends: tuple[FaceRef, FaceRef] | None = None
    span: list[float] | None = None
    detached: dict[str, tuple[str, list[float]]] = field(default_factory=dict)
    flipped: bool = False
    keys: dict[str, list[str]] = field(default_factory=dict)
    group: str | None = None

    def detached_end(self, ref: FaceRef) -> tuple[str, list[float]] | None:
        """Type name and last virtual centre of joined face ``ref`` once its block was removed, else None."""
        # Older documents keyed a connector's removed ends by block id alone.
        return self.detached.get(ref.key) or self.detached.get(ref.block)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (floats kept at full precision)."""
        return {
            "id": self.id,
            "type": self.type,
            "position_virtual": [float(v) for v in self.position],
            "rotation_virtual": [[float(v) for v in row] for row in self.rotation],
            "note": self.note,
            "attached_to": _ref_json(self.attached_to),
            "links": {k: _ref_json(v) for k, v in self.links.items()},
            "ends": None if self.ends is None else [_ref_json(r) for r in self.ends],
            "span": self.span,
            "detached": {k: [t, list(p)] for k, (t, p) in self.detached.items()},
            "flipped": self.flipped,
            "keys": {k: list(v) for k, v in self.keys.items()},
            "group": self.group,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Block:
        """Inverse of ``to_json``."""
        ends = raw.get("ends")
        return cls(
            id=str(raw["id"]),
            type=str(raw["type"]),
            position=np.array(raw["position_virtual"], dtype=float),
            rotation=np.array(raw["rotation_virtual"], dtype=float),
            note=raw.get("note"),
            attached_to=_ref_from(raw.get("attached_to")),
            links={k: FaceRef(str(v["block"]), str(v["face"])) for k, v in (raw.get("links") or {}).items()},
            ends=None if ends is None else (FaceRef(str(ends[0]["block"]), str(ends[0]["face"])),
                                            FaceRef(str(ends[1]["block"]), str(ends[1]["face"]))),
            span=None if raw.get("span") is None else [float(x) for x in raw["span"]],
            detached={k: (str(v[0]), [float(x) for x in v[1]]) for k, v in (raw.get("detached") or {}).items()},
            flipped=bool(raw.get("flipped", False)),
            keys={k: list(v) for k, v in (raw.get("keys") or {}).items()},  # null as the document check takes it
            group=raw.get("group"),
        )


def _ref_json(ref: FaceRef | None) -> dict[str, str] | None:
    return None if ref is None else {"block": ref.block, "face": ref.face}


def _ref_from(raw: dict[str, str] | None) -> FaceRef | None:
    return None if raw is None else FaceRef(str(raw["block"]), str(raw["face"]))


@dataclass(frozen=True)
class Attachment:
    """One block attached to a face of another.

    Attributes:
        child: Id of the attached block.
        child_face: The child's face lying on the base face (None for wheels,
            whose only face is the outer one).
        base: Id of the base block.
        base_face: Label of the base face; its centre is the weld point.
    """

    child: str
    child_face: str | None
    base: str
    base_face: str


@dataclass(frozen=True)
class ControlEntry:
    """Press ``key`` at ``time`` seconds for ``hold_for`` seconds."""

    time: float
    key: str
    hold_for: float


@dataclass(frozen=True)
class HistoryEntry:
    """One successful state-changing call (the replayable history, spec 1.4)."""

    op: str
    params: dict[str, Any]
    result: str


@dataclass(frozen=True)
class SubStructure:
    """A sub-structure of an assembly: a saved machine placed with a shift and rotation.

    Attributes:
        letter: Index letter (``A``, ``B``…), the prefix of its block ids.
        machine_id: Id of the saved machine it was built from.
        shift: Real-frame offset (units) applied to its start.
        rotation: ``[yaw, pitch, roll]`` degrees applied to its start.
    """

    letter: str
    machine_id: str
    shift: tuple[float, float, float]
    rotation: tuple[float, float, float]


@dataclass
class Machine:
    """A machine under construction: blocks in listing order plus controls and history.

    Attributes:
        blocks: Blocks by id; dict order is the order captions list them.
        next_id: Next numeric id to hand out (ids start at 1).
        started: Whether ``start`` has run (or this is an assembly).
        note: Machine summary note given to ``start``.
        is_assembly: True for an assembly of sub-structures.
        substructures: Sub-structures of an assembly by letter.
        control_sequence: Timed key presses.
        history: Successful state-changing calls, replayable.
    """

    blocks: dict[str, Block] = field(default_factory=dict)
    next_id: int = 1
    started: bool = False
    note: str | None = None
    is_assembly: bool = False
    substructures: dict[str, SubStructure] = field(default_factory=dict)
    control_sequence: list[ControlEntry] = field(default_factory=list)
    history: list[HistoryEntry] = field(default_factory=list)

    @property
    def num_blocks(self) -> int:
        """Number of blocks including the starting block and connectors (the paper's "parts")."""
        return len(self.blocks)

    @property
    def cost(self) -> int:
        """Sum of the released per-block costs."""
        cat = load_catalogue()
        return sum(cat.specs[b.type].cost for b in self.blocks.values())

    @property
    def mass(self) -> float:
        """Total mass in Besiege mass units."""
        cat = load_catalogue()
        return math.fsum(cat.specs[b.type].mass for b in self.blocks.values())

    def attachments(self) -> list[Attachment]:
        """Attachment edges in block order (weld candidates for physics); bases removed later are skipped."""
        edges: list[Attachment] = []
        for b in self.blocks.values():
            if b.attached_to is None or self.joined_block(b, b.attached_to) is None:
                continue
            own = next((label for label, ref in b.links.items() if ref == b.attached_to), None)
            edges.append(Attachment(b.id, own, b.attached_to.block, b.attached_to.face))
        return edges

    def joined_block(self, block: Block, ref: FaceRef) -> Block | None:
        """The block ``block`` joins at ``ref`` (its base or a connector end), or None once that one was removed.

        A removed base or connector end is recorded in ``block.detached``; its id may later
        name another block (an assembly hands a removed sub-structure's letter out again),
        which ``block`` does not join.
        """
        if block.detached_end(ref) is not None:
            return None
        return self.blocks.get(ref.block)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict with the full state and the replayable history."""
        return {
            "format": "buildbench.buildarena.machine/1",
            "started": self.started,
            "next_id": self.next_id,
            "note": self.note,
            "is_assembly": self.is_assembly,
            "substructures": [
                {
                    "letter": s.letter,
                    "machine_id": s.machine_id,
                    "shift": list(s.shift),
                    "rotation": list(s.rotation),
                }
                for s in self.substructures.values()
            ],
            "blocks": [b.to_json() for b in self.blocks.values()],
            "control_sequence": [
                {"time": c.time, "key": c.key, "hold_for": c.hold_for} for c in self.control_sequence
            ],
            "history": [{"op": h.op, "params": h.params, "result": h.result} for h in self.history],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], *, max_blocks: int | None = None) -> Machine:
        """Inverse of ``to_json``.

        Raises:
            ValueError: When ``raw`` is not a machine document, holds more than ``max_blocks``
                blocks (the cap the construction library enforces), or a field a machine
                cannot be built from (``machine_document.check_document`` names it).
        """
        if not isinstance(raw, dict) or raw.get("format") != "buildbench.buildarena.machine/1":
            raise ValueError(
                "not a buildarena machine document (missing format 'buildbench.buildarena.machine/1')"
            )
        from .machine_document import check_document

        if max_blocks is None:
            max_blocks = limit("machine_blocks")
        entries = raw.get("blocks", [])
        if isinstance(entries, list) and len(entries) > max_blocks:
            raise ValueError(f"{len(entries)} blocks, over the limit of {max_blocks} blocks per machine")
        check_document(raw, load_catalogue())
        blocks = [Block.from_json(b) for b in entries]
        for b in blocks:
            b.rotation = _nearest_rotation(b.rotation)
        subs = [
            SubStructure(s["letter"], str(s["machine_id"]), _vec_tuple(s["shift"]), _vec_tuple(s["rotation"]))
            for s in raw.get("substructures", [])
        ]
        return cls(
            blocks={b.id: b for b in blocks},
            next_id=int(raw.get("next_id", 1)),
            started=bool(raw.get("started", False)),
            note=raw.get("note"),
            is_assembly=bool(raw.get("is_assembly", False)),
            substructures={s.letter: s for s in subs},
            control_sequence=[
                ControlEntry(float(c["time"]), str(c["key"]), float(c["hold_for"]))
                for c in raw.get("control_sequence", [])
            ],
            history=[HistoryEntry(h["op"], dict(h["params"]), h["result"]) for h in raw.get("history", [])],
        )


def _nearest_rotation(rot: np.ndarray) -> np.ndarray:
    """``rot`` itself when it is a rotation to float precision, else the nearest rotation (a
    file that rounded its matrices; ``check_document`` refused any farther off)."""
    if np.abs(rot.T @ rot - np.eye(3)).max() <= 1e-12:
        return rot
    u, _, vt = np.linalg.svd(rot)
    return u @ vt


def _vec_tuple(raw: Any) -> tuple[float, float, float]:
    values = [float(v) for v in raw]
    return (values[0], values[1], values[2])
