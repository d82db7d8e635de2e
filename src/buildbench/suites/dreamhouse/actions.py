"""The three action formats and how each is read.

1. **Blender Python** (the paper's action): code extracted from model text by the
   released rule — the first fenced ``python`` block, else the first fenced block, else
   the raw text when it contains ``import bpy``.
2. **JSON member list**: ``{"members": [{"name", "size", "location", "rotation_euler"?}],
   "replace": false}``; members are added to the scene (``replace: true`` swaps the whole
   scene). ``dimensions`` is accepted for ``size`` and ``matrix_world`` (4x4, row-major)
   for ``location``/``rotation_euler``, so a released submission document also works.
3. **Tool calls**: ``add_members``, ``remove_members``, ``modify_members``,
   ``validate`` and ``reset_scene`` (:data:`TOOL_SPECS`).

Every way an action can be wrong raises :class:`ActionError` with a message that says
what and where; the env turns it into feedback and leaves the scene as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from buildbench.harness.errors import BuildbenchError
from buildbench.jsonio import finite_number, parse_json

from .model import Member, Structure

#: Largest member edge accepted, metres (a whole-house ridge is under 30 m).
MAX_SIZE_M = 100.0
#: Largest coordinate accepted, metres.
MAX_COORD_M = 1000.0
#: Most members one action may carry (the paper's largest house has 1,548).
MAX_MEMBERS = 20_000

_FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


class ActionError(BuildbenchError):
    """An action could not be read or applied; the message says what and where."""


@dataclass(frozen=True)
class TextAction:
    """What a text action holds: Blender Python ``code`` or a parsed JSON ``document``."""

    kind: Literal["python", "json"]
    code: str = ""
    document: Any = None


def read_text(text: str) -> TextAction:
    """Classify model text as Blender Python or JSON (fenced blocks first).

    Raises:
        ActionError: When it holds neither.
    """
    blocks = _FENCE.findall(text)
    for lang, body in blocks:
        if lang.lower() in ("python", "py"):
            return TextAction("python", code=body)
    for lang, body in blocks:
        if lang.lower() == "json":
            return TextAction("json", document=_loads(body, "the ```json block"))
    if blocks:
        body = blocks[0][1]
        if body.lstrip().startswith(("{", "[")):
            return TextAction("json", document=_loads(body, "the fenced block"))
        return TextAction("python", code=body)
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return TextAction("json", document=_loads(stripped, "the reply"))
    if "import bpy" in text:
        return TextAction("python", code=text)
    raise ActionError(
        "no Blender Python found: put the script in a ```python block (or send a JSON member list)"
    )


def _loads(body: str, where: str) -> Any:
    try:
        return parse_json(body)
    except json.JSONDecodeError as exc:
        raise ActionError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def _vec(entry: Mapping[str, Any], key: str, where: str, *, positive: bool = False, limit: float,
         unit: str = "m") -> np.ndarray:
    value = entry[key]
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise ActionError(f"{where}: {key!r} must be 3 numbers [x, y, z], got {_shown(value)}")
    out = [finite_number(v) for v in value]
    if any(v is None for v in out):
        raise ActionError(f"{where}: {key!r} must hold finite numbers, got {_shown(value)}")
    numbers = np.array(out, dtype=np.float64)
    if positive and (numbers <= 0).any():
        raise ActionError(f"{where}: every {key!r} entry must be > 0 m, got {value}")
    if (np.abs(numbers) > limit).any():
        raise ActionError(f"{where}: {key!r} entries are limited to {limit:g} {unit}, got {_shown(value)}")
    return numbers


def _shown(value: Any) -> str:
    """The start of a JSON value for a message (a 4,000-digit integer is cut, not printed whole)."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _matrix(entry: Mapping[str, Any], where: str) -> np.ndarray:
    rows = entry["matrix_world"]
    if not isinstance(rows, list) or len(rows) != 4 or not all(isinstance(r, list) and len(r) == 4 for r in rows):
        raise ActionError(f"{where}: 'matrix_world' must be a 4x4 list of numbers (4 rows of 4), got {_shown(rows)}")
    numbers = [finite_number(v) for row in rows for v in row]
    if any(v is None for v in numbers):
        raise ActionError(f"{where}: 'matrix_world' must hold finite numbers, got {_shown(rows)}")
    return np.array(numbers, dtype=np.float64).reshape(4, 4)


