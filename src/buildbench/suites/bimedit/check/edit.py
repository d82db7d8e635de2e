"""Score one BIM-Edit prediction (the verifier that puts the three axes together): ``score_edit(M0, M*, M', task) -> EditScore``.

The three axes follow the paper (App. E) exactly as documented in
:mod:`~buildbench.suites.bimedit.check`; ``final`` is their mean and a task is
``solved`` when all three are ≥ 0.98 (paper section 3.5).

Bad predictions never raise: an unreadable, empty or missing file scores 0 on every
axis with the reason; schema problems in the edited entities, duplicate or missing
GlobalIds, a changed length unit, geometry off by ~1000× and elements that cannot
be tessellated are scored as they are and listed in ``notes``. A bad *task* (its
input or ground-truth file unreadable, an unknown operation) raises ``ValueError``.

Strict mode (ours, not the paper's) adds two things the paper's metrics cannot see
(the spec notes in section 10 that a do-nothing agent scores topology 1 on updates
and that only the edit graph is ever looked at):

* topology without the no-change shortcut: when the reference changes no relation,
  ``S_topo`` is the node-edit F1 instead of 1 (still 0 if the prediction changed a
  relation);
* collateral damage: ``c`` = number of M0 elements the prediction removed or
  modified that the reference leaves untouched; every score is multiplied by
  ``max(0, 1 − c / max(1, n_ref))``, ``n_ref`` being the number of reference node
  edits, so damaging as many elements as the edit itself touches zeroes the score.
  A strict solve also needs ``c = 0``;
* no edit, no score: a prediction that changes nothing in the input model scores 0 on
  every axis (issue 23: metrics never pass on nothing). The paper's axes still give a
  do-nothing update topology 1 (the shortcut), and semantics 1 and a geometry near 1
  when the untouched target still overlaps the moved one; they stay in
  ``diagnostics["paper"]``.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.inputs import read_bytes
from buildbench.suites.bimedit.check.bounded import KernelCrash
from buildbench.suites.bimedit.check.diff import (
    OPERATIONS,
    EditSets,
    NodeChanges,
    align_nodes,
    build_edit_sets,
    find_recreated,
    node_changes,
)
from buildbench.suites.bimedit.check.geometry import geometry_diagnostics, geometry_score, sample_edit_set
from buildbench.suites.bimedit.check.model import IfcModel, ModelError, load_model
from buildbench.suites.bimedit.check.semantics import delete_semantic_score, semantic_score
from buildbench.suites.bimedit.check.shapes import MeshStore, ShapeCache
from buildbench.suites.bimedit.check.topology import (
    edge_edits,
    node_edits,
    predicted_node_edits,
    rename_edges,
    topology_score,
)
from buildbench.suites.bimedit.check.validity import edited_entity_problems, unit_remarks

#: Every axis must reach this for a task to count as solved (paper section 3.5).
SOLVE_THRESHOLD = 0.98
_OPERATION_CODES = {"cre": "create", "upd": "update", "del": "delete"}


@dataclass(frozen=True)
class EditTask:
    """What the scorer needs to know about a task.

    Attributes:
        operation: "create", "update" or "delete".
        target_guids: GlobalIds the instruction is about (update/delete edit sets use them).
        relevant_properties: property keys the semantic score compares (None: per-class defaults).
        task_id: for messages.
    """

    operation: str
    target_guids: tuple[str, ...] = ()
    relevant_properties: tuple[str, ...] | None = None
    task_id: str = ""

    def __post_init__(self) -> None:
        op = _OPERATION_CODES.get(str(self.operation).lower(), str(self.operation).lower())
        if op not in OPERATIONS:
            raise ValueError(f"task {self.task_id or '?'}: operation must be one of {OPERATIONS} "
                             f"(or CRE/UPD/DEL), got {self.operation!r}")
        object.__setattr__(self, "operation", op)
        object.__setattr__(self, "target_guids", tuple(str(g) for g in self.target_guids))
        if self.relevant_properties is not None:
            object.__setattr__(self, "relevant_properties", tuple(str(p) for p in self.relevant_properties))

    @classmethod
    def coerce(cls, spec: EditTask | Mapping[str, Any]) -> EditTask:
        """Accept an :class:`EditTask` or a task record (e.g. a JSONL line) with the same field names."""
        if isinstance(spec, EditTask):
            return spec
        if not isinstance(spec, Mapping):
            raise ValueError(f"task spec must be an EditTask or a mapping, got {type(spec).__name__}")
        if "operation" not in spec:
            raise ValueError(f"task spec {spec.get('task_id', '?')} has no 'operation'")
        props = spec.get("relevant_properties")
        return cls(operation=spec["operation"], target_guids=tuple(spec.get("target_guids") or ()),
                   relevant_properties=None if props is None else tuple(props),
                   task_id=str(spec.get("task_id", "")))


@dataclass(frozen=True)
class EditScore:
    """The result of scoring one prediction.

    Attributes:
        geometry: ``S_geo`` in [0, 1].
        semantics: ``S_sem`` in [0, 1].
        topology: ``S_topo`` in [0, 1].
        final: the mean of the three (times the collateral factor in strict mode).
        solved: all three ≥ 0.98 (and no collateral damage in strict mode).
        reason: one line on how the score came about: "scored", "prediction made no change to
            the input model" or "prediction unreadable: …", plus a count of ``notes`` if any.
        strict: whether strict mode was on.
        edit_sets: the edit sets compared (None when the prediction could not be read).
        notes: problems found in the prediction.
        diagnostics: extra measures (voxel IoU, F-score, Hausdorff, matching, edits, paper scores in strict mode).
    """

    geometry: float
    semantics: float
    topology: float
    final: float
    solved: bool
    reason: str
    strict: bool = False
    edit_sets: EditSets | None = None
    notes: tuple[str, ...] = ()
    diagnostics: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"geometry": self.geometry, "semantics": self.semantics, "topology": self.topology,
                "final": self.final, "solved": self.solved, "reason": self.reason, "strict": self.strict,
                "edit_sets": None if self.edit_sets is None else self.edit_sets.to_dict(),
                "notes": list(self.notes), "diagnostics": self.diagnostics}


def final_score(geometry: float, semantics: float, topology: float) -> float:
    """The unweighted mean of the three axes (paper section 3.5)."""
    return (geometry + semantics + topology) / 3


def is_solved(geometry: float, semantics: float, topology: float) -> bool:
    """All three axes at or above :data:`SOLVE_THRESHOLD`."""
    return min(geometry, semantics, topology) >= SOLVE_THRESHOLD


class _ModelCache:
    """Parsed models and their meshes keyed by file content, so a task's M0 and M* are read once;
    the models' caches share tessellations of identical content (see :class:`MeshStore`).

    A task's own models (M0, M*) are opened lazily (:func:`open_ifc`): they come with the task,
    and an entity of theirs that cannot be read fails the task where it is read. A prediction
    is the agent's output and is parsed in full, so a malformed one scores as unreadable."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[IfcModel, ShapeCache]] = OrderedDict()
        self.meshes = MeshStore()

    def get(self, path: str | Path, *, task_model: bool = False) -> tuple[IfcModel, ShapeCache]:
        p = Path(path)
        if not p.is_file():
            raise ModelError(f"{p}: no such file")
        try:
            data = read_bytes(p)
        except OSError as exc:
            raise ModelError(f"{p}: cannot read ({exc.strerror or exc})") from exc
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        found = self._items.get(digest)
        if found is None:
            model = load_model(p, data, lazy=task_model)
            found = (model, ShapeCache(model, self.meshes, bounded=not task_model))
            self._items[digest] = found
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        self._items.move_to_end(digest)
        return found

    def clear(self) -> None:
        self._items.clear()
        self.meshes.clear()


