"""Exceptions the harness raises for user-facing problems.

Every ``BuildbenchError`` carries a message written for the person at the terminal; the CLI
prints it as one line instead of a traceback.
"""

from __future__ import annotations


class BuildbenchError(Exception):
    """A problem the user can fix: bad config, unknown name, unreadable file."""


class ConfigError(BuildbenchError):
    """A config field or CLI option is malformed or out of range."""


class UnknownNameError(BuildbenchError):
    """A suite, agent, protocol or task name that is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        shown = ", ".join(sorted(known)) or "(none)"
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {shown}")
        self.kind, self.name, self.known = kind, name, known
