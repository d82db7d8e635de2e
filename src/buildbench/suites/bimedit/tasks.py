"""BIM-Edit task records: :class:`BimTask`, JSONL I/O, the cached splits and harness tasks.

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
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.jsonio import parse_json

SUITE = "bimedit"
#: Bump when generated tasks or ground truths change; it names the cache folder.
TASKS_VERSION = 3
#: Task file name inside a split folder.
TASKS_FILE = "tasks.jsonl"
#: Splits :func:`load_tasks` knows: the paper's 324-task composition, a 12-task sample, and the
#: composition with real buildings (from :data:`IFC_DIR_ENV`) as its complex scenes.
SPLITS: tuple[str, ...] = ("default", "demo", "real")
#: The environment variable naming the folder of IFC buildings the ``real`` split reads.
IFC_DIR_ENV = "BUILDBENCH_IFC_DIR"

ELEMENTS: dict[str, str] = {"wall": "WAL", "slab": "SLB", "space": "ROM", "door": "DOR", "window": "WIN",
                            "column": "COL"}
"""Target element → id code (paper section 3 / spec 2.3; COL is our guess for the unshown code)."""
IFC_CLASSES: dict[str, str] = {"wall": "IfcWall", "slab": "IfcSlab", "space": "IfcSpace", "door": "IfcDoor",
                               "window": "IfcWindow", "column": "IfcColumn"}
OPERATIONS: dict[str, str] = {"create": "CRE", "update": "UPD", "delete": "DEL"}
CATEGORIES: dict[str, str] = {"direct": "DIR", "spatial": "SPA", "topological": "TOP"}
SCENES: dict[str, str] = {"simple": "A", "complex": "R"}
#: Length units a task may record, by metres per unit (IfcOpenShell's unit scale).
UNITS: dict[str, float] = {"m": 1.0, "mm": 0.001, "cm": 0.01, "ft": 0.3048, "in": 0.0254}
_ID_RE = re.compile(r"^(WAL|SLB|ROM|DOR|WIN|COL)-(CRE|UPD|DEL)-(DIR|SPA|TOP)-(A|R)-(\d{3,})$")


def _inverse(codes: Mapping[str, str]) -> dict[str, str]:
    return {v: k for k, v in codes.items()}


@dataclass(frozen=True)
class TaskId:
    """A parsed ``ELEM-OP-INSTR-SCENE-NNN`` id (long names, e.g. element "door")."""

    element: str
    operation: str
    category: str
    scene: str
    index: int

    def __str__(self) -> str:
        return (f"{ELEMENTS[self.element]}-{OPERATIONS[self.operation]}-{CATEGORIES[self.category]}-"
                f"{SCENES[self.scene]}-{self.index:03d}")

    @property
    def group_id(self) -> str:
        """The id shared by the three instruction variants: ``ELEM-OP-SCENE-NNN``."""
        return f"{ELEMENTS[self.element]}-{OPERATIONS[self.operation]}-{SCENES[self.scene]}-{self.index:03d}"

    @classmethod
    def parse(cls, text: str) -> TaskId:
        """Parse a task id.

        Raises:
            ConfigError: the text is not of the form ``ELEM-OP-INSTR-SCENE-NNN``.
        """
        m = _ID_RE.match(str(text))
        if m is None:
            raise ConfigError(f"malformed BIM-Edit task id {text!r}: expected ELEM-OP-INSTR-SCENE-NNN, "
                              "e.g. DOR-UPD-DIR-A-001")
        el, op, cat, sc, n = m.groups()
        return cls(_inverse(ELEMENTS)[el], _inverse(OPERATIONS)[op], _inverse(CATEGORIES)[cat],
                   _inverse(SCENES)[sc], int(n))


@dataclass(frozen=True)
class BimTask:
    """One BIM-Edit task.

    Attributes:
        task_id: ``ELEM-OP-INSTR-SCENE-NNN``.
        element: wall | slab | space | door | window | column.
        operation: create | update | delete.
        category: the instruction type: direct | spatial | topological.
        scene: simple | complex.
        instruction: the natural-language instruction x.
        input_ifc: path of the input model M0 (absolute once loaded).
        ground_truth_ifc: path of the ground-truth model M*.
        target_guids: GlobalIds the edit is about (M0 entities; empty for creates).
        relevant_properties: property keys the semantic score compares (None: per-class defaults).
        unit: the models' length unit, a key of :data:`UNITS` ("m", "mm", "ft"…).
        oracle_code: IfcOpenShell code performing the reference edit in the tool's namespace.
        group_id: ``ELEM-OP-SCENE-NNN``, shared by the three instruction variants.
        seed: the generator seed of the split.
        facts: the query behind a spatial/topological description (see ``describe.resolve``).
    """

    task_id: str
    element: str
    operation: str
    category: str
    scene: str
    instruction: str
    input_ifc: str
    ground_truth_ifc: str
    target_guids: tuple[str, ...] = ()
    relevant_properties: tuple[str, ...] | None = None
    unit: str = "m"
    oracle_code: str = ""
    group_id: str = ""
    seed: int = 0
    facts: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tid = TaskId.parse(self.task_id)
        got = (self.element, self.operation, self.category, self.scene)
        want = (tid.element, tid.operation, tid.category, tid.scene)
        if got != want:
            raise ConfigError(f"task {self.task_id}: fields {got} disagree with the id {want}")
        if self.unit not in UNITS:
            raise ConfigError(f"task {self.task_id}: unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        object.__setattr__(self, "target_guids", tuple(str(g) for g in self.target_guids))
        if self.relevant_properties is not None:
            object.__setattr__(self, "relevant_properties", tuple(str(p) for p in self.relevant_properties))
        if not self.group_id:
            object.__setattr__(self, "group_id", tid.group_id)

    @property
    def ifc_class(self) -> str:
        """The target's IFC class, e.g. ``IfcDoor``."""
        return IFC_CLASSES[self.element]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (paths as stored)."""
        d = asdict(self)
        d["target_guids"] = list(self.target_guids)
        if self.relevant_properties is not None:
            d["relevant_properties"] = list(self.relevant_properties)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | Path | None = None) -> BimTask:
        """Build a task from a record; relative paths are resolved against ``base_dir``.

        Raises:
            ConfigError: a field is missing or malformed.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"a BIM-Edit task record must be a JSON object, got {type(data).__name__}")
        required = ("task_id", "element", "operation", "category", "scene", "instruction", "input_ifc",
                    "ground_truth_ifc")
        missing = [k for k in required if k not in data]
        if missing:
            raise ConfigError(f"task record {data.get('task_id', '?')} lacks field(s) {missing}")
        known = set(cls.__dataclass_fields__)
        extra = sorted(set(data) - known)
        if extra:
            raise ConfigError(f"task record {data['task_id']} has unknown field(s) {extra}")
        values = dict(data)
        for key in ("input_ifc", "ground_truth_ifc"):
            values[key] = _resolve_path(str(values[key]), base_dir)
        values["target_guids"] = tuple(values.get("target_guids") or ())
        props = values.get("relevant_properties")
        values["relevant_properties"] = None if props is None else tuple(props)
        values["facts"] = dict(values.get("facts") or {})
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigError(f"task record {data['task_id']}: {exc}") from exc

    def to_harness(self) -> Task:
        """The harness :class:`~buildbench.harness.Task`: the agent sees the instruction and model path only."""
        inputs = {"instruction": self.instruction, "ifc_path": self.input_ifc, "unit": self.unit}
        target = {"ground_truth_ifc": self.ground_truth_ifc, "input_ifc": self.input_ifc,
                  "target_guids": list(self.target_guids),
                  "relevant_properties": None if self.relevant_properties is None else list(
                      self.relevant_properties),
                  "operation": self.operation, "oracle_code": self.oracle_code}
        metadata = {"element": self.element, "operation": self.operation, "category": self.category,
                    "scene": self.scene, "group_id": self.group_id, "unit": self.unit}
        return Task(id=self.task_id, suite=SUITE, inputs=inputs, target=target, metadata=metadata)

    def score_spec(self) -> dict[str, Any]:
        """The task record :func:`~buildbench.suites.bimedit.check.edit.score_edit` takes."""
        return {"task_id": self.task_id, "operation": self.operation, "target_guids": list(self.target_guids),
                "relevant_properties": None if self.relevant_properties is None else list(
                    self.relevant_properties)}