MODEL_CACHE = _ModelCache()


def score_edit(original_path: str | Path, ground_truth_path: str | Path, predicted_path: str | Path,
               task_spec: EditTask | Mapping[str, Any], *, strict: bool = False, seed: int = 0) -> EditScore:
    """Score the agent's model M' against the ground truth M*, both relative to the input M0.

    Args:
        original_path: the task's input model M0.
        ground_truth_path: the ground-truth model M*.
        predicted_path: the agent's saved model M'.
        task_spec: an :class:`EditTask` or a task record with ``operation``,
            ``target_guids`` and optionally ``relevant_properties`` and ``task_id``.
        strict: also penalise collateral damage (see module docstring).
        seed: the sampling seed of the geometry score.

    Raises:
        ValueError: the task is malformed or its M0 / M* cannot be read.
    """
    task = EditTask.coerce(task_spec)
    try:
        m0, shapes0 = MODEL_CACHE.get(original_path, task_model=True)
        ref, ref_shapes = MODEL_CACHE.get(ground_truth_path, task_model=True)
    except ModelError as exc:
        raise ValueError(f"task {task.task_id or '?'}: {exc}") from exc
    try:
        pred, pred_shapes = MODEL_CACHE.get(predicted_path)
    except ModelError as exc:
        return EditScore(0.0, 0.0, 0.0, 0.0, False, f"prediction unreadable: {exc}", strict)
    for shapes in (shapes0, ref_shapes, pred_shapes):
        shapes.new_budget()
    try:
        return _score_models(task, m0, shapes0, ref, ref_shapes, pred, pred_shapes, strict=strict, seed=seed)
    except KernelCrash:
        raise  # the kernel died on the prediction (only an agent's model is tessellated in a child)
    except RuntimeError as exc:  # a malformed entity of M0 or M*, read lazily; the prediction was parsed in full
        raise ValueError(f"task {task.task_id or '?'}: its input or ground-truth model has an entity that "
                         f"cannot be read ({exc})") from exc


