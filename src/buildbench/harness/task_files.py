"""Tasks from files (``--tasks FILE_OR_DIR``): records a user wrote or a tool exported.

A file is JSON Lines (``.jsonl``: one task per line) or JSON (``.json``: one task, a list of
tasks, or ``{"tasks": [...]}``); a folder means every ``.jsonl``/``.json`` file in it, in name
order (sub-folders included). A task record has the shape of ``Task.to_dict()`` — what
``buildbench tasks SUITE --json`` prints::

    {"id": "t1", "suite": "example", "inputs": {...}, "target": {...}, "metadata": {...}}

``suite`` may be left out (it is then the run's suite); ``target`` and ``metadata`` default to
``{}``. Every record is checked on load: known fields only, a non-empty unique id, objects
where objects belong, and the suite's own check of inputs and target
(``Suite.validate_task``). The first problem is a :class:`TaskFileError` with one line naming
``file:line``, the task and the field.

A field the suite names as a path (``Suite.task_paths``, e.g. ``inputs.ifc_path``) may be
relative: it is read against the folder of the file that names it, never the current directory,
so a task file means the same wherever it is run from (tasks keep the absolute path).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from buildbench.display import terminal_safe
from buildbench.inputs import iter_lines
from buildbench.jsonio import parse_json, read_json_file
from buildbench.scenes import scene_warnings

from .errors import ConfigError
from .task import Task

_FIELDS = ("id", "suite", "inputs", "target", "metadata")
#: A task id names the task in tables and logs; one far longer is not an id.
MAX_TASK_ID_CHARS = 200
_SUFFIXES = (".jsonl", ".json")

TaskValidator = Callable[[Task], None]


class TaskFileError(ConfigError):
    """A task file that cannot be run: unreadable, malformed, or a record of the wrong shape."""


class TaskShapeError(ValueError):
    """Raised by a suite's task check: ``field`` is the dotted path of the bad value."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


def _records_of_json(value: Any, path: Path) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and "tasks" in value and "id" not in value:
        value = value["tasks"]
    if isinstance(value, dict):
        return [(f"{path}", value)]
    if isinstance(value, list):
        return [(f"{path}[{i}]", v) for i, v in enumerate(value)]
    raise TaskFileError(f"{path}: expected a task object, a list of tasks or {{\"tasks\": [...]}}, "
                        f"got {type(value).__name__}")


def _records_of_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        for number, line in iter_lines(path):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", parse_json(line, unique_keys=True)
            except json.JSONDecodeError as exc:
                raise TaskFileError(f"{path}:{number}: not a JSON object ({exc.msg})") from None
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read ({exc.strerror or exc})") from None


def task_file_paths(source: str | Path) -> list[Path]:
    """The task files ``source`` names (a file, or the ``.jsonl``/``.json`` files under a folder)."""
    path = Path(source)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
        if not found:
            raise TaskFileError(f"{path}: folder holds no .jsonl or .json task file")
        return found
    if not path.exists():
        raise TaskFileError(f"{path}: no such task file or folder")
    if path.suffix not in _SUFFIXES:
        raise TaskFileError(f"{path}: task files end in .jsonl (one task per line) or .json")
    return [path]


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    if path.suffix == ".jsonl":
        yield from _records_of_jsonl(path)
        return
    try:
        value = read_json_file(path)
    except json.JSONDecodeError as exc:
        raise TaskFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot read ({exc.strerror})") from None
    yield from _records_of_json(value, path)


def task_from_record(record: Any, suite: str, where: str) -> Task:
    """One checked task (shape only; the suite's own check is separate)."""
    if not isinstance(record, dict):
        raise TaskFileError(f"{where}: expected a task object, got {type(record).__name__}")
    unknown = sorted(set(record) - set(_FIELDS))
    if unknown:
        raise TaskFileError(f"{where}: unknown field {unknown[0]!r}; a task has {', '.join(_FIELDS)}")
    task_id = record.get("id")
    if not isinstance(task_id, str) or not task_id.strip():
        raise TaskFileError(f"{where}: field 'id' must be a non-empty string, got {task_id!r}")
    if len(task_id) > MAX_TASK_ID_CHARS:
        raise TaskFileError(f"{where}: field 'id' is {len(task_id)} characters long, over the limit of "
                            f"{MAX_TASK_ID_CHARS}")
    if not task_id.isprintable():  # control and bidirectional characters rewrite what a terminal shows
        raise TaskFileError(f"{where}: field 'id' '{terminal_safe(task_id)}' holds a control or "
                            "bidirectional character")
    named = record.get("suite", suite)
    if named != suite:
        raise TaskFileError(f"{where}: task {task_id!r} field 'suite' is {repr(named)[:60]}, but this run is suite "
                            f"{suite!r}")
    for key in ("inputs", "target", "metadata"):
        if not isinstance(record.get(key, {}), dict):
            raise TaskFileError(f"{where}: task {task_id!r} field {key!r} must be an object, "
                                f"got {type(record[key]).__name__}")
    return Task.from_dict({**record, "suite": suite})


