"""Warnings about a scene being read, named as its errors are.

A reader's :class:`~buildbench.scenes.model.SceneFormatError` names the element
(``doors[0].wall1: …``) and each caller on the way up adds what it knows as the exception
passes: the record's index in its document, the file, the line. A warning cannot travel that
way, since reading goes on after it, so a reader calls :func:`warn` with the element's path,
and each caller that names errors holds the warnings met inside it (:func:`named`) and passes
them on under the same names once its part of the read succeeded. A read that fails drops
them: a bad file gets its error line alone. A warning no caller holds is logged as the reader
gave it (a scene read from a dict made in code has no file to name).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SceneWarning:
    """``where``: the element's path in the document, "" for the whole scene; ``logger``: the
    reader's logger, so a caller can quiet one reader's warnings."""

    where: str
    text: str
    logger: str

    def line(self) -> str:
        return f"{self.where}: {self.text}" if self.where else self.text


_HELD: ContextVar[list[SceneWarning] | None] = ContextVar("held_scene_warnings", default=None)


def warn(where: str, text: str, logger: str) -> None:
    """Report ``text`` about the element at path ``where`` of the scene being read."""
    _pass_on(SceneWarning(where, text, logger))


def _pass_on(warning: SceneWarning) -> None:
    held = _HELD.get()
    if held is None:
        logging.getLogger(warning.logger).warning(warning.line())
    else:
        held.append(warning)


@contextmanager
def named(name: Callable[[str], str]) -> Iterator[None]:
    """Hold the warnings met inside; when the block ends without an error pass each on with its
    path ``where`` replaced by ``name(where)`` (the function that names the block's errors:
    ``name("")`` names the whole document, a file or a line of one). A block that raises drops them."""
    held: list[SceneWarning] = []
    token = _HELD.set(held)
    try:
        yield
    finally:
        _HELD.reset(token)
    for warning in held:
        _pass_on(replace(warning, where=name(warning.where)))


@contextmanager
def dropped() -> Iterator[None]:
    """Drop the warnings met inside: for a scene read again whose warnings were given, under its
    file's name, when it came in (a task's scene at every episode reset)."""
    token = _HELD.set([])
    try:
        yield
    finally:
        _HELD.reset(token)


def under(prefix: str) -> AbstractContextManager[None]:
    """:func:`named` for a record at key path ``prefix`` of its document (``[2].``, ``scene.``)."""
    return named(lambda where: prefix + where if where else prefix.rstrip("."))


def in_document(place: str, first_line: int, text: str, prefix: str = "") -> Callable[[str], str]:
    """The name function for a record at key path ``prefix`` of the JSON document ``text``, which
    starts on line ``first_line`` of file ``place``: ``PLACE line N: PATH``, N the line where the
    element starts (the document's first for the whole record)."""
    from buildbench.scenes.formats.where import line_of

    def name(where: str) -> str:
        where = prefix + where if where else prefix.rstrip(".")
        found = line_of(text, where) if where else None
        at = f"{place} line {first_line + (found or 1) - 1}"
        return f"{at}: {where}" if where else at

    return name
