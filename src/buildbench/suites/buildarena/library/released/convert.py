"""Hand a released-profile machine to the rest of the suite (physics, export, history).

The simulator, the verifier and the exporters read our ``Machine`` model;
``to_machine`` translates the released library's state into it (poses in
the virtual frame, attachments, connector ends, wheel flips, control keys,
the replayable history), and ``rebuild_released`` replays a history with the
released behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from buildbench.suites.buildarena.model import Block, ControlEntry, FaceRef, HistoryEntry, Machine

from ..workbench import CallRecord, Outcome
from . import ReleasedWorkbench
from .parts import Face, Part


def _ref(face: Face) -> FaceRef:
    return FaceRef(face.owner_id, face.label)


def _block(key: str, part: Part) -> Block:
    block = Block(id=key, type=part.name, position=part.position.copy(), rotation=part.orientation.matrix.copy(),
                  note=part.note, flipped=part.flipped)
    block.links = {label: _ref(face.partner) for label, face in part.faces.items() if face.partner is not None}
    if isinstance(part.locomotion, dict):
        block.keys = {action: list(keys) for action, keys in part.locomotion.items()}
    if part.is_connector and part.anchor is not None and part.end is not None:
        block.ends = (_ref(part.anchor), _ref(part.end))
        block.span = [float(v) for v in part.orientation.matrix.T @ (part.end.center - part.anchor.center)]
    elif part.anchor is not None:
        block.attached_to = _ref(part.anchor)
    return block


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
        return None
    return float(value)


def to_machine(bench: ReleasedWorkbench) -> Machine:
    """Our ``Machine`` for the released session's current state (timed presses with non-numeric times dropped)."""
    state = bench.machine
    controls = []
    for entry in state.sequence:
        time, hold = _number(entry.time), _number(entry.hold_for)
        if time is not None and hold is not None:
            controls.append(ControlEntry(time, str(entry.key), hold))
    return Machine(
        blocks={key: _block(key, part) for key, part in state.blocks.items()
                if np.isfinite(part.position).all()},
        next_id=state.uid, started=state.started, note=state.note, control_sequence=controls,
        history=[HistoryEntry(h["op"], dict(h["params"]), str(h["result"])) for h in state.history],
    )


def rebuild_released(history: Iterable[HistoryEntry]) -> ReleasedStageBench:
    """A released session that replayed ``history``."""
    bench = ReleasedStageBench()
    for entry in history:
        bench.call(entry.op, dict(entry.params))
    return bench


@dataclass
class ReleasedStageBench:
    """The released library behind the interface the environment expects of a ``Workbench``.

    ``machine`` is our ``Machine`` translated from the released state after each call.
    """

    session: ReleasedWorkbench = field(default_factory=ReleasedWorkbench)

    @property
    def log(self) -> list[CallRecord]:
        return self.session.log

    @property
    def machine(self) -> Machine:
        return to_machine(self.session)

    def call(self, op: str, params: object = None) -> Outcome:
        return self.session.call(op, params)
