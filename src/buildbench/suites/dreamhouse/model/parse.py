"""Parsing structure documents: our JSON form and the released harness's submission.

Every number field is read by one rule (:func:`_numbers`): a JSON number, or a number
written as a string in JSON's own notation (``"3.66"``, ``"-0.0"``, ``"1e-3"``); never
``true``/``false``, never a non-finite value (``"NaN"``, ``"inf"``, ``1e999``, an integer
too large for a float), and exactly the nesting the field has (3 numbers, 4 rows of 4). A
violation is a :class:`StructureFormatError` naming the member (index and name) and the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from buildbench.limits import limit

from .structure import FORMAT_ID, FORMAT_VERSION, Structure, StructureFormatError

#: A number as JSON writes it, with an optional leading ``+`` and bare ``.5`` / ``5.`` forms.
#: ASCII digits only: Python's ``float()`` would also take ``"7_32"`` (732), ``"nan"``,
#: ``"infinity"`` and other scripts' digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = {"nan", "inf", "infinity"}

_VEC3 = (3,)
_MAT4 = (4, 4)


class _Bad(ValueError):
    """A field's value is not what the field holds (message without the member's name)."""


def parse_document(data: Any) -> Structure:
    """A structure from a parsed JSON document in either form.

    A bare list is read as the member list (the released export step builds that list before
    wrapping it in ``{"members": ...}``).

    Raises:
        StructureFormatError: When the document or a member entry is malformed.
    """
    if isinstance(data, list):
        data = {"members": data}
    if not isinstance(data, Mapping):
        raise StructureFormatError(f"structure document must be a JSON object, got {_describe(data)}")
    ours = data.get("format") == FORMAT_ID
    if "format" in data and not ours:
        raise StructureFormatError(f"unknown structure format {data['format']!r} (expected {FORMAT_ID!r})")
    if ours and "version" in data:
        version = data["version"]
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
            raise StructureFormatError(f"field 'version' is {version!r}; this reader reads version "
                                       f"{FORMAT_VERSION} of {FORMAT_ID}")
    if "members" not in data:
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        raise StructureFormatError(f'structure document has no "members" list (its keys: {keys})')
    members = data["members"]
    if not isinstance(members, list):
        raise StructureFormatError(f'structure document needs a "members" list, got {_describe(members)}')
    most = limit("house_members")
    if len(members) > most:
        raise StructureFormatError(too_many_members(len(members), most))
    meta = data.get("meta", {})
    if not isinstance(meta, Mapping):
        raise StructureFormatError(f'field "meta" must be a JSON object, got {_describe(meta)}')
    if not ours:
        fast = _released_in_bulk(members)
        if fast is not None:
            return Structure(fast[0], fast[1], fast[2], meta=dict(meta))
    rows = [(_parse_ours if ours else _parse_released)(i, entry) for i, entry in enumerate(members)]
    n = len(rows)
    return Structure(
        names=tuple(r[0] for r in rows),
        sizes_m=np.array([r[1] for r in rows], dtype=np.float64).reshape(n, 3),
        matrices=np.array([r[2] for r in rows], dtype=np.float64).reshape(n, 4, 4),
        phases=tuple(r[3] for r in rows),
        sections=tuple(r[4] for r in rows),
        supported_by=tuple(r[5] for r in rows),
        meta=dict(meta),
    )


def too_many_members(count: int, most: int) -> str:
    """Why ``count`` members are refused under the ``house_members`` limit ``most`` (the executors
    count a scene's members and refuse them in these words before exporting any)."""
    return f"{count} members, over the limit of {most} (BUILDBENCH_LIMIT_HOUSE_MEMBERS)"


def _released_in_bulk(members: list[Any]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray] | None:
    """Names, sizes and matrices of a released member list in which every entry has a string
    name, 3 ``dimensions`` and a 4x4 ``matrix_world`` of JSON numbers (what the export writes),
    read as arrays at once; None when some entry needs :func:`_parse_released`, which reads it
    (strings, a location) or names what is wrong with it. Both give the same numbers."""
    try:
        names = tuple(m["name"] for m in members)
        sizes = _number_array([m["dimensions"] for m in members], (len(members), 3))
        matrices = _number_array([m["matrix_world"] for m in members], (len(members), 4, 4))
    except (KeyError, TypeError):  # an entry that is no object, or lacks a field
        return None
    if sizes is None or matrices is None or not all(type(name) is str for name in names):
        return None
    return names, sizes, matrices


#: Whether each element of an object array is a JSON number (``bool`` is neither type).
_IS_NUMBER = np.frompyfunc(lambda v: type(v) in (float, int), 1, 1)


def _number_array(values: list[Any], shape: tuple[int, ...]) -> np.ndarray | None:
    """``values`` as float64 of ``shape`` when every entry is a JSON number of that nesting
    (``int`` or ``float``: never ``bool``, never out of float range), else None."""
    try:
        arr = np.array(values, dtype=object)
    except ValueError:  # nesting numpy cannot even lay out
        return None
    if arr.shape != shape:
        return None
    if not _IS_NUMBER(arr).all():
        return None
    try:
        return arr.astype(np.float64)
    except OverflowError:
        return None


#: One parsed member: name, 3 sizes, 16 matrix entries (row-major), phase, section, supports.
_Row = tuple[str, list[float], list[float], str | None, str | None, tuple[str, ...]]


def _parse_ours(i: int, entry: Any) -> _Row:
    name = _entry_name(i, entry)
    for key in ("size_m", "matrix_world"):
        if key not in entry:
            raise StructureFormatError(f"{_where(i, entry)}: missing field {key!r}")
    sup = entry.get("supported_by", [])
    if not isinstance(sup, list) or not all(isinstance(s, str) for s in sup):
        raise StructureFormatError(f"{_where(i, entry)}: field 'supported_by' must be a list of names")
    return (name, _numbers(i, entry, "size_m", _VEC3), _numbers(i, entry, "matrix_world", _MAT4),
            _optional_str(i, entry, "phase"), _optional_str(i, entry, "section"), tuple(sup))


def _parse_released(i: int, entry: Any) -> _Row:
    """Released rules (``server/_blender_script.py``): a box of ``dimensions`` placed by
    ``matrix_world``, falling back to ``location`` when the matrix is absent or null. Other
    keys (``bbox_world_corners``, ``rotation_euler``, ``rotation_quaternion``…) are ignored,
    as that script ignores them."""
    name = _entry_name(i, entry)
    if "dimensions" not in entry:
        # our own form's members hold size_m; only the document's "format" tells the two apart
        ours = (f" (it has our form's 'size_m': a document of our form needs \"format\": \"{FORMAT_ID}\")"
                if "size_m" in entry else "")
        raise StructureFormatError(f"{_where(i, entry)}: missing field 'dimensions'{ours}")
    size = _numbers(i, entry, "dimensions", _VEC3)
    if entry.get("matrix_world") is not None:
        mat = _numbers(i, entry, "matrix_world", _MAT4)
    elif entry.get("location") is not None:
        x, y, z = _numbers(i, entry, "location", _VEC3)
        mat = [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z, 0.0, 0.0, 0.0, 1.0]
    else:
        raise StructureFormatError(f"{_where(i, entry)}: needs 'matrix_world' or 'location'")
    return name, size, mat, None, None, ()


def _where(i: int, entry: Any) -> str:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    if not isinstance(name, str):
        return f"member {i}"
    return f"member {i} ({name!r})" if len(name) <= 80 else f"member {i} ({name[:77]!r}...)"


def _entry_name(i: int, entry: Any) -> str:
    if not isinstance(entry, Mapping):
        raise StructureFormatError(f"member {i}: expected a JSON object, got {_describe(entry)}")
    name = entry.get("name")
    if not isinstance(name, str):
        raise StructureFormatError(f"member {i}: field 'name' must be a string, got {_describe(name)}")
    return name


def _optional_str(i: int, entry: Mapping[str, Any], key: str) -> str | None:
    val = entry.get(key)
    if val is not None and not isinstance(val, str):
        raise StructureFormatError(f"{_where(i, entry)}: field {key!r} must be a string, got {_describe(val)}")
    return val


def _numbers(i: int, entry: Mapping[str, Any], key: str, shape: tuple[int, ...]) -> list[float]:
    """The numbers of field ``key``, flattened row by row; the field must have ``shape``."""
    out: list[float] = []
    try:
        _flatten(entry[key], shape, out, "")
    except _Bad as exc:
        raise StructureFormatError(f"{_where(i, entry)}: field {key!r} is invalid: {exc}") from None
    return out


def _flatten(value: Any, shape: tuple[int, ...], out: list[float], at: str) -> None:
    if not isinstance(value, list) or len(value) != shape[0]:
        want = "3 numbers [x, y, z]" if shape == _VEC3 else "a 4x4 matrix (4 rows of 4 numbers)"
        got = _describe(value) + (f" at {at}" if at else "")
        raise _Bad(f"expected {want}, got {got}" if not at else f"expected {shape[0]} numbers per row, got {got}")
    if len(shape) > 1:
        for k, row in enumerate(value):
            _flatten(row, shape[1:], out, f"{at}[{k}]")
    elif all(type(v) is float for v in value):  # the common case: JSON floats, already finite
        out.extend(value)
    else:
        out.extend(_number(v, f"{at}[{k}]") for k, v in enumerate(value))


def _number(value: Any, at: str) -> float:
    """One number of a field: a JSON number or a numeric string, finite."""
    if isinstance(value, bool):
        raise _Bad(f"true/false is not a number ({at})")
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            raise _Bad(f"an integer of {len(str(abs(value)))} digits is out of the range of a finite "
                       f"number ({at})") from None
    if isinstance(value, float):
        return value  # the JSON reader refuses non-finite literals; a caller's NaN is reported by the validator
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return number
        if _NUMBER.fullmatch(text) or text.lower().lstrip("+-") in _NON_FINITE:
            raise _Bad(f"{value!r} is not a finite number ({at})")
        raise _Bad(f"{value[:40]!r} is not a number ({at})")
    raise _Bad(f"expected a number, got {_describe(value)} ({at})")


def _describe(value: Any) -> str:
    """A JSON value's kind, as a message names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value:g}" if isinstance(value, float) or abs(value) < 10**15 else "a number"
    return type(value).__name__
