"""JSON from untrusted places (agent replies, user files), parsed with limits.

``json.loads`` accepts ``NaN`` and ``Infinity``, fails on an integer of more than 4,300 digits
with a bare ``ValueError``, returns integers that overflow a float (``float(10**400)`` raises
``OverflowError`` in whatever reads them as a number), recurses once per nesting level (a reply
of 100,000 ``[`` ends in ``RecursionError``) and, given bytes, fails with a bare
``UnicodeDecodeError`` (and reads UTF-16 or UTF-32 text with a NUL after every letter as a
cryptic syntax error); it also keeps the last of a key given twice, silently. :func:`parse_json`
refuses all of these with a ``json.JSONDecodeError`` subclass naming the line and column, so
every existing ``except json.JSONDecodeError`` handler reports them as the one-line input errors
they are. It imports only :mod:`buildbench.limits` and :mod:`buildbench.inputs`, so every layer
can use it.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from buildbench.inputs import not_utf8, read_bytes
from buildbench.limits import limit

__all__ = ["JSONInputError", "finite_number", "parse_json", "read_json_file"]

#: Longest integer literal read: Python's default conversion limit (a 5·10⁶-digit "number"
#: would otherwise cost seconds of CPU, or a bare ValueError).
_MAX_INT_DIGITS = 4300
#: Fewest digits of an integer that can overflow a float (1.8·10³⁰⁸): shorter ones need no check.
_FLOAT_DIGITS = len(str(int(sys.float_info.max)))
#: A JSON string literal, to blank strings out when locating a refused token.
_TEXT_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
#: Digits as ``d``, exponent marks as ``e``, ``+`` kept, everything else a space (`_may_overflow`).
_NUMBER_SHAPE = bytes(ord("d") if c in b"0123456789" else ord("e") if c in b"eE" else c if c == ord("+")
                      else ord(" ") for c in range(256))
#: Byte classes for `_too_deep`: everything else is 0.
_OPEN, _CLOSE, _QUOTE, _SLASH = 1, 2, 3, 4
_KIND = bytes(_OPEN if c in b"[{" else _CLOSE if c in b"]}" else _QUOTE if c == ord('"')
               else _SLASH if c == ord("\\") else 0 for c in range(256))
_STEP = np.array([0, 1, -1, 0, 0], dtype=np.int8)  # depth change by class


class JSONInputError(json.JSONDecodeError):
    """Input that is JSON-shaped but refused: not UTF-8, nested too deeply, or a number out
    of float range (non-finite, or an integer too large)."""


def parse_json(data: str | bytes, *, max_depth: int | None = None, unique_keys: bool = False) -> Any:
    """``json.loads`` with limits: UTF-8 only, at most ``max_depth`` levels, finite numbers
    (``NaN``, ``Infinity`` and literals that overflow a float, integers included, are refused:
    every integer returned converts to a finite ``float``).

    Args:
        unique_keys: Refuse an object that gives a key twice (`_unique_keys`). For files a person
            or another tool wrote; an agent's reply keeps ``json.loads``'s reading (the last one
            wins), as the benchmarks' own parsers read it, so scores do not change.

    Raises:
        json.JSONDecodeError: Malformed JSON (as ``json.loads``), or a `JSONInputError`.
    """
    if max_depth is None:
        max_depth = limit("json_depth")
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if isinstance(data, bytes):
        # Bytes are a file's: UTF-16/32 (with a byte-order mark, or the NUL bytes of one without)
        # is named as such (`not_utf8`), not reported as a syntax error at column 2. (A raw NUL is
        # never JSON: RFC 8259 wants it escaped in strings.)
        foreign = not_utf8(raw)
        if foreign is not None:
            doc = raw[: foreign[0]].decode("utf-8", "replace")
            raise JSONInputError(f"not UTF-8 text (it {foreign[1]})", doc, len(doc))
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
        raise JSONInputError(f"{constant} is not a finite number", text, _token_at(text, constant))

    def finite(literal: str) -> float:
        value = float(literal)
        if value in (float("inf"), float("-inf")):  # 1e999 overflows to infinity
            raise JSONInputError(f"{_abridged(literal)} is out of the range of a finite number", text,
                                 _token_at(text, literal))
        return value

    def integer(literal: str) -> int:
        # int() refuses past sys.get_int_max_str_digits() with a bare ValueError (a 500 in a
        # server), and an integer past float range raises OverflowError in every consumer
        # that does arithmetic with it: both are refused here, with their position.
        digits = len(literal.lstrip("-"))
        if digits > _MAX_INT_DIGITS:
            raise JSONInputError(f"an integer of {digits} digits is over the {_MAX_INT_DIGITS}-digit limit",
                                 text, _token_at(text, literal))
        value = int(literal)
        if digits >= _FLOAT_DIGITS and not _fits_float(value):
            raise JSONInputError(f"an integer of {digits} digits is out of the range of a finite number",
                                 text, _token_at(text, literal))
        return value

    pairs = _unique_keys if unique_keys else None  # the hook costs ~10-20 % of a large house's parse
    try:
        if not _may_overflow(raw):  # json's own float() and int() then give what the checks would pass
            return json.loads(text, parse_constant=refuse, object_pairs_hook=pairs)
        return json.loads(text, parse_constant=refuse, parse_float=finite, parse_int=integer,
                          object_pairs_hook=pairs)
    except _RepeatedKey:
        key, at = _repeated_key(text)
        raise JSONInputError(f"key {key[:100]!r} given twice in one object", text, at) from None


class _RepeatedKey(Exception):
    """Raised by `_unique_keys`."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's pairs as a dict, refusing a key given twice: ``json.loads`` keeps the last one
    silently, other readers (jq, JavaScript, most JSON libraries elsewhere) keep the first or
    refuse, so a task, scene or run would not mean what the same file means to them. The YAML
    readers (run files, price files) refuse a repeated key too."""
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _RepeatedKey
    return value


#: A string (a key when a colon follows) or a bracket, for `_repeated_key`.
_KEY_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|[{}\[\]]')


def _repeated_key(text: str) -> tuple[str, int]:
    """The first key given twice in one object of ``text`` (valid JSON) and its second offset.
    Walks the tokens in Python: only a refused document pays for it."""
    keys: list[set[str] | None] = []  # per open bracket: an object's keys so far; None for a list
    for token in _KEY_OR_BRACKET.finditer(text):
        mark = token.group(0)
        if mark in "{[":
            keys.append(set() if mark == "{" else None)
        elif mark in "}]":
            keys.pop()
        elif token.group(1) and keys and keys[-1] is not None:
            key = json.loads(mark[: -len(token.group(1))])
            if key in keys[-1]:
                return key, token.start()
            keys[-1].add(key)
    return "", 0  # not reached for a document `_unique_keys` refused


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number (not true/false, not an integer too large
    for a float), else None: for checking values that did not all come through :func:`parse_json`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def json_ready(value: Any) -> Any:
    """``value`` with every number that is not finite (NaN, inf: a metric without data) as None,
    through mappings, lists and tuples; other non-integral reals (numpy's) as float. For printing
    strict JSON (``allow_nan=False``): NaN is not JSON and breaks jq, browsers and most readers."""
    if isinstance(value, Mapping):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return float(value) if math.isfinite(value) else None
    return value


def finite_float(text: str) -> float:
    """``text`` (a CSV field, a query parameter, a command-line value) read by ``float`` when it
    is a finite number.

    Raises:
        ValueError: ``is not a number`` or ``is not finite``, for the caller to put the value's
            name and place before.
    """
    try:
        value = float(text)
    except ValueError:
        raise ValueError("is not a number") from None
    if not math.isfinite(value):
        raise ValueError("is not finite")
    return value


def _may_overflow(raw: bytes) -> bool:
    """Whether ``raw`` may hold a number past float range: a run of 200 digits (an integer, or
    the 210 needed before an exponent under 100) or a positive exponent of 3 digits. Checking
    every number in Python doubled the parse of a large house, so only such a document pays."""
    shape = raw.translate(_NUMBER_SHAPE)
    return b"d" * 200 in shape or b"eddd" in shape or b"e+ddd" in shape


def _abridged(literal: str) -> str:
    """A refused number as an error message shows it: its ends when it is long (a 3·10⁶-digit
    float must not make a 6 MB message, echoed by servers and stored in reports)."""
    if len(literal) <= 40:
        return literal
    return f"{literal[:16]}…{literal[-8:]} (a number of {len(literal)} characters)"


def _fits_float(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


#: A character that continues a number or a word before (`_TOKEN_BEFORE`) or after a token.
_TOKEN_BEFORE = re.compile(r"[\w.+-]")
_TOKEN_AFTER = re.compile(r"[\w.]")
#: The rest of the token a hit lies in, to resume the search after it.
_TOKEN_REST = re.compile(r"[\w.+-]*")


def _token_at(text: str, literal: str) -> int:
    """Offset of the first ``literal`` that is a JSON token: not in a string, not part of a
    longer number. The parser reads in document order, so that is the one it refused.

    Found with ``str.find``, never a pattern built from ``literal``: the literal is the refused
    number itself, and compiling a 5·10⁶-digit one into a regular expression took 23 CPU s (a
    server spent that on every such request body). A hit inside a longer token skips that whole
    token, so the walk stays linear in the text.
    """
    blanked = _TEXT_STRING.sub(_blank, text)
    at = blanked.find(literal)
    while at >= 0:
        end = at + len(literal)
        if (at == 0 or not _TOKEN_BEFORE.match(blanked, at - 1)) and not _TOKEN_AFTER.match(blanked, end):
            return at
        rest = _TOKEN_REST.match(blanked, end)
        at = blanked.find(literal, (rest.end() if rest else end) + 1)
    return 0


def _too_deep(raw: bytes, max_depth: int) -> int | None:
    """Byte offset where nesting first passes ``max_depth`` (strings ignored), else None.

    Only the bytes that matter are visited: brackets, quotes and backslashes are picked out in
    one table lookup, and the running depth is summed over the brackets outside strings (a pass
    over a 17 MB house took seconds when every byte was blanked and summed).
    """
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return None
    kind = np.frombuffer(raw.translate(_KIND), dtype=np.uint8)
    at = np.flatnonzero(kind.view(np.bool_))  # the offsets of every bracket, quote and backslash
    kinds = kind[at]
    slash = np.flatnonzero(kinds == _SLASH)
    if slash.size:
        # An odd run of backslashes escapes the byte after it: a quote there is text.
        offsets = at[slash]
        first = np.flatnonzero(np.diff(offsets, prepend=-2) != 1)
        last = np.flatnonzero(np.diff(offsets, append=-1) != 1)
        after = slash[last[(last - first) % 2 == 0]] + 1
        after = after[after < at.size]
        kinds[after[at[after] == at[after - 1] + 1]] = 0
    # Quotes pair up (open, close, open, ...): a bracket after an odd number of them is text.
    in_string = np.cumsum(kinds == _QUOTE, dtype=np.int64) % 2 == 1
    steps = _STEP[kinds]
    steps[in_string] = 0
    over = np.flatnonzero(np.cumsum(steps, dtype=np.int64) > max_depth)
    return int(at[over[0]]) if over.size else None


def read_json_file(path: str | os.PathLike[str], *, max_bytes: int | None = None,
                   max_depth: int | None = None) -> Any:
    """Read and parse a JSON file through the bounded reader (:mod:`buildbench.inputs`),
    refusing what `parse_json` refuses, a key given twice in one object included.

    Raises:
        OSError: The file cannot be read (missing, permissions), or an
            ``InputFileError``: not a regular file, over ``max_bytes``.
        json.JSONDecodeError: Malformed or refused content (message says what and where).
    """
    return parse_json(read_bytes(path, max_bytes=max_bytes, limit_name="json_file_bytes"), max_depth=max_depth,
                      unique_keys=True)
