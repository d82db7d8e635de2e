"""Schema identifiers that exporters write but IfcOpenShell does not know by that name.

Revit 2017 wrote ``IFC2X3_FINAL``; other tools write the addendum or corrigendum of a
release (``IFC2X3_TC1``, ``IFC4_ADD2_TC1``) or the plain ``IFC4X3``. Each shares its
entities with a schema IfcOpenShell reads (``IFC2X3``, ``IFC4``, ``IFC4X3_ADD2``), so such a
file is read, and copied for task generation, with its header naming that schema instead.
Release candidates (``IFC4X3_RC2``) differ in entities and stay unsupported. A leading UTF-8
byte-order mark, which IfcOpenShell cannot parse, is dropped the same way.
"""

from __future__ import annotations

import codecs
import re
import shutil
from pathlib import Path

from buildbench.inputs import open_input

from .step_text import is_zipped, step_bytes

#: Header identifier (upper case) -> the schema IfcOpenShell reads it as.
SCHEMA_ALIASES = {
    "IFC2X3_FINAL": "IFC2X3",
    "IFC2X3_TC1": "IFC2X3",
    "IFC4_ADD1": "IFC4",
    "IFC4_ADD2": "IFC4",
    "IFC4_ADD2_TC1": "IFC4",
    "IFC4X3": "IFC4X3_ADD2",
    "IFC4X3_TC1": "IFC4X3_ADD2",
    "IFC4X3_ADD1": "IFC4X3_ADD2",
}

#: Suffixes of the IFC files a folder of buildings is read for (STEP text and its zip archive).
IFC_SUFFIXES = (".ifc", ".ifczip")
#: How far into a file its header is looked for (headers with long comments run to a few kB).
_HEADER_BYTES = 1 << 16
_FILE_SCHEMA = re.compile(rb"FILE_SCHEMA\s*\(\s*\(\s*'([A-Za-z0-9_ ]+)'\s*\)\s*\)")


def _head(path: str | Path) -> bytes:
    """The first :data:`_HEADER_BYTES` of the model's STEP text (an archive's model unpacked)."""
    if is_zipped(path):
        return step_bytes(path)[:_HEADER_BYTES]
    with open_input(path) as f:
        return f.read(_HEADER_BYTES)


def aliased_schema(path: str | Path) -> tuple[bytes, str] | None:
    """The header's ``FILE_SCHEMA(...)`` record and the schema to read it as, when the header
    names one of :data:`SCHEMA_ALIASES`; else None."""
    head = _head(path)
    found = _FILE_SCHEMA.search(head)
    if found is None:
        return None
    target = SCHEMA_ALIASES.get(found.group(1).decode("ascii").strip().upper())
    return None if target is None else (found.group(0), target)


def readable_text(path: str | Path) -> str | None:
    """The file's text as IfcOpenShell reads it, or None when it needs no change: an aliased
    schema identifier replaced, and a leading UTF-8 byte-order mark (which some Windows writers
    put before ``ISO-10303-21;``) dropped."""
    alias = aliased_schema(path)
    bom = _head(path).startswith(codecs.BOM_UTF8)
    if alias is None and not bom:
        return None
    data = step_bytes(path)[len(codecs.BOM_UTF8) if bom else 0:]
    if alias is not None:
        record, target = alias
        data = data.replace(record, f"FILE_SCHEMA(('{target}'))".encode(), 1)
    return data.decode("utf-8", "replace")


def readable_name(name: str) -> str:
    """The file name of a readable copy of ``name``: an archive (``.ifczip``) is copied unpacked,
    as ``<stem>.ifc``."""
    return f"{Path(name).stem}.ifc" if is_zipped(name) else Path(name).name


def copy_readable(src: str | Path, dest: str | Path) -> None:
    """Copy an IFC file, naming a schema IfcOpenShell knows where the header names an alias,
    and unpacking an archive's model (``dest`` named by :func:`readable_name`), so every later
    reader (agents' tools included) opens the copy by path as plain STEP text."""
    text = readable_text(src)
    if text is not None:
        Path(dest).write_text(text, encoding="utf-8")
    elif is_zipped(src):
        Path(dest).write_bytes(step_bytes(src))
    else:
        shutil.copyfile(src, dest)