def _resolve_path(path: str, base_dir: str | Path | None) -> str:
    p = Path(path)
    if not p.is_absolute() and base_dir is not None:
        p = Path(base_dir) / p
    return str(p)


def write_tasks(tasks: Iterable[BimTask], path: str | Path) -> Path:
    """Write tasks as JSON lines; paths under the file's folder are stored relative to it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    base = out.parent.resolve()
    lines = []
    for t in tasks:
        d = t.to_dict()
        for key in ("input_ifc", "ground_truth_ifc"):
            p = Path(d[key]).resolve()
            if p.is_relative_to(base):
                d[key] = p.relative_to(base).as_posix()
        lines.append(json.dumps(d, sort_keys=True))
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines))
    tmp.replace(out)
    return out


def read_tasks(path: str | Path) -> list[BimTask]:
    """Read a JSONL task file (or a single-task JSON file).

    Raises:
        ConfigError: the file is missing, not JSON, or a record is malformed (with its line).
    """
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read task file {p}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"task file {p} is not UTF-8 text (byte {exc.start})") from None
    base = p.parent
    try:
        whole = parse_json(text)
    except json.JSONDecodeError:
        whole = None  # JSON lines (or broken JSON, reported per line below)
    if isinstance(whole, dict):  # one task, possibly pretty-printed
        return [_parse_record(text, p, 1, base)]
    return [_parse_record(line, p, n, base) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _parse_record(line: str, path: Path, lineno: int, base: Path) -> BimTask:
    try:
        data = parse_json(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
    try:
        return BimTask.from_dict(data, base_dir=base)
    except ConfigError as exc:
        raise ConfigError(f"{path}:{lineno}: {exc}") from exc


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
    """A short digest of the folder's .ifc files (names, sizes, times), naming its cache folder."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*.ifc")):
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
    return [t.to_harness() for t in tasks]


def read_native_task_file(source: str | Path) -> list[Task] | None:
    """:func:`load_task_file` when ``source`` is (or is a folder holding) a task file in BIM-Edit's own
    record format (``task_id`` … rather than the harness's ``id``/``inputs``/``target``); else None,
    so the harness reads it as generic task records (the suite's ``extra["read_task_file"]``)."""
    p = Path(source)
    if p.is_dir():
        p = p / TASKS_FILE
    if not p.is_file():
        return None
    with p.open("rb") as f:
        first = next((line for line in f if line.strip()), b"")
    return load_task_file(p) if b'"task_id"' in first else None


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
