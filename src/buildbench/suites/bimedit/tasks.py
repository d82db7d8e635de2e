"""BIM-Edit tasks: the cached splits and harness tasks, over the records of :mod:`.task_records`
(:class:`BimTask`, its ids and the JSONL files, all re-exported here).

A task is the paper's triplet ``(M0, x, M*)`` (spec section 0) plus what our tools need:
the target GlobalIds and task-relevant properties the scorer uses (spec section 2.5),
the model's length unit, and ``oracle_code`` — IfcOpenShell Python that performs the
reference edit when run in the agent tool's namespace (``ifc``, ``ifcopenshell``,
``api``, ``util``, ``element_util``, ``guid``, ``result``, ``commit()``). The ground
truth M* was made by running exactly that code on M0, so an oracle agent that sends it
through the tool reproduces M* edit for edit.

Task ids follow the paper: ``ELEM-OP-INSTR-SCENE-NNN`` (spec section 2.3), e.g.
``DOR-UPD-DIR-A-001``; ``A`` is a simple (artificial) scene and ``R`` a complex
(realistic) one. The three instruction variants of one base edit share ``group_id``
(``ELEM-OP-SCENE-NNN``) and the ground-truth file.

Splits are generated at run time into a cache folder (``$BUILDBENCH_CACHE/bimedit/
<version>/<split>-s<seed>/``, default ``~/.cache/buildbench``); IFC files are never
shipped. ``tasks.jsonl`` stores paths relative to its own folder, so a task folder can
be moved as a whole.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.task_files import TaskShapeError
from buildbench.inputs import iter_lines

# From task_records, where the records moved; each `X as X` is a re-export.
from .task_records import CATEGORIES as CATEGORIES
from .task_records import ELEMENTS as ELEMENTS
from .task_records import IFC_CLASSES as IFC_CLASSES
from .task_records import OPERATIONS as OPERATIONS
from .task_records import SCENES as SCENES
from .task_records import SUITE, TASKS_FILE, BimTask, TaskId, check_task_record, read_tasks
from .task_records import UNITS as UNITS
from .task_records import write_tasks as write_tasks

#: Bump when generated tasks or ground truths change; it names the cache folder.
#: 4: new owner histories in ground truths ordered (generate/tasks/oracle.py), the same bytes in any process.
TASKS_VERSION = 4
#: Splits :func:`load_tasks` knows: the paper's 324-task composition, a 12-task sample, and the
#: composition with real buildings (from :data:`IFC_DIR_ENV`) as its complex scenes.
SPLITS: tuple[str, ...] = ("default", "demo", "real")
#: The environment variable naming the folder of IFC buildings the ``real`` split reads.
IFC_DIR_ENV = "BUILDBENCH_IFC_DIR"


def cache_root() -> Path:
    """Where generated splits live: ``$BUILDBENCH_CACHE/bimedit/v<version>`` (default ``~/.cache/buildbench``)."""
    from buildbench.harness.cache import cache_dir

    return cache_dir(SUITE, f"v{TASKS_VERSION}")


def split_dir(split: str, seed: int = 0) -> Path:
    """The cache folder of one split."""
    return cache_root() / f"{split}-s{int(seed)}"


def real_ifc_dir(ifc_dir: str | Path | None = None) -> Path:
    """The folder of IFC buildings for the ``real`` split: ``ifc_dir``, else ``$BUILDBENCH_IFC_DIR``.

    Raises:
        ConfigError: neither is set, or the folder does not exist.
    """
    value = ifc_dir if ifc_dir is not None else os.environ.get(IFC_DIR_ENV)
    if not value:
        raise ConfigError(f"the BIM-Edit real split reads IFC buildings from a folder: set {IFC_DIR_ENV} "
                          "to a folder of .ifc files (e.g. the project's shared/data/ifc)")
    folder = Path(value)
    if not folder.is_dir():
        raise ConfigError(f"{IFC_DIR_ENV}={value}: no such folder")
    return folder


def _listing_digest(folder: Path) -> str:
    """A short digest of the folder's IFC files (names, sizes, times), naming its cache folder."""
    from .check.schemas import IFC_SUFFIXES

    h = hashlib.sha256()
    for p in sorted(q for q in folder.rglob("*") if q.suffix.lower() in IFC_SUFFIXES):
        st = p.stat()
        h.update(f"{p.relative_to(folder).as_posix()}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:10]


def load_tasks(split: str = "default", seed: int = 0, *, out_dir: str | Path | None = None,
               ifc_dir: str | Path | None = None) -> list[BimTask]:
    """The tasks of ``split``, generated into the cache on first use.

    Args:
        split: "default" (324 tasks, the paper's composition), "demo" (12 tasks) or "real"
            (the composition with the buildings of ``ifc_dir`` as its complex scenes).
        seed: generator seed.
        out_dir: folder to use instead of the cache folder.
        ifc_dir: the real split's buildings (default: ``$BUILDBENCH_IFC_DIR``).

    Raises:
        ConfigError: an unknown split, or the real split without a folder of buildings.
    """
    if split not in SPLITS:
        raise ConfigError(f"unknown BIM-Edit split {split!r}; known splits: {', '.join(SPLITS)}")
    buildings = real_ifc_dir(ifc_dir) if split == "real" else None
    if out_dir is not None:
        folder = Path(out_dir)
    elif buildings is not None:
        folder = cache_root() / f"real-s{int(seed)}-{_listing_digest(buildings)}"
    else:
        folder = split_dir(split, seed)
    path = folder / TASKS_FILE
    if path.is_file():
        tasks = read_tasks(path)
        if all(Path(t.input_ifc).is_file() and Path(t.ground_truth_ifc).is_file() for t in tasks):
            return tasks
    # Imported here: generation pulls in the scene builder, which loaders of a ready split need not.
    if buildings is not None:
        from buildbench.suites.bimedit.generate.tasks.usergen import generate_real

        return generate_real(buildings, folder, seed)[0]
    from buildbench.suites.bimedit.generate.tasks import generate_split

    return generate_split(split, seed=seed, out_dir=folder)


def load_harness_tasks(split: str = "default", seed: int = 0) -> list[Task]:
    """:func:`load_tasks` as harness tasks (the suite's ``load_tasks(split, seed)``)."""
    return [t.to_harness() for t in load_tasks(split, seed)]


def load_task_file(source: str | Path) -> list[Task]:
    """Harness tasks from a BIM-Edit task file (``tasks.jsonl`` as ``bimedit generate`` writes it) or
    a folder holding one; every task's input and ground-truth models must exist.

    Raises:
        ConfigError: no such file or folder, a malformed record (with its line), or a missing model.
    """
    p = Path(source)
    if p.is_dir():
        p = p / TASKS_FILE
    if not p.is_file():
        raise ConfigError(f"{source}: no BIM-Edit task file (expected a {TASKS_FILE} or a folder holding one)")
    tasks = read_tasks(p)
    if not tasks:
        raise ConfigError(f"{p}: holds no task")
    for t in tasks:
        for what, model in (("input", t.input_ifc), ("ground-truth", t.ground_truth_ifc)):
            if not Path(model).is_file():
                raise ConfigError(f"{p}: task {t.task_id}: {what} model {model} does not exist")
    harness = [t.to_harness() for t in tasks]
    for task in harness:
        try:
            check_task_record(task)
        except TaskShapeError as exc:
            raise ConfigError(f"{p}: task {task.id!r}: {exc}") from None
    return harness


def read_native_task_file(source: str | Path) -> list[Task] | None:
    """:func:`load_task_file` when ``source`` is (or is a folder holding) a task file in BIM-Edit's own
    record format (``task_id`` … rather than the harness's ``id``/``inputs``/``target``); else None,
    so the harness reads it as generic task records (the suite's ``extra["read_task_file"]``)."""
    p = Path(source)
    if p.is_dir():
        p = p / TASKS_FILE
    if not p.is_file():
        return None
    first = next((line for _, line in iter_lines(p) if line.strip()), "")
    return load_task_file(p) if '"task_id"' in first else None


def from_harness(task: Task) -> BimTask:
    """Rebuild the :class:`BimTask` behind a harness task.

    Raises:
        ConfigError: the harness task does not come from :meth:`BimTask.to_harness`.
    """
    try:
        tid = TaskId.parse(task.id)
        return BimTask(task_id=task.id, element=tid.element, operation=tid.operation, category=tid.category,
                       scene=tid.scene, instruction=str(task.inputs["instruction"]),
                       input_ifc=str(task.inputs["ifc_path"]),
                       ground_truth_ifc=str(task.target["ground_truth_ifc"]),
                       target_guids=tuple(task.target.get("target_guids") or ()),
                       relevant_properties=task.target.get("relevant_properties"),
                       unit=str(task.inputs.get("unit", "m")), oracle_code=str(task.target.get("oracle_code", "")),
                       group_id=str(task.metadata.get("group_id", "")))
    except KeyError as exc:
        raise ConfigError(f"task {task.id} is not a BIM-Edit task: missing {exc}") from exc
