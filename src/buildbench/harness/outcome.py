"""Typed episode outcomes: a dataclass per suite that writes and reads the JSON the store keeps.

``Env.outcome()`` returns the suite's outcome dataclass, typed from the env to the scorer; the
store keeps it as JSON (``to_dict``) and ``Suite.read_outcome`` reads a stored one back
(``from_dict``) for scoring in another process or later, so field names, types and units are
written down once.

A suite's outcome is a dataclass that inherits :class:`OutcomeRecord`, a
:class:`~buildbench.harness.record.Record` (the module docstring there says how fields become
keys): the dataclass field order is the key order; :data:`OPTIONAL` fields are left out while
None; ``FORMAT``, when set, is written first under ``"format"`` and checked on reading; keys a
stored outcome has that the dataclass does not know are kept in ``extra`` and written back, so
older or newer runs round-trip without loss.
"""

from __future__ import annotations

from typing import ClassVar

from .record import OPTIONAL, Record

__all__ = ["OPTIONAL", "OutcomeRecord"]


class OutcomeRecord(Record):
    """Mixin for a suite's outcome dataclass (see the module docstring)."""

    KIND: ClassVar[str] = "outcome"
