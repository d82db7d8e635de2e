"""The statements of a STEP (ISO 10303-21) file as text, and the canonical form of their reals.

The diff compares files statement by statement before it compares any element (see
:mod:`.diff`), and content hashes read each entity's text with its reals rounded the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

from buildbench.inputs import read_bytes

from .errors import ModelError

#: A STEP real (reals always have a decimal point; entity ids and integers never do).
REAL = re.compile(r"(?<![\w.])-?\d+\.\d*(?:E[-+]?\d+)?")


def statements(path: Path, data: bytes | None = None) -> frozenset[str]:
    """The entity statements of a STEP file, one string each (comments left out).

    Split at every ``;`` outside a string, so statements sharing a line, wrapped over several
    lines or next to a comment each come out whole, starting with their ``#id=``: a statement
    the diff could not name by its id would change nothing it compares.
    """
    text = (read_bytes(path) if data is None else data).decode("latin-1").replace("\r\n", "\n")
    start, end = text.find("DATA;"), text.rfind("ENDSEC;")
    if start >= 0 and end < start:
        # IfcOpenShell reads such a file up to where it stops, silently leaving the rest out
        raise ModelError(f"{path}: the DATA section never ends (no ENDSEC;): the file is cut short")
    body = text[start + 5:end]
    if "/*" in body:
        body = _COMMENT_OR_STRING.sub(_drop_comment, body)
    out: list[str] = []
    pending = ""
    for part in body.split(";"):
        # A string holds an even number of quotes ('' stands for one), so a part with an odd
        # count was cut at a ';' inside a string: it continues in the next part.
        part = pending + part
        if part.count("'") % 2:
            pending = part + ";"
            continue
        pending = ""
        # Some writers put a space after "#id="; dropping it keeps their statements comparable.
        statement = part.strip().replace("= ", "=", 1)
        if statement:
            out.append(statement)
    return frozenset(out)


#: A STEP comment or string; strings are matched so a ``/*`` inside one is not taken for a comment.
_COMMENT_OR_STRING = re.compile(r"'(?:[^']|'')*'|/\*.*?\*/", re.DOTALL)


def _drop_comment(match: re.Match[str]) -> str:
    found = match.group(0)
    return found if found.startswith("'") else " "


def statement_id(statement: str) -> int | None:
    """The entity id of a ``#id=...`` statement (None for anything else)."""
    head = statement.split("=", 1)[0].strip()
    return int(head[1:]) if head[1:].isdigit() else None


def normalise_statement(statement: str) -> str:
    """A statement with reals rounded to 7 significant digits and spaces dropped.

    Files rewritten by another writer differ in float formatting only
    (``0.00999999999999997`` vs ``0.009999999999999972``); this makes them equal.
    """
    return REAL.sub(round_real, "".join(statement.split()))


#: Reals smaller than this are zero: significant digits alone would keep -0. and the float noise
#: of a rotation (cos 90° = 6.1e-17) apart from 0., and make the element they shape "modified".
ZERO = 1e-9


def round_real(match: re.Match[str]) -> str:
    """A real rounded to seven significant digits; zero below :data:`ZERO`."""
    value = float(match.group(0))
    return "0" if abs(value) < ZERO else f"{value:.7g}"
