"""``Task``: one problem instance with everything needed to check an answer to it."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def _freeze(value: Any) -> Any:
    # Tasks are shared across episodes and processes; freezing the top level catches
    # accidental mutation by an env or agent early.
    if isinstance(value, dict):
        return MappingProxyType(dict(value))
    return value


@dataclass(frozen=True)
class Task:
    """One problem instance.

    Attributes:
        id: Stable identifier, unique within its suite (e.g. ``Ranch_03_0042``).
        suite: Name of the suite that owns the task.
        inputs: What the agent may see (prompt fields, image paths, file paths). JSON-serialisable.
        target: Ground truth for checking and scoring; never shown to the agent. JSON-serialisable.
        metadata: Stratification labels (style, level, operation, …) used by reports.
    """

    id: str
    suite: str
    inputs: dict[str, Any] = field(default_factory=dict)
    target: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"task id must be a non-empty string, got {self.id!r}")
        for name in ("inputs", "target", "metadata"):
            object.__setattr__(self, name, _freeze(getattr(self, name)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "suite": self.suite,
            "inputs": dict(self.inputs),
            "target": dict(self.target),
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        missing = [k for k in ("id", "suite") if k not in data]
        if missing:
            raise ValueError(f"task record lacks field(s) {missing}: {str(data)[:200]}")
        return cls(
            id=str(data["id"]),
            suite=str(data["suite"]),
            inputs=dict(data.get("inputs") or {}),
            target=dict(data.get("target") or {}),
            metadata=dict(data.get("metadata") or {}),
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # MappingProxyType does not pickle; rebuild from plain dicts (process pools pickle tasks).
        return (Task.from_dict, (self.to_dict(),))


def episode_seed(run_seed: int, task_id: str, sample: int) -> int:
    """Seed for one episode, stable across processes and Python versions (no ``hash()``)."""
    digest = hashlib.sha256(json.dumps([run_seed, task_id, sample]).encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def file_stem(task_id: str) -> str:
    """``task_id`` as one file or folder name: itself when it is one already (``Ranch_03_0042``),
    else its safe characters, cut short, plus a hash of the whole id, so two ids never share a
    name (``a/b`` and ``a_b``) and none is ``..`` or longer than a file system allows."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)
    if safe == task_id and len(safe) <= 100 and safe.strip("."):
        return safe
    return f"{safe[:80]}-{hashlib.sha256(task_id.encode()).hexdigest()[:12]}"
