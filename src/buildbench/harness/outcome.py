"""Typed episode outcomes: a dataclass per suite that writes and reads the JSON the store keeps.

``Env.outcome()`` returns a JSON dict because that is what the store, the scorer in a worker and
replays exchange; each suite builds that dict from its outcome dataclass (``to_dict``) and its
scorer reads it back (``from_dict``), so field names, types and units are written down once.

A suite's outcome is a dataclass that inherits :class:`OutcomeRecord`:

* the dataclass field order is the key order of the dict;
* a field whose metadata has ``optional=True`` is left out of the dict while it is None (keys
  that stored runs only have sometimes);
* ``FORMAT``, when set, is written first under ``"format"`` and checked on reading;
* keys a stored outcome has that the dataclass does not know are kept in ``extra`` and written
  back, so older or newer runs round-trip without loss.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Self

#: Field metadata for keys that are absent from the dict while the value is None.
OPTIONAL: Mapping[str, Any] = {"optional": True}


class OutcomeRecord:
    """Mixin for a suite's outcome dataclass (see the module docstring)."""

    #: The ``"format"`` tag written first in the dict (None: the suite's outcome has none).
    FORMAT: ClassVar[str | None] = None
    #: The suite, for error messages.
    SUITE: ClassVar[str] = "?"

    def to_dict(self) -> dict[str, Any]:
        """The outcome as the JSON dict the store keeps."""
        out: dict[str, Any] = {"format": self.FORMAT} if self.FORMAT is not None else {}
        for f in _fields(self):
            value = getattr(self, f.name)
            if value is None and f.metadata.get("optional"):
                continue
            out[f.name] = value
        out.update(getattr(self, "extra", None) or {})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read a stored outcome.

        Raises:
            ValueError: ``data`` is not a mapping, has another ``format`` tag, or lacks a key
                that has no default (the message names the suite and the key).
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.SUITE} outcome: expected a JSON object, got {type(data).__name__}")
        if cls.FORMAT is not None and data.get("format") != cls.FORMAT:
            raise ValueError(f"{cls.SUITE} outcome: format {data.get('format')!r}, expected {cls.FORMAT!r}")
        known = {f.name for f in _fields(cls)}
        kwargs: dict[str, Any] = {}
        for f in _fields(cls):
            if f.name in data:
                kwargs[f.name] = data[f.name]
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{cls.SUITE} outcome: missing key {f.name!r}")
        extra = {k: v for k, v in data.items() if k not in known and k not in ("format", "extra")}
        if "extra" in {f.name for f in dataclasses.fields(cls)}:  # type: ignore[arg-type]
            kwargs["extra"] = extra
        return cls(**kwargs)


def _fields(obj: Any) -> list[dataclasses.Field[Any]]:
    """The outcome's own fields (``extra`` is written by :meth:`OutcomeRecord.to_dict` last)."""
    return [f for f in dataclasses.fields(obj) if f.name != "extra"]
