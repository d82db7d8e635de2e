"""What a tower episode produces: the last submitted blocks and the effort spent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.outcome import OutcomeRecord


@dataclass
class TowerOutcome(OutcomeRecord):
    """``TowerEnv.outcome()``, typed.

    Attributes:
        blocks: The last readable submission: ``{"center": [x, y, z], "size": [sx, sy, sz]}`` per
            block, metres, y up (empty before any).
        attempts: Actions submitted (count).
        invalid_actions: Submissions that could not be read (count).
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    SUITE = "example"

    blocks: list[dict[str, list[float]]] = field(default_factory=list)
    attempts: int = 0
    invalid_actions: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
