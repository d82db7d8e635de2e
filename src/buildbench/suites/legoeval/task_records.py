"""LEGO-Eval task records: constraint specs and verdicts, outcome parsing, the holistic rule.

The checkers, the reference plans and the generators build on this module, so it sits below
all of them; :mod:`.tasks` (where the task shape is documented) re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buildbench.harness import Task
from buildbench.harness.record import Record
from buildbench.harness.task_files import TaskShapeError

from .constraints import CONSTRAINT_TYPES, Program, constraint_type

SUITE = "legoeval"
#: Complexity buckets by constraint count (spec 5.2): simple, moderate, complex.
BUCKETS: tuple[str, ...] = ("2-7", "8-12", ">12")
TYPES: tuple[str, ...] = tuple(CONSTRAINT_TYPES)


class OutcomeError(ValueError):
    """An evaluator outcome does not have the documented shape (message names the field)."""


@dataclass(frozen=True)
class ConstraintSpec:
    """One constraint of a task: id, natural text, type and (when known) its program."""

    id: str
    text: str
    type: str
    program: Program | None = None

    def to_input(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text, "type": self.type}


@dataclass(frozen=True)
class Verdict(Record):
    """An evaluator's judgment of one constraint.

    Attributes:
        id: The constraint's id, as the task gives it.
        holds: Whether the constraint holds in the house (null: could not judge).
        explanation: Why, naming the ids of the elements looked at.
    """

    SUITE = "legoeval"
    KIND = "verdict"

    id: str
    holds: bool | None
    explanation: str = ""


def bucket_of(n_constraints: int) -> str:
    """The complexity bucket of an instruction with ``n_constraints`` constraints."""
    if n_constraints <= 7:
        return "2-7"
    return "8-12" if n_constraints <= 12 else ">12"


def spec_for(cid: str, text: str, program: Program) -> ConstraintSpec:
    return ConstraintSpec(cid, text, constraint_type(program), program)


def task_constraints(task: Task) -> list[ConstraintSpec]:
    """The constraints of a task with their programs (None where the task has only text)."""
    from .constraints import parse_program

    programs = list(task.target.get("programs") or [])
    out = []
    for i, c in enumerate(task.inputs["constraints"]):
        raw = programs[i] if i < len(programs) else None
        program = None if raw is None else parse_program(raw, f"task {task.id} constraint {c['id']}")
        out.append(ConstraintSpec(str(c["id"]), str(c["text"]), str(c["type"]), program))
    return out


def parse_outcome(outcome: Any, task: Task) -> tuple[list[Verdict], bool | None]:
    """Check an outcome's shape against its task; return the verdicts in constraint order
    (a constraint the outcome does not mention gets ``holds`` None) and the holistic verdict.

    Raises:
        OutcomeError: naming the task and the field.
    """
    where = f"task {task.id} outcome"
    if not isinstance(outcome, Mapping):
        raise OutcomeError(f"{where}: expected an object, got {type(outcome).__name__}")
    return parse_verdicts(outcome.get("verdicts", []), outcome.get("valid"), task)


def parse_verdicts(raw: Any, valid: Any, task: Task) -> tuple[list[Verdict], bool | None]:
    """:func:`parse_outcome` of an outcome's ``verdicts`` and ``valid`` (a typed outcome's fields,
    read back from a store without checks).

    Raises:
        OutcomeError: naming the task and the field.
    """
    where = f"task {task.id} outcome"
    if valid is not None and not isinstance(valid, bool):
        raise OutcomeError(f"{where}.valid: expected true, false or null, got {valid!r}")
    if not isinstance(raw, list):
        raise OutcomeError(f"{where}.verdicts: expected a list, got {type(raw).__name__}")
    verdicts = []
    for i, v in enumerate(raw):
        if not isinstance(v, Mapping) or "id" not in v:
            raise OutcomeError(f"{where}.verdicts[{i}]: expected an object with an 'id'")
        holds = v.get("holds")
        if holds is not None and not isinstance(holds, bool):
            raise OutcomeError(f"{where}.verdicts[{i}].holds: expected true, false or null, got {holds!r}")
        verdicts.append(Verdict(str(v["id"]), holds, str(v.get("explanation", ""))))
    return in_task_order(verdicts, task, f"{where}."), valid


def in_task_order(verdicts: Sequence[Verdict], task: Task, where: str) -> list[Verdict]:
    """One verdict per constraint of ``task``, in constraint order (a constraint no verdict
    mentions gets ``holds`` None; the last verdict of a repeated id wins).

    Raises:
        OutcomeError: a verdict names a constraint the task does not have (the message starts
            with ``where``, then ``verdicts[i].id``).
    """
    ids = [str(c["id"]) for c in task.inputs["constraints"]]
    by_id: dict[str, Verdict] = {}
    for i, v in enumerate(verdicts):
        if v.id not in ids:
            raise OutcomeError(f"{where}verdicts[{i}].id: unknown constraint {v.id!r} (known: {', '.join(ids)})")
        by_id[v.id] = v
    return [by_id.get(cid, Verdict(cid, None, "no verdict")) for cid in ids]


def holistic(verdicts: Sequence[Verdict]) -> bool | None:
    """A scene is valid only if every constraint holds (spec 4.6); any unjudged constraint
    that could flip it leaves the verdict unknown (None), and so does an empty list: with no
    constraint there is nothing to hold, which must not read as a valid scene (issue 23)."""
    if not verdicts:
        return None
    if any(v.holds is False for v in verdicts):
        return False
    if any(v.holds is None for v in verdicts):
        return None
    return True


def check_task_record(task: Task) -> None:
    """The LEGO-Eval check of a task from a file (``Suite.validate_task``): the shape
    :mod:`.tasks` documents, so a record no evaluation can mean is refused at load rather than
    failing its episode (a constraint without an id, labels of another length than the
    constraints, a scene the env cannot read).

    Raises:
        TaskShapeError: naming the dotted field.
    """
    from buildbench.scenes import scene_warnings
    from buildbench.scenes.io import load_scene
    from buildbench.scenes.model import SceneFormatError

    if not isinstance(task.inputs.get("instruction"), str) or not task.inputs["instruction"].strip():
        raise TaskShapeError("inputs.instruction", "expected a non-empty string")
    constraints = task.inputs.get("constraints")
    if not isinstance(constraints, list) or not constraints:
        # with no constraint the holistic verdict is undefined (see holistic): nothing to evaluate
        raise TaskShapeError("inputs.constraints", "expected a non-empty list of {id, text, type} objects")
    seen: set[str] = set()
    for i, c in enumerate(constraints):
        where = f"inputs.constraints[{i}]"
        if not isinstance(c, Mapping):
            raise TaskShapeError(where, f"expected an {{id, text, type}} object, got {type(c).__name__}")
        for key in ("id", "text"):
            if not isinstance(c.get(key), str) or not c[key].strip():
                raise TaskShapeError(f"{where}.{key}", "expected a non-empty string")
        if c.get("type") not in TYPES:
            raise TaskShapeError(f"{where}.type", f"expected one of {', '.join(TYPES)}, got {c.get('type')!r}")
        if c["id"] in seen:  # verdicts name constraints by id: a repeated id is two constraints in one
            raise TaskShapeError(f"{where}.id", f"{c['id']!r} repeats an earlier constraint's id")
        seen.add(c["id"])
    scene = task.inputs.get("scene")
    if not isinstance(scene, dict):
        raise TaskShapeError("inputs.scene", f"expected a house JSON object, got {type(scene).__name__}")
    try:
        with scene_warnings.under("inputs.scene."):  # named as the error would be, given once here
            load_scene(scene)
    except (SceneFormatError, KeyError, TypeError) as exc:
        raise TaskShapeError("inputs.scene", f"not a house the env can read ({exc})") from None
    _check_target(task, len(constraints))


def _check_target(task: Task, n: int) -> None:
    from .constraints import ProgramError, parse_program

    valid, labels = task.target.get("valid"), task.target.get("labels")
    if valid is not None and not isinstance(valid, bool):
        raise TaskShapeError("target.valid", f"expected true, false or null, got {valid!r}")
    if labels is not None and (not isinstance(labels, list) or len(labels) != n
                               or not all(isinstance(x, bool) for x in labels)):
        raise TaskShapeError("target.labels", f"expected one true/false per constraint ({n}) or null")
    if (valid is None) != (labels is None):
        raise TaskShapeError("target.valid", "a labelled task gives both valid and labels, an unlabelled one neither")
    if labels is not None and valid != all(labels):
        raise TaskShapeError("target.valid", f"is {str(valid).lower()}, but the labels say every constraint "
                             f"holds is {str(all(labels)).lower()}")
    for key in ("programs", "plans"):
        raw = task.target.get(key)
        if raw is not None and (not isinstance(raw, list) or len(raw) > n
                                or not all(p is None or isinstance(p, Mapping) for p in raw)):
            raise TaskShapeError(f"target.{key}", f"expected a list of objects or nulls, at most one per "
                                 f"constraint ({n})")
    for i, plan in enumerate(task.target.get("plans") or []):
        # a stored plan is read as it is (plans.task_plans): nodes of a tool and args, edges from/to
        if plan is not None and not (
                isinstance(plan.get("nodes"), list) and isinstance(plan.get("edges"), list)
                and all(isinstance(n, Mapping) and isinstance(n.get("args"), list) and "tool" in n
                        for n in plan["nodes"])
                and all(isinstance(e, Mapping) and "from" in e and "to" in e for e in plan["edges"])):
            raise TaskShapeError(f"target.plans[{i}]", 'expected {"nodes": [{"tool", "args": [...]}], '
                                 '"edges": [{"from", "to"}]} or null')
    for i, raw in enumerate(task.target.get("programs") or []):
        if raw is not None:
            try:
                parse_program(raw, f"target.programs[{i}]")
            except ProgramError as exc:
                raise TaskShapeError(f"target.programs[{i}]", str(exc)) from None
