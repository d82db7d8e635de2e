"""What crosses the BuildArena env's boundary besides the outcome: the observation's ``state``
and a scripted agent's library call as ``Action.data``, typed (see :mod:`buildbench.harness.record`).

A control stage's ``Action.data`` is the Controller's design, read by
:func:`~.controller.parse_design` into a :class:`~.controller.ControlDesign` (keys and timed
presses in seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from buildbench.harness.record import Record


@dataclass(frozen=True)
class BuildArenaState(Record):
    """``Observation.state`` of the BuildArena env.

    Attributes:
        stage: The open stage's kind (``build``, ``refine``, ``assemble``, ``control``…; a key of
            ``env.STAGE_GROUPS``).
        machine: Id of the machine the stage edits (or controls).
        blocks: Blocks of that machine now (count; 0 before it is started).
    """

    SUITE = "buildarena"
    KIND = "state"

    stage: str
    machine: str
    blocks: int


@dataclass(frozen=True)
class BuildArenaCall(Record):
    """One library call as a scripted agent's ``Action.data`` (what a tool call is for a model).

    Attributes:
        op: The library command, e.g. ``attach_block_to`` (one of the stage's tools).
        params: Its keyword parameters, a JSON object or null (none). The library checks them
            per command and refuses a bad one with a categorised message, as it does for a tool
            call's arguments, so they are not checked here.
    """

    SUITE = "buildarena"
    KIND = "action"

    op: str
    params: Any = None
