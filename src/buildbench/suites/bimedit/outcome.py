"""What a BIM-Edit episode produces: the last committed model and how the run went."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.outcome import OPTIONAL, OutcomeRecord

#: How an episode ended (spec 3.7): ``executed`` (the agent answered), ``budget`` (tool calls
#: spent), ``crash`` (the worker died), ``api``/``timeout`` (the model call failed), ``other``.
FAILURE_CLASSES = ("executed", "budget", "crash", "api", "timeout", "other")


@dataclass
class BimEditOutcome(OutcomeRecord):
    """``BimEditEnv.outcome()``, typed.

    Attributes:
        committed: Whether the committed model differs from the input model.
        failure: One of :data:`FAILURE_CLASSES`.
        failure_detail: One line on the failure ("" when executed).
        tool_calls: Tool calls the agent made (count).
        call_status: Each call's status, in call order.
        commits: Calls that committed the model (count).
        final_text: The agent's last answer without a tool call (None when it gave none).
        strict: Whether ``-o strict=true`` makes the strict scores the headline.
        action_format: ``code`` or ``structured``.
        reload_per_call: Whether each call starts from the committed file.
        model_path: Absolute path of the committed IFC kept in the artifact folder, when kept there.
        model_zb64: The committed IFC, zlib-compressed and base64-encoded, when not kept in a folder.
        extra: Keys of a stored outcome this type does not know (kept for the round trip).
    """

    SUITE = "bimedit"

    committed: bool = False
    failure: str = "executed"
    failure_detail: str = ""
    tool_calls: int = 0
    call_status: list[str] = field(default_factory=list)
    commits: int = 0
    final_text: str | None = None
    strict: bool = False
    action_format: str = "code"
    reload_per_call: bool = False
    model_path: str | None = field(default=None, metadata=OPTIONAL)
    model_zb64: str | None = field(default=None, metadata=OPTIONAL)
    extra: dict[str, Any] = field(default_factory=dict)
