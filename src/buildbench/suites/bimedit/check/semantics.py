"""Semantic score (paper Eq. 6, App. E.2).

Reference and predicted edit-set objects are matched one-to-one by the Hungarian
algorithm on oriented-box IoU; pairs with IoU below 0.05 are dropped. The matching
is always by IoU, even for objects that keep their GlobalId (a same-GlobalId pair
only wins ties): the paper's Example 4 reports semantics 0 for a window that kept
its GlobalId but ended up far away, which only IoU gating explains. A matched pair
scores ``½ (class match + ρ)``, where ρ is the share of task-relevant properties
that agree (numbers within 5 % relative, everything else exactly); the task score
is the mean over reference objects, unmatched ones scoring 0.

Delete tasks score the share of intended targets that are gone from M' (paper App. E.2).

Property keys (a task may list its own in ``relevant_properties``):

* a direct attribute name, e.g. ``PredefinedType``, ``OverallWidth`` (lengths in metres);
* ``Material``: the sorted names of the element's materials, joined by ``|``;
* ``Pset_Name.Property``: a property-set value, or a base quantity in m, m² or m³;
* ``Geometry.Length`` / ``Geometry.Width`` / ``Geometry.Height``: the oriented box's
  longer and shorter plan side and its height, metres.

``Tag``, ``Description`` and ``LongName`` are never compared (paper App. E.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import ifcopenshell
import ifcopenshell.util.element
import numpy as np

from buildbench.geometry import Boxes, match_max_score, obb_iou_matrix
from buildbench.suites.bimedit.check.model import LENGTH_ATTRIBUTES, IfcModel
from buildbench.suites.bimedit.check.shapes import ShapeCache

#: Pairs below this OBB-IoU are discarded (paper App. E.2).
MIN_IOU = 0.05
#: Relative tolerance for numeric properties (paper App. E.2).
REL_TOL = 0.05
EXCLUDED_PROPERTIES = frozenset({"Tag", "Description", "LongName"})

_GEOMETRIC = ("Geometry.Length", "Geometry.Width", "Geometry.Height")
#: Default task-relevant properties per class when a task lists none (spec 3.3 [S]).
#: Names and materials are left out: an instruction rarely states them, so an agent
#: could not know them.
DEFAULT_PROPERTIES: dict[str, tuple[str, ...]] = {
    "IfcDoor": ("PredefinedType", "OverallWidth", "OverallHeight", *_GEOMETRIC),
    "IfcWindow": ("PredefinedType", "OverallWidth", "OverallHeight", *_GEOMETRIC),
    "IfcElement": ("PredefinedType", *_GEOMETRIC),
    "IfcSpatialElement": ("PredefinedType", *_GEOMETRIC),
    "IfcSpatialStructureElement": ("PredefinedType", *_GEOMETRIC),
}
_NULL_ENUMS = frozenset({"", "NOTDEFINED"})
_MISSING = object()


def default_properties(entity: ifcopenshell.entity_instance) -> tuple[str, ...]:
    """The default relevant property keys for ``entity``'s class."""
    for cls, keys in DEFAULT_PROPERTIES.items():
        if entity.is_a(cls):
            return keys
    return ("PredefinedType",)


