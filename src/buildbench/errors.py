"""The base of every user-facing error, below every layer that raises one.

Every ``BuildbenchError`` carries a message written for the person at the terminal; the CLI
prints it as one line instead of a traceback. Lower layers (``buildbench.parallel``) raise these
without importing the harness; :mod:`buildbench.harness.errors` re-exports them beside the
harness's own.
"""

from __future__ import annotations


class BuildbenchError(Exception):
    """A problem the user can fix: bad config, unknown name, unreadable file."""


class ConfigError(BuildbenchError):
    """A config field or CLI option is malformed or out of range."""
