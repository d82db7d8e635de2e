"""What a library command works on and what it returns (the bottom of the library's command stack).

Commands are plain functions ``command(bench, **params) -> Outcome`` in the
group modules (``construction``, ``queries``, ``assembly``, ``control``);
each validates everything first and only then changes the machine, so a
failed command leaves it untouched. They see the session only through the
``Bench`` protocol: ``registry`` collects them into the command table and
``workbench.Workbench``, the one implementation, dispatches through that
table, so the modules import one another in one direction only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from buildbench.suites.buildarena.model import Block, HistoryEntry, Machine, Rules

from .collision import ColliderIndex


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


class Bench(Protocol):
    """The session a command edits.

    Attributes:
        machine: The machine being built (``reset`` replaces it).
        rules: Checks that differ from the released library.
        saved: Saved machines by id (for ``add_machine`` in assemblies).
        index: Collider index of the machine's blocks, kept in step by the commands.
    """

    machine: Machine
    rules: Rules
    saved: Mapping[str, Machine]
    index: ColliderIndex

    def reindex(self) -> None:
        """Rebuild the collider index from the machine (after replacing it)."""

    def find(self, block_id: object) -> Block | None:
        """The block with this id (ints are accepted and converted, as in the original)."""

    def move_to_end(self, block_id: str) -> None:
        """Re-list a block last, as the released code did after a successful twist or shift."""

    def rebuild(self, history: Sequence[HistoryEntry], start_override: dict[str, Any] | None = None) -> Machine:
        """The machine a fresh session under these rules and saved machines builds from ``history``
        (``start_override`` replaces parameters of its ``start`` call)."""


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


def replay_refusal(index: int, op: str, text: str) -> str:
    """The error of a recorded call that the library refuses on replay."""
    reason = text.strip().splitlines()[0] if text.strip() else "refused"
    return f"history call {index} ({op}) fails on replay: {reason}"