def _score_models(task: EditTask, m0: IfcModel, shapes0: ShapeCache, ref: IfcModel, ref_shapes: ShapeCache,
                  pred: IfcModel, pred_shapes: ShapeCache, *, strict: bool, seed: int) -> EditScore:
    notes = [f"prediction: {n}" for n in pred.notes]
    if pred.schema != m0.schema:
        notes.append(f"the prediction is {pred.schema} but the input model is {m0.schema}")
    notes += [f"schema: {p}" for p in edited_entity_problems(m0, pred)]
    missing = [g for g in task.target_guids if g not in m0.nodes]
    if missing:
        notes.append(f"task targets not in the input model: {', '.join(missing)}")
    ref_changes = node_changes(m0, ref)
    pred_changes = node_changes(m0, pred)
    recreated = find_recreated(m0, pred, pred_changes, shapes0.centre, pred_shapes.centre)
    sets = build_edit_sets(task.operation, task.target_guids, m0, ref, pred, ref_changes, pred_changes, recreated)

    # Geometry: delete edits are sampled from M0 on both sides (spec section 3.2).
    if task.operation == "delete":
        ref_side, pred_side = (m0, shapes0), (m0, shapes0)
    else:
        ref_side, pred_side = (ref, ref_shapes), (pred, pred_shapes)
    ref_meshes = [m for m in (ref_side[1].mesh(k) for k in sets.reference) if m is not None]
    pred_meshes = [m for m in (pred_side[1].mesh(k) for k in sets.predicted) if m is not None]
    geo = geometry_score(sample_edit_set(ref_meshes, seed), sample_edit_set(pred_meshes, seed))

    if task.operation == "delete":
        targets = [t for t in task.target_guids if t in m0.nodes] or list(sets.reference)
        sem_score, sem_detail = delete_semantic_score(targets, pred, recreated), {}
    else:
        sem = semantic_score(ref, ref_shapes, sets.reference, pred, pred_shapes, sets.predicted,
                             task.relevant_properties)
        sem_score = sem.score
        sem_detail = {"pairs": [{"reference": p.reference, "predicted": p.predicted, "iou": p.iou,
                                 "class_match": p.class_match, "property_score": p.property_score,
                                 "mismatched": list(p.mismatched)} for p in sem.pairs],
                      "unmatched_reference": list(sem.unmatched_reference)}

    names = _canonical_names(ref, ref_shapes, pred, pred_shapes, ref_changes, pred_changes, recreated)
    ref_nodes = node_edits(ref_changes)
    pred_nodes = predicted_node_edits(m0, pred, pred_changes, names)
    topo = topology_score(ref_nodes, pred_nodes, edge_edits(m0.edges, ref.edges),
                          edge_edits(m0.edges, rename_edges(pred.edges, names)), strict=strict)
    notes += ref_shapes.notes + pred_shapes.notes + shapes0.notes
    notes += unit_remarks(m0, pred, geo.reference_points, geo.predicted_points)

    diag = geometry_diagnostics(geo)
    diagnostics: dict[str, Any] = {
        "chamfer_median_m": geo.chamfer_median_m, "diagonal_m": geo.diagonal_m,
        "points": {"reference": len(geo.reference_points), "predicted": len(geo.predicted_points)},
        "geometry": None if diag is None else diag.__dict__,
        "semantics": sem_detail,
        "topology": {"nodes_f1": topo.nodes.f1, "edges_f1": topo.edges.f1, "special_case": topo.special_case,
                     "reference_edges": _edge_list(topo.reference_edges),
                     "predicted_edges": _edge_list(topo.predicted_edges)},
        "alignment": names,
    }
    g, s, t = geo.score, sem_score, topo.score
    if strict:
        paper = topology_score(ref_nodes, pred_nodes, topo.reference_edges, topo.predicted_edges, strict=False)
        diagnostics["paper"] = {"geometry": g, "semantics": s, "topology": paper.score,
                                "final": final_score(g, s, paper.score), "solved": is_solved(g, s, paper.score)}
        if pred_changes.empty:  # no edit, no score (module docstring)
            g = s = t = 0.0
    final, solved = final_score(g, s, t), is_solved(g, s, t)
    if strict:
        collateral = _collateral(ref_changes, pred_nodes, m0)
        factor = max(0.0, 1.0 - len(collateral) / max(1, len(ref_nodes)))
        diagnostics["collateral"] = sorted(collateral)
        diagnostics["collateral_factor"] = factor
        final, solved = final * factor, solved and not collateral
        if collateral:
            notes.append(f"collateral damage: {len(collateral)} untouched element(s) changed: "
                         + ", ".join(sorted(collateral)[:10]))
    reason = "scored" if not pred_changes.empty else "prediction made no change to the input model"
    if notes:
        reason += f"; {len(notes)} problem(s) noted"
    return EditScore(g, s, t, final, solved, reason, strict, sets, tuple(notes), diagnostics)


