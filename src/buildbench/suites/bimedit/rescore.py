"""Re-score a folder of predicted IFC files against a task file, one prediction per task.

A prediction for task ``T`` is ``DIR/T.ifc``. A task without one is *missing*; a task whose
prediction is not a readable IFC file, or whose own input or ground-truth model cannot be
read, is an *error*. Both are malformed input, reported and never counted as a zero, so the
means cover scored tasks only (errors are never scores); ``bimedit score --task --pred``
refuses the same predictions. Each scored row is exactly what
:func:`~buildbench.suites.bimedit.check.edit.score_edit` gives the single-task scorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.harness.errors import ConfigError
from buildbench.parallel import PROCESS, Backend, map_ordered
from buildbench.suites.bimedit.check.bounded import KernelCrash
from buildbench.suites.bimedit.check.caps import over_caps
from buildbench.suites.bimedit.check.edit import MODEL_CACHE, EditScore, score_edit
from buildbench.suites.bimedit.check.model import ModelError
from buildbench.suites.bimedit.recycle import in_child
from buildbench.suites.bimedit.tasks import BimTask

#: Tasks scored in one process before it ends (see :func:`rescore`): three real models a task
#: (input, truth, prediction; one task group's first two are parsed once for its three tasks).
TASKS_PER_CHILD = 12


@dataclass(frozen=True)
class Rescored:
    """One task's outcome: status "scored", "missing" or "error", with the score or the reason."""

    task_id: str
    status: str
    pred: str
    score: EditScore | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the full score record for scored tasks)."""
        out: dict[str, Any] = {"task_id": self.task_id, "status": self.status, "pred": self.pred}
        if self.score is not None:
            out.update(self.score.to_dict())
        if self.reason:
            out["reason"] = self.reason
        return out

    def line(self) -> str:
        """One line for the terminal."""
        if self.score is None:
            return f"{self.task_id}: {self.status} ({self.reason})"
        s = self.score
        return (f"{self.task_id}: geometry {s.geometry:.4f}  semantics {s.semantics:.4f}  topology {s.topology:.4f}  "
                f"final {s.final:.4f}  solved {s.solved}")


def prediction_path(preds: Path, task: BimTask) -> Path:
    """Where a task's prediction is expected: ``preds/<task id>.ifc``."""
    return preds / f"{task.task_id}.ifc"


def rescore(tasks: Sequence[BimTask], preds: str | Path, *, strict: bool = False, workers: int = 1,
            backend: Backend = PROCESS) -> list[Rescored]:
    """Score each task's prediction in ``preds``, in task order.

    ``workers`` processes (or Ray tasks with ``backend`` ray; the task and prediction files must
    then be at the same paths on every node) score tasks in parallel; the rows are the same.

    Raises:
        ConfigError: ``preds`` is not a folder.
    """
    folder = Path(preds)
    if not folder.is_dir():
        raise ConfigError(f"predictions folder {folder} does not exist")
    jobs = [(task, folder, strict) for task in tasks]
    if backend.is_ray:
        return list(map_ordered(_rescore_one, jobs, workers=workers, backend=backend))
    # IfcOpenShell keeps memory of every model it opens until its process ends: tasks are scored
    # TASKS_PER_CHILD to a process (a forked child, or a pool started afresh per chunk)
    rows: list[Rescored] = []
    step = TASKS_PER_CHILD * max(workers, 1)
    for start in range(0, len(jobs), step):
        chunk = jobs[start:start + step]
        if workers <= 1:
            rows.extend(in_child(_rescore_chunk, chunk))
        else:
            rows.extend(map_ordered(_rescore_one, chunk, workers=workers, backend=backend))
    return rows


def _rescore_chunk(jobs: list[tuple[BimTask, Path, bool]]) -> list[Rescored]:
    return [_rescore_one(job) for job in jobs]


def prediction_problem(pred: Path) -> str | None:
    """Why ``pred`` cannot be scored (a folder, no such file, over a cap of `.check.caps`, not readable
    IFC), in one line, or None."""
    if pred.is_dir():
        return f"{pred} is a folder, not an IFC file"
    if not pred.is_file():
        return f"{pred}: no such file"
    try:
        over = over_caps(pred)  # before parsing: a model past a cap costs minutes to read or tessellate
        if over is not None:
            return f"{pred}: over a cap: {over}"
        MODEL_CACHE.get(pred)  # parsed once: score_edit finds it in the cache
    except ModelError as exc:
        why = " ".join(str(exc).split())  # one line, whatever the parser said
        return f"{pred}: not a readable IFC model ({why[:300]})"
    return None


def _rescore_one(job: tuple[BimTask, Path, bool]) -> Rescored:
    task, folder, strict = job
    pred = prediction_path(folder, task)
    if not pred.exists():
        return Rescored(task.task_id, "missing", str(pred), reason=f"no file {pred.name}")
    problem = prediction_problem(pred)
    if problem is not None:
        return Rescored(task.task_id, "error", str(pred), reason=problem)
    try:
        result = score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec(), strict=strict)
    except (ValueError, KernelCrash) as exc:  # ModelError and other unreadable input; the kernel died on it
        return Rescored(task.task_id, "error", str(pred), reason=str(exc).splitlines()[0])
    return Rescored(task.task_id, "scored", str(pred), score=result)


def summary(rows: Sequence[Rescored]) -> dict[str, Any]:
    """Counts per status and means over the scored tasks (None when nothing was scored)."""
    scored = [r.score for r in rows if r.score is not None]

    def mean(key: str) -> float | None:
        return None if not scored else sum(float(getattr(s, key)) for s in scored) / len(scored)

    return {"tasks": len(rows), "scored": len(scored), "missing": sum(r.status == "missing" for r in rows),
            "errors": sum(r.status == "error" for r in rows), "solved": sum(bool(s.solved) for s in scored),
            "geometry": mean("geometry"), "semantics": mean("semantics"), "topology": mean("topology"),
            "final": mean("final")}


def summary_line(info: dict[str, Any]) -> str:
    """The summary as one line."""
    means = ("  ".join(f"{k} {info[k]:.4f}" for k in ("geometry", "semantics", "topology", "final"))
             if info["scored"] else "no means (nothing scored)")
    return (f"scored {info['scored']} of {info['tasks']} task(s), {info['missing']} missing, {info['errors']} "
            f"error(s), {info['solved']} solved; means over scored: {means}")
