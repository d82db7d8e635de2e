"""The library session: a machine, its collider index and the call log, running calls by name.

The top of the command stack: ``Workbench.call`` dispatches through
``registry``, whose commands see a session only as a ``bench.Bench``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from buildbench.suites.buildarena.model import Block, HistoryEntry, Machine, Rules

from .bench import CallRecord, Outcome, block_key, replay_refusal
from .collision import ColliderIndex
from .registry import dispatch


@dataclass
class Workbench:
    """A machine plus everything a session needs to edit it (the library's ``Bench``).

    Attributes:
        machine: The machine being built.
        rules: Checks that differ from the released library.
        saved: Saved machines by id (for ``add_machine`` in assemblies).
        log: Every call with its result (basis for invalid-action rates).
    """

    machine: Machine = field(default_factory=Machine)
    rules: Rules = field(default_factory=Rules)
    saved: Mapping[str, Machine] = field(default_factory=dict)
    log: list[CallRecord] = field(default_factory=list)
    index: ColliderIndex = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        """Rebuild the collider index from the machine (after loading or replacing it)."""
        self.index = ColliderIndex()
        for block in self.machine.blocks.values():
            self.index.set(block)

    def find(self, block_id: object) -> Block | None:
        """The block with this id (ints are accepted and converted, as in the original)."""
        return self.machine.blocks.get(block_key(block_id))

    def move_to_end(self, block_id: str) -> None:
        """Re-list a block last, as the released code did after a successful twist or shift."""
        block = self.machine.blocks.pop(block_id)
        self.machine.blocks[block_id] = block

    def rebuild(self, history: Sequence[HistoryEntry], start_override: dict[str, Any] | None = None) -> Machine:
        """The machine a fresh session under these rules and saved machines builds from ``history``."""
        return rebuild(history, self.rules, start_override, saved=self.saved)

    def call(self, op: str, params: object = None) -> Outcome:
        """Run one library call by name; never raises for bad input.

        Args:
            op: Command name, e.g. ``"attach_block_to"``.
            params: Keyword parameters (a dict; None means none).
        """
        outcome = dispatch(self, op, params)
        given = dict(params) if isinstance(params, dict) else {}
        self.log.append(CallRecord(str(op), given, outcome.text, outcome.ok))
        return outcome


def rebuild(
    history: Sequence[HistoryEntry],
    rules: Rules,
    start_override: dict[str, Any] | None = None,
    *,
    saved: Mapping[str, Machine] | None = None,
    strict: bool = False,
) -> Machine:
    """Replay a machine's recorded history on a fresh machine.

    A history that begins with ``add_machine`` is an assembly's and is
    replayed on a fresh assembly using ``saved``.

    Args:
        history: Successful calls as recorded.
        rules: Rules to replay under.
        start_override: Parameters replacing those of the ``start`` call.
        saved: Saved machines for assembly histories.
        strict: Raise when a call fails on replay (a stored history holds only calls that
            succeeded, so skipping one would build another machine than the one recorded).

    Raises:
        ValueError: With ``strict``, the first call the library refuses, by index and name.
    """
    assembly = bool(history) and history[0].op == "add_machine"
    bench = Workbench(machine=Machine(is_assembly=assembly), rules=rules, saved=dict(saved or {}))
    for k, entry in enumerate(history):
        params = dict(entry.params)
        if entry.op == "start" and start_override:
            params.update(start_override)
        outcome = bench.call(entry.op, params)
        if strict and not outcome.ok:
            raise ValueError(replay_refusal(k, entry.op, outcome.text))
    return bench.machine

