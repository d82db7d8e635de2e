"""The forms of a BuildArena history list: which calls change the machine.

A full-action history (``<machine>_full.json``) keeps queries and, before a call that failed, a
``{"op": "failed", ...}`` mark; the valid-action history keeps only the calls that changed the
machine. Below both the machine files (``export``) and the recordings (``trajectories.records``),
which each read either form.
"""

from __future__ import annotations

from typing import Any

#: Calls that read the machine without changing it (1.0's and 2.0's query and listing tools).
QUERY_PREFIXES = ("get_", "list_", "review_", "check_", "query_", "describe_")


def is_query(op: str) -> bool:
    """Whether the call named ``op`` only reads the machine."""
    return op.startswith(QUERY_PREFIXES)


def valid_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The state-changing calls of a full history: no queries, no ``failed`` marks, not the call
    a mark names (the call right after it, whose result is the error)."""
    out: list[dict[str, Any]] = []
    pending_failure: str | None = None
    for entry in entries:
        op = entry["op"]
        if op == "failed":
            pending_failure = str((entry.get("params") or {}).get("func_name", ""))
            continue
        if pending_failure is not None and op == pending_failure:
            pending_failure = None
            continue
        pending_failure = None
        if not is_query(op):
            out.append(entry)
    return out
