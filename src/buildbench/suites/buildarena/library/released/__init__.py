"""The ``released`` profile: the original BuildArena library's behaviour, answer for answer.

``ReleasedWorkbench`` runs calls on a ``ReleasedMachine`` and returns the
same ``Outcome`` as the default ``Workbench``. Where the original raised an
exception, the outcome's text is the line it printed (``Type: message``),
and the state is what the original left behind. Differences from the default
profile are listed in the suite README.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..bench import CallRecord, Outcome
from .assembly import ASSEMBLY_COMMANDS, ReleasedAssembly
from .machine import Crash, ReleasedMachine, method_signature

QUERIES = ("get_machine_summary", "get_block_details", "review_powered_blocks", "review_control_config",
           "review_control_sequence")
CONTROL_SUCCESS = ("The control key of action", "Control sequence added", "Control sequence removed",
                   "Control sequence reset")
COMMAND_NAMES = ("start", "attach_block_to", "connect_blocks", "remove_block", "reset", "twist_block",
                 "shift_block", "flip_spin", "get_machine_summary", "get_block_details", "change_control_key",
                 "add_control_sequence", "remove_control_sequence", "reset_control_sequence",
                 "review_powered_blocks", "review_control_config", "review_control_sequence")
FILE_COMMANDS = ("to_file",)
"""Called by the original's workflow, not by a model; its answer is ``None``."""
_CRASHES = (Crash, TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError)


@dataclass(frozen=True)
class ReleasedOutcome(Outcome):
    """An outcome that also says whether the original raised (its text is then the exception line)."""

    crashed: bool = False


@dataclass
class ReleasedWorkbench:
    """A released-library session: machine, history of state-changing calls and the full call log."""

    machine: ReleasedMachine = field(default_factory=ReleasedMachine)
    log: list[CallRecord] = field(default_factory=list)

    def commands(self) -> tuple[str, ...]:
        """Operation names this session's machine has."""
        extra = ASSEMBLY_COMMANDS if self.machine.assembly else ()
        return COMMAND_NAMES + extra + FILE_COMMANDS

    def call(self, op: str, params: object = None) -> ReleasedOutcome:
        """Run one call by name; never raises."""
        outcome = self._run(op, params)
        given = dict(params) if isinstance(params, dict) else {}
        self.log.append(CallRecord(str(op), given, outcome.text, outcome.ok))
        return outcome

    def _run(self, op: str, params: object) -> ReleasedOutcome:
        if op not in self.commands():
            kind = "Assembly" if self.machine.assembly else "Machine"
            return ReleasedOutcome(f"AttributeError: '{kind}' object has no attribute {op!r}", ok=False,
                                   crashed=True)
        method = getattr(self.machine, op)
        kwargs = dict(params) if isinstance(params, dict) else {}
        try:
            method_signature(method).bind(**kwargs)
        except TypeError as exc:
            return ReleasedOutcome(f"TypeError: {exc}", ok=False, crashed=True)
        self.machine.changed = False
        try:
            # NaN, infinite and overflowing arguments are answered as the original answered them;
            # numpy's warnings about that arithmetic are not part of any answer.
            with np.errstate(all="ignore"):
                text = str(method(**kwargs))
        except _CRASHES as exc:
            line = str(exc) if isinstance(exc, Crash) else f"{type(exc).__name__}: {exc}"
            return ReleasedOutcome(line, ok=False, changed=self.machine.changed, crashed=True)
        changed = self.machine.changed
        if changed and op != "reset":
            self.machine.history.append({"op": op, "params": kwargs, "result": text})
        ok = changed or op in QUERIES and not text.endswith(" not found") or text.startswith(CONTROL_SUCCESS)
        return ReleasedOutcome(text, ok=bool(ok), changed=changed)


@dataclass
class ReleasedWorkspace:
    """Released sessions sharing one folder of saved files (``to_file`` writes them, ``add_machine`` reads them)."""

    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    sessions: dict[str, ReleasedWorkbench] = field(default_factory=dict)

    def session(self, name: str, kind: str = "machine") -> ReleasedWorkbench:
        """The session named ``name`` (created on first use as a ``machine`` or an ``assembly``)."""
        if name not in self.sessions:
            machine = (ReleasedAssembly(name=name, files=self.files) if kind == "assembly"
                       else ReleasedMachine(name=name, files=self.files))
            self.sessions[name] = ReleasedWorkbench(machine=machine)
        return self.sessions[name]


__all__ = ["Crash", "ReleasedAssembly", "ReleasedMachine", "ReleasedOutcome", "ReleasedWorkbench", "ReleasedWorkspace"]
