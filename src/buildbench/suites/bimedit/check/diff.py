"""IFC diff: which nodes an edit added, removed or modified, and the per-operation edit sets.

Rules (paper App. E, "Per-task-type construction"; spec section 3.1):

* create — reference: the nodes added in M*; prediction: the nodes added in M'.
* update — reference: the final state of the target nodes in M*; prediction: the
  targets' final state in M' plus every node added in M', so a delete-and-recreate
  update still scores.
* delete — reference: the nodes removed in M*; prediction: the nodes removed in M'.
  A removed node that the agent re-created under a new GlobalId (same class, centre
  within :data:`ALIGN_DISTANCE_M`) was not really deleted and is dropped (the paper's
  "falls back to an added-entity diff").

Finding modified nodes without hashing every node of every file: the three files of
a task normally share entity ids (IfcOpenShell keeps ids when it rewrites a file), so
the statements that differ between two files are few. Only nodes that reach a
changed statement (through references, or through property/type/material relations)
get their signatures compared. If more than a quarter of the statements differ (a
file renumbered by another tool), every shared node is compared instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import ifcopenshell
import numpy as np

from buildbench.suites.bimedit.check.model import IfcModel
from buildbench.suites.bimedit.check.step_text import normalise_statement, statement_id

#: Nodes further apart than this (metres) are never taken for the same element.
ALIGN_DISTANCE_M = 1.0
#: Share of differing statements above which the text fast path is abandoned.
_FAST_PATH_LIMIT = 0.25

OPERATIONS = ("create", "update", "delete")


@dataclass(frozen=True)
class NodeChanges:
    """Node-level difference from a base model to another model (keys are GlobalIds).

    Attributes:
        added: keys only in the other model.
        removed: keys only in the base model.
        modified: shared keys whose signature differs.
    """

    added: frozenset[str]
    removed: frozenset[str]
    modified: frozenset[str]

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not (self.added or self.removed or self.modified)


def node_changes(base: IfcModel, other: IfcModel) -> NodeChanges:
    """Nodes added, removed and modified going from ``base`` to ``other``."""
    added = frozenset(other.nodes.keys() - base.nodes.keys())
    removed = frozenset(base.nodes.keys() - other.nodes.keys())
    shared = base.nodes.keys() & other.nodes.keys()
    new_statements, old_statements = differing_statements(base, other)
    # A changed length unit rescales every element without touching a statement that reaches one.
    if len(new_statements) + len(old_statements) > _FAST_PATH_LIMIT * max(1, len(base.statements)) or not (
            math.isclose(base.unit_scale_m, other.unit_scale_m, rel_tol=1e-9)):
        candidates: Iterable[str] = shared
    else:
        touched = _touched(other, base, new_statements) | _touched(base, other, old_statements)
        candidates = touched & shared
    modified = frozenset(k for k in candidates if base.signature(k) != other.signature(k))
    return NodeChanges(added, removed, modified)


def differing_statements(base: IfcModel, other: IfcModel) -> tuple[set[str], set[str]]:
    """Statements only in ``other`` and only in ``base``, ignoring float formatting and spacing.

    Memoised on ``other`` (scoring asks for the input model against a prediction twice)."""
    found = other.differing.get(id(base))
    if found is None or found[0] is not base:
        found = (base, *_differing_statements(base, other))
        other.differing[id(base)] = found
    return set(found[1]), set(found[2])


def _differing_statements(base: IfcModel, other: IfcModel) -> tuple[frozenset[str], frozenset[str]]:
    new = set(other.statements - base.statements)
    old = set(base.statements - other.statements)
    new_by_id = {statement_id(s): s for s in new}
    old_by_id = {statement_id(s): s for s in old}
    for i in new_by_id.keys() & old_by_id.keys():
        if i is not None and normalise_statement(new_by_id[i]) == normalise_statement(old_by_id[i]):
            new.discard(new_by_id[i])
            old.discard(old_by_id[i])
    return frozenset(new), frozenset(old)


def _touched(model: IfcModel, counterpart: IfcModel, statements: Iterable[str]) -> set[str]:
    """Nodes of ``model`` whose signature can depend on any of ``statements``.

    A changed property/type/material relation marks only the objects that joined or
    left it when it still points at the same definition in ``counterpart``: removing
    one wall from a material shared by a hundred walls leaves the others untouched.
    """
    f = model.file
    direct = {i for i in (statement_id(s) for s in statements) if i is not None}
    stack = sorted(direct)
    seen: set[int] = set()
    out: set[str] = set()
    while stack:
        eid = stack.pop()
        if eid in seen:
            continue
        seen.add(eid)
        try:
            ent = f.by_id(eid)
        except RuntimeError:
            continue
        key = model.node_key(ent)
        if key is not None:
            out.add(key)
            continue
        if ent.is_a("IfcRelDefines") or ent.is_a("IfcRelAssociates"):
            # Property sets, types and materials point at their objects, not the other way round.
            related = {k for k in (model.node_key(o) for o in _objects(ent)) if k is not None}
            if eid in direct:
                related = _membership_change(ent, related, counterpart)
            out.update(related)
            continue
        stack.extend(inv.id() for inv in f.get_inverse(ent))
    return out


def _membership_change(rel: ifcopenshell.entity_instance, related: set[str], counterpart: IfcModel) -> set[str]:
    """Objects of a changed relation whose membership differs from the same relation in ``counterpart``."""
    try:
        twin = counterpart.file.by_id(rel.id())
    except RuntimeError:
        return related
    if twin.is_a() != rel.is_a() or _relating(twin) != _relating(rel):
        return related
    other = {str(getattr(o, "GlobalId", "")) for o in _objects(twin)}
    return related ^ other


def _objects(rel: ifcopenshell.entity_instance) -> list[ifcopenshell.entity_instance]:
    """The objects a definition relation assigns to (IfcRelDefinesByTemplate has none; a
    malformed file may put a value there)."""
    objects = getattr(rel, "RelatedObjects", None) or ()
    return [o for o in objects if isinstance(o, ifcopenshell.entity_instance)] if isinstance(objects, tuple) else []


def _relating(rel: ifcopenshell.entity_instance) -> object:
    """What a relation assigns (property set, type, material): its id, the ids of a set of
    property sets (IFC4), or the value a malformed file put there."""
    for name in ("RelatingPropertyDefinition", "RelatingType", "RelatingMaterial"):
        target = getattr(rel, name, None)
        if target is not None:
            targets = target if isinstance(target, tuple) else (target,)
            return tuple(t.id() if isinstance(t, ifcopenshell.entity_instance) else repr(t) for t in targets)
    return None


@dataclass(frozen=True)
class Alignment:
    """Greedy node correspondence (paper App. E.3: class agreement + spatial proximity).

    Attributes:
        pairs: ``new key -> old key`` for every aligned node.
    """

    pairs: dict[str, str]


def align_nodes(new: Sequence[tuple[str, str, np.ndarray]], old: Sequence[tuple[str, str, np.ndarray]],
                max_distance_m: float = ALIGN_DISTANCE_M) -> Alignment:
    """Greedily pair ``new`` nodes with ``old`` ones of the same class, nearest first.

    Candidate pairs need the same IFC class and centres within ``max_distance_m``;
    they are taken in order of distance (ties by key, for determinism), skipping
    any pair whose end is already used. The paper prefers this to Hungarian matching
    because topology graphs are large.

    Args:
        new: ``(key, ifc_class, centre_m)`` of nodes to be named.
        old: ``(key, ifc_class, centre_m)`` of nodes they may stand for.
        max_distance_m: largest allowed centre distance.
    """
    cands = []
    for nk, nc, np_ in new:
        for ok, oc, op in old:
            if nc != oc:
                continue
            d = float(np.linalg.norm(np.asarray(np_) - np.asarray(op)))
            if d <= max_distance_m:
                cands.append((d, nk, ok))
    cands.sort()
    pairs: dict[str, str] = {}
    used: set[str] = set()
    for _, nk, ok in cands:
        if nk in pairs or ok in used:
            continue
        pairs[nk] = ok
        used.add(ok)
    return Alignment(pairs)


@dataclass(frozen=True)
class EditSets:
    """The reference and predicted edit sets of one task.

    Attributes:
        operation: "create", "update" or "delete".
        reference: node keys of the reference edit, in M* (create/update) or M0 (delete).
        predicted: node keys of the predicted edit, in M' (create/update) or M0 (delete).
        reference_changes: M0 → M* node changes.
        predicted_changes: M0 → M' node changes.
        recreated: M0 keys the agent removed and re-created under a new GlobalId
            (``old key -> new key``).
    """

    operation: str
    reference: tuple[str, ...]
    predicted: tuple[str, ...]
    reference_changes: NodeChanges
    predicted_changes: NodeChanges
    recreated: dict[str, str]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        def changes(c: NodeChanges) -> dict[str, list[str]]:
            return {"added": sorted(c.added), "removed": sorted(c.removed), "modified": sorted(c.modified)}

        return {"operation": self.operation, "reference": list(self.reference), "predicted": list(self.predicted),
                "reference_changes": changes(self.reference_changes),
                "predicted_changes": changes(self.predicted_changes), "recreated": dict(self.recreated)}


Centre = Callable[[str], np.ndarray]


def find_recreated(m0: IfcModel, pred: IfcModel, changes: NodeChanges, centre0: Centre,
                   centre_pred: Centre) -> dict[str, str]:
    """M0 nodes the prediction removed and added back under a new GlobalId (old key -> new key)."""
    if not changes.removed or not changes.added:
        return {}
    new = [(k, pred.nodes[k].ifc_class, centre_pred(k)) for k in sorted(changes.added)]
    old = [(k, m0.nodes[k].ifc_class, centre0(k)) for k in sorted(changes.removed)]
    return {o: n for n, o in align_nodes(new, old).pairs.items()}


def build_edit_sets(operation: str, targets: Sequence[str], m0: IfcModel, ref: IfcModel, pred: IfcModel,
                    ref_changes: NodeChanges, pred_changes: NodeChanges,
                    recreated: dict[str, str]) -> EditSets:
    """Edit sets for ``operation`` following the rules in the module docstring.

    Args:
        operation: "create", "update" or "delete".
        targets: the task's target GlobalIds (may be empty: then update uses every
            added or modified node and delete every removed node).
        m0: the input model.
        ref: the ground truth M*.
        pred: the prediction M'.
        ref_changes: ``node_changes(m0, ref)``.
        pred_changes: ``node_changes(m0, pred)``.
        recreated: from :func:`find_recreated`.
    """
    if operation == "create":
        reference = sorted(ref_changes.added)
        predicted = sorted(pred_changes.added)
    elif operation == "update":
        if targets:
            reference = [t for t in targets if t in ref.nodes]
            predicted = [t for t in targets if t in pred.nodes]
        else:
            reference = sorted(ref_changes.modified | ref_changes.added)
            predicted = sorted(pred_changes.modified)
        predicted += sorted(pred_changes.added - set(predicted))
    elif operation == "delete":
        reference = sorted(ref_changes.removed)
        predicted = sorted(pred_changes.removed - recreated.keys())
    else:
        raise ValueError(f"operation must be one of {OPERATIONS}, got {operation!r}")
    return EditSets(operation, tuple(reference), tuple(predicted), ref_changes, pred_changes, dict(recreated))
