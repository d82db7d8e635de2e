"""The suite registry read from entry points, without importing any suite or the harness.

Kept apart from :mod:`.suite` so that listing the suites (``buildbench --help``) loads
nothing but :mod:`importlib.metadata`.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from .errors import UnknownNameError

#: The entry-point group every suite registers in, built-in or third-party alike.
ENTRY_POINT_GROUP = "buildbench.suites"


def suite_names() -> list[str]:
    """Names of every registered suite, without importing them."""
    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def suite_target(name: str) -> str:
    """The import string (``module:attribute``) a suite is registered under."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.value
    raise UnknownNameError("suite", name, suite_names())
