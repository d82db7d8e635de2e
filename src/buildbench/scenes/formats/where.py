"""The line of a JSON document where an element named by a reader's error path starts.

Readers name what is wrong by its path (``[1].object_list[2].length: missing``); a person
opening the file wants the line. :func:`line_of` walks the text along that path, skipping the
values it passes with the standard decoder, and answers the line of the deepest element that
exists (the record holding a missing key).
"""

from __future__ import annotations

import json
import re

_STEP = re.compile(r"\[(\d+)\]|\[(['\"])(.*?)\2\]|\.?([A-Za-z_][\w-]*)")
_WS = re.compile(r"\s*")
_DECODER = json.JSONDecoder()


def path_steps(message: str) -> list[int | str]:
    """The element path at the start of a reader's message (up to its ``:``)."""
    head = message.split(":", 1)[0]
    steps: list[int | str] = []
    pos = 0
    while pos < len(head):
        m = _STEP.match(head, pos)
        if m is None or m.end() == pos:
            break
        index, _, quoted, name = m.groups()
        steps.append(int(index) if index is not None else (quoted if quoted is not None else name))
        pos = m.end()
    return steps if pos == len(head) else []


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _child(text: str, i: int, step: int | str) -> int | None:
    """Offset of ``step`` inside the value at ``i``, None when absent."""
    if text[i] == "[" and isinstance(step, int):
        i = _skip(text, i + 1)
        k = 0
        while text[i] != "]":
            if k == step:
                return i
            i = _skip(text, _DECODER.raw_decode(text, i)[1])
            i = _skip(text, i + 1) if text[i] == "," else i
            k += 1
        return None
    if text[i] == "{" and isinstance(step, str):
        i = _skip(text, i + 1)
        while text[i] != "}":
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip(text, _skip(text, i) + 1)  # past ':'
            if key == step:
                return i
            i = _skip(text, _DECODER.raw_decode(text, i)[1])
            i = _skip(text, i + 1) if text[i] == "," else i
        return None
    return None


def line_of(text: str, message: str) -> int | None:
    """The line where the element of ``message``'s path starts (its deepest existing
    ancestor for a missing key), None when the path or the text cannot be followed."""
    steps = path_steps(message)
    if not steps:
        return None
    try:
        i = _skip(text, 0)
        for n, step in enumerate(steps):
            if n == 0 and step == 0 and text[i] == "{":
                continue  # readers call a lone document "[0]"
            found = _child(text, i, step)
            if found is None:
                break
            i = found
    except (ValueError, IndexError):
        return None
    return text.count("\n", 0, i) + 1
