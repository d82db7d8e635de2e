"""The tasks a released-API server offers: from a split, task files or a ``.dhpack``.

A pack's views are served as stored; a split's or task file's views are rendered with our
renderer the first time a view is asked for and kept in a small cache (rendering a whole
1,200-task split up front would take minutes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError

from ..dhpack import PACK_VIEWS, check_constraints, read_dhpack
from ..views_basis import VIEW_NAMES

#: Tasks whose rendered views are kept in memory (five PNGs of ~30 kB each per task).
RENDER_CACHE_TASKS = 64
#: Pack view name -> our view name ("top" is the front-right render, as the released server names it).
_OUR_VIEW = dict(zip(PACK_VIEWS, VIEW_NAMES, strict=True))


class ViewsUnavailable(ConfigError):
    """The views of a task cannot be rendered here (no GL context, no ground truth)."""


@dataclass(frozen=True)
class ServedTask:
    """One task as the released server describes it.

    Attributes:
        task_id: The id (``AF_01_0018``).
        style: The style's display name.
        description: The one-line description.
        constraints: The released constraint fields (footprint and lot in metres, stories,
            roof type, wings, complexity).
        images: PNG bytes per pack view name (a pack's stored views); empty when the views
            are rendered from ``task``.
        task: Our task, to render the views from (None for a pack entry).
    """

    task_id: str
    style: str
    description: str
    constraints: dict[str, Any]
    images: Mapping[str, bytes] = field(default_factory=dict)
    task: Task | None = None

    def to_json(self) -> dict[str, Any]:
        """The released ``GET /v1/tasks/{id}`` body."""
        return {
            "id": self.task_id,
            "style": self.style,
            "description": self.description,
            "constraints": dict(self.constraints),
            "reference_images": [f"/v1/tasks/{self.task_id}/images/{view}" for view in PACK_VIEWS],
        }


def served_from_task(task: Task) -> ServedTask:
    """A harness task as a served task; its views are rendered when first asked for."""
    inputs = task.inputs
    constraints = check_constraints(dict(inputs.get("constraints") or {}), f"task {task.id}")
    return ServedTask(task.id, str(inputs.get("style", "")), str(inputs.get("description", "")), constraints,
                      task=task)


class TaskSource:
    """The served tasks by id, and their views as PNG bytes.

    Args:
        tasks: The tasks, in the order ``/v1/tasks`` lists them (sorted by id, as the released server).
        condition: ``frame`` or ``facade``: which views are rendered for tasks without stored ones.
        renderer: ``raster``, ``gl`` or ``cycles``.
    """

    def __init__(self, tasks: Sequence[ServedTask], *, condition: str = "frame", renderer: str = "raster") -> None:
        if not tasks:
            raise ConfigError("the server needs at least one task")
        self._tasks = {t.task_id: t for t in tasks}
        if len(self._tasks) != len(tasks):
            raise ConfigError("task ids repeat in the served tasks")
        self.condition = condition
        self.renderer = renderer
        self._rendered: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def ids(self) -> list[str]:
        """Every task id, sorted."""
        return sorted(self._tasks)

    def get(self, task_id: str) -> ServedTask | None:
        """The task ``task_id``, or None."""
        return self._tasks.get(task_id)

    def image(self, task_id: str, view: str) -> bytes | None:
        """The PNG of pack view ``view`` (front, back, left, right, top) of a task, or None.

        Raises:
            ViewsUnavailable: When the task's views would have to be rendered and cannot be.
        """
        task = self._tasks.get(task_id)
        if task is None or view not in _OUR_VIEW:
            return None
        if task.images:
            return task.images.get(view)
        return self._render(task)[view]

    def _render(self, task: ServedTask) -> dict[str, bytes]:
        # One lock for all renders: they share one GL thread anyway, and a view asked for
        # five times at once (a client fetching all views in parallel) renders only once.
        with self._lock:
            cached = self._rendered.get(task.task_id)
            if cached is not None:
                self._rendered.move_to_end(task.task_id)
                return cached
            pngs = _render_views(task, self.condition, self.renderer)
            self._rendered[task.task_id] = pngs
            while len(self._rendered) > RENDER_CACHE_TASKS:
                self._rendered.popitem(last=False)
            return pngs


def _render_views(task: ServedTask, condition: str, renderer: str) -> dict[str, bytes]:
    from buildbench.render import RenderUnavailableError

    from ..env import render_call
    from ..views import png_bytes, views_for

    assert task.task is not None  # a task without stored images always carries our task
    try:
        images = render_call(views_for, task.task, condition, renderer)
    except (RenderUnavailableError, ConfigError, ValueError) as exc:
        raise ViewsUnavailable(f"cannot render the views of task {task.task_id}: {exc}") from None
    return {pack_view: png_bytes(img) for pack_view, img in zip(PACK_VIEWS, images, strict=True)}


def load_source(*, split: str | None = None, tasks_path: Path | None = None, dhpack: Path | None = None,
                limit: int | None = None, condition: str = "frame", renderer: str = "raster") -> TaskSource:
    """The tasks of exactly one of a split, a task file (or folder) or a ``.dhpack``.

    Raises:
        ConfigError: For none or several sources, or a source that cannot be read.
    """
    given = [name for name, value in (("--split", split), ("--tasks", tasks_path), ("--dhpack", dhpack))
             if value is not None]
    if len(given) != 1:
        raise ConfigError(f"give exactly one task source (--split, --tasks or --dhpack), got {len(given)}")
    served: list[ServedTask]
    if dhpack is not None:
        _, entries = read_dhpack(dhpack)
        served = [ServedTask(e.task_id, e.style, e.description, e.constraints,
                             {pv: e.images[v] for pv, v in _OUR_VIEW.items()}) for e in entries]
    elif tasks_path is not None:
        from buildbench.harness.task_files import load_task_files

        from ..tasks import validate_task

        served = [served_from_task(t) for t in load_task_files(tasks_path, "dreamhouse", validate_task)]
    else:
        from ..tasks import load_tasks

        served = [served_from_task(t) for t in load_tasks(str(split))]
    return TaskSource(served[:limit] if limit else served, condition=condition, renderer=renderer)
