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
checks the shape; ``score.score(task, LegoEvalOutcome)`` scores it.
"""

from __future__ import annotations

from buildbench.harness import Task

# From task_records and task_build, where the pieces moved; each `X as X` is a re-export.
from .task_build import make_task as make_task
from .task_records import BUCKETS as BUCKETS
from .task_records import SUITE as SUITE
from .task_records import TYPES as TYPES
from .task_records import ConstraintSpec as ConstraintSpec
from .task_records import OutcomeError as OutcomeError
from .task_records import Verdict as Verdict
from .task_records import bucket_of as bucket_of
from .task_records import holistic as holistic
from .task_records import parse_outcome as parse_outcome
from .task_records import spec_for as spec_for
from .task_records import task_constraints as task_constraints


def generated_tasks(n_pairs: int = 130, seed: int = 0) -> list[Task]:
    """The generated meta-benchmark: ``n_pairs`` aligned scenes and their misaligned twins
    (``2 * n_pairs`` tasks, aligned then misaligned per pair). Deterministic by seed."""
    from .generate import generate_benchmark

    return [task for pair in generate_benchmark(n_pairs, seed=seed) for task in pair.tasks()]