BLENDER_NAME_BYTES = 255
"""Blender keeps at most this many bytes (UTF-8) of an object's name: a longer one is cut, and two long names
that share their first 255 bytes would become one name and a renamed copy at the scene's next rebuild."""


def _check_blender_name(name: str, where: str) -> None:
    """Refuse a member name Blender cannot hold as given (cut at a NUL or past 255 bytes)."""
    if "\x00" in name:
        raise ActionError(f"{where} contains a NUL character (Blender cuts a name there)")
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > BLENDER_NAME_BYTES:
        raise ActionError(f"{where} is {size} bytes of UTF-8; Blender keeps at most {BLENDER_NAME_BYTES}")


def parse_member(entry: Any, where: str) -> Member:
    """One member entry of a JSON list or tool call.

    Raises:
        ActionError: Naming ``where`` and the field at fault.
    """
    if not isinstance(entry, Mapping):
        raise ActionError(f"{where}: expected an object with name, size and location, got {type(entry).__name__}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ActionError(f"{where}: 'name' must be a non-empty string, got {name!r}")
    _check_blender_name(name, f"{where}: 'name'")
    where = f"{where} ({name})"
    size_key = "size" if "size" in entry else "dimensions"
    if size_key not in entry:
        raise ActionError(f"{where}: missing 'size' [sx, sy, sz] in metres")
    size = _vec(entry, size_key, where, positive=True, limit=MAX_SIZE_M)
    if entry.get("matrix_world") is not None:  # null: placed by location, as the released rebuild does
        mat = _matrix(entry, where)
        return Member(name, size, mat)
    if "location" not in entry:
        raise ActionError(f"{where}: missing 'location' [x, y, z] (the box centre, metres)")
    location = _vec(entry, "location", where, limit=MAX_COORD_M)
    rotation = _vec(entry, "rotation_euler", where, limit=1e3, unit="rad") if "rotation_euler" in entry else np.zeros(3)
    return Member.box(name, size.tolist(), location.tolist(), rotation.tolist())


def parse_members(items: Any, where: str = "members") -> list[Member]:
    """A list of member entries, with unique names.

    Raises:
        ActionError: For a non-list, too many members, a bad entry or a repeated name.
    """
    if not isinstance(items, list):
        raise ActionError(f"{where!r} must be a list of members, got {type(items).__name__}")
    if len(items) > MAX_MEMBERS:
        raise ActionError(f"{len(items)} members in one action; at most {MAX_MEMBERS} are accepted")
    members = [parse_member(e, f"{where}[{i}]") for i, e in enumerate(items)]
    seen: dict[str, int] = {}
    for i, m in enumerate(members):
        if m.name in seen:
            raise ActionError(f"{where}[{i}]: name {m.name!r} repeats {where}[{seen[m.name]}]; names must be unique")
        seen[m.name] = i
    return members


@dataclass(frozen=True)
class MemberList:
    """A parsed JSON member-list action."""

    members: list[Member]
    replace: bool


def parse_member_list(document: Any) -> MemberList:
    """``{"members": [...], "replace": bool}`` (or a bare list of members).

    Raises:
        ActionError: When the document has another shape or an entry is bad.
    """
    if isinstance(document, list):
        return MemberList(parse_members(document), False)
    if not isinstance(document, Mapping) or "members" not in document:
        raise ActionError('a JSON action must be {"members": [...]} (optionally with "replace": true)')
    replace = document.get("replace", False)
    if not isinstance(replace, bool):
        raise ActionError(f"'replace' must be true or false, got {replace!r}")
    return MemberList(parse_members(document["members"]), replace)


def add_members(scene: Structure, members: Sequence[Member], *, replace: bool = False) -> Structure:
    """``scene`` with ``members`` appended (or ``members`` alone when ``replace``).

    Raises:
        ActionError: When a new name is already in the scene.
    """
    new = Structure.from_members(members, meta=scene.meta)
    if replace:
        return new
    taken = set(scene.names)
    clash = [m.name for m in members if m.name in taken]
    if clash:
        shown = ", ".join(clash[:5]) + (f" and {len(clash) - 5} more" if len(clash) > 5 else "")
        raise ActionError(
            f"the scene already has member(s) named {shown}; remove or modify them, or send \"replace\": true"
        )
    return scene.concat(new)


def remove_members(scene: Structure, names: Any) -> Structure:
    """``scene`` without the named members.

    Raises:
        ActionError: For a non-list or a name not in the scene.
    """
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ActionError("'names' must be a list of member names")
    present = set(scene.names)
    missing = [n for n in names if n not in present]
    if missing:
        raise ActionError(f"no member(s) named {', '.join(missing[:5])} in the scene; nothing was removed")
    drop = set(names)
    return scene.subset([i for i, n in enumerate(scene.names) if n not in drop])


_CHANGE_KEYS = {"name", "new_name", "size", "location", "rotation_euler"}


def modify_members(scene: Structure, changes: Any) -> Structure:
    """``scene`` with members resized, moved, rotated or renamed.

    Each change is ``{"name", "size"?, "location"?, "rotation_euler"?, "new_name"?}``;
    unspecified fields keep their values (a rotation replaces the whole orientation).

    Raises:
        ActionError: For an unknown member, an unknown field, a bad value or a name clash.
    """
    if not isinstance(changes, list) or not changes:
        raise ActionError("'changes' must be a non-empty list of {name, size?, location?, rotation_euler?, new_name?}")
    index = {n: i for i, n in enumerate(scene.names)}
    names, sizes, mats = list(scene.names), scene.sizes_m.copy(), scene.matrices.copy()
    for k, change in enumerate(changes):
        where = f"changes[{k}]"
        if not isinstance(change, Mapping):
            raise ActionError(f"{where}: expected an object, got {type(change).__name__}")
        unknown = sorted(set(change) - _CHANGE_KEYS)
        if unknown:
            raise ActionError(f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_CHANGE_KEYS))}")
        name = change.get("name")
        if not isinstance(name, str) or name not in index:
            raise ActionError(f"{where}: no member named {name!r} in the scene")
        i = index[name]
        if "size" in change:
            sizes[i] = _vec(change, "size", where, positive=True, limit=MAX_SIZE_M)
        if "location" in change:
            mats[i, :3, 3] = _vec(change, "location", where, limit=MAX_COORD_M)
        if "rotation_euler" in change:
            angles = _vec(change, "rotation_euler", where, limit=1e3, unit="rad")
            moved = Member.box(name, sizes[i].tolist(), mats[i, :3, 3].tolist(), angles.tolist())
            mats[i, :3, :3] = moved.matrix_world[:3, :3]
        if "new_name" in change:
            new = change["new_name"]
            if not isinstance(new, str) or not new.strip():
                raise ActionError(f"{where}: 'new_name' must be a non-empty string")
            _check_blender_name(new, f"{where}: 'new_name'")
            if new in index and index[new] != i:
                raise ActionError(f"{where}: cannot rename {name!r} to {new!r}: that name is taken")
            del index[name]
            index[new] = i
            names[i] = new
    return Structure(tuple(names), sizes, mats, scene.phases, scene.sections, scene.supported_by, dict(scene.meta))


