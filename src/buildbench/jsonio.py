"""JSON from untrusted places (agent replies, user files), parsed with limits.

``json.loads`` accepts ``NaN`` and ``Infinity``, recurses once per nesting level (a reply of
100,000 ``[`` ends in ``RecursionError``) and, given bytes, fails with a bare
``UnicodeDecodeError``. :func:`parse_json` refuses all three with a ``json.JSONDecodeError``
subclass, so every existing ``except json.JSONDecodeError`` handler reports them as the
one-line input errors they are. It imports only :mod:`buildbench.limits`, so every layer can use it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np

from buildbench.limits import limit

__all__ = ["JSONInputError", "parse_json", "read_json_file"]

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


class JSONInputError(json.JSONDecodeError):
    """Input that is JSON-shaped but refused: not UTF-8, nested too deeply, or non-finite."""


def parse_json(data: str | bytes, *, max_depth: int | None = None) -> Any:
    """``json.loads`` with limits: UTF-8 only, at most ``max_depth`` levels, finite numbers
    (``NaN``, ``Infinity`` and literals that overflow to infinity are refused).

    Raises:
        json.JSONDecodeError: Malformed JSON (as ``json.loads``), or a `JSONInputError`.
    """
    if max_depth is None:
        max_depth = limit("json_depth")
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if isinstance(data, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            doc = raw[: exc.start].decode("utf-8", "replace")
            raise JSONInputError(f"not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})", doc,
                                 len(doc)) from None
    else:
        text = data
    # Editors on Windows save UTF-8 with a byte-order mark; RFC 8259 lets a parser ignore it.
    text = text.removeprefix("\ufeff")
    depth_at = _too_deep(raw, max_depth)
    if depth_at is not None:
        doc = raw[:depth_at].decode("utf-8", "replace")
        raise JSONInputError(f"nested deeper than {max_depth} levels (BUILDBENCH_LIMIT_JSON_DEPTH)", doc, len(doc))

    def refuse(constant: str) -> Any:
        pos = text.find(constant)
        raise JSONInputError(f"{constant} is not a finite number", text, max(pos, 0))

    def finite(literal: str) -> float:
        value = float(literal)
        if value in (float("inf"), float("-inf")):  # 1e999 overflows to infinity
            pos = text.find(literal)
            raise JSONInputError(f"{literal} is out of the range of a finite number", text, max(pos, 0))
        return value

    return json.loads(text, parse_constant=refuse, parse_float=finite)


def _too_deep(raw: bytes, max_depth: int) -> int | None:
    """Byte offset where nesting first passes ``max_depth`` (strings ignored), else None."""
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return None
    blanked = _STRING.sub(lambda m: b" " * len(m.group(0)), raw)
    codes = np.frombuffer(blanked, dtype=np.uint8)
    step = (np.isin(codes, (ord("["), ord("{"))).astype(np.int32)
            - np.isin(codes, (ord("]"), ord("}"))).astype(np.int32))
    depth = np.cumsum(step)
    over = np.flatnonzero(depth > max_depth)
    return int(over[0]) if over.size else None


def read_json_file(path: str | os.PathLike[str], *, max_bytes: int | None = None,
                   max_depth: int | None = None) -> Any:
    """Read and parse a JSON file, refusing what `parse_json` refuses and files over ``max_bytes``.

    Raises:
        OSError: The file cannot be read (missing, a folder, permissions).
        json.JSONDecodeError: Malformed or refused content (message says what and where).
    """
    if max_bytes is None:
        max_bytes = limit("json_file_bytes")
    size = os.stat(path).st_size
    if size > max_bytes:
        raise JSONInputError(f"file is {size} bytes, over the {max_bytes}-byte limit "
                             "(BUILDBENCH_LIMIT_JSON_FILE_BYTES)", "", 0)
    with open(path, "rb") as f:
        return parse_json(f.read(max_bytes + 1), max_depth=max_depth)
