"""BIM-Edit: edits to IFC building models, scored on geometry, semantics and topology.

Re-implements the evaluator of "BIM-Edit: Benchmarking Large Language Models for
IFC-Based Building Information Modeling" (spec: shared/specs/bimedit.md) with seeded
scene generation. Entry points: :func:`score_edit` and the harness suite registered as
``buildbench.suites.bimedit.suite:suite``.

Names load on first use: the sandboxed child of ``execute_ifc_code`` imports
:mod:`.namespace` through this package and must not pay for the scorer's imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from buildbench.suites.bimedit.check.edit import EditScore, EditTask, score_edit

_LAZY = {
    "EditScore": "check.edit",
    "EditTask": "check.edit",
    "score_edit": "check.edit",
}

__all__ = ["EditScore", "EditTask", "score_edit"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