def canonical_class(name: str) -> str:
    """Class name with IFC4's deprecated ``StandardCase``/``ElementedCase`` suffixes folded."""
    for suffix in ("StandardCase", "ElementedCase"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def property_value(model: IfcModel, shapes: ShapeCache, key: str, name: str) -> object:
    """The value of property ``name`` of node ``key`` (see module docstring), or None."""
    ent = model.nodes[key].entity
    if name.startswith("Geometry."):
        box = shapes.box(key)
        if box is None:
            return None
        plan = sorted(2 * box.half_extents[0, :2].tolist(), reverse=True)
        return {"Geometry.Length": plan[0], "Geometry.Width": plan[1],
                "Geometry.Height": 2 * float(box.half_extents[0, 2])}.get(name)
    if name == "Material":
        mats = ifcopenshell.util.element.get_materials(ent)
        return "|".join(sorted(str(m.Name) for m in mats)) or None
    if "." in name:
        pset, prop = name.split(".", 1)
        quantity = _quantity(ent, pset, prop, model.unit_scale_m)
        if quantity is not None:
            return quantity
        return _scalar(ifcopenshell.util.element.get_pset(ent, pset, prop))
    value = getattr(ent, name, _MISSING) if name[:1].isupper() else _MISSING
    if value is _MISSING:
        return None
    if isinstance(value, float) and name in LENGTH_ATTRIBUTES:
        return value * model.unit_scale_m
    if name == "PredefinedType" and value in _NULL_ENUMS:
        return None
    return _scalar(value)


_QUANTITY_POWER = {"IfcQuantityLength": 1, "IfcQuantityArea": 2, "IfcQuantityVolume": 3}


def _quantity(ent: ifcopenshell.entity_instance, qto: str, name: str, scale: float) -> float | None:
    """A base quantity converted to SI (m, m², m³), or None if ``ent`` has no such quantity."""
    for rel in getattr(ent, "IsDefinedBy", ()) or ():
        if not rel.is_a("IfcRelDefinesByProperties"):
            continue
        definitions = rel.RelatingPropertyDefinition  # one, or a set of them (IFC4)
        for definition in definitions if isinstance(definitions, tuple) else (definitions,):
            if not isinstance(definition, ifcopenshell.entity_instance) or not definition.is_a("IfcElementQuantity"):
                continue
            if definition.Name != qto:
                continue
            for q in definition.Quantities or ():
                if q.Name == name and q.is_a("IfcPhysicalSimpleQuantity"):
                    return float(q[3]) * scale ** _QUANTITY_POWER.get(q.is_a(), 0)
    return None


def _scalar(value: object) -> object:
    if isinstance(value, ifcopenshell.entity_instance):
        return str(getattr(value, "GlobalId", None) or getattr(value, "Name", None) or value.is_a())
    return value


def values_match(a: object, b: object) -> bool:
    """Numbers within 5 % relative (``|a-b| <= 0.05·max(|a|,|b|)``), anything else exactly."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return abs(a - b) <= REL_TOL * max(abs(a), abs(b))
    return a == b


@dataclass(frozen=True)
class SemanticPair:
    """One matched pair.

    Attributes:
        reference: reference node key.
        predicted: predicted node key.
        iou: their oriented-box IoU.
        class_match: whether the IFC classes agree.
        property_score: ρ, the share of relevant properties that agree.
        mismatched: the relevant properties that disagree.
    """

    reference: str
    predicted: str
    iou: float
    class_match: bool
    property_score: float
    mismatched: tuple[str, ...]

    @property
    def score(self) -> float:
        """``½ (class + ρ)``."""
        return 0.5 * (float(self.class_match) + self.property_score)


@dataclass(frozen=True)
class SemanticResult:
    """The semantic score with its matching.

    Attributes:
        score: ``S_sem`` in [0, 1].
        pairs: the matched pairs.
        unmatched_reference: reference keys without a partner (they score 0).
    """

    score: float
    pairs: tuple[SemanticPair, ...]
    unmatched_reference: tuple[str, ...]


def semantic_score(ref: IfcModel, ref_shapes: ShapeCache, ref_keys: Sequence[str], pred: IfcModel,
                   pred_shapes: ShapeCache, pred_keys: Sequence[str],
                   properties: Sequence[str] | None) -> SemanticResult:
    """``S_sem`` of a create/update edit (1 when both sets are empty, 0 when only the prediction is)."""
    if not ref_keys:
        return SemanticResult(1.0 if not pred_keys else 0.0, (), ())
    iou = _iou_matrix(ref_shapes, ref_keys, pred_shapes, pred_keys)
    same = np.array([[r == p for p in pred_keys] for r in ref_keys], dtype=np.float64).reshape(iou.shape)
    # A vanishing bonus makes a same-GlobalId pair win exact IoU ties without changing any IoU gate.
    assignment = match_max_score(iou + 1e-9 * same * (iou > 0), min_score=MIN_IOU)
    pairs = []
    for r, c in zip(assignment.rows.tolist(), assignment.cols.tolist(), strict=True):
        pairs.append(_pair(ref, ref_shapes, ref_keys[r], pred, pred_shapes, pred_keys[c], float(iou[r, c]),
                           properties))
    matched = {p.reference for p in pairs}
    unmatched = tuple(k for k in ref_keys if k not in matched)
    return SemanticResult(sum(p.score for p in pairs) / len(ref_keys), tuple(pairs), unmatched)


def _iou_matrix(ref_shapes: ShapeCache, ref_keys: Sequence[str], pred_shapes: ShapeCache,
                pred_keys: Sequence[str]) -> np.ndarray:
    """OBB-IoU of every reference/predicted pair; objects without geometry match only their own GlobalId."""
    out = np.zeros((len(ref_keys), len(pred_keys)))
    ref_boxes = [ref_shapes.box(k) for k in ref_keys]
    pred_boxes = [pred_shapes.box(k) for k in pred_keys]
    ri = [i for i, b in enumerate(ref_boxes) if b is not None]
    pi = [j for j, b in enumerate(pred_boxes) if b is not None]
    if ri and pi:
        a = Boxes.concatenate([b for b in ref_boxes if b is not None])
        b = Boxes.concatenate([b for b in pred_boxes if b is not None])
        out[np.ix_(ri, pi)] = obb_iou_matrix(a, b)
    for i, k in enumerate(ref_keys):
        for j, p in enumerate(pred_keys):
            if k == p and ref_boxes[i] is None and pred_boxes[j] is None:
                out[i, j] = 1.0
    return out


def _pair(ref: IfcModel, ref_shapes: ShapeCache, rk: str, pred: IfcModel, pred_shapes: ShapeCache, pk: str,
          iou: float, properties: Sequence[str] | None) -> SemanticPair:
    ref_ent = ref.nodes[rk].entity
    keys = [k for k in (properties or default_properties(ref_ent)) if k not in EXCLUDED_PROPERTIES]
    mismatched = tuple(k for k in keys if not values_match(property_value(ref, ref_shapes, rk, k),
                                                            property_value(pred, pred_shapes, pk, k)))
    rho = 1.0 if not keys else (len(keys) - len(mismatched)) / len(keys)
    class_match = canonical_class(ref_ent.is_a()) == canonical_class(pred.nodes[pk].ifc_class)
    return SemanticPair(rk, pk, iou, class_match, rho, mismatched)


def delete_semantic_score(targets: Sequence[str], pred: IfcModel, recreated: dict[str, str]) -> float:
    """Share of ``targets`` that are gone from M' (a re-created target is not gone); 1 if no targets."""
    if not targets:
        return 1.0
    gone = [t not in pred.nodes and t not in recreated for t in targets]
    return sum(gone) / len(targets)
