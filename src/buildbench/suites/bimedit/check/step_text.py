"""The statements of a STEP (ISO 10303-21) file as text, and the canonical form of their reals.

The diff compares files statement by statement before it compares any element (see
:mod:`.diff`), and content hashes read each entity's text with its reals rounded the same way.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

from buildbench.inputs import read_bytes
from buildbench.limits import limit

from .errors import ModelError

#: A STEP real (reals always have a decimal point; entity ids and integers never do).
REAL = re.compile(r"(?<![\w.])-?\d+\.\d*(?:E[-+]?\d+)?")


def statements(path: Path, data: bytes | None = None) -> frozenset[str]:
    """The entity statements of a STEP file, one string each (comments left out).

    Split at every ``;`` outside a string, so statements sharing a line, wrapped over several
    lines or next to a comment each come out whole, starting with their ``#id=``: a statement
    the diff could not name by its id would change nothing it compares.
    """
    text = step_bytes(path, data).decode("latin-1").replace("\r\n", "\n")
    start, end = text.find("DATA;"), text.rfind("ENDSEC;")
    if start >= 0 and end < start:
        # IfcOpenShell reads such a file up to where it stops, silently leaving the rest out
        raise ModelError(f"{path}: the DATA section never ends (no ENDSEC;): the file is cut short")
    body = text[start + 5:end]
    if "/*" in body or "*/" in body:
        body = _drop_comments(path, text, body, start + 5)
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


#: Suffixes IfcOpenShell opens as a zip archive holding the model (as ``ifcopenshell.guess_format``).
ZIP_SUFFIXES = (".ifczip", ".zip")


def is_zipped(path: str | Path) -> bool:
    """True for a path IfcOpenShell reads as an ``.ifczip`` archive (decided by its suffix)."""
    return Path(path).suffix.lower() in ZIP_SUFFIXES


def step_bytes(path: str | Path, data: bytes | None = None) -> bytes:
    """The STEP text of an IFC file (``data``: its bytes, already read): the file itself, or the
    model an ``.ifczip`` archive holds. Every reader of the raw text goes through here, so an
    archive is diffed and capped on its model, not on its compressed bytes.

    Raises:
        ModelError: the archive cannot be read, holds no ``.ifc`` model, or its model is larger
            unpacked than the input-file limit (a small archive must not unpack to gigabytes).
    """
    raw = read_bytes(path) if data is None else data
    if not is_zipped(path):
        return raw
    cap = limit("input_file_bytes")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            # the member IfcOpenShell opens: the first with an IFC suffix
            member = next((i for i in archive.infolist()
                           if Path(i.filename).suffix.lower() in (".ifc", ".ifcxml")), None)
            if member is None:
                raise ModelError(f"{path}: the archive holds no .ifc file")
            if Path(member.filename).suffix.lower() != ".ifc":
                raise ModelError(f"{path}: the archive's model {member.filename} is ifcXML, which is not read")
            if member.file_size > cap:
                raise ModelError(f"{path}: the archive's model {member.filename} is {member.file_size:,} bytes "
                                 f"unpacked, over the limit of {cap:,} (BUILDBENCH_LIMIT_INPUT_FILE_BYTES)")
            with archive.open(member) as fh:
                text = fh.read(cap + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise ModelError(f"{path}: not a readable IFC zip archive ({exc})") from None
    if len(text) > cap:  # the archive's directory understated the size
        raise ModelError(f"{path}: the archive's model {member.filename} is over the limit of {cap:,} bytes "
                         "unpacked (BUILDBENCH_LIMIT_INPUT_FILE_BYTES)")
    return text


#: A STEP string, a comment, or a comment mark outside both: strings are matched so a ``/*`` inside
#: one is not taken for a comment; a lone ``/*`` is one no ``*/`` closes.
_COMMENT_OR_STRING = re.compile(r"'(?:[^']|'')*'|/\*.*?\*/|/\*|\*/", re.DOTALL)


def _drop_comments(path: Path, text: str, body: str, offset: int) -> str:
    """``body`` (``text`` from ``offset``) with its comments blanked out.

    ISO 10303-21 comments do not nest: ``/* a /* b */ c */`` is a comment ending at the first
    ``*/``, and ``c */`` is then no statement. IfcOpenShell reads it so and silently leaves out
    the statement it runs into (``#1``, the project, in that example), as it leaves out the rest of
    the file after a ``/*`` no ``*/`` closes: both are refused here, naming the line, rather than
    read as a model that lacks what its author wrote.

    Raises:
        ModelError: a ``*/`` outside a comment, or a comment that never ends.
    """
    def blank(match: re.Match[str]) -> str:
        found = match.group(0)
        if found.startswith("'"):
            return found
        if found in ("/*", "*/"):
            line = text.count("\n", 0, offset + match.start()) + 1
            if found == "*/":
                raise ModelError(f"{path}: line {line}: '*/' outside a comment (a comment ends at its first '*/': "
                                 "comments do not nest in ISO 10303-21); the statement it runs into would be "
                                 "left out")
            raise ModelError(f"{path}: line {line}: a comment '/*' that no '*/' ends; the rest of the file would be "
                             "left out")
        return " "

    return _COMMENT_OR_STRING.sub(blank, body)


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
