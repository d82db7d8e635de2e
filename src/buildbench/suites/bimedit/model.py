"""BIM-Edit's domain types in one place (the suite's ``model`` room).

The types live beside the code that owns them and are re-exported here, so a reader (or a
plugin) finds the vocabulary of the suite without knowing its layout:

* a task: :class:`BimTask` (instruction, input and ground-truth IFC paths, targets, unit) and
  its :class:`TaskId` (``ELEM-OP-INSTR-SCENE-NNN``), from :mod:`.tasks`;
* what the verifier needs and gives: :class:`EditTask` and :class:`EditScore` (three axes in
  [0, 1], solved at ≥ :data:`SOLVE_THRESHOLD`), from :mod:`.check.edit`;
* a loaded model: :class:`IfcModel` (nodes, relation edges and signatures; placements in
  metres), :class:`Node`, :class:`ModelError`, :func:`load_model`, from :mod:`.check.model`;
* the edit sets compared: :class:`EditSets`, :class:`NodeChanges`, from :mod:`.check.diff`;
* an episode's product: :class:`BimEditOutcome` and :data:`FAILURE_CLASSES`, from :mod:`.outcome`.
"""

from __future__ import annotations

from .check.diff import OPERATIONS, EditSets, NodeChanges
from .check.edit import SOLVE_THRESHOLD, EditScore, EditTask
from .check.model import IfcModel, ModelError, Node, load_model
from .outcome import FAILURE_CLASSES, BimEditOutcome
from .tasks import UNITS, BimTask, TaskId

__all__ = ["FAILURE_CLASSES", "OPERATIONS", "SOLVE_THRESHOLD", "UNITS", "BimEditOutcome", "BimTask", "EditScore",
           "EditSets", "EditTask", "IfcModel", "ModelError", "Node", "NodeChanges", "TaskId", "load_model"]
