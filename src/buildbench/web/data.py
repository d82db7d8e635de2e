"""The viewer's JSON answers, shared by the live server and the static export."""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from buildbench.harness.task import Task

from .artefacts import ArtefactContext, build_artefact
from .compare import compare_view
from .first_observation import first_images, image_entries
from .runs import RunView, ViewerInputError

#: Artefacts kept in memory (a BuildArena one costs a simulation, a BIM-Edit one a diff).
ARTEFACT_CACHE = 32
#: Characters of a task input shown with a trajectory.
TASK_TEXT_CHARS = 20_000


def to_json_bytes(value: Any) -> bytes:
    """Strict JSON (NaN and infinities written as strings, which browsers can parse)."""
    return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class TaskIndex:
    """The tasks of a run, loaded once on first use with the run's suite, split and seed."""

    def __init__(self, run: RunView) -> None:
        self.run = run
        self._tasks: dict[str, Task] | None = None
        self.problem: str | None = None
        self._lock = threading.Lock()

    def get(self, task_id: str) -> Task | None:
        with self._lock:
            if self._tasks is None:
                self._tasks = self._load()
        return self._tasks.get(task_id)

    def _load(self) -> dict[str, Task]:
        from buildbench.harness.suite import get_suite

        cfg = self.run.config
        try:
            suite = get_suite(self.run.suite)
            return {t.id: t for t in suite.load_tasks(str(cfg.get("split", "default")), int(cfg.get("seed", 0)))}
        except Exception as exc:  # the viewer still shows the trajectory when tasks cannot be rebuilt here
            self.problem = f"tasks of {self.run.suite!r} could not be loaded: {type(exc).__name__}: {exc}"
            return {}


class ViewerData:
    """Everything the page asks for, for the runs given on the command line."""

    def __init__(self, runs: list[RunView]) -> None:
        self.runs = runs
        self.tasks = [TaskIndex(r) for r in runs]
        self._artefacts: OrderedDict[tuple[int, str, int], dict[str, Any]] = OrderedDict()
        self._first: OrderedDict[tuple[int, str, int], tuple[list[bytes], str | None]] = OrderedDict()
        self._compare: tuple[tuple[int, ...], dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def run(self, index: int) -> RunView:
        if not 0 <= index < len(self.runs):
            raise ViewerInputError(f"no run {index}: the viewer has runs 0..{len(self.runs) - 1}")
        return self.runs[index]

    def runs_info(self) -> dict[str, Any]:
        return {"runs": [r.info() for r in self.runs]}

    def metric_keys(self, index: int) -> dict[str, Any]:
        return {"run": index, "metrics": self.run(index).metric_keys()}

    def episode(self, index: int, task_id: str, sample: int) -> dict[str, Any]:
        """The full episode record, with image URLs and the task's prompt inputs."""
        run = self.run(index)
        ep = run.episode(task_id, sample)
        data = ep.to_dict()
        for step in data["steps"]:
            step["images"] = [{"path": p, "url": run.image_url(p)} for p in step.get("image_paths", [])]
        task = self.tasks[index].get(task_id) if run.suite else None
        data["task"] = _task_view(task) if task is not None else None
        images, problem = self._first_images(index, task, ep.seed, sample) if task is not None else ([], None)
        data["first_images"] = image_entries(images)
        data["first_images_problem"] = problem
        data["task_problem"] = self.tasks[index].problem
        data["run"] = index
        return data

    def _first_images(self, index: int, task: Task, seed: int, sample: int) -> tuple[list[bytes], str | None]:
        """The images shown with the episode's first observation (cached: rebuilding renders),
        or none and why they could not be rebuilt."""
        key = (index, task.id, sample)
        with self._lock:
            if key in self._first:
                self._first.move_to_end(key)
                return self._first[key]
        run = self.run(index)
        try:
            found: tuple[list[bytes], str | None] = (
                first_images(run.suite, dict(run.config.get("options") or {}), task, seed), None)
        except Exception as exc:  # the trajectory is still shown when the env cannot be rebuilt here
            found = ([], f"the first observation's images could not be rebuilt: {type(exc).__name__}: "
                         f"{exc}".splitlines()[0][:300])
        with self._lock:
            self._first[key] = found
            while len(self._first) > ARTEFACT_CACHE:
                self._first.popitem(last=False)
        return found

    def artefact(self, index: int, task_id: str, sample: int) -> dict[str, Any]:
        """The episode's 3-D artefact (cached: building one may simulate or diff)."""
        key = (index, task_id, sample)
        with self._lock:
            if key in self._artefacts:
                self._artefacts.move_to_end(key)
                return self._artefacts[key]
        run = self.run(index)
        ep = run.episode(task_id, sample)
        art = build_artefact(run.suite, ep, ArtefactContext(run.run_dir, self.tasks[index].get,
                                                            dict(run.config.get("options") or {})))
        with self._lock:
            self._artefacts[key] = art
            while len(self._artefacts) > ARTEFACT_CACHE:
                self._artefacts.popitem(last=False)
        return art

    def compare(self) -> dict[str, Any]:
        """The "Compare runs" page's data (`buildbench.web.compare`), recomputed only when a run
        gained episodes (it reads every episode row and bootstraps every metric)."""
        counts = tuple(run.count() for run in self.runs)
        with self._lock:
            if self._compare is not None and self._compare[0] == counts:
                return self._compare[1]
        found = compare_view(self.runs)
        with self._lock:
            self._compare = (counts, found)
        return found


def _task_view(task: Task) -> dict[str, Any]:
    """The task's id, metadata and text inputs (long values cut), as shown above turn 0."""
    inputs: dict[str, str] = {}
    for key, value in task.inputs.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        inputs[key] = text if len(text) <= TASK_TEXT_CHARS else text[:TASK_TEXT_CHARS] + " …(cut)"
    return {"id": task.id, "metadata": dict(task.metadata), "inputs": inputs}


def safe_static_file(root: Path, name: str) -> Path | None:
    """A file of the static bundle named by a URL path, or None if it is not one."""
    if not name or "\x00" in name:
        return None
    candidate = (root / name).resolve()
    if not candidate.is_relative_to(root.resolve()) or not candidate.is_file():
        return None
    return candidate
