"""What crosses the SceneReVis env's boundary besides the outcome: the observation's ``state``,
typed (see :mod:`buildbench.harness.record`). Actions are the model's reply text
(``<create_scene>`` or ``<think>`` + ``<tool_calls>``, read by :mod:`.actions`), so the env takes
no ``Action.data``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.record import OPTIONAL, Record, unit


@dataclass(frozen=True)
class SceneReVisState(Record):
    """``Observation.state`` of the SceneReVis env.

    Attributes:
        turn: Replies played so far, the creation turn included (count).
        instruction: The room request.
        phase: ``create`` (turn 0 expects ``<create_scene>``) or ``edit``.
        scene: The current scene as flat SceneReVis JSON (metres, yaw in degrees), objects
            addressed by ``-o address``; None before the room is created.
        errors: The problems of the latest reply that could not be applied (one line each).
        turns_left: Replies left in the budget (count).
        collisions: After an applied edit, each penetrating pair as ``[id_a, id_b, depth_m]``
            (depth in metres, 4 decimals).
        out_of_bounds: After an applied edit, each object outside the room as
            ``[id, outside_fraction]`` (the fraction of its footprint outside, 0-1, 4 decimals).
        object_ids: The instance id of each scene object, in scene order, which ``collisions``
            and ``out_of_bounds`` name (under ``address=jid`` the scene shows no ids); None
            before the room is created.
    """

    SUITE = "scenerevis"
    KIND = "state"

    turn: int
    instruction: str
    phase: str
    scene: dict[str, Any] | None
    errors: list[str]
    turns_left: int
    collisions: list[list[Any]] | None = field(default=None, metadata=unit("m", optional=True))
    out_of_bounds: list[list[Any]] | None = field(default=None, metadata=unit("fraction", optional=True))
    object_ids: list[str] | None = field(default=None, metadata=OPTIONAL)
