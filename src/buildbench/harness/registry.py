"""The suite registry read from entry points, without importing any suite or the harness.

Kept apart from :mod:`.suite` so that listing the suites (``buildbench --help``) loads
nothing but :mod:`importlib.metadata`.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from importlib.metadata import entry_points

from .errors import UnknownNameError

#: The entry-point group every suite registers in, built-in or third-party alike.
ENTRY_POINT_GROUP = "buildbench.suites"


def suite_names() -> list[str]:
    """Names of every registered suite, without importing them."""
    return sorted(_registered(tuple(sys.path)))


def suite_target(name: str) -> str:
    """The import string (``module:attribute``) a suite is registered under."""
    target = _registered(tuple(sys.path)).get(name)
    if target is None:
        raise UnknownNameError("suite", name, suite_names())
    return target


@lru_cache(maxsize=4)
def _registered(path: tuple[str, ...]) -> dict[str, str]:
    """Name -> target of each suite found on ``path`` (the first distribution's, as
    ``entry_points`` orders them). Read once per ``sys.path``: reading means opening every
    installed distribution's metadata (about 10 ms), and every episode played apart asks;
    a folder put on the path (a plugin) is a new key and is read."""
    out: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep.value)
    return out