def _canonical_names(ref: IfcModel, ref_shapes: ShapeCache, pred: IfcModel, pred_shapes: ShapeCache,
                     ref_changes: NodeChanges, pred_changes: NodeChanges,
                     recreated: dict[str, str]) -> dict[str, str]:
    """Rename the prediction's new nodes: re-created ones to their M0 key, others onto M*'s new nodes."""
    names = {new: old for old, new in recreated.items()}
    fresh = sorted(pred_changes.added - names.keys())
    if fresh and ref_changes.added:
        new = [(k, pred.nodes[k].ifc_class, pred_shapes.centre(k)) for k in fresh]
        old = [(k, ref.nodes[k].ifc_class, ref_shapes.centre(k)) for k in sorted(ref_changes.added)]
        names.update(align_nodes(new, old).pairs)
    return names


def _collateral(ref_changes: NodeChanges, pred_nodes: frozenset[tuple[str, str]], m0: IfcModel) -> set[str]:
    touched_by_ref = ref_changes.removed | ref_changes.modified
    return {k for k, kind in pred_nodes
            if kind in ("removed", "modified") and k in m0.nodes and k not in touched_by_ref}


def _edge_list(edits: frozenset[tuple[str, tuple[str, str, str, str]]]) -> list[list[str]]:
    return [[sign, *edge] for sign, edge in sorted(edits)]

