"""A stored episode's outcome read back as its suite's typed record, for the readers of a run
(reports, demos, the viewer).

The store keeps ``Env.outcome()`` as JSON. An episode whose env never gave one (the env or the
protocol raised, its process died, or what the agent left was itself refused) stores ``{}``:
that episode *has no outcome*, and its readers must say so. Reading ``{}`` into the record would
give every field its default, values nobody measured (a BIM-Edit episode "executed", a DreamHouse
one condition "frame", a SceneReVis one zero turns).

A stored outcome is checked as untrusted input (:meth:`Record.from_data`: every value of its
field's type), since a run folder can be edited or come from elsewhere; one that does not read
is an :class:`OutcomeReadError` naming the episode, never a traceback or a guessed value.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from .episode import Episode
from .errors import BuildbenchError
from .outcome import OutcomeRecord

__all__ = ["OutcomeReadError", "episode_outcome"]

R = TypeVar("R", bound=OutcomeRecord)


class OutcomeReadError(BuildbenchError):
    """A stored outcome that is not its suite's outcome record (damaged, edited or foreign)."""

    def in_run(self, run_dir: str | Path) -> OutcomeReadError:
        """The same error with the run folder named first (for a reader that knows it)."""
        return OutcomeReadError(f"{run_dir}: {self}")


def episode_outcome(episode: Episode, record: type[R]) -> R | None:
    """``episode``'s stored outcome as ``record``, or None when the episode has none (``{}``).

    Raises:
        OutcomeReadError: The stored outcome is not a ``record`` (one line: the episode, then the
            field and what it expected).
    """
    if isinstance(episode.outcome, dict) and not episode.outcome:
        return None
    try:
        return record.from_data(episode.outcome)
    except ValueError as exc:
        raise OutcomeReadError(f"episode {episode.task_id!r} sample {episode.sample}: stored outcome "
                               f"unreadable: {exc}") from None
