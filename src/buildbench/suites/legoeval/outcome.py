"""What a LEGO-Eval episode produces: a verdict per constraint, the holistic verdict and the
effort spent (the shape prediction files share; ``tasks.parse_outcome`` checks it per task)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.outcome import OPTIONAL, OutcomeRecord


@dataclass
class LegoEvalOutcome(OutcomeRecord):
    """``LegoEvalEnv.outcome()``, typed.

    Attributes:
        verdicts: One ``{"id", "holds" (true, false or null), "explanation"}`` per constraint.
        valid: The holistic verdict (None: unknown, or nothing submitted).
        trace: The LLM pipeline's per-constraint plans and tool calls, when it ran.
        identified: Verdicts on the constraints the pipeline identified itself
            (``-o constraints=identify``).
        tool_calls: Tool calls the agent made (count).
        invalid_actions: Actions that could not be read or applied (count).
        scene_error: Why the task's scene could not be loaded (None when it loaded).
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    SUITE = "legoeval"

    verdicts: list[dict[str, Any]] = field(default_factory=list)
    valid: bool | None = None
    trace: list[Any] | None = field(default=None, metadata=OPTIONAL)
    identified: list[dict[str, Any]] | None = field(default=None, metadata=OPTIONAL)
    tool_calls: int = 0
    invalid_actions: int = 0
    scene_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
