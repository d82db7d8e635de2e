"""The released harness's other task source: a folder tree, one folder per task (its server's
``DREAMHOUSE_TASKS_DIR`` layout, and the input of its ``build_task_pack.py``; spec §9.1)::

    houses/<task_id>/front.png back.png left.png right.png front_right.png   (or <task_id>_skin_<view>.png)
    houses/<task_id>/structure.json    {"main_body": {"width", "depth", "stories"}, "roof": {"type"},
                                        "config", "config_id", "params": {"complexity"}, "style_display_name"|"style"}
    houses/<task_id>/constraints.json  (used when there is no structure.json; its "style" is the style)

Each folder becomes a :class:`~.dhpack.PackTask` with the constraints the released builder would
pack for it (from ``structure.json``, else ``constraints.json``), so ``unpack`` reads a folder
tree as it reads a pack. Unlike the released tools, which skip a folder without its five
views and use default constraints when a JSON file does not parse, such a folder is an error
naming it: a task is never dropped or changed silently.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from buildbench.harness import Task
from buildbench.inputs import read_bytes
from buildbench.jsonio import parse_json

from .dhpack import (
    PACK_VIEWS,
    DhpackError,
    PackTask,
    _entries_digest,
    _file_digest,
    check_constraints,
    is_task_id,
    read_dhpack,
    task_from_pack,
)
from .generate import STYLE_NAMES
from .views_basis import CONDITIONS, VIEW_NAMES

#: File names a view may have in a task folder, in the released server's order of preference.
_VIEW_FILES = {view: (f"{{task}}_skin_{stem}.png", f"{stem}.png")
               for view, stem in zip(PACK_VIEWS, ("front", "back", "left", "right", "front_right"), strict=True)}


def read_task_folders(root: str | Path) -> tuple[dict[str, str], list[PackTask]]:
    """The metadata and tasks of a released task-folder tree, every task checked.

    Raises:
        DhpackError: For a tree without task folders, or a folder that lacks a view or holds
            malformed JSON or constraints (naming the folder and the file or field).
    """
    base = Path(root)
    folders = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise DhpackError(f"{base}: holds no task folder (expected <task_id>/front.png ... as the released "
                          "houses/ tree)")
    return {"format": "dreamhouse-task-folders", "source": str(base)}, [_task(f) for f in folders]


def _task(folder: Path) -> PackTask:
    task_id = folder.name
    if not is_task_id(task_id):
        raise DhpackError(f"{folder}: folder name {task_id!r} is not a task id (1-64 letters, digits, '_', '-', '.')")
    images: dict[str, bytes] = {}
    for view, pack_view in zip(VIEW_NAMES, PACK_VIEWS, strict=True):
        names = [pattern.format(task=task_id) for pattern in _VIEW_FILES[pack_view]]
        found = next((folder / n for n in names if (folder / n).is_file()), None)
        if found is None:
            raise DhpackError(f"{folder}: no {pack_view!r} view ({' or '.join(names)})")
        try:
            images[view] = read_bytes(found)
        except OSError as exc:
            raise DhpackError(f"{found}: cannot read ({exc.strerror or exc})") from None
    style, raw = _constraints(folder, task_id)
    constraints = check_constraints(raw, f"{folder}")
    return PackTask(task_id, style, _description(style, constraints), constraints, images)


def _constraints(folder: Path, task_id: str) -> tuple[str, dict[str, Any]]:
    """The style and the constraint fields as the released builder takes them from the folder."""
    inferred = STYLE_NAMES.get(task_id.split("_", 1)[0], task_id.split("_", 1)[0])
    structure, constraints = folder / "structure.json", folder / "constraints.json"
    if structure.is_file():
        doc = _object(structure)
        body, roof, params = (_part(doc, key, structure) for key in ("main_body", "roof", "params"))
        raw = {"footprint_x": body.get("width"), "footprint_y": body.get("depth"), "stories": body.get("stories"),
               "roof_type": roof.get("type"), "config": doc.get("config"), "config_id": doc.get("config_id"),
               "complexity": params.get("complexity")}
        style = doc.get("style_display_name") or doc.get("style") or inferred
        return _style(style, structure), {k: v for k, v in raw.items() if v is not None}
    if constraints.is_file():
        raw = dict(_object(constraints))
        return _style(raw.pop("style", None) or inferred, constraints), raw
    return inferred, {}


def _style(value: Any, path: Path) -> str:
    """The style name a file gives; a number or an object is no name (it would reach the task text)."""
    if not isinstance(value, str):
        raise DhpackError(f"{path}: the style must be text, got {type(value).__name__}")
    return value


def _object(path: Path) -> dict[str, Any]:
    try:
        # a key given twice is refused: json.loads keeps the last silently, other readers the first
        doc = parse_json(read_bytes(path, limit_name="json_file_bytes"), unique_keys=True)
    except OSError as exc:
        raise DhpackError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise DhpackError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise DhpackError(f"{path}: must be a JSON object, got {type(doc).__name__}")
    return doc


def _part(doc: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = doc.get(key) or {}
    if not isinstance(value, dict):
        raise DhpackError(f"{path}: field {key!r} must be an object, got {type(value).__name__}")
    return value


def _description(style: str, c: dict[str, Any]) -> str:
    """The task line, worded as our generated tasks word it, from the checked constraints."""
    return (f"Generate a {c['stories']}-story {style} timber frame ({c['complexity']}, {c['wings']} wing(s)). "
            f"Footprint: {c['footprint_x']:.2f}m x {c['footprint_y']:.2f}m. Roof type: {c['roof_type']}.")


def load_dhpack(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None) -> list[Task]:
    """The tasks of a pack, or of a released task-folder tree, as harness tasks, their views
    saved as PNG files.

    Args:
        path: The pack, or a folder of task folders (:func:`read_task_folders`).
        images_dir: Where to save the views (``<dir>/<task_id>/<view>.png``); by default a
            cache folder keyed by the content's hash.

    Raises:
        DhpackError: As :func:`read_dhpack`, or when the views cannot be saved.
    """
    source = Path(path)
    meta, entries = read_task_folders(source) if source.is_dir() else read_dhpack(source)
    if images_dir is None:
        from buildbench.harness.cache import cache_dir

        images_dir = cache_dir("dreamhouse", "dhpack", _entries_digest(entries) if source.is_dir()
                               else _file_digest(source))
    condition = meta.get("condition") if meta.get("condition") in CONDITIONS else None
    root = Path(images_dir)
    tasks = []
    for entry in entries:
        folder = root / entry.task_id
        paths = {view: str(folder / f"{view}.png") for view in VIEW_NAMES}
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for view, content in entry.images.items():
                target = Path(paths[view])
                if not target.is_file() or target.read_bytes() != content:
                    target.write_bytes(content)
        except OSError as exc:
            raise DhpackError(f"cannot save the views of task {entry.task_id} under {root}: {exc}") from None
        tasks.append(task_from_pack(entry, paths, condition))
    return tasks
