"""Checking a machine document (``Machine.to_json``'s form) before it becomes a ``Machine``.

A document may come from another tool or a hand edit, so every field is checked for what
``to_json`` writes: poses of 3 finite numbers and a proper rotation, block types of the
catalogue, unique ids, faces the block types have, references to blocks the document holds
(or recorded in ``detached`` as removed), a timed control sequence. A violation is one
``ValueError`` naming the block (index and id) and the field; the first one found is named.
Rotations rounded when written (6 decimals) are snapped to the nearest rotation by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, TypeGuard

import numpy as np

from .catalogue import MAX_COORDINATE, Catalogue

#: Largest ``|RᵀR − I|`` of a stored rotation that rounding explains (6 decimals give ~1e-6);
#: beyond it the matrix is scaled, sheared or no rotation at all.
ROTATION_TOLERANCE = 1e-3


def check_document(raw: Mapping[str, Any], catalogue: Catalogue) -> None:
    """Raise ``ValueError`` naming the first field of ``raw`` a machine cannot be built from."""
    blocks = raw.get("blocks", [])
    if not isinstance(blocks, list):
        raise ValueError(f'"blocks" must be a list, got {_kind(blocks)}')
    ids: dict[str, int] = {}
    for i, entry in enumerate(blocks):
        if not isinstance(entry, Mapping):
            raise ValueError(f"block {i}: expected an object, got {_kind(entry)}")
        bid = entry.get("id")
        if isinstance(bid, bool) or not isinstance(bid, str | int) or not str(bid).strip():
            raise ValueError(f"block {i}: field 'id' must be a non-empty string, got {_kind(bid)}")
        if str(bid) in ids:
            raise ValueError(f"block {i}: id {str(bid)!r} is already block {ids[str(bid)]}'s (ids must be unique)")
        ids[str(bid)] = i
    types: dict[str, str] = {}
    for i, entry in enumerate(blocks):
        where = f"block {i} ({str(entry['id'])!r})"
        kind = entry.get("type")
        if not isinstance(kind, str) or kind not in catalogue.specs:
            shown = repr(kind[:40]) if isinstance(kind, str) else _kind(kind)
            raise ValueError(f"{where}: field 'type' is {shown}, not a block type "
                             f"({', '.join(sorted(catalogue.specs))})")
        types[str(entry["id"])] = kind
    for i, entry in enumerate(blocks):
        _check_block(f"block {i} ({str(entry['id'])!r})", entry, types, catalogue)
    _check_machine_fields(raw)


def _check_block(where: str, entry: Mapping[str, Any], types: Mapping[str, str], catalogue: Catalogue) -> None:
    spec = catalogue.specs[entry["type"]]
    _coordinates(where, entry, "position_virtual")
    rot = np.array(_matrix(where, entry, "rotation_virtual"))
    err = float(np.abs(rot.T @ rot - np.eye(3)).max())
    if err > ROTATION_TOLERANCE or np.linalg.det(rot) < 0:
        what = "mirrored (determinant < 0)" if np.linalg.det(rot) < 0 else f"|RᵀR − I| = {err:.3g}"
        raise ValueError(f"{where}: field 'rotation_virtual' is not a rotation: {what}")
    detached = {} if entry.get("detached") is None else entry["detached"]
    if not isinstance(detached, Mapping):
        raise ValueError(f"{where}: field 'detached' must be an object, got {_kind(detached)}")
    for key, value in detached.items():
        if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str)
                or not _is_vector(value[1], 3)):
            raise ValueError(f"{where}: field 'detached' entry {key!r} must be [type name, 3 numbers]")

    def ref(field: str, value: Any, *, ends: bool) -> None:
        if not isinstance(value, Mapping) or not isinstance(value.get("block"), str | int) \
                or isinstance(value.get("block"), bool) or not isinstance(value.get("face"), str):
            raise ValueError(f"{where}: field {field!r} must be {{\"block\": id, \"face\": label}}, got {_kind(value)}")
        other, face = str(value["block"]), value["face"]
        if other not in types:
            if ends:
                return  # a removed base or end: the released library leaves such references
            raise ValueError(f"{where}: field {field!r} names block {other!r}, which the machine does not hold")
        labels = {f.label for f in catalogue.specs[types[other]].faces}
        if face not in labels and not (face == "" and not ends):
            raise ValueError(f"{where}: field {field!r}: a {types[other]} has no face {face!r}"
                             f" (faces: {', '.join(sorted(labels)) or 'none'})")

    if entry.get("attached_to") is not None:
        ref("attached_to", entry["attached_to"], ends=True)
    links = {} if entry.get("links") is None else entry["links"]
    if not isinstance(links, Mapping):
        raise ValueError(f"{where}: field 'links' must be an object of face: {{block, face}}, got {_kind(links)}")
    own = {f.label for f in spec.faces}
    for label, value in links.items():
        if label not in own:
            raise ValueError(f"{where}: field 'links' names face {label!r}, which a {spec.name} does not have")
        ref(f"links.{label}", value, ends=False)
    ends = entry.get("ends")
    if spec.kind == "connection":
        if not isinstance(ends, list) or len(ends) != 2:
            raise ValueError(f"{where}: a {spec.name} needs field 'ends': the 2 faces it joins, got {_describe(ends)}")
        for k, value in enumerate(ends):
            ref(f"ends[{k}]", value, ends=True)
        if entry.get("span") is not None:
            _coordinates(where, entry, "span")
    elif ends is not None or entry.get("span") is not None:
        raise ValueError(f"{where}: a {spec.name} is no connector: fields 'ends' and 'span' must be null")
    for key in ("note", "group"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise ValueError(f"{where}: field {key!r} must be a string or null, got {_kind(entry[key])}")
    if not isinstance(entry.get("flipped", False), bool):
        raise ValueError(f"{where}: field 'flipped' must be true or false, got {_kind(entry['flipped'])}")
    keys = {} if entry.get("keys") is None else entry["keys"]
    if not isinstance(keys, Mapping) or not all(
            isinstance(v, list) and all(isinstance(k, str) for k in v) for v in keys.values()):
        raise ValueError(f"{where}: field 'keys' must map each action to a list of key names")
    unknown = sorted(set(keys) - set(spec.actions))
    if unknown:
        raise ValueError(f"{where}: field 'keys' names {', '.join(map(repr, unknown))}, not an action of a "
                         f"{spec.name} ({', '.join(spec.actions) or 'it has none'})")


def _check_machine_fields(raw: Mapping[str, Any]) -> None:
    for key in ("started", "is_assembly"):
        if not isinstance(raw.get(key, False), bool):
            raise ValueError(f"field {key!r} must be true or false, got {_kind(raw[key])}")
    next_id = raw.get("next_id", 1)
    if isinstance(next_id, bool) or not isinstance(next_id, int) or next_id < 1:
        raise ValueError(f"field 'next_id' must be a whole number of at least 1, got {next_id!r}")
    plain = [int(b["id"]) for b in raw.get("blocks", []) if str(b["id"]).isdigit()]
    if plain and next_id <= max(plain):
        raise ValueError(f"field 'next_id' is {next_id}, but block {max(plain)} exists: the next block "
                         "added would take an id in use")
    controls = raw.get("control_sequence", [])
    if not isinstance(controls, list):
        raise ValueError(f"field 'control_sequence' must be a list, got {_kind(controls)}")
    for k, entry in enumerate(controls):
        where = f"control_sequence entry {k}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise ValueError(f"{where}: expected {{\"time\", \"key\", \"hold_for\"}} with a key name")
        for field in ("time", "hold_for"):
            value = entry.get(field)
            if not _is_number(value) or value < 0:
                raise ValueError(f"{where}: field {field!r} must be a finite number of seconds >= 0, got {value!r}")
    subs = raw.get("substructures", [])
    if not isinstance(subs, list):
        raise ValueError(f"field 'substructures' must be a list, got {_kind(subs)}")
    for k, sub in enumerate(subs):
        if (not isinstance(sub, Mapping) or not isinstance(sub.get("letter"), str) or "machine_id" not in sub
                or not _is_vector(sub.get("shift"), 3) or not _is_vector(sub.get("rotation"), 3)):
            raise ValueError(f"substructures entry {k}: expected {{\"letter\", \"machine_id\", \"shift\": 3 numbers, "
                             "\"rotation\": 3 numbers}")
    history = raw.get("history", [])
    if not isinstance(history, list):
        raise ValueError(f"field 'history' must be a list, got {_kind(history)}")
    for k, entry in enumerate(history):
        if (not isinstance(entry, Mapping) or not isinstance(entry.get("op"), str)
                or not isinstance(entry.get("params", {}), Mapping) or not isinstance(entry.get("result", ""), str)):
            raise ValueError(f"history entry {k}: expected {{\"op\": name, \"params\": object, \"result\": text}}")


def _is_number(value: Any) -> TypeGuard[float]:
    return type(value) in (int, float) and math.isfinite(value)


def _is_vector(value: Any, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(map(_is_number, value))


def _numbers(where: str, entry: Mapping[str, Any], key: str, n: int) -> list[float]:
    value = entry.get(key)
    if not isinstance(value, list) or not _is_vector(value, n):
        raise ValueError(f"{where}: field {key!r} must be {n} finite numbers, got {_describe(value)}")
    return [float(v) for v in value]


def _coordinates(where: str, entry: Mapping[str, Any], key: str) -> None:
    """A point the construction library could have made: 3 numbers within its ±MAX_COORDINATE."""
    far = max(map(abs, _numbers(where, entry, key, 3)))
    if far > MAX_COORDINATE:
        raise ValueError(f"{where}: field {key!r} reaches {far:g} units, beyond the ±{MAX_COORDINATE:g} "
                         "a machine's blocks can be placed at")


def _matrix(where: str, entry: Mapping[str, Any], key: str) -> list[list[float]]:
    value = entry.get(key)
    if not isinstance(value, list) or len(value) != 3 or not all(_is_vector(row, 3) for row in value):
        raise ValueError(f"{where}: field {key!r} must be a 3x3 rotation matrix (3 rows of 3 finite numbers), "
                         f"got {_describe(value)}")
    return [[float(v) for v in row] for row in value]


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return {"list": "a list", "dict": "an object", "str": "a string"}.get(type(value).__name__, type(value).__name__)


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return f"a list of {len(value)}: {str(value)[:60]}"
    return _kind(value)
