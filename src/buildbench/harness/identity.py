"""A run's identity: the configuration that defines what its numbers mean.

Reports group runs by it and label them by what differs, so runs that differ in any option
are never merged into one row (`buildbench.harness.compare`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

#: Configuration fields that change what a run measures; the rest (concurrency, workers,
#: record/replay files, backend) only change how it runs, and speed never changes results.
IDENTITY_FIELDS = ("suite", "agent", "protocol", "model", "split", "limit", "seed", "samples", "tasks")


def run_identity(config: dict[str, Any], task_ids: Sequence[str]) -> dict[str, Any]:
    """Everything that defines what a run's numbers mean, flat: options as ``-o key`` entries
    and the task set as a count plus a digest of the sorted task ids."""
    ident: dict[str, Any] = {key: config.get(key) for key in IDENTITY_FIELDS}
    for key, value in sorted((config.get("options") or {}).items()):
        ident[f"-o {key}"] = value
    tasks = sorted(set(task_ids))
    digest = hashlib.sha256("\n".join(tasks).encode()).hexdigest()[:8]
    ident["task set"] = f"{len(tasks)} tasks #{digest}"
    return ident


def differing_fields(identities: Sequence[dict[str, Any]]) -> list[str]:
    """The identity fields whose values are not the same in every run, in a stable order."""
    keys: list[str] = []
    for ident in identities:
        keys.extend(k for k in ident if k not in keys)
    return [k for k in keys if len({repr(ident.get(k)) for ident in identities}) > 1]


def identity_label(ident: dict[str, Any], fields: Sequence[str]) -> str:
    """``agent / model`` followed by ``field=value`` for each field that differs between runs
    (an option a run did not set reads ``(default)``)."""
    base = [f for f in ("agent", "model", "protocol") if f in fields or f in ("agent", "model")]
    parts = [str(ident[f]) for f in base if ident.get(f) is not None]
    for f in fields:
        if f in base:
            continue
        value = ident.get(f, "(default)") if f.startswith("-o ") else ident.get(f)
        name = f[3:] if f.startswith("-o ") else f
        parts.append(str(value) if f == "task set" else f"{name}={value}")
    return " / ".join(parts)
