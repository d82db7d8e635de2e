"""LEGO-Eval's domain types in one place (the suite's ``model`` room).

The scene itself is the shared indoor-scene model (:mod:`buildbench.scenes.model`: metres, y up,
north +z). Re-exported here beside the suite's own types:

* a constraint: :class:`ConstraintSpec` (id, text, type, optional program) from :mod:`.tasks`,
  its typed program (:class:`Program`, :class:`Selector`, :class:`Relation`, …) from
  :mod:`.constraints`;
* a judgement: :class:`ConstraintVerdict` (holds true, false or None) from :mod:`.tasks`;
* an episode's product: :class:`LegoEvalOutcome` from :mod:`.outcome`.
"""

from __future__ import annotations

from buildbench.scenes.model import Scene, SceneObject

from .constraints import Program, ProgramError, Relation, RoomRelation, Selector
from .outcome import LegoEvalOutcome
from .task_records import ConstraintSpec, ConstraintVerdict, OutcomeError

__all__ = ["ConstraintSpec", "ConstraintVerdict", "LegoEvalOutcome", "OutcomeError", "Program", "ProgramError",
           "Relation", "RoomRelation", "Scene", "SceneObject", "Selector"]
