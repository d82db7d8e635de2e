"""What crosses the tower env's boundary besides the outcome: the observation's ``state`` and a
scripted agent's ``Action.data``, typed (see :mod:`buildbench.harness.record`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from annotated_types import Len

from buildbench.harness.record import Record, unit


@dataclass(frozen=True)
class Block(Record):
    """One axis-aligned block of a submission.

    Attributes:
        center: The block's centre ``[x, y, z]``, metres, z up.
        size: Its extents ``[sx, sy, sz]``, metres, each > 0.
    """

    SUITE = "example"
    KIND = "action"

    center: Annotated[list[float], Len(3, 3)] = field(metadata=unit("m"))
    size: Annotated[list[float], Len(3, 3)] = field(metadata=unit("m"))


@dataclass(frozen=True)
class TowerState(Record):
    """``Observation.state`` of the tower env.

    Attributes:
        blocks: The current design, ``{"center": [x, y, z], "size": [sx, sy, sz]}`` per block,
            metres, z up (empty before the first readable submission).
    """

    SUITE = "example"
    KIND = "state"

    blocks: list[dict[str, list[float]]] = field(default_factory=list, metadata=unit("m"))


@dataclass(frozen=True)
class TowerAction(Record):
    """A block-list submission as ``Action.data`` (a bare list of blocks reads as ``{"blocks": list}``).

    Attributes:
        blocks: The whole design, replacing the previous one.
    """

    SUITE = "example"
    KIND = "action"

    blocks: list[Block]

    @classmethod
    def from_data(cls, data: Any) -> TowerAction:
        return super().from_data({"blocks": data} if isinstance(data, list) else data)
