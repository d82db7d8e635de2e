"""The suite registry read from entry points, without importing any suite or the harness.

Kept apart from :mod:`.suite` so that listing the suites (``buildbench --help``) loads
nothing but :mod:`importlib.metadata`.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from importlib.metadata import entry_points

from .errors import UnknownNameError

#: The entry-point group every suite registers in, built-in or third-party alike.
ENTRY_POINT_GROUP = "buildbench.suites"


def suite_names() -> list[str]:
    """Names of every registered suite, without importing them."""
    return sorted(_registered(_metadata_path()))


def suite_target(name: str) -> str:
    """The import string (``module:attribute``) a suite is registered under."""
    target = _registered(_metadata_path()).get(name)
    if target is None:
        raise UnknownNameError("suite", name, suite_names())
    return target


def _metadata_path() -> tuple[str, ...]:
    """``sys.path`` less its folders that hold no distribution's metadata: what decides the entry points.

    The registry's cache key. A forkserver's children share the server's memory, registry read
    (`buildbench.harness.forkserver_warm`), but not its ``sys.path``: theirs starts with the
    parent's script folder, the server's with ``''``. Neither holds metadata, so both give the same
    key. A path entry that is not a readable folder (a zip, a missing folder) stays in the key.
    """
    return tuple(entry for entry in sys.path if _may_hold_metadata(entry))


#: Per folder: its modification time when last listed, and whether it held metadata then (a folder's
#: time changes when an entry is added or removed: an install, a plugin written into it).
_listed: dict[str, tuple[int, bool]] = {}


def _may_hold_metadata(entry: str) -> bool:
    folder = entry or "."
    try:
        changed = os.stat(folder).st_mtime_ns
        known = _listed.get(folder)
        if known is not None and known[0] == changed:
            return known[1]
        with os.scandir(folder) as children:
            held = any(child.name.lower().endswith((".dist-info", ".egg-info")) for child in children)
    except OSError:  # not a folder we can list (a zip, gone): it decides as itself
        return True
    _listed[folder] = (changed, held)
    return held


@lru_cache(maxsize=4)
def _registered(path: tuple[str, ...]) -> dict[str, str]:
    """Name -> target of each suite found on ``path`` (the first distribution's, as
    ``entry_points`` orders them). Read once per path (`_metadata_path`): reading means opening
    every installed distribution's metadata (about 10-28 ms), and every episode played apart and
    every isolated scoring asks; a folder with metadata put on the path (a plugin) is a new key
    and is read."""
    out: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep.value)
    return out
