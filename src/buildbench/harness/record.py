"""Typed values crossing the env boundary: dataclasses that write and read JSON dicts.

A suite's episode outcome (:class:`~buildbench.harness.outcome.OutcomeRecord`), the structured
``state`` of its observations and the structured ``data`` of its actions are dataclasses that
inherit :class:`Record`, so each key's name, type and unit is written down once:

* the dataclass field order is the key order of the dict;
* a field whose metadata has ``optional=True`` (:data:`OPTIONAL`, :func:`unit`) is left out of the
  dict while it is None (keys that are only there sometimes);
* ``FORMAT``, when set, is written first under ``"format"`` and checked on reading;
* a field named ``extra`` keeps the keys a dict has that the dataclass does not know, and writes
  them back, so older or newer stored values round-trip without loss;
* :meth:`Record.from_dict` reads a stored value as it is (no type checks: the store wrote it);
  :meth:`Record.from_data` reads untrusted input (a scripted agent's action): every value is
  checked against its field's annotation and bad input is one ``ValueError`` line naming the field;
* :meth:`Record.schema` describes the fields JSON-schema-like, with each field's description
  from the class docstring's ``Attributes:`` section and its unit from the field metadata or the
  name's suffix (``_m`` metres, ``_s`` seconds, ``_deg`` degrees…).

A field annotated with another Record (or a list or dict of them) is written as that record's
dict and read back as the record.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import types
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, Self, Union, get_args, get_origin, get_type_hints

#: Field metadata for keys that are absent from the dict while the value is None.
OPTIONAL: Mapping[str, Any] = {"optional": True}

#: Units read from a field name's suffix when its metadata names none.
NAME_UNITS = {"_m": "m", "_m2": "m^2", "_m3": "m^3", "_s": "s", "_ms": "ms", "_deg": "deg", "_rad": "rad",
              "_kg": "kg", "_n": "N", "_px": "px"}


def unit(symbol: str, *, optional: bool = False) -> Mapping[str, Any]:
    """Field metadata naming a field's unit (``field(metadata=unit("m"))``), optionally with
    :data:`OPTIONAL`'s meaning."""
    return {"unit": symbol, "optional": optional}


