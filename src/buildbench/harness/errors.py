"""Exceptions the harness raises for user-facing problems.

Every ``BuildbenchError`` carries a message written for the person at the terminal; the CLI
prints it as one line instead of a traceback.
"""

from __future__ import annotations

# Defined a layer down, so that lower layers raise them without importing the harness.
from buildbench.errors import BuildbenchError, ConfigError

__all__ = ["AgentFailure", "BuildbenchError", "ConfigError", "UnknownNameError"]


class AgentFailure(Exception):
    """What the agent produced cannot be accepted as it stands: over a limit, malformed, missing,
    or refused by a validator.

    Raised by an env, a protocol or a scorer (in any process: it pickles), it makes the episode a
    *scored failure* (status ``failed``) with ``reason`` as its error and the suite's failing values
    (``Suite.failure_metrics``) as its metrics, counted in every mean. Only faults of the
    infrastructure (an endpoint down, a bug or a crash of our code) leave an episode unscored; an
    agent must never be able to choose which of its episodes count.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnknownNameError(BuildbenchError):
    """A suite, agent, protocol or task name that is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        shown = ", ".join(sorted(known)) or "(none)"
        super().__init__(f"unknown {kind} {name!r}; known {kind}s: {shown}")
        self.kind, self.name, self.known = kind, name, known
