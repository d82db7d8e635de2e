"""The released harness's task packs (``.dhpack``, spec §2.5), read and written.

A pack is a SQLite database::

    metadata(key TEXT PRIMARY KEY, value TEXT)        -- ('format', 'dreamhouse-dhpack-v1'), ('source', …)
    tasks(task_id TEXT PRIMARY KEY, style TEXT, description TEXT, constraints_json TEXT)
    images(task_id TEXT, view TEXT, content BLOB, PRIMARY KEY(task_id, view))

with PNG views ``front``, ``back``, ``left``, ``right`` and ``top``, where ``top`` holds the
front-right diagonal render (the released server's naming). ``constraints_json`` carries the
released task fields: ``footprint_x``, ``footprint_y`` (m), ``stories``, ``roof_type``,
``lot_width``, ``lot_depth`` (m), ``wings``, ``complexity``; a field left out (or null)
takes a default (:func:`check_constraints`).

Packs we write keep that layout, so the released server serves them, and add a table the
server ignores, ``buildbench_targets(task_id, target_json)``, with each task's ground-truth
reference; metadata adds ``condition`` and ``renderer`` of the stored views, and a table
``buildbench_views(task_id, made_by)`` the stamp of what drew each task's views
(:mod:`.views_made_by`; a task's views kept from another pack keep their own, or none). A
pack or task without a stamp holds views of unknown origin. A pack without
that table (the released 1,200-task pack) has no ground truth: its episodes get structural
metrics only (S and T need the target frame). Its views serve both conditions, since such a
pack does not say which it holds.

Reading checks everything on load and raises :class:`DhpackError` naming the pack, the
task and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.harness.errors import BuildbenchError, ConfigError
from buildbench.inputs import check_regular_file
from buildbench.jsonio import finite_number, parse_json

from .generate import ROOF_TYPES, STYLE_NAMES
from .generate.ids import TaskId
from .generate.params import LOT_MARGIN_M
from .model import StructureFormatError, parse_document
from .views_basis import CONDITIONS, VIEW_NAMES
from .views_made_by import MADE_BY_KEY

DHPACK_FORMAT = "dreamhouse-dhpack-v1"
#: Pack view names, in :data:`~.views.VIEW_NAMES` order ("top" is the front-right render).
PACK_VIEWS: tuple[str, ...] = ("front", "back", "left", "right", "top")
#: The released server's constraint defaults (used there when a task has no constraints file).
SERVER_DEFAULTS: Mapping[str, Any] = {
    "footprint_x": 6.0, "footprint_y": 10.0, "stories": 1, "roof_type": "gable",
    "lot_width": 8.0, "lot_depth": 12.0, "wings": 0, "complexity": "simple",
}  # fmt: skip
COMPLEXITIES: tuple[str, ...] = ("simple", "moderate", "complex")
#: Largest plan dimension accepted, metres; largest story count.
MAX_DIMENSION_M = 500.0
MAX_STORIES = 10
#: Largest view image accepted from a pack, bytes.
MAX_IMAGE_BYTES = 32 * 1024 * 1024
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TARGETS = "buildbench_targets"
_MADE_BY = "buildbench_views"


class DhpackError(ConfigError):
    """A task pack that cannot be read or written."""


@dataclass(frozen=True)
class PackTask:
    """One task of a pack.

    Attributes:
        task_id: The task id (``AF_01_0018``).
        style: The style's display name.
        description: The one-line task description.
        constraints: The released task fields, checked, defaults filled in.
        images: PNG bytes per view, keyed by :data:`~.views.VIEW_NAMES` (``front_right`` for the pack's ``top``).
        target: Our ground-truth reference (``{}`` when the pack has none).
        made_by: The stamp of the renderer that drew the views; ``None`` when unknown.
    """

    task_id: str
    style: str
    description: str
    constraints: dict[str, Any]
    images: dict[str, bytes]
    target: dict[str, Any] = field(default_factory=dict)
    made_by: str | None = None


def check_constraints(raw: Any, where: str) -> dict[str, Any]:
    """The released constraint fields of one task, checked, with defaults for missing ones.

    The released pack builder writes only the fields its ``structure.json`` has (footprint,
    stories, roof type, complexity, ``config``/``config_id``; never the lot nor the wings) and
    drops null ones, so a null field counts as missing. A missing lot side is the footprint
    side plus ``LOT_MARGIN_M``, 2 m (the walkthrough task's lot, spec §2.4, and our
    generator's); the server's fixed 8 × 12 m lot would be smaller than most footprints. Other missing fields take
    :data:`SERVER_DEFAULTS`. An integral number of stories or wings written as a float
    (``2.0``) is that integer; other keys are kept as they are.

    Raises:
        DhpackError: For a non-object, a wrong type or a value out of range, naming ``where`` and the field.
    """
    if not isinstance(raw, dict):
        raise DhpackError(f"{where}: constraints must be a JSON object, got {type(raw).__name__}")
    given = {k: v for k, v in raw.items() if v is not None}
    out = {**SERVER_DEFAULTS, **given}
    for key in ("footprint_x", "footprint_y", "lot_width", "lot_depth"):
        if key not in given and key.startswith("lot_"):
            out[key] = round(out["footprint_x" if key == "lot_width" else "footprint_y"] + LOT_MARGIN_M, 2)
        value = finite_number(out[key])
        if value is None:
            raise DhpackError(f"{where}: constraints.{key} must be a number of metres, got {_shown(out[key])}")
        if not 0 < value <= MAX_DIMENSION_M:
            raise DhpackError(f"{where}: constraints.{key} = {out[key]} is outside (0, {MAX_DIMENSION_M:g}] m")
        out[key] = value
    for key, top in (("stories", MAX_STORIES), ("wings", 16)):
        value = out[key]
        low = 1 if key == "stories" else 0
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= top:
            raise DhpackError(f"{where}: constraints.{key} must be an integer in [{low}, {top}], got {_shown(value)}")
        out[key] = value
    for key, allowed in (("roof_type", ROOF_TYPES), ("complexity", COMPLEXITIES)):
        if out[key] not in allowed:
            raise DhpackError(f"{where}: constraints.{key} = {_shown(out[key])} is not one of {', '.join(allowed)}")
    return out


def _shown(value: Any) -> str:
    """``repr`` of a value for a message, cut short (a pack may hold a 4,000-digit integer)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_target(target: dict[str, Any]) -> None:
    """A task's ground truth: empty (structural metrics only), or naming its frame inline
    (``structure``) or by generator reference (``generator``); anything else would be
    accepted now and fail at scoring.

    Raises:
        ValueError: Naming the first bad field.
    """
    if "structure" in target:
        try:
            parse_document(target["structure"])
        except StructureFormatError as exc:
            raise StructureFormatError(f"target.structure: {exc}") from None
    elif "generator" in target:
        ref = target["generator"]
        if not isinstance(ref, dict) or not isinstance(ref.get("task_id"), str):
            raise ValueError("target.generator: must be an object with a task_id")
        TaskId.parse(ref["task_id"])
    elif target:
        raise ValueError(f"target: names no frame (needs 'structure' or 'generator'; has {', '.join(sorted(target))})")


def read_dhpack(path: str | os.PathLike[str]) -> tuple[dict[str, str], list[PackTask]]:
    """The metadata and tasks of a pack, every task checked.

    Raises:
        DhpackError: When the file is missing, not a pack of this format, or a task is malformed.
    """
    pack = Path(path)
    if not pack.exists():
        raise DhpackError(f"{pack}: no such task pack")
    try:
        check_regular_file(pack, limit_name="input_file_bytes")
    except OSError as exc:
        raise DhpackError(f"{pack}: {exc.strerror or exc}") from None
    try:
        conn = sqlite3.connect(f"file:{pack.resolve()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise DhpackError(f"{pack}: cannot open as SQLite ({exc})") from None
    try:
        return _read(conn, pack)
    except sqlite3.Error as exc:
        raise DhpackError(f"{pack}: not a readable task pack ({exc})") from None
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, pack: Path) -> tuple[dict[str, str], list[PackTask]]:
    meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM metadata")}
    if meta.get("format") != DHPACK_FORMAT:
        raise DhpackError(f"{pack}: metadata format is {meta.get('format')!r}, expected {DHPACK_FORMAT!r}")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    targets: dict[str, str] = {}
    if _TARGETS in tables:
        targets = {str(t): str(j) for t, j in conn.execute(f"SELECT task_id, target_json FROM {_TARGETS}")}
    made_by: dict[str, str] = {}
    if _MADE_BY in tables:
        made_by = {str(t): m for t, m in conn.execute(f"SELECT task_id, made_by FROM {_MADE_BY}")
                   if isinstance(m, str) and m}
    images: dict[str, dict[str, bytes]] = {}
    for task_id, view, content in conn.execute("SELECT task_id, view, content FROM images"):
        images.setdefault(str(task_id), {})[str(view)] = content
    tasks = []
    rows = conn.execute("SELECT task_id, style, description, constraints_json FROM tasks ORDER BY rowid")
    seen: dict[str, int] = {}
    for row, (task_id, style, description, constraints_json) in enumerate(rows, 1):
        # The released schema makes task_id the primary key; a pack written without it could
        # hold a task twice, and the second would overwrite the first one's views.
        if str(task_id) in seen:
            raise DhpackError(f"{pack}: task {task_id} is in the tasks table twice (rows {seen[str(task_id)]} "
                              f"and {row}); task ids must be unique")
        seen[str(task_id)] = row
        tasks.append(_pack_task(pack, task_id, style, description, constraints_json,
                                images.get(str(task_id), {}), targets.get(str(task_id)),
                                made_by.get(str(task_id))))
    if not tasks:
        raise DhpackError(f"{pack}: holds no task")
    return meta, tasks


def is_task_id(value: Any) -> bool:
    """Whether ``value`` is a task id a pack may hold (it names files and folders)."""
    return isinstance(value, str) and _TASK_ID.fullmatch(value) is not None


def _pack_task(pack: Path, task_id: Any, style: Any, description: Any, constraints_json: Any,
               images: dict[str, bytes], target_json: str | None, made_by: str | None = None) -> PackTask:
    if not is_task_id(task_id):
        raise DhpackError(f"{pack}: task id {task_id!r} is not 1-64 letters, digits, '_', '-' or '.'")
    where = f"{pack}: task {task_id}"
    for name, value in (("style", style), ("description", description)):
        if value is not None and not isinstance(value, str):
            raise DhpackError(f"{where}: {name} must be text, got {type(value).__name__}")
    try:
        raw = parse_json(constraints_json or "{}")
    except (json.JSONDecodeError, TypeError) as exc:
        raise DhpackError(f"{where}: constraints_json is not JSON ({exc})") from None
    constraints = check_constraints(raw, where)
    views: dict[str, bytes] = {}
    for pack_view, view in zip(PACK_VIEWS, VIEW_NAMES, strict=True):
        content = images.get(pack_view)
        if not isinstance(content, bytes) or not content.startswith(_PNG_SIGNATURE):
            raise DhpackError(f"{where}: image {pack_view!r} is missing or not a PNG")
        if len(content) > MAX_IMAGE_BYTES:
            raise DhpackError(f"{where}: image {pack_view!r} is {len(content)} bytes, over {MAX_IMAGE_BYTES}")
        views[view] = content
    target: dict[str, Any] = {}
    if target_json is not None:
        try:
            target = parse_json(target_json)
        except json.JSONDecodeError as exc:
            raise DhpackError(f"{where}: target_json is not JSON ({exc})") from None
        if not isinstance(target, dict):
            raise DhpackError(f"{where}: target_json must be an object")
        try:
            check_target(target)
        except (BuildbenchError, ValueError, KeyError, TypeError) as exc:
            raise DhpackError(f"{where}: target_json {exc}") from None
    return PackTask(task_id, style or "", description or "", constraints, views, target, made_by)


def pack_task_of(task: Task, images: Sequence[bytes], made_by: str | None = None) -> PackTask:
    """One of our tasks as a pack entry, with its five views as PNG bytes (Prompt 0 order) and
    the stamp of what drew them (``None``: unknown)."""
    inputs = task.inputs
    constraints = check_constraints(dict(inputs.get("constraints") or {}), f"task {task.id}")
    return PackTask(task.id, str(inputs.get("style", "")), str(inputs.get("description", "")), constraints,
                    dict(zip(VIEW_NAMES, images, strict=True)), dict(task.target), made_by)


def write_dhpack(path: str | os.PathLike[str], tasks: Sequence[PackTask], *,
                 metadata: Mapping[str, str] | None = None) -> Path:
    """Write ``tasks`` as a pack at ``path`` (replaced whole, never left half-written).

    Raises:
        DhpackError: For no tasks, a repeated id, or a folder that cannot be written.
    """
    out = Path(path)
    if not tasks:
        raise DhpackError(f"{out}: no tasks to write")
    ids = [t.task_id for t in tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise DhpackError(f"{out}: task id {repeated[0]!r} appears more than once")
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.unlink(missing_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            _write(conn, tasks, {"format": DHPACK_FORMAT, "source": "buildbench", **(metadata or {})})
            conn.commit()
        finally:
            conn.close()
        tmp.replace(out)
    except (OSError, sqlite3.Error) as exc:
        tmp.unlink(missing_ok=True)
        raise DhpackError(f"{out}: cannot write the task pack ({exc})") from None
    return out


def _write(conn: sqlite3.Connection, tasks: Sequence[PackTask], meta: Mapping[str, str]) -> None:
    conn.execute("CREATE TABLE metadata(key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("CREATE TABLE tasks(task_id TEXT PRIMARY KEY, style TEXT, description TEXT, constraints_json TEXT)")
    conn.execute("CREATE TABLE images(task_id TEXT, view TEXT, content BLOB, PRIMARY KEY(task_id, view))")
    conn.execute(f"CREATE TABLE {_TARGETS}(task_id TEXT PRIMARY KEY, target_json TEXT)")
    conn.execute(f"CREATE TABLE {_MADE_BY}(task_id TEXT PRIMARY KEY, made_by TEXT)")
    conn.executemany("INSERT INTO metadata VALUES (?, ?)", sorted(meta.items()))
    for t in tasks:
        conn.execute("INSERT INTO tasks VALUES (?, ?, ?, ?)",
                     (t.task_id, t.style, t.description, json.dumps(t.constraints, sort_keys=True)))
        conn.executemany("INSERT INTO images VALUES (?, ?, ?)",
                         [(t.task_id, pv, t.images[v]) for pv, v in zip(PACK_VIEWS, VIEW_NAMES, strict=True)])
        if t.target:
            conn.execute(f"INSERT INTO {_TARGETS} VALUES (?, ?)", (t.task_id, json.dumps(t.target, sort_keys=True)))
        if t.made_by:
            conn.execute(f"INSERT INTO {_MADE_BY} VALUES (?, ?)", (t.task_id, t.made_by))


def task_from_pack(entry: PackTask, view_paths: Mapping[str, str], condition: str | None) -> Task:
    """A harness task from a pack entry whose views were saved at ``view_paths`` (view → file).

    ``condition`` is the condition the views were rendered for; None (a released pack) lets
    them serve both.
    """
    c = entry.constraints
    width, depth = c["lot_width"], c["lot_depth"]
    code = entry.task_id.split("_", 1)[0]
    inputs: dict[str, Any] = {
        "task_id": entry.task_id,
        "style": entry.style or STYLE_NAMES.get(code, code),
        "description": entry.description,
        "lot_size": {"width": width, "depth": depth, "area": round(width * depth, 2)},
        "stories": c["stories"],
        "roof_type": c["roof_type"],
        "complexity": c["complexity"],
        "footprint": {"x": c["footprint_x"], "y": c["footprint_y"]},
        "wings": c["wings"],
        "constraints": dict(c),
        "collection": entry.task_id,
        "views": {cond: dict(view_paths) for cond in ([condition] if condition else CONDITIONS)},
    }
    if entry.made_by:
        inputs[MADE_BY_KEY] = entry.made_by
    metadata = {"style": code, "roof_type": c["roof_type"], "complexity": c["complexity"],
                "stories": c["stories"], "source": "dhpack"}
    return Task(id=entry.task_id, suite="dreamhouse", inputs=inputs, target=dict(entry.target), metadata=metadata)


def _entries_digest(entries: Sequence[PackTask]) -> str:
    digest = hashlib.sha256()
    for e in entries:
        digest.update(json.dumps([e.task_id, e.style, e.description, e.constraints], sort_keys=True).encode())
        for view in VIEW_NAMES:
            digest.update(hashlib.sha256(e.images[view]).digest())
    return digest.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise DhpackError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return digest.hexdigest()[:16]