class Record:
    """Mixin for a dataclass that crosses the env boundary as a JSON dict (see the module docstring)."""

    #: The ``"format"`` tag written first in the dict (None: no tag).
    FORMAT: ClassVar[str | None] = None
    #: The suite, for error messages.
    SUITE: ClassVar[str] = "?"
    #: What the record is (``outcome``, ``state``, ``action``), for error messages.
    KIND: ClassVar[str] = "record"

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON dict, keys in field order."""
        out: dict[str, Any] = {"format": self.FORMAT} if self.FORMAT is not None else {}
        nested = _nested_fields(type(self))
        for f in _fields(self):
            value = getattr(self, f.name)
            if value is None and f.metadata.get("optional"):
                continue
            out[f.name] = _plain(value) if f.name in nested else value
        out.update(getattr(self, "extra", None) or {})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read a stored dict as it is (values are not checked).

        Raises:
            ValueError: ``data`` is not a mapping, has another ``format`` tag, or lacks a key
                that has no default (the message names the suite and the key).
        """
        return cls._read(data, check=False)

    @classmethod
    def from_data(cls, data: Any) -> Self:
        """Read untrusted input: every value must have its field's type (numbers finite), and a
        key the record does not know is refused unless the record keeps ``extra`` keys.

        Raises:
            ValueError: One line naming the suite, the kind of record and the field, e.g.
                ``example action: blocks[2].center[0]: expected a number, got str``.
        """
        return cls._read(data, check=True)

    @classmethod
    def _read(cls, data: Any, *, check: bool, path: str = "") -> Self:
        where = f"{cls.SUITE} {cls.KIND}"
        at = f"{path}: " if path else ""
        if not isinstance(data, Mapping):
            expected = "an object" if path else "a JSON object"
            raise ValueError(f"{where}: {at}expected {expected}, got {type(data).__name__}")
        if cls.FORMAT is not None and data.get("format") != cls.FORMAT:
            raise ValueError(f"{where}: {at}format {data.get('format')!r}, expected {cls.FORMAT!r}")
        fields = _fields(cls)
        known = {f.name for f in fields}
        keeps_extra = _keeps_extra(cls)
        if check and not keeps_extra:
            unknown = [k for k in data if k not in known and not (k == "format" and cls.FORMAT is not None)]
            if unknown:
                names = ", ".join(f.name for f in fields)
                raise ValueError(f"{where}: {_join(path, _key(unknown[0]))}: unknown field; fields: {names}")
        hints = _hints(cls)
        nested = _nested_fields(cls)
        kwargs: dict[str, Any] = {}
        for f in fields:
            if f.name in data:
                value = data[f.name]
                if check or f.name in nested:
                    value = _convert(hints[f.name], value, _join(path, f.name), where, check=check)
                kwargs[f.name] = value
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{where}: missing key {_join(path, f.name)!r}")
        if keeps_extra:
            kwargs["extra"] = {k: v for k, v in data.items() if k not in known and k not in ("format", "extra")}
        return cls(**kwargs)

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The record's fields as a JSON-schema-like dict: ``type``, ``description`` and ``unit``
        per property; ``required`` lists the keys without a default (always present)."""
        docs = field_docs(cls)
        hints = _hints(cls)
        properties: dict[str, Any] = {}
        for f in _fields(cls):
            prop = _type_schema(hints[f.name])
            if f.name in docs:
                prop["description"] = docs[f.name]
            symbol = f.metadata.get("unit") or _name_unit(f.name)
            if symbol:
                prop["unit"] = symbol
            if f.metadata.get("optional"):
                prop["optional"] = True
            properties[f.name] = prop
        out: dict[str, Any] = {"title": cls.__name__, "type": "object"}
        summary = _summary(cls)
        if summary:
            out["description"] = summary
        out["properties"] = properties
        out["required"] = [f.name for f in _fields(cls)
                           if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        return out


def field_docs(cls: type) -> dict[str, str]:
    """Each field's description from the ``Attributes:`` section of the class docstring
    (Google style: ``name: text``, continuation lines indented deeper), whitespace collapsed."""
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    docs: dict[str, list[str]] = {}
    inside, current = False, ""
    for line in lines:
        if line.strip() == "Attributes:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line[0].isspace():
            break  # the next section
        entry = re.match(r"^ {4}(\w+):\s*(.*)$", line)
        if entry:
            current = entry.group(1)
            docs[current] = [entry.group(2)]
        elif current and line.strip():
            docs[current].append(line.strip())
    return {name: " ".join(" ".join(parts).split()) for name, parts in docs.items()}


def _summary(cls: type) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    first = doc.split("\n\n", 1)[0]
    return " ".join(first.split())


def _name_unit(name: str) -> str | None:
    for suffix in sorted(NAME_UNITS, key=len, reverse=True):
        if name.endswith(suffix):
            return NAME_UNITS[suffix]
    return None


def _fields(obj: Any) -> list[dataclasses.Field[Any]]:
    """The record's own fields (``extra`` is written by :meth:`Record.to_dict` last)."""
    return [f for f in dataclasses.fields(obj) if f.name != "extra"]


def _keeps_extra(cls: type) -> bool:
    return any(f.name == "extra" for f in dataclasses.fields(cls))


#: Resolved field annotations and nested-record fields per record class (classes live for the process).
_HINTS: dict[type, dict[str, Any]] = {}
_NESTED: dict[type, frozenset[str]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]


def _nested_fields(cls: type) -> frozenset[str]:
    """Fields whose annotation holds a Record (written and read through it)."""
    if cls not in _NESTED:
        hints = _hints(cls)
        _NESTED[cls] = frozenset(f.name for f in _fields(cls) if _holds_record(hints[f.name]))
    return _NESTED[cls]


