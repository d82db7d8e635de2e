"""Machine records: the valid-action and full-action history JSON (BuildArena 1.0 and 2.0).

Both are JSON lists of ``{"op", "params", "result"}`` (2.0 also accepts an object holding the
list under ``operation_history`` or ``operations``):

* the **valid-action history** (``<machine>.json``, the Kaggle entries' ``build_history.json``)
  keeps only the calls that changed the machine, so replaying it rebuilds the machine (and its
  ``.bsg``);
* the **full-action history** (``<machine>_full.json``, ``build_history_full.json``) keeps every
  call, queries included, and before a call that failed, a ``{"op": "failed", "params":
  {"func_name", "message"}}`` entry (the call itself follows with its error text).

``read_record`` reads either, and ``valid_entries`` derives the valid history from a full one
(drop queries, ``failed`` marks and the calls they mark). The final blocks are tracked from the
results' ``<ID n: Type>`` labels, so a record whose blocks our catalogue lacks (2.0's space
blocks, say) is refused by name before any replay (``machine_of``).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from buildbench.jsonio import parse_json

from ..histories import QUERY_PREFIXES, is_query, valid_entries
from ..model import Machine
from . import RecordingError, read_recording_text

_ADDED = re.compile(r"successfully added <ID (\d+): ([^>]+)>")
_REMOVED = re.compile(r"successfully removed <ID (\d+): ([^>]+)>")
#: 2.0 names of the blocks the 1.0 catalogue also has (same Besiege ids: 15, 2, 45).
RENAMED_2_0 = {"Single Wooden Block": "Small Wooden Block", "Wheel": "Powered Wheel", "Rope Winch": "Winch"}


@dataclass(frozen=True)
class MachineRecord:
    """A history JSON as read.

    Attributes:
        path: The file.
        kind: ``valid`` or ``full`` (a full history has queries or ``failed`` marks).
        entries: Every entry, in order.
        failed: The ``failed`` marks' ``{"func_name", "message"}``, in order.
        blocks: The final machine's blocks by id, from the results' labels.
    """

    path: str
    kind: str
    entries: list[dict[str, Any]]
    failed: list[dict[str, Any]]
    blocks: dict[str, str]

    def summary(self) -> dict[str, Any]:
        """Counts for a report: calls, failed calls, queries, final blocks by type."""
        ops = Counter(str(e["op"]) for e in self.entries)
        return {"kind": self.kind, "calls": sum(ops.values()) - ops.get("failed", 0), "failed": len(self.failed),
                "queries": sum(n for op, n in ops.items() if op.startswith(QUERY_PREFIXES)),
                "blocks": dict(Counter(self.blocks.values()))}


def read_record(path: str | os.PathLike[str]) -> MachineRecord:
    """A valid-action or full-action history JSON (see the module docstring).

    Raises:
        RecordingError: Unreadable, not JSON (line and column named), or an entry that is not
            ``{"op": str, "params": object}`` (its index named).
    """
    try:
        raw = parse_json(read_recording_text(path))
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{path} line {exc.lineno}: not valid JSON (column {exc.colno}): {exc.msg}") from None
    if isinstance(raw, dict):
        raw = raw.get("operation_history", raw.get("operations"))
    if not isinstance(raw, list):
        raise RecordingError(f"{path}: expected a list of {{\"op\", \"params\", \"result\"}} entries "
                             "(or an object holding one under operation_history)")
    failed: list[dict[str, Any]] = []
    for k, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("op"), str) or not entry["op"].strip():
            raise RecordingError(f"{path}: entry {k} is not an object with a non-empty string op")
        if not isinstance(entry.get("params", {}), dict):
            raise RecordingError(f"{path}: entry {k} ({entry['op']}): params is not an object")
        if "result" in entry and entry["result"] is not None and not isinstance(entry["result"], str):
            raise RecordingError(f"{path}: entry {k} ({entry['op']}): result is not text")
        if entry["op"] == "failed":
            failed.append(dict(entry.get("params") or {}))
    full = bool(failed) or any(is_query(e["op"]) for e in raw)
    valid = valid_entries(raw) if full else raw
    return MachineRecord(str(path), "full" if full else "valid", list(raw), failed, _final_blocks(valid))


def _final_blocks(entries: list[dict[str, Any]]) -> dict[str, str]:
    blocks: dict[str, str] = {}
    for entry in entries:
        if entry["op"] in ("reset", "start"):
            blocks = {}
        result = str(entry.get("result") or "")
        for block_id, name in _ADDED.findall(result):
            blocks[block_id] = name.strip()
        for block_id, _name in _REMOVED.findall(result):
            blocks.pop(block_id, None)
    return blocks


def machine_of(record: MachineRecord) -> Machine:
    """Rebuild the record's machine with our library (default profile).

    Raises:
        RecordingError: A block type our catalogue lacks (each named with its count; a 2.0
            name of a 1.0 block is named with the 1.0 name), or a call our library refuses.
    """
    from ..export import load_history
    from ..model import load_catalogue

    known = load_catalogue().specs
    unknown = Counter(t for t in record.blocks.values() if t not in known)
    if unknown:
        renamed = sorted({RENAMED_2_0[t] for t in unknown if t in RENAMED_2_0})
        listed = ", ".join(f"{t} ×{n}" for t, n in sorted(unknown.items()))
        hint = (f" ({', '.join(renamed)} in 1.0, but 2.0's geometry and face labels differ)" if renamed else "")
        raise RecordingError(f"{record.path}: block types our BuildArena 1.0 physics does not model: {listed}{hint}; "
                             f"it models {', '.join(sorted(known))}")
    entries = valid_entries(record.entries) if record.kind == "full" else record.entries
    try:
        return load_history(json.dumps(entries))
    except (ValueError, KeyError, TypeError) as exc:
        raise RecordingError(f"{record.path}: our library cannot replay it: {exc}") from None
