"""Agreement of library answers with recorded answers of the original library.

Two measures per call: **exact** (the same text, character for character)
and **normalized**: whitespace runs collapsed and dropped next to brackets
and commas, every number rounded to 3 decimals (so ``-0.``, ``0.00`` and
``2.22e-16`` all read ``0``), and the lines whose order the original took
from Python's string hashing (``Overlapping detected …``, ``Key: …``)
compared as sorted lists. A recorded exception is compared as its
``Type: message`` line. The ``ids_after`` list (state) is compared exactly.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...model import Machine
from ..workbench import Workbench
from . import ReleasedWorkspace
from .machine import saved_path

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_SPACE_NEAR = re.compile(r"\s*([\[\],])\s*")
_UNORDERED = ("Overlapping detected between", "Key: ")


def _number(match: re.Match[str]) -> str:
    return _number_text(match.group(0))


@functools.lru_cache(maxsize=65536)
def _number_text(number: str) -> str:
    # the same few numbers recur in every caption of a session
    value = round(float(number), 3)
    return f"{value + 0.0:g}"


@functools.lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """The normalized form of an answer (see the module docstring). Kept for recent texts:
    a measurement normalizes the same answers (outlines, summaries, refusals) many times."""
    lines = text.split("\n")
    kept = [line for line in lines if not line.startswith(_UNORDERED)]
    loose = sorted(line for line in lines if line.startswith(_UNORDERED))
    body = "\n".join(kept + loose)
    body = _NUMBER.sub(_number, body)
    body = re.sub(r"[ \t]+", " ", body)
    body = _SPACE_NEAR.sub(r"\1", body)
    return "\n".join(line.strip() for line in body.split("\n"))


def expected_text(call: dict[str, Any]) -> str:
    """What the original answered: its result, or its exception line."""
    if call.get("exception"):
        return str(call["exception"])
    return str(call.get("result"))


@dataclass
class Agreement:
    """Counts of agreeing calls, overall and per operation."""

    total: Counter[str] = field(default_factory=Counter)
    exact: Counter[str] = field(default_factory=Counter)
    normalized: Counter[str] = field(default_factory=Counter)
    state: Counter[str] = field(default_factory=Counter)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(self, op: str, ours: str, theirs: str, ids_ok: bool, where: dict[str, Any]) -> None:
        self.total[op] += 1
        self.exact[op] += ours == theirs
        same = normalize(ours) == normalize(theirs)
        self.normalized[op] += same
        self.state[op] += ids_ok
        if not same or not ids_ok:
            self.misses.append({**where, "op": op, "ours": ours, "theirs": theirs, "ids_ok": ids_ok})

    def rate(self, kind: str = "normalized") -> float:
        """Share of calls agreeing (``normalized``, ``exact`` or ``state``)."""
        counts: Counter[str] = getattr(self, kind)
        n = sum(self.total.values())
        return sum(counts.values()) / n if n else 0.0

    def table(self) -> list[dict[str, Any]]:
        """One row per operation: calls, normalized, exact and state agreement counts."""
        return [{"op": op, "calls": n, "normalized": self.normalized[op], "exact": self.exact[op],
                 "state": self.state[op]} for op, n in sorted(self.total.items())]


Runner = Callable[[], Callable[[str, dict[str, Any]], tuple[str, list[str]]]]
"""Makes a fresh session and returns its ``call(op, params) -> (text, ids_after)``."""


def measure(sequences: Iterable[dict[str, Any]], new_session: Runner, *,
            ignore_state_after_divergence: bool = False) -> Agreement:
    """Replay recorded sequences on fresh sessions and count agreeing answers."""
    result = Agreement()
    for seq in sequences:
        call = new_session()
        for index, recorded in enumerate(seq["calls"]):
            text, ids = call(recorded["op"], recorded["params"])
            result.add(recorded["op"], text, expected_text(recorded), ids == recorded.get("ids_after", ids),
                       {"seed": seq.get("seed"), "index": index})
    return result


SessionCall = Callable[[str, str, str, dict[str, Any]], tuple[str, list[str], Any]]
"""``call(session, kind, op, params) -> (text, ids_after, written)``; ``written`` is what ``to_file`` saved."""


def session_key(kind: str, op: str) -> str:
    """Table row of an operation: assembly-session operations are listed apart (``assembly/<op>``)."""
    return f"assembly/{op}" if kind == "assembly" else op


def measure_sessions(sequences: Iterable[dict[str, Any]], new_workspace: Callable[[], SessionCall]) -> Agreement:
    """Replay recorded multi-session sequences (machines saved, then assembled) on fresh workspaces.

    A ``to_file`` call agrees when its answer and the history it saved both agree.
    """
    result = Agreement()
    for seq in sequences:
        call = new_workspace()
        for session in seq["sessions"]:
            for index, recorded in enumerate(session["calls"]):
                text, ids, written = call(session["name"], session["kind"], recorded["op"], recorded["params"])
                theirs = expected_text(recorded)
                if recorded["op"] == "to_file":
                    text += "\n" + json.dumps(written)
                    theirs += "\n" + json.dumps(recorded.get("written"))
                result.add(session_key(session["kind"], recorded["op"]), text, theirs,
                           ids == recorded.get("ids_after", ids),
                           {"seed": seq.get("seed"), "session": session["name"], "index": index})
    return result


def released_workspace() -> SessionCall:
    """A fresh ``ReleasedWorkspace`` as a ``SessionCall`` (``written``: the history ``to_file`` saved)."""
    workspace = ReleasedWorkspace()

    def call(name: str, kind: str, op: str, params: dict[str, Any]) -> tuple[str, list[str], Any]:
        bench = workspace.session(name, kind)
        outcome = bench.call(op, params)
        written = None
        if op == "to_file" and not outcome.crashed:
            written = workspace.files.get(saved_path(os.path.join(str(params.get("output_dir")), f"{name}.json")))
        return outcome.text, list(bench.machine.blocks), written

    return call


def default_workspace() -> SessionCall:
    """Our default library over the same sessions: a machine is kept for ``add_machine`` when it calls ``to_file``."""
    saved: dict[str, Machine] = {}
    sessions: dict[str, Workbench] = {}

    def call(name: str, kind: str, op: str, params: dict[str, Any]) -> tuple[str, list[str], Any]:
        if name not in sessions:
            sessions[name] = (Workbench(Machine(is_assembly=True), saved=saved) if kind == "assembly"
                              else Workbench())
        bench = sessions[name]
        try:
            text = bench.call(op, params).text
        except Exception as exc:  # a defect of ours (a command raises only typed feedback), counted as a disagreement
            text = f"{type(exc).__name__}: {exc}"
        if op == "to_file":
            saved[name] = bench.machine
        return text, list(bench.machine.blocks), None

    return call
