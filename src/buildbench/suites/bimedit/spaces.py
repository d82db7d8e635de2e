"""What crosses the BIM-Edit env's boundary besides the outcome: the observation's ``state``,
typed (see :mod:`buildbench.harness.record`). Actions are tool calls only (the code tool, or the
structured tools of ``-o action_format=structured``, whose arguments ``structured`` checks), so
the env takes no ``Action.data``."""

from __future__ import annotations

from dataclasses import dataclass, field

from buildbench.harness.record import OPTIONAL, Record


@dataclass(frozen=True)
class BimEditState(Record):
    """``Observation.state`` of the BIM-Edit env: the reset has ``model_path``, ``tools`` and
    ``max_calls``; every step ``calls_used`` and ``failure``.

    Attributes:
        model_path: Absolute path of the episode's working copy of the IFC model.
        tools: Names of the tools offered.
        max_calls: Tool calls allowed in the episode (count).
        calls_used: Tool calls executed so far (count).
        failure: How the episode stands: ``executed`` while all is well, else one of
            ``outcome.FAILURE_CLASSES`` (``budget``, ``crash``…).
    """

    SUITE = "bimedit"
    KIND = "state"

    model_path: str | None = field(default=None, metadata=OPTIONAL)
    tools: list[str] | None = field(default=None, metadata=OPTIONAL)
    max_calls: int | None = field(default=None, metadata=OPTIONAL)
    calls_used: int | None = field(default=None, metadata=OPTIONAL)
    failure: str | None = field(default=None, metadata=OPTIONAL)
