"""The files a run's fields name, made absolute so that a run means the same from any directory.

A relative path in a run file (``buildbench run --config run.yaml``) is read against the run
file's folder, as compose files, ``pyproject.toml`` and our task files read theirs; one typed on
the command line or passed from Python is read against the current directory. Either way the
resolved run holds absolute paths, so the ``run.yaml`` a run folder keeps, and ``--resume`` from
elsewhere, name the same files.

Which values are paths is declared once per field: :data:`FIELD_PATHS` for the run's own fields,
``OptionSpec.path`` for options (see :class:`~buildbench.harness.options.OptionSpec`). A model spec
(``--model python:FILE.py:fn``, a judge option) is no path field: it is the key of every recorded
call (`buildbench.llm.cache`), so it stays as written and a recording replays from any folder or
machine; its file is read against the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: How each run field names files: ``input`` (must exist), ``output`` (written) or ``callable``
#: (``FILE.py:name`` or ``PREFIX:FILE.py:name``; a ``package.module:name`` names no file).
FIELD_PATHS = {"tasks": "input", "replay": "input", "record": "output", "agent": "callable"}


def _names_file(source: str, suffix: str) -> bool:
    # The rule load_callable and load_profile apply: a separator or the file's suffix.
    return "/" in source or "\\" in source or source.endswith(suffix)


def _absolute(value: str, base: Path) -> Path:
    # Absolute but not resolved: a link keeps the name the user gave it (the file it names is judged by
    # that name, e.g. its suffix, and an error line names what the user typed).
    path = Path(value).expanduser()
    return Path(os.path.abspath(path if path.is_absolute() else base / path))


def resolve_value(value: Any, rule: str, base: Path) -> tuple[Any, Path | None]:
    """``value`` with the file it names under ``rule`` read against ``base`` and made absolute,
    and that file when it must exist (None otherwise). Values that are not strings, or name no
    file under ``rule``, come back unchanged."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip() or value.strip().lower() == "none" or not rule:
        return value, None  # ``none`` is how an option is unset
    if rule in ("input", "output"):
        path = _absolute(value, base)
        return str(path), path if rule == "input" else None
    if rule.startswith("."):  # a name, or a file recognised by its suffix
        if not _names_file(value, rule):
            return value, None
        path = _absolute(value, base)
        return str(path), path
    head, sep, attr = value.rpartition(":")
    prefix, colon, source = head.rpartition(":")
    if not sep or not source or not _names_file(source, ".py"):
        return value, None
    path = _absolute(source, base)
    return f"{prefix}{colon}{path}:{attr}", path


def absolute_fields(values: Mapping[str, Any], base: Path,
                    option_paths: Mapping[str, str]) -> tuple[dict[str, Any], list[tuple[str, Path]]]:
    """``values`` (run fields, ``options`` a mapping) with every path read against ``base``, and the
    ``(key, path)`` of each file that must exist (``options.NAME`` for an option).
    ``option_paths`` maps option names to their ``OptionSpec.path``."""
    out = dict(values)
    needed: list[tuple[str, Path]] = []
    for key, rule in FIELD_PATHS.items():
        if key in out:
            out[key], path = resolve_value(out[key], rule, base)
            if path is not None:
                needed.append((key, path))
    options = out.get("options")
    if isinstance(options, Mapping):
        resolved = {}
        for name, value in options.items():
            resolved[name], path = resolve_value(value, option_paths.get(name, ""), base)
            if path is not None:
                needed.append((f"options.{name}", path))
        out["options"] = resolved
    return out, needed


def option_paths(specs: Iterable[Any]) -> dict[str, str]:
    """Option name -> ``OptionSpec.path`` of the options that name files."""
    return {spec.name: spec.path for spec in specs if spec.path}