def resolve_paths(task: Task, folder: Path, paths: Sequence[str]) -> Task:
    """``task`` with each relative path among the dotted fields ``paths`` read against ``folder``
    (absolute or not a non-empty string: left as it is, for the suite's check to judge)."""
    parts: dict[str, dict[str, Any]] = {part: dict(getattr(task, part)) for part in ("inputs", "target", "metadata")}
    for dotted in paths:
        part, _, name = dotted.partition(".")
        if part not in parts or not name:
            raise ValueError(f"task path field {dotted!r} is not inputs.NAME, target.NAME or metadata.NAME")
        value = parts[part].get(name)
        if isinstance(value, str) and value.strip() and not Path(value).is_absolute():
            parts[part][name] = str(folder / value)
    return Task(id=task.id, suite=task.suite, **parts)


def load_task_files(source: str | Path, suite: str, validate: TaskValidator | None = None, *,
                    paths: Sequence[str] = ()) -> list[Task]:
    """Every task in ``source`` (file or folder), checked; TaskFileError on the first problem.
    ``paths``: the dotted fields holding file paths, resolved against each file's folder."""
    tasks: list[Task] = []
    seen: dict[str, str] = {}
    for path in task_file_paths(source):
        folder = path.parent.resolve()  # the folder itself, symlinks and .. followed
        for where, record in _records(path):
            task = resolve_paths(task_from_record(record, suite, where), folder, paths)
            if task.id in seen:
                raise TaskFileError(f"{where}: task id {task.id!r} repeats the one at {seen[task.id]}")
            seen[task.id] = where
            if validate is not None:
                try:
                    # a suite's check that reads a scene passes the scene's warnings on under the
                    # name its errors get: file:line, task, field
                    with scene_warnings.named(_in_record(where, task.id)):
                        validate(task)
                except (TaskShapeError, ValueError, KeyError, TypeError) as exc:
                    raise TaskFileError(f"{where}: task {task.id!r}: {_one_line(exc)}") from None
            tasks.append(task)
    if not tasks:
        raise TaskFileError(f"{source}: holds no task")
    return tasks


def _in_record(where: str, task_id: str) -> Callable[[str], str]:
    def name(field: str) -> str:
        return f"{where}: task {task_id!r}: {field}" if field else f"{where}: task {task_id!r}"

    return name


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """The first line of ``exc``'s message, cut to ``limit`` characters (a validator quoting a
    100 kB field would otherwise make the one error line 100 kB)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= limit else f"{line[:limit]}… ({len(line)} characters)"


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict, Mapping), "array": (list, tuple), "string": (str,), "number": (int, float),
    "integer": (int,), "boolean": (bool,),
}


def require_fields(*, inputs: Mapping[str, str] | None = None, target: Mapping[str, str] | None = None,
                   optional: Mapping[str, str] | None = None) -> TaskValidator:
    """A task check for ``Suite.validate_task``: each named field present with its JSON type.

    Types are ``object``, ``array``, ``string``, ``number``, ``integer``, ``boolean``, or
    several joined by ``|`` (``"string|null"``; ``null`` allows None). A number is finite, and a
    ``number`` or ``integer`` type may carry a bound: ``"number>0"``, ``"integer>=1"`` (a height of
    0 or a block budget of -1 is a type-correct value no task can mean). ``optional`` checks fields
    a record may leave out, by dotted name (``{"target.duration_s": "number>0"}``). Fields not named
    are not checked, so a suite can require only what its env and scorer read.
    """
    wanted = [(f"{part}.{name}", kinds, True) for part, fields in (("inputs", inputs), ("target", target))
              for name, kinds in (fields or {}).items()]
    wanted += [(path, kinds, False) for path, kinds in (optional or {}).items()]
    for path, kinds, _ in wanted:
        if path.split(".", 1)[0] not in ("inputs", "target") or "." not in path:
            raise ValueError(f"require_fields: {path!r} is not inputs.NAME or target.NAME")
        for kind in kinds.split("|"):
            _type_and_bound(kind)  # a misspelt type fails when the suite is made, not on a user's task

    def check(task: Task) -> None:
        for path, kinds, required in wanted:
            part, name = path.split(".", 1)
            values = getattr(task, part)
            if name not in values:
                if required:
                    raise TaskShapeError(path, f"missing ({kinds} required)")
                continue
            value = values[name]
            if not any(_is_a(value, kind) for kind in kinds.split("|")):
                shown = repr(value) if isinstance(value, int | float) and not isinstance(value, bool) else \
                    type(value).__name__
                raise TaskShapeError(path, f"expected {kinds}, got {shown}")

    return check


_BOUND = re.compile(r"^(?P<kind>[a-z]+)(?:(?P<op>>=|>)(?P<limit>-?\d+(?:\.\d+)?))?$")


def _type_and_bound(kind: str) -> tuple[str, str | None, float]:
    match = _BOUND.match(kind)
    if match is None or (match["kind"] not in _JSON_TYPES and match["kind"] != "null") or (
            match["op"] and match["kind"] not in ("number", "integer")):
        raise ValueError(f"require_fields: unknown type {kind!r}")
    return match["kind"], match["op"], float(match["limit"] or 0)


def _is_a(value: Any, kind: str) -> bool:
    name, op, limit = _type_and_bound(kind)
    if name == "null":
        return value is None
    if isinstance(value, bool) and name != "boolean":
        return False  # JSON true is not a number
    if not isinstance(value, _JSON_TYPES[name]):
        return False
    if not isinstance(value, int | float) or name == "boolean":
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return False
    # an int is compared as one: a 400-digit int overflows a float
    return op is None or (value > limit if op == ">" else value >= limit)
