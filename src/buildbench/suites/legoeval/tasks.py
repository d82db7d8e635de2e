"""LEGO-Eval tasks and evaluator outcomes: the shapes every LEGO-Eval piece codes against.

A task is one instruction–scene pair of the meta-benchmark (spec 4.1 / 5.1): is this scene
aligned with this instruction, and which of its constraints hold?

``Task.inputs`` (what an evaluator may see)::

    {"instruction": str,
     "scene": dict,                 # an AI2-THOR house JSON (buildbench.scenes.io reads it)
     "constraints": [{"id": "c0", "text": str, "type": "FL"|"MS"|"OS"|"OP"}, ...]}

``Task.target`` (ground truth, never shown)::

    {"valid": bool,                 # the scene satisfies every constraint
     "labels": [bool, ...],         # one per constraint, in order
     "programs": [dict|None, ...],  # the typed program of each constraint (None: text only)
     "plans": [dict|None, ...]}     # its reference tool plan on this scene (plans.py; None: no program)

``Task.metadata``::

    {"pair": str,                   # id shared by an aligned scene and its misaligned twin
     "aligned": bool, "n_constraints": int,
     "bucket": "2-7"|"8-12"|">12",  # complexity bucket (spec 5.2)
     "types": {"FL": int, "MS": int, "OS": int, "OP": int},
     "violated": [str, ...],        # constraint ids the twin was made to break ([] if aligned)
     "source": "generated"|"lego-bench"}

An evaluator's *outcome* for a task is a JSON dict::

    {"verdicts": [{"id": "c0", "holds": bool|None, "explanation": str}, ...],
     "valid": bool|None}

``holds`` None means the evaluator could not judge that constraint (an error, kept out of
means and counted apart); ``valid`` None means no holistic judgment. :func:`parse_outcome`
checks the shape; ``metrics.score(task, outcome)`` scores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from buildbench.harness import Task

from .constraints import CONSTRAINT_TYPES, Program, constraint_type, program_to_json

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
class ConstraintVerdict:
    """An evaluator's judgment of one constraint (``holds`` None: could not judge)."""

    id: str
    holds: bool | None
    explanation: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "holds": self.holds, "explanation": self.explanation}


def bucket_of(n_constraints: int) -> str:
    """The complexity bucket of an instruction with ``n_constraints`` constraints."""
    if n_constraints <= 7:
        return "2-7"
    return "8-12" if n_constraints <= 12 else ">12"


def spec_for(cid: str, text: str, program: Program) -> ConstraintSpec:
    return ConstraintSpec(cid, text, constraint_type(program), program)


def make_task(
    task_id: str,
    *,
    instruction: str,
    scene: Mapping[str, Any],
    constraints: Sequence[ConstraintSpec],
    labels: Sequence[bool],
    pair: str,
    aligned: bool,
    violated: Sequence[str] = (),
    source: str = "generated",
) -> Task:
    """Build a task in the documented shape."""
    if len(labels) != len(constraints):
        raise ValueError(f"task {task_id}: {len(labels)} labels for {len(constraints)} constraints")
    from .plans import reference_plans

    types = {t: sum(c.type == t for c in constraints) for t in TYPES}
    return Task(
        id=task_id,
        suite=SUITE,
        inputs={"instruction": instruction, "scene": dict(scene),
                "constraints": [c.to_input() for c in constraints]},
        target={"valid": all(labels), "labels": [bool(x) for x in labels],
                "programs": [None if c.program is None else program_to_json(c.program) for c in constraints],
                "plans": reference_plans(scene, [c.program for c in constraints])},
        metadata={"pair": pair, "aligned": aligned, "n_constraints": len(constraints),
                  "bucket": bucket_of(len(constraints)), "types": types, "violated": list(violated),
                  "source": source},
    )


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


def parse_outcome(outcome: Any, task: Task) -> tuple[list[ConstraintVerdict], bool | None]:
    """Check an outcome's shape against its task; return the verdicts in constraint order
    (a constraint the outcome does not mention gets ``holds`` None) and the holistic verdict.

    Raises:
        OutcomeError: naming the task and the field.
    """
    where = f"task {task.id} outcome"
    if not isinstance(outcome, Mapping):
        raise OutcomeError(f"{where}: expected an object, got {type(outcome).__name__}")
    valid = outcome.get("valid")
    if valid is not None and not isinstance(valid, bool):
        raise OutcomeError(f"{where}.valid: expected true, false or null, got {valid!r}")
    raw = outcome.get("verdicts", [])
    if not isinstance(raw, list):
        raise OutcomeError(f"{where}.verdicts: expected a list, got {type(raw).__name__}")
    ids = [str(c["id"]) for c in task.inputs["constraints"]]
    by_id: dict[str, ConstraintVerdict] = {}
    for i, v in enumerate(raw):
        if not isinstance(v, Mapping) or "id" not in v:
            raise OutcomeError(f"{where}.verdicts[{i}]: expected an object with an 'id'")
        cid, holds = str(v["id"]), v.get("holds")
        if cid not in ids:
            raise OutcomeError(f"{where}.verdicts[{i}].id: unknown constraint {cid!r} (known: {', '.join(ids)})")
        if holds is not None and not isinstance(holds, bool):
            raise OutcomeError(f"{where}.verdicts[{i}].holds: expected true, false or null, got {holds!r}")
        by_id[cid] = ConstraintVerdict(cid, holds, str(v.get("explanation", "")))
    return [by_id.get(cid, ConstraintVerdict(cid, None, "no verdict")) for cid in ids], valid


def holistic(verdicts: Sequence[ConstraintVerdict]) -> bool | None:
    """A scene is valid only if every constraint holds (spec 4.6); any unjudged constraint
    that could flip it leaves the verdict unknown (None)."""
    if any(v.holds is False for v in verdicts):
        return False
    if any(v.holds is None for v in verdicts):
        return None
    return True


def generated_tasks(n_pairs: int = 130, seed: int = 0) -> list[Task]:
    """The generated meta-benchmark: ``n_pairs`` aligned scenes and their misaligned twins
    (``2 * n_pairs`` tasks, aligned then misaligned per pair). Deterministic by seed."""
    from .generate import generate_benchmark

    return [task for pair in generate_benchmark(n_pairs, seed=seed) for task in pair.tasks()]
