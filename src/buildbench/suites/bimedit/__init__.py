"""BIM-Edit: edits to IFC building models, scored on geometry, semantics and topology.

Re-implements the evaluator of "BIM-Edit: Benchmarking Large Language Models for
IFC-Based Building Information Modeling" (spec: shared/specs/bimedit.md) with seeded
scene generation. Entry point: :func:`score_edit`.
"""

from buildbench.suites.bimedit.score import EditScore, EditTask, score_edit

__all__ = ["EditScore", "EditTask", "score_edit"]
