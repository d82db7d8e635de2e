"""Reading and writing structures: our JSON and the released harness's submission JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from buildbench.harness.errors import BuildbenchError
from buildbench.jsonio import read_json_file
from buildbench.limits import limit

from .structure import FORMAT_ID, Member, Structure, _as_mat4, _as_vec3


class StructureFormatError(BuildbenchError):
    """A structure file or member entry is malformed (missing field, wrong shape, not a number)."""


def load_structure(path: str | Path) -> Structure:
    """Read a structure file in our JSON form or the released submission form.

    Raises:
        StructureFormatError: When the file cannot be read or parsed, or an entry is malformed.
    """
    p = Path(path)
    try:
        data = read_json_file(p)
    except OSError as exc:
        raise StructureFormatError(f"cannot read structure file {p}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StructureFormatError(f"{p} is not valid JSON: {exc}") from exc
    try:
        return parse_document(data)
    except StructureFormatError as exc:
        raise StructureFormatError(f"{p}: {exc}") from exc


def parse_document(data: Any) -> Structure:
    """A structure from a parsed JSON document in either form.

    Raises:
        StructureFormatError: When the document or a member entry is malformed.
    """
    if not isinstance(data, Mapping):
        raise StructureFormatError(f"structure document must be a JSON object, got {type(data).__name__}")
    ours = data.get("format") == FORMAT_ID
    if "format" in data and not ours:
        raise StructureFormatError(f"unknown structure format {data['format']!r} (expected {FORMAT_ID!r})")
    members = data.get("members")
    if not isinstance(members, list):
        raise StructureFormatError('structure document needs a "members" list')
    if len(members) > limit("house_members"):
        raise StructureFormatError(f"{len(members)} members, over the limit of {limit('house_members')} "
                                   "(BUILDBENCH_LIMIT_HOUSE_MEMBERS)")
    meta = data.get("meta", {})
    if not isinstance(meta, Mapping):
        raise StructureFormatError('"meta" must be a JSON object')
    parse = _parse_ours if ours else _parse_released
    parsed = [parse(i, entry) for i, entry in enumerate(members)]
    return Structure(
        names=tuple(p.name for p in parsed),
        sizes_m=np.array([p.size_m for p in parsed]).reshape(len(parsed), 3),
        matrices=np.array([p.matrix_world for p in parsed]).reshape(len(parsed), 4, 4),
        phases=tuple(p.phase for p in parsed),
        sections=tuple(p.section for p in parsed),
        supported_by=tuple(p.supported_by for p in parsed),
        meta=dict(meta),
    )


def _where(i: int, entry: Any) -> str:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return f"member {i}" + (f" ({name!r})" if isinstance(name, str) else "")


def _field(i: int, entry: Mapping[str, Any], key: str, conv: Any) -> Any:
    try:
        return conv(entry[key])
    except (ValueError, TypeError) as exc:
        raise StructureFormatError(f"{_where(i, entry)}: field {key!r} is invalid: {exc}") from None


def _entry_name(i: int, entry: Any) -> str:
    if not isinstance(entry, Mapping):
        raise StructureFormatError(f"member {i}: expected a JSON object, got {type(entry).__name__}")
    name = entry.get("name")
    if not isinstance(name, str):
        raise StructureFormatError(f"member {i}: field 'name' must be a string, got {name!r}")
    return name


def _optional_str(i: int, entry: Mapping[str, Any], key: str) -> str | None:
    val = entry.get(key)
    if val is not None and not isinstance(val, str):
        raise StructureFormatError(f"{_where(i, entry)}: field {key!r} must be a string")
    return val


def _parse_ours(i: int, entry: Any) -> Member:
    name = _entry_name(i, entry)
    for key in ("size_m", "matrix_world"):
        if key not in entry:
            raise StructureFormatError(f"{_where(i, entry)}: missing field {key!r}")
    sup = entry.get("supported_by", [])
    if not isinstance(sup, list) or not all(isinstance(s, str) for s in sup):
        raise StructureFormatError(f"{_where(i, entry)}: field 'supported_by' must be a list of names")
    return Member(
        name,
        _field(i, entry, "size_m", _as_vec3),
        _field(i, entry, "matrix_world", _as_mat4),
        phase=_optional_str(i, entry, "phase"),
        section=_optional_str(i, entry, "section"),
        supported_by=tuple(sup),
    )


def _parse_released(i: int, entry: Any) -> Member:
    """Released rules (``server/_blender_script.py``): box of ``dimensions`` placed by
    ``matrix_world``, falling back to ``location`` when the matrix is absent."""
    name = _entry_name(i, entry)
    if "dimensions" not in entry:
        raise StructureFormatError(f"{_where(i, entry)}: missing field 'dimensions'")
    size = _field(i, entry, "dimensions", _as_vec3)
    if "matrix_world" in entry:
        mat = _field(i, entry, "matrix_world", _as_mat4)
    elif "location" in entry:
        mat = np.eye(4)
        mat[:3, 3] = _field(i, entry, "location", _as_vec3)
    else:
        raise StructureFormatError(f"{_where(i, entry)}: needs 'matrix_world' or 'location'")
    return Member(name, size, mat)
