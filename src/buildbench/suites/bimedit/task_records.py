"""BIM-Edit task records: :class:`BimTask`, its id codes and the JSONL task files.

The task generators and :mod:`.tasks` (which generates a split when its cache folder has none)
both build on this module, so it sits below both; :mod:`.tasks` re-exports every public name
here. What a task holds and how ids read: see :mod:`.tasks`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.harness.task_files import TaskShapeError
from buildbench.inputs import read_text
from buildbench.jsonio import parse_json

SUITE = "bimedit"
#: Task file name inside a split folder.
TASKS_FILE = "tasks.jsonl"

ELEMENTS: dict[str, str] = {"wall": "WAL", "slab": "SLB", "space": "ROM", "door": "DOR", "window": "WIN",
                            "column": "COL"}
"""Target element → id code (paper section 3 / spec 2.3; COL is our guess for the unshown code)."""
IFC_CLASSES: dict[str, str] = {"wall": "IfcWall", "slab": "IfcSlab", "space": "IfcSpace", "door": "IfcDoor",
                               "window": "IfcWindow", "column": "IfcColumn"}
OPERATIONS: dict[str, str] = {"create": "CRE", "update": "UPD", "delete": "DEL"}
CATEGORIES: dict[str, str] = {"direct": "DIR", "spatial": "SPA", "topological": "TOP"}
SCENES: dict[str, str] = {"simple": "A", "complex": "R"}
#: Length units a task may record, by metres per unit (IfcOpenShell's unit scale). The US survey
#: foot (1200/3937 m, US civil and infrastructure exports, as a conversion-based unit) is 2 ppm
#: off the international foot: over a 10 km site that is 2 cm, so it is a unit of its own.
UNITS: dict[str, float] = {"m": 1.0, "mm": 0.001, "cm": 0.01, "dm": 0.1, "ft": 0.3048, "in": 0.0254,
                           "us-ft": 1200 / 3937, "yd": 0.9144}
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
        _check_record_types(data)
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


#: A record's fields other than the id codes and their JSON types (a string of target GlobalIds
#: was read as one GlobalId per character).
_RECORD_TYPES: dict[str, tuple[type, ...]] = {
    "instruction": (str,), "input_ifc": (str,), "ground_truth_ifc": (str,), "target_guids": (list,),
    "relevant_properties": (list, type(None)), "unit": (str,), "oracle_code": (str,), "group_id": (str,),
    "seed": (int,), "facts": (dict,)}


def _check_record_types(data: Mapping[str, Any]) -> None:
    where = f"task record {data['task_id']}"
    for key, kinds in _RECORD_TYPES.items():
        if key in data and (not isinstance(data[key], kinds) or isinstance(data[key], bool)):
            raise ConfigError(f"{where}: field {key!r} must be {' or '.join(k.__name__ for k in kinds)}, "
                              f"got {type(data[key]).__name__}")
    for key in ("instruction", "input_ifc", "ground_truth_ifc"):
        if not data[key].strip():
            raise ConfigError(f"{where}: field {key!r} is empty")
    for key in ("target_guids", "relevant_properties"):
        if any(not isinstance(x, str) or not x for x in data.get(key) or ()):
            raise ConfigError(f"{where}: field {key!r} must list non-empty strings")


def check_task_record(task: Task) -> None:
    """BIM-Edit's check of a harness task from a file (``Suite.validate_task``; BIM-Edit's own
    ``tasks.jsonl`` records get it too): what :func:`.tasks.from_harness`, the env and the scorer
    read, so a record no edit can be scored against is refused at load rather than failing its
    episode (an id that is no ``ELEM-OP-INSTR-SCENE-NNN``, a model that does not exist, an update
    naming no element).

    Raises:
        TaskShapeError: naming the dotted field.
    """
    try:
        tid = TaskId.parse(task.id)
    except ConfigError as exc:
        raise TaskShapeError("id", str(exc)) from None
    if not isinstance(task.inputs.get("instruction"), str) or not task.inputs["instruction"].strip():
        raise TaskShapeError("inputs.instruction", "expected a non-empty string")
    for part, name in (("inputs", "ifc_path"), ("target", "ground_truth_ifc")):
        path = getattr(task, part).get(name)
        if not isinstance(path, str) or not path.strip():
            raise TaskShapeError(f"{part}.{name}", "expected the path of an IFC model")
        if not Path(path).is_file():
            raise TaskShapeError(f"{part}.{name}", f"no such model file {path}")
    unit = task.inputs.get("unit", "m")
    if unit not in UNITS:
        raise TaskShapeError("inputs.unit", f"expected one of {', '.join(UNITS)}, got {unit!r}")
    # values the scorer does not read but a reader would trust: one that disagrees is a mistake
    given = task.target.get("input_ifc", task.inputs["ifc_path"])
    if given != task.inputs["ifc_path"]:
        raise TaskShapeError("target.input_ifc", f"{given!r} is not inputs.ifc_path, the model the agent edits")
    operation = task.target.get("operation", tid.operation)
    if operation != tid.operation:
        raise TaskShapeError("target.operation", f"{operation!r} disagrees with the id, whose operation is "
                             f"{tid.operation!r}")
    guids = task.target.get("target_guids", [])
    if not isinstance(guids, list) or not all(isinstance(g, str) and g for g in guids):
        raise TaskShapeError("target.target_guids", "expected a list of GlobalId strings")
    if tid.operation != "create" and not guids:
        raise TaskShapeError("target.target_guids", f"is empty, but {tid.operation} tasks name the elements "
                             "they edit")
    props = task.target.get("relevant_properties")
    if props is not None and (not isinstance(props, list) or not all(isinstance(p, str) and p for p in props)):
        raise TaskShapeError("target.relevant_properties", "expected a list of property names or null")
    if not isinstance(task.target.get("oracle_code", ""), str):
        raise TaskShapeError("target.oracle_code", "expected a string of IfcOpenShell code")


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
        text = read_text(p)
    except OSError as exc:
        raise ConfigError(f"cannot read task file {p}: {exc.strerror or exc}") from None
    base = p.parent.resolve()  # relative paths are the file's own, whatever the current directory
    try:
        # Only the file's shape is asked here: a key given twice is refused per record below.
        whole = parse_json(text)
    except json.JSONDecodeError:
        whole = None  # JSON lines (or broken JSON, reported per line below)
    if isinstance(whole, dict):  # one task, possibly pretty-printed
        return [_parse_record(text, p, 1, base)]
    return [_parse_record(line, p, n, base) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _parse_record(line: str, path: Path, lineno: int, base: Path) -> BimTask:
    """The task in ``line`` (the record starting on line ``lineno`` of ``path``; a pretty-printed
    record spans several, and an error names the line it is on)."""
    try:
        # A key given twice is refused: json.loads keeps the last silently, other readers the first.
        data = parse_json(line, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{lineno + exc.lineno - 1}: not valid JSON ({exc.msg})") from exc
    try:
        return BimTask.from_dict(data, base_dir=base)
    except ConfigError as exc:
        raise ConfigError(f"{path}:{lineno}: {exc}") from exc
