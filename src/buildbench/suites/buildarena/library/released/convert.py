"""Hand a released-profile machine to the rest of the suite (physics, export, history).

The simulator, the verifier and the exporters read our ``Machine`` model;
``to_machine`` translates the released library's state into it (poses in
the virtual frame, attachments, connector ends, wheel flips, control keys,
the replayable history), and ``rebuild_released`` replays a history with the
released behaviour.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.suites.buildarena.model import (
    Block,
    ControlEntry,
    FaceRef,
    HistoryEntry,
    Machine,
    SubStructure,
)

from ..bench import CallRecord, Outcome, replay_refusal
from . import ReleasedWorkbench
from .assembly import STORE, ReleasedAssembly
from .machine import ReleasedMachine, saved_path
from .parts import Face, Part


def _ref(face: Face, letter: str | None) -> FaceRef:
    # A sub-structure's copied blocks still name their neighbours by the ids inside the sub-structure.
    owner = face.owner.local_id
    return FaceRef(f"{letter}_{owner}" if letter and "_" not in owner else owner, face.label)


def _block(key: str, part: Part) -> Block:
    letter = key.split("_")[0] if "_" in key else None
    block = Block(id=key, type=part.name, position=part.position.copy(), rotation=part.orientation.matrix.copy(),
                  note=part.note, flipped=part.flipped, group=letter)
    block.links = {label: _ref(face.partner, letter) for label, face in part.faces.items()
                   if face.partner is not None}
    if isinstance(part.locomotion, dict):
        block.keys = {action: list(keys) for action, keys in part.locomotion.items()}
    if part.is_connector and part.anchor is not None and part.end is not None:
        block.ends = (_ref(part.anchor, letter), _ref(part.end, letter))
        block.span = [float(v) for v in part.orientation.matrix.T @ (part.end.center - part.anchor.center)]
    elif part.anchor is not None:
        block.attached_to = _ref(part.anchor, letter)
    return block


def _placements(state: ReleasedMachine) -> dict[str, SubStructure]:
    """Each sub-structure's machine and the start pose its rebuilt history places it with."""
    if not isinstance(state, ReleasedAssembly):
        return {}
    placed = {}
    for letter, sub in state.machines.items():
        start: dict[str, Any] = next((h["params"] for h in sub.history if h["op"] == "start"), {})
        shift = [_number(v) or 0.0 for v in list(start.get("init_shift") or [0, 0, 0])[:3]]
        turn = [_number(v) or 0.0 for v in list(start.get("init_rotation") or [0, 0, 0])[:3]]
        placed[letter] = SubStructure(letter, state.sources.get(letter, ""), (shift[0], shift[1], shift[2]),
                                      (turn[0], turn[1], turn[2]))
    return placed


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
        is_assembly=state.assembly, substructures=_placements(state),
    )


def saved_files(saved: Mapping[str, Iterable[HistoryEntry]]) -> dict[str, list[dict[str, object]]]:
    """Saved machines as the released assembly reads them: each history replayed and saved by ``to_file``."""
    files: dict[str, list[dict[str, object]]] = {}
    for machine_id, history in saved.items():
        machine = rebuild_released(history).session.machine
        files[saved_path(os.path.join(STORE, "machine", machine_id, f"{machine_id}.json"))] = machine.saved_history()
    return files


def assemble_released(saved: Mapping[str, Iterable[HistoryEntry]]) -> ReleasedStageBench:
    """An empty released assembly whose ``add_machine`` finds the machines in ``saved`` (histories by id)."""
    return ReleasedStageBench(ReleasedWorkbench(machine=ReleasedAssembly(files=saved_files(saved))))


def rebuild_released(history: Iterable[HistoryEntry],
                     saved: Mapping[str, Iterable[HistoryEntry]] | None = None,
                     *, strict: bool = False) -> ReleasedStageBench:
    """A released session that replayed ``history`` (an assembly of ``saved`` when it starts with ``add_machine``).

    Raises:
        ValueError: With ``strict``, the first call the released library refuses (see ``workbench.rebuild``).
    """
    entries = list(history)
    assembly = bool(entries) and entries[0].op == "add_machine"
    bench = assemble_released(saved or {}) if assembly else ReleasedStageBench()
    for k, entry in enumerate(entries):
        outcome = bench.call(entry.op, dict(entry.params))
        if strict and not outcome.ok:
            raise ValueError(replay_refusal(k, entry.op, outcome.text))
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
