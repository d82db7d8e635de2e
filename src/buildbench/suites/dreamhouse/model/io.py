"""Reading structure files: our JSON and the released harness's submission JSON.

Parsing a document lives in :mod:`.structure` (``Structure.from_json_dict`` needs it there);
``parse_document`` and ``StructureFormatError`` are re-exported here, where they were first.
"""

from __future__ import annotations

import json
from pathlib import Path

from buildbench.jsonio import read_json_file

from .structure import Structure, StructureFormatError, parse_document

__all__ = ["StructureFormatError", "load_structure", "parse_document"]


def load_structure(path: str | Path) -> Structure:
    """Read a structure file in our JSON form or the released submission form.

    Raises:
        StructureFormatError: When the file cannot be read or parsed, or an entry is malformed.
    """
    p = Path(path)
    try:
        data = read_json_file(p)
    except OSError as exc:
        raise StructureFormatError(f"cannot read structure file {p}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StructureFormatError(f"{p} is not valid JSON: {exc}") from exc
    try:
        return parse_document(data)
    except StructureFormatError as exc:
        raise StructureFormatError(f"{p}: {exc}") from exc
