"""A stored episode's outcome read back as its suite's typed record, for the readers of a run
(reports, demos, the viewer).

The store keeps ``Env.outcome()`` as JSON. An episode whose env never gave one (the env or the
protocol raised, its process died, or what the agent left was itself refused) stores ``{}``:
that episode *has no outcome*, and its readers must say so. Reading ``{}`` into the record would
give every field its default, values nobody measured (a BIM-Edit episode "executed", a DreamHouse
one condition "frame", a SceneReVis one zero turns).

A stored outcome is read with :meth:`Record.from_dict` (its format tag and required keys) and
each field's value is checked against the field's annotation, down to the first ``Any`` or
nested record (a run folder can be edited or come from elsewhere; the values a reader uses must
have the types it reads). The check is this module's own, not :meth:`Record.from_data`'s
pydantic validation: that copies every nested value (a DreamHouse frame: ~15 ms an outcome, a
minute for a 1200-episode report), and it refuses NaN, which a stored value may be. One that
does not read is an :class:`OutcomeReadError` naming the episode, never a traceback or a
guessed value.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from .episode import Episode
from .errors import BuildbenchError
from .outcome import OutcomeRecord
from .record import Record

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
        read = record.from_dict(episode.outcome)
        for name, tp in _fields(record).items():
            _check(getattr(read, name), tp, name, f"{record.SUITE} {record.KIND}")
    except ValueError as exc:
        raise OutcomeReadError(f"episode {episode.task_id!r} sample {episode.sample}: stored outcome "
                               f"unreadable: {exc}") from None
    return read


#: Per record class (classes live for the process): its fields but ``extra``, annotations resolved.
_FIELDS: dict[type, dict[str, Any]] = {}


def _fields(record: Any) -> dict[str, Any]:
    if record not in _FIELDS:
        hints = get_type_hints(record)
        _FIELDS[record] = {f.name: hints[f.name] for f in dataclasses.fields(record) if f.name != "extra"}
    return _FIELDS[record]


def _check(value: Any, tp: Any, path: str, where: str) -> None:
    """Raise ValueError (``where: path: expected …, got …``) unless ``value`` has the type ``tp``."""
    if not _fits(value, tp, path, where):
        raise ValueError(f"{where}: {path}: expected {_word(tp)}, got {type(value).__name__}")


def _fits(value: Any, tp: Any, path: str, where: str) -> bool:
    origin = get_origin(tp)
    if tp is Any:
        return True
    if origin in (Union, types.UnionType):
        members = get_args(tp)
        fitting = [m for m in members if _fits_shallow(value, m)]
        if fitting:
            _check(value, fitting[0], path, where)  # the member of its shape, checked inside
        return bool(fitting)
    if not _fits_shallow(value, tp):
        return False
    if origin in (list, tuple):
        item = (get_args(tp) or (Any,))[0]
        for i, v in enumerate(value):
            _check(v, item, f"{path}[{i}]", where)
    elif origin is dict:
        item = (get_args(tp) or (str, Any))[1]
        for k, v in value.items():
            _check(v, item, f"{path}.{k}", where)
    return True


def _fits_shallow(value: Any, tp: Any) -> bool:
    """Whether ``value`` has the shape of ``tp`` (its items not looked at)."""
    origin = get_origin(tp)
    if tp is Any:
        return True
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:  # JSON writes 2.0 as 2.0 but a count-like 2 as 2: both are numbers
        return isinstance(value, int | float) and not isinstance(value, bool)
    if tp is str:
        return isinstance(value, str)
    if origin is Literal:
        return value in get_args(tp)
    if origin in (list, tuple):
        return isinstance(value, list | tuple)
    if origin is dict or tp is dict:
        return isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
    if origin in (Union, types.UnionType):
        return any(_fits_shallow(value, m) for m in get_args(tp))
    if isinstance(tp, type) and issubclass(tp, Record):
        return isinstance(value, tp)  # built by ``from_dict``
    return True  # a type this check does not know: as the store wrote it


_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false", type(None): "null"}


def _word(tp: Any) -> str:
    origin = get_origin(tp)
    if tp in _WORDS:
        return _WORDS[tp]
    if origin in (Union, types.UnionType):
        return " or ".join(_word(m) for m in get_args(tp))
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(tp))
    if origin in (list, tuple):
        return "a list"
    return "an object"
