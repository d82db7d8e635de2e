"""What crosses the LEGO-Eval env's boundary besides the outcome: the reset observation's
``state``, a scripted agent's ``Action.data`` (a tool call or the verdicts) and the arguments of
the model-facing ``submit_verdicts`` tool, typed (see :mod:`buildbench.harness.record`). Each
verdict is a :class:`~.task_records.Verdict` record, wherever it comes from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from buildbench.harness.record import OPTIONAL, Record

from .task_records import Verdict


@dataclass(frozen=True)
class LegoEvalState(Record):
    """``Observation.state`` of the reset observation (tool answers carry text and images only).

    Attributes:
        instruction: The instruction the house was built from.
        constraints: The constraints to judge, ``{"id", "type", "text"}`` each.
        scene_error: Why the task's scene could not be read (None when it was; then only
            ``submit_verdicts`` works).
    """

    SUITE = "legoeval"
    KIND = "state"

    instruction: str
    constraints: list[dict[str, Any]]
    scene_error: str | None


@dataclass(frozen=True)
class Verdicts(Record):
    """The verdict of every constraint and of the whole house; submitting them ends the check.

    Attributes:
        verdicts: One verdict per constraint (a constraint left out counts as not judged).
        valid: Whether the house matches the whole description (null: derived from the
            verdicts, valid only if every constraint holds).
    """

    SUITE = "legoeval"
    KIND = "action"

    verdicts: list[Verdict]
    valid: bool | None = None


@dataclass(frozen=True)
class LegoEvalAction(Record):
    """A scripted agent's ``Action.data``: one environment tool call (``tool``, ``args``), or the
    verdicts that end the episode (``verdicts``, ``valid``, ``trace``, ``identified``; the task's
    constraint ids are checked by ``task_records.in_task_order``).

    Attributes:
        tool: The name of one of the 21 environment tools.
        args: The tool's arguments: ``{"<param>": [...]}``, a bare list, one id, or null.
        verdicts: One verdict per constraint (as :class:`Verdicts`, the ``submit_verdicts`` tool's
            arguments).
        valid: The holistic verdict (null: derived from the verdicts).
        trace: The LLM pipeline's per-constraint plans and tool calls.
        identified: Verdicts on the constraints the pipeline identified itself.
        extra: Other keys an evaluator's answer has (``explanation``, ``mode``…), kept in the record.
    """

    SUITE = "legoeval"
    KIND = "action"

    tool: str | None = field(default=None, metadata=OPTIONAL)
    args: list[Any] | dict[str, Any] | str | None = field(default=None, metadata=OPTIONAL)
    verdicts: list[Verdict] | None = field(default=None, metadata=OPTIONAL)
    valid: bool | None = field(default=None, metadata=OPTIONAL)
    trace: list[Any] | None = field(default=None, metadata=OPTIONAL)
    identified: list[Verdict] | None = field(default=None, metadata=OPTIONAL)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any) -> LegoEvalAction:
        action = super().from_data(data)
        if (action.tool is None) == (action.verdicts is None):
            raise ValueError("legoeval action: send exactly one of 'tool' (with 'args') and 'verdicts'")
        return action
