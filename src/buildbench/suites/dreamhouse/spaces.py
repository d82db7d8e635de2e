"""What crosses the DreamHouse env's boundary besides the outcome: the observation's ``state``
and a scripted agent's ``Action.data``, typed (see :mod:`buildbench.harness.record`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.record import OPTIONAL, Record


@dataclass(frozen=True)
class DreamHouseState(Record):
    """``Observation.state`` of the DreamHouse env. The task prompt has ``request``,
    ``n_members`` and ``collection``; checked feedback ``request``, ``n_members``, ``passed``,
    ``all_passed`` and ``tests``; refused actions ``request``, ``n_members`` and ``invalid``; a
    control's answer (checkpoint, restore, reset_scene) ``n_members`` alone.

    Attributes:
        request: ``task`` (the first prompt) or ``feedback`` (the answer to an action).
        n_members: Members in the scene now (count).
        collection: The Blender collection scripts must build into.
        invalid: True when the action could not be read or applied (the scene is unchanged).
        passed: Whether the step's check scope (``all``, ``early`` or ``phased``) passed.
        all_passed: Whether every validation test passed (the episode's success).
        tests: Each validation test's verdict, by test name.
    """

    SUITE = "dreamhouse"
    KIND = "state"

    request: str | None = field(default=None, metadata=OPTIONAL)
    n_members: int = field(kw_only=True)
    collection: str | None = field(default=None, metadata=OPTIONAL)
    invalid: bool | None = field(default=None, metadata=OPTIONAL)
    passed: bool | None = field(default=None, metadata=OPTIONAL)
    all_passed: bool | None = field(default=None, metadata=OPTIONAL)
    tests: dict[str, bool] | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class DreamHouseAction(Record):
    """A scripted agent's ``Action.data``: a Blender script or a JSON member list (a bare list of
    members reads as ``{"members": list}``; a string is read like model text).

    Attributes:
        code: Blender Python building the scene into the task's collection.
        members: Members to add (``actions.parse_member`` checks each: boxes in metres).
        replace: Replace the scene by ``members`` instead of adding them.
    """

    SUITE = "dreamhouse"
    KIND = "action"

    code: str | None = field(default=None, metadata=OPTIONAL)
    members: list[dict[str, Any]] | None = field(default=None, metadata=OPTIONAL)
    replace: bool = False

    @classmethod
    def from_data(cls, data: Any) -> DreamHouseAction:
        action = super().from_data({"members": data} if isinstance(data, list) else data)
        if (action.code is None) == (action.members is None):
            raise ValueError("dreamhouse action: send exactly one of 'code' (Blender Python) and 'members'")
        return action
