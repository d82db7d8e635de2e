"""JSON from untrusted places (agent replies, user files), parsed with limits.

``json.loads`` accepts ``NaN`` and ``Infinity``, fails on an integer of more than 4,300 digits
with a bare ``ValueError``, recurses once per nesting level (a reply of
100,000 ``[`` ends in ``RecursionError``) and, given bytes, fails with a bare
``UnicodeDecodeError``. :func:`parse_json` refuses all four with a ``json.JSONDecodeError``
subclass, so every existing ``except json.JSONDecodeError`` handler reports them as the
one-line input errors they are. It imports only :mod:`buildbench.limits` and :mod:`buildbench.inputs`, so every layer can use it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np

from buildbench.inputs import read_bytes
from buildbench.limits import limit

__all__ = ["JSONInputError", "parse_json", "read_json_file"]

#: Longest integer literal read: Python's default conversion limit (a 5·10⁶-digit "number"
#: would otherwise cost seconds of CPU, or a bare ValueError).
_MAX_INT_DIGITS = 4300
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

    def integer(literal: str) -> int:
        # int() refuses past sys.get_int_max_str_digits() with a bare ValueError (a 500 in a
        # server): refused here as the input error it is, with its position.
        digits = len(literal.lstrip("-"))
        if digits > _MAX_INT_DIGITS:
            raise JSONInputError(f"an integer of {digits} digits is over the {_MAX_INT_DIGITS}-digit limit",
                                 text, max(text.find(literal[:64]), 0))
        return int(literal)

    return json.loads(text, parse_constant=refuse, parse_float=finite, parse_int=integer)


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
    """Read and parse a JSON file through the bounded reader (:mod:`buildbench.inputs`),
    refusing what `parse_json` refuses.

    Raises:
        OSError: The file cannot be read (missing, permissions), or an
            ``InputFileError``: not a regular file, over ``max_bytes``.
        json.JSONDecodeError: Malformed or refused content (message says what and where).
    """
    return parse_json(read_bytes(path, max_bytes=max_bytes, limit_name="json_file_bytes"), max_depth=max_depth)
