"""The state one library session works on: a machine, its collider index and the call logs.

Commands are plain functions ``command(bench, **params) -> Outcome`` in the
group modules; each validates everything first and only then changes the
machine, so a failed command leaves it untouched.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from buildbench.suites.buildarena.model import Block, Machine, Rules

from .collision import ColliderIndex

MAX_COORDINATE = 1e6
"""Largest absolute coordinate (units) any block may reach; beyond it the
floating-point geometry is meaningless."""


@dataclass(frozen=True)
class Outcome:
    """What a command returns.

    Attributes:
        text: The message the model reads.
        ok: True when the command did what was asked.
        changed: True when it changed the machine (recorded in the history).
    """

    text: str
    ok: bool
    changed: bool = False


@dataclass(frozen=True)
class CallRecord:
    """One library call in the full log (queries and failures included).

    Attributes:
        op: Command name.
        params: Parameters as given.
        text: Returned text.
        ok: Whether it succeeded.
    """

    op: str
    params: dict[str, Any]
    text: str
    ok: bool


@dataclass
class Workbench:
    """A machine plus everything a session needs to edit it.

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

    def call(self, op: str, params: object = None) -> Outcome:
        """Run one library call by name; never raises for bad input.

        Args:
            op: Command name, e.g. ``"attach_block_to"``.
            params: Keyword parameters (a dict; None means none).
        """
        from .registry import dispatch

        outcome = dispatch(self, op, params)
        given = dict(params) if isinstance(params, dict) else {}
        self.log.append(CallRecord(str(op), given, outcome.text, outcome.ok))
        return outcome


def block_key(block_id: object) -> str:
    """Block ids are strings; ints are converted (released behaviour)."""
    return str(block_id)


def finite_number(value: object) -> float | None:
    """``value`` as a finite float, or None when it is not a real finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def vector3(value: object) -> list[float] | None:
    """A list of three finite numbers, or None."""
    if not isinstance(value, list | tuple) or len(value) != 3:
        return None
    numbers = [finite_number(v) for v in value]
    if any(n is None for n in numbers):
        return None
    return [float(n) for n in numbers if n is not None]