def _holds_record(tp: Any) -> bool:
    if isinstance(tp, type) and issubclass(tp, Record):
        return True
    return any(_holds_record(arg) for arg in get_args(tp))


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _key(key: Any) -> str:
    """A key of untrusted input as it may appear in a one-line message (quoted and cut when odd)."""
    text = str(key)
    return text if re.fullmatch(r"[\w-]{1,64}", text) else repr(text[:64])


_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
               type(None): "null"}


def _convert(tp: Any, value: Any, path: str, where: str, *, check: bool) -> Any:
    """``value`` read as ``tp``: checked when ``check``, nested records built either way."""
    def fail(expected: str) -> ValueError:
        return ValueError(f"{where}: {path}: expected {expected}, got {_kind(value)}")

    origin = get_origin(tp)
    if tp is Any:
        return value
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp._read(value, check=check, path=path)
    if origin in (Union, types.UnionType):
        return _convert_union(tp, value, path, where, check=check)
    if origin is Literal:
        if check and value not in get_args(tp):
            raise fail("one of " + ", ".join(repr(a) for a in get_args(tp)))
        return value
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            if check:
                raise fail("a list")
            return value
        args = get_args(tp)
        item = args[0] if args else Any
        return [_convert(item, v, f"{path}[{i}]", where, check=check) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            if check:
                raise fail("an object")
            return value
        item = get_args(tp)[1] if get_args(tp) else Any
        return {str(k): _convert(item, v, _join(path, _key(k)), where, check=check) for k, v in value.items()}
    if check:
        _check_scalar(tp, value, fail)
    return value


def _convert_union(tp: Any, value: Any, path: str, where: str, *, check: bool) -> Any:
    options = [a for a in get_args(tp) if a is not type(None)]
    if value is None and len(options) < len(get_args(tp)):
        return None
    errors: list[ValueError] = []
    for option in options:
        try:
            return _convert(option, value, path, where, check=True)
        except ValueError as exc:
            errors.append(exc)
    if not check:
        return value
    if len(options) == 1:
        raise errors[0]
    words = [_describe(a) for a in get_args(tp)]
    raise ValueError(f"{where}: {path}: expected {' or '.join(words)}, got {_kind(value)}")


def _check_scalar(tp: Any, value: Any, fail: Callable[[str], ValueError]) -> None:
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail("a number")
        if not math.isfinite(value):
            raise fail("a finite number")
    elif tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an integer")
    elif isinstance(tp, type) and not isinstance(value, tp):
        raise fail(_describe(tp))


def _describe(tp: Any) -> str:
    origin = get_origin(tp)
    if tp in _TYPE_WORDS:
        return _TYPE_WORDS[tp]
    if origin in (list, tuple):
        return "a list"
    if origin is dict or (isinstance(tp, type) and issubclass(tp, Record)):
        return "an object"
    return getattr(tp, "__name__", str(tp))


def _kind(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return type(value).__name__


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _type_schema(tp: Any) -> dict[str, Any]:
    """A JSON-schema-like description of an annotation (``{}`` for Any)."""
    origin = get_origin(tp)
    if tp in _JSON_TYPES:
        return {"type": _JSON_TYPES[tp]}
    if isinstance(tp, type) and issubclass(tp, Record):
        return tp.schema()
    if origin in (Union, types.UnionType):
        parts = [_type_schema(a) for a in get_args(tp)]
        if all(set(p) == {"type"} and isinstance(p["type"], str) for p in parts):
            return {"type": [p["type"] for p in parts]}
        return {"anyOf": parts}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin in (list, tuple):
        args = get_args(tp)
        return {"type": "array", "items": _type_schema(args[0])} if args else {"type": "array"}
    if origin is dict:
        args = get_args(tp)
        return {"type": "object", "additionalProperties": _type_schema(args[1])} if args else {"type": "object"}
    return {}