_MEMBER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Unique name starting with a taxonomy prefix, e.g. Stud_main_001"},
        "size": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3,
                 "description": "Full box sizes along the member's local x, y, z axes, metres"},
        "location": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3,
                     "description": "World position of the box centre, metres"},
        "rotation_euler": {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3,
                           "description": "Blender XYZ Euler rotation in radians (default 0, 0, 0)"},
    },
    "required": ["name", "size", "location"],
}

#: Tool name → (description, JSON Schema of the arguments).
TOOL_SPECS: dict[str, tuple[str, dict[str, Any]]] = {
    "add_members": (
        "Add framing members (boxes) to the scene. Names must be new.",
        {"type": "object", "properties": {"members": {"type": "array", "items": _MEMBER_SCHEMA}},
         "required": ["members"]},
    ),
    "remove_members": (
        "Remove members from the scene by name.",
        {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
         "required": ["names"]},
    ),
    "modify_members": (
        "Resize, move, rotate or rename existing members.",
        {"type": "object", "properties": {"changes": {"type": "array", "items": {
            "type": "object",
            "properties": {**_MEMBER_SCHEMA["properties"], "new_name": {"type": "string"}},
            "required": ["name"]}}},
         "required": ["changes"]},
    ),
    "validate": (
        "Run the structural tests on the current scene and get the feedback.",
        {"type": "object", "properties": {}},
    ),
    "reset_scene": (
        "Delete every member and start from an empty scene.",
        {"type": "object", "properties": {}},
    ),
}


def tools() -> list[Any]:
    """The tools as :class:`buildbench.llm.Tool` objects (for function-calling agents)."""
    from buildbench.llm import Tool

    return [Tool(name, desc, params) for name, (desc, params) in TOOL_SPECS.items()]
