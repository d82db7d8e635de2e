"""Command table: names, tool groups, parameter checking and history recording.

Groups follow the released ``@operation(group=…)`` tags (spec 2.1):
``build_only``, ``build``, ``refine``, ``default`` (queries), ``assembly``
and ``control``.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from buildbench.suites.buildarena.model import HistoryEntry

from . import assembly, construction, control, queries
from .bench import Bench, Outcome


@dataclass(frozen=True)
class Command:
    """One library command.

    Attributes:
        name: Tool name.
        func: ``func(bench, **params) -> Outcome``.
        group: Tool group.
    """

    name: str
    func: Callable[..., Outcome]
    group: str

    def parameters(self) -> list[inspect.Parameter]:
        """Keyword parameters (the workbench excluded)."""
        return _parameters(self.func)


@functools.cache
def _parameters(func: Callable[..., Outcome]) -> list[inspect.Parameter]:
    return list(inspect.signature(func).parameters.values())[1:]


_TABLE: tuple[tuple[Callable[..., Outcome], str], ...] = (
    (construction.start, "build_only"),
    (construction.attach_block_to, "build"),
    (construction.connect_blocks, "build"),
    (construction.remove_block, "build"),
    (construction.reset, "build"),
    (construction.twist_block, "refine"),
    (construction.shift_block, "refine"),
    (construction.flip_spin, "refine"),
    (queries.get_machine_summary, "default"),
    (queries.get_block_details, "default"),
    (assembly.add_machine, "assembly"),
    (assembly.remove_machine, "assembly"),
    (assembly.shift_machine, "assembly"),
    (assembly.rotate_machine, "assembly"),
    (control.change_control_key, "control"),
    (control.add_control_sequence, "control"),
    (control.remove_control_sequence, "control"),
    (control.reset_control_sequence, "control"),
    (control.review_powered_blocks, "control"),
    (control.review_control_config, "control"),
    (control.review_control_sequence, "control"),
)

COMMANDS: dict[str, Command] = {f.__name__: Command(f.__name__, f, group) for f, group in _TABLE}


def commands_in(*groups: str) -> list[Command]:
    """Commands of the given groups, in table order."""
    return [c for c in COMMANDS.values() if c.group in groups]


def _check_params(command: Command, params: dict[str, Any]) -> str | None:
    accepted = command.parameters()
    names = [p.name for p in accepted]
    unknown = [k for k in params if k not in names]
    if unknown:
        return f"Unexpected parameter(s) {', '.join(map(repr, unknown))} for {command.name}; it takes: {', '.join(names) or 'no parameters'}, please try again."
    missing = [p.name for p in accepted if p.default is inspect.Parameter.empty and p.name not in params]
    if missing:
        return f"Missing parameter(s) {', '.join(map(repr, missing))} for {command.name}; it takes: {', '.join(names)}, please try again."
    for p in accepted:
        value = params.get(p.name)
        if p.name in (
            "face",
            "face_a",
            "face_b",
            "new_block",
            "connector",
            "action",
            "new_key",
            "key",
        ) and not isinstance(value, str):
            return (
                f"Parameter {p.name!r} of {command.name} must be a string, got {value!r}, please try again."
            )
        if p.name == "note" and value is not None and not isinstance(value, str):
            return f"Parameter 'note' of {command.name} must be a string, got {value!r}, please try again."
        if p.name in ("block_id", "base_block", "block_a", "block_b") and (
            isinstance(value, bool) or not isinstance(value, str | int)
        ):
            return f"Parameter {p.name!r} of {command.name} must be a block id (string or integer), got {value!r}, please try again."
    return None


def dispatch(bench: Bench, op: object, params: object) -> Outcome:
    """Validate and run one call; record it in the machine history when it changed the machine."""
    command = COMMANDS.get(op) if isinstance(op, str) else None
    if command is None:
        return Outcome(
            f"Unknown operation {op!r}, available operations: {', '.join(COMMANDS)}, please try again.",
            ok=False,
        )
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Outcome(
            f"Parameters of {command.name} must be a JSON object, got {params!r}, please try again.", ok=False
        )
    problem = _check_params(command, params)
    if problem:
        return Outcome(problem, ok=False)
    outcome = command.func(bench, **params)
    # reset replaces the machine, whose history starts empty.
    if outcome.changed and command.name != "reset":
        bench.machine.history.append(HistoryEntry(command.name, dict(params), outcome.text))
    return outcome
