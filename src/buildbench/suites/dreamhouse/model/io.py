"""Reading structure files: our JSON and the released harness's submission JSON.

Parsing a document lives in :mod:`.parse`; ``parse_document`` and ``StructureFormatError``
are re-exported here, where they were first.
"""

from __future__ import annotations

import json
from pathlib import Path

from buildbench.inputs import read_bytes
from buildbench.jsonio import parse_json

from .parse import parse_document
from .structure import Structure, StructureFormatError

__all__ = ["StructureFormatError", "load_structure", "parse_document"]

_GZIP_MAGIC = b"\x1f\x8b"
#: Byte-order marks of the encodings JSON files are refused in (RFC 8259 §8.1: UTF-8 only);
#: Windows PowerShell 5 writes UTF-16 by default. UTF-32's first: its little-endian mark begins
#: with UTF-16's, and a UTF-32 file named UTF-16 sends its writer to the wrong setting.
_FOREIGN_BOMS = ((b"\xff\xfe\0\0", "UTF-32 little-endian"), (b"\0\0\xfe\xff", "UTF-32 big-endian"),
                 (b"\xff\xfe", "UTF-16 little-endian"), (b"\xfe\xff", "UTF-16 big-endian"))


def load_structure(path: str | Path) -> Structure:
    """Read a structure file in our JSON form or the released submission form; a
    gzip-compressed file (``house.json.gz``) is read as its content.

    Raises:
        StructureFormatError: When the file cannot be read or parsed, or an entry is malformed.
    """
    p = Path(path)
    try:
        raw = read_bytes(p, limit_name="json_file_bytes")
        if raw.startswith(_GZIP_MAGIC):
            raw = read_bytes(p, limit_name="json_file_bytes", gunzip=True)
    except OSError as exc:
        raise StructureFormatError(f"cannot read structure file {p}: {exc.strerror or exc}") from exc
    encoding = next((name for mark, name in _FOREIGN_BOMS if raw.startswith(mark)), None)
    if encoding is not None:
        raise StructureFormatError(f"{p} starts with a {encoding} byte-order mark: it is not UTF-8 text "
                                   "(JSON files must be UTF-8: save it as UTF-8)")
    try:
        # A key given twice is refused: json.loads would keep the last silently, where other
        # readers of the same file keep the first (a member's matrix_world would differ).
        data = parse_json(raw, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise StructureFormatError(f"{p} is not valid JSON: {exc}") from exc
    try:
        return parse_document(data)
    except StructureFormatError as exc:
        raise StructureFormatError(f"{p}: {exc}") from exc
