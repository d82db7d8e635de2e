"""Cheap schema checks on the entities an edit wrote, and unit sanity checks.

Running ``ifcopenshell.validate`` over a whole ~600-element model takes about 2 s,
the whole scoring budget, so only the statements that differ from the input model
are checked: every required attribute is set and every value can be read back with
its declared type. The full validator remains available for generated scenes.
"""

from __future__ import annotations

from collections.abc import Iterable

import ifcopenshell
import numpy as np

from buildbench.suites.bimedit.check.diff import differing_statements
from buildbench.suites.bimedit.check.model import IfcModel
from buildbench.suites.bimedit.check.step_text import statement_id

#: Problems reported per model before the list is cut short.
MAX_PROBLEMS = 20


def edited_entity_problems(base: IfcModel, edited: IfcModel) -> list[str]:
    """Schema problems in the entities ``edited`` added or changed relative to ``base``."""
    new, _ = differing_statements(base, edited)
    ids = sorted(i for i in (statement_id(s) for s in new) if i is not None)
    return _problems(edited.file, ids)


def _problems(f: ifcopenshell.file, ids: Iterable[int]) -> list[str]:
    out: list[str] = []
    schema = ifcopenshell.ifcopenshell_wrapper.schema_by_name(f.schema_identifier)
    for eid in ids:
        try:
            inst = f.by_id(eid)
        except RuntimeError:
            continue
        decl = schema.declaration_by_name(inst.is_a()).as_entity()
        if decl is None:
            continue
        if decl.is_abstract():
            out.append(f"#{eid}: {decl.name()} is abstract and cannot be instantiated")
        derived = decl.derived()
        for i, attr in enumerate(decl.all_attributes()):
            if derived[i]:
                continue
            try:
                value = inst[i]
            except Exception as exc:  # the wrapper raises on values that do not match the schema type
                out.append(f"#{eid}: {decl.name()}.{attr.name()} has an invalid value ({exc})")
                continue
            if value is None and not attr.optional():
                out.append(f"#{eid}: {decl.name()}.{attr.name()} is required but missing")
        if len(out) >= MAX_PROBLEMS:
            out.append("… more problems not listed")
            break
    return out


def unit_remarks(m0: IfcModel, pred: IfcModel, reference_points: np.ndarray,
                 predicted_points: np.ndarray) -> list[str]:
    """Remarks on unit handling: a changed length unit, or geometry off by a factor of ~1000."""
    out = []
    if not np.isclose(m0.unit_scale_m, pred.unit_scale_m):
        out.append(f"the prediction changed the model's length unit from {m0.unit_scale_m:g} m to "
                   f"{pred.unit_scale_m:g} m per unit")
    if len(reference_points) and len(predicted_points):
        ref_size = float(np.ptp(reference_points, axis=0).max())
        pred_size = float(np.ptp(predicted_points, axis=0).max())
        if ref_size > 0 and pred_size > 0:
            ratio = pred_size / ref_size
            if 500 <= ratio <= 2000:
                out.append(f"the predicted geometry is ~{ratio:.0f}x larger than the reference: "
                           "lengths were probably given in millimetres to a metre model")
            elif 1 / 2000 <= ratio <= 1 / 500:
                out.append(f"the predicted geometry is ~{1 / ratio:.0f}x smaller than the reference: "
                           "lengths were probably given in metres to a millimetre model")
    return out
