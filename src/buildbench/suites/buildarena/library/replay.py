"""Replay lists of library calls on fresh machines (the future ``buildbench buildarena replay``).

Input line: ``[{"op": ..., "params": {...}}, ...]``. Output line: every
call's returned text and the final blocks' ids, types, positions (real
frame, displayed centre) and rotations (real-frame quaternion ``w, x, y, z``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from buildbench.jsonio import parse_json
from buildbench.suites.buildarena.model import HistoryEntry, Machine, Rules

from .frames import matrix_to_quat, rotation_to_real, to_real
from .geometry import block_center
from .workbench import Workbench


@dataclass(frozen=True)
class CallResult:
    """One replayed call.

    Attributes:
        op: Command name as given.
        text: Returned text.
        ok: Whether it succeeded.
    """

    op: str
    text: str
    ok: bool


@dataclass(frozen=True)
class BlockPose:
    """A final block.

    Attributes:
        id: Block id.
        type: Block type name.
        position: Displayed centre, real frame ``[east, north, up]`` (units).
        rotation: Real-frame rotation quaternion ``[w, x, y, z]``.
    """

    id: str
    type: str
    position: list[float]
    rotation: list[float]


@dataclass(frozen=True)
class ReplayResult:
    """Result of replaying one list of calls.

    Attributes:
        results: One entry per call.
        blocks: Final blocks in listing order.
        error: Why the line could not be replayed at all, else None.
    """

    results: list[CallResult]
    blocks: list[BlockPose]
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def _poses(machine: Machine) -> list[BlockPose]:
    return [
        BlockPose(
            b.id,
            b.type,
            [round(float(v), 9) + 0.0 for v in to_real(block_center(b))],
            [round(v, 9) + 0.0 for v in matrix_to_quat(rotation_to_real(b.rotation))],
        )
        for b in machine.blocks.values()
    ]


def replay(
    calls: object, rules: Rules | None = None, saved: Mapping[str, Machine] | None = None
) -> ReplayResult:
    """Run ``calls`` on a fresh machine; never raises for malformed calls.

    Args:
        calls: A list of ``{"op": str, "params": dict}``.
        rules: Library rules (default: ours).
        saved: Saved machines for assembly commands.
    """
    if not isinstance(calls, list):
        return ReplayResult([], [], error=f"expected a JSON list of calls, got {type(calls).__name__}")
    bench = Workbench(rules=rules or Rules(), saved=dict(saved or {}))
    results: list[CallResult] = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or "op" not in call:
            results.append(
                CallResult(
                    "",
                    f"Call {i} must be an object with 'op' and 'params', got {call!r}, please try again.",
                    False,
                )
            )
            continue
        try:
            outcome = bench.call(call["op"], call.get("params"))
        except Exception as exc:  # a library bug must not kill a whole replay file; report and stop this line
            error = f"internal error in call {i} ({call['op']}): {type(exc).__name__}: {exc}"
            return ReplayResult(results, _poses(bench.machine), error=error)
        results.append(CallResult(str(call["op"]), outcome.text, outcome.ok))
    return ReplayResult(results, _poses(bench.machine))


def replay_line(line: str, rules: Rules | None = None) -> str:
    """Replay one JSONL input line and return one JSON output line."""
    try:
        calls = parse_json(line)
    except json.JSONDecodeError as exc:
        return json.dumps(
            ReplayResult([], [], error=f"invalid JSON at column {exc.colno}: {exc.msg}").to_json()
        )
    return json.dumps(replay(calls, rules).to_json(), ensure_ascii=False)


def rebuild(
    history: Sequence[HistoryEntry],
    rules: Rules,
    start_override: dict[str, Any] | None = None,
    *,
    saved: Mapping[str, Machine] | None = None,
) -> Machine:
    """Replay a machine's recorded history on a fresh machine.

    A history that begins with ``add_machine`` is an assembly's and is
    replayed on a fresh assembly using ``saved``.

    Args:
        history: Successful calls as recorded.
        rules: Rules to replay under.
        start_override: Parameters replacing those of the ``start`` call.
        saved: Saved machines for assembly histories.
    """
    assembly = bool(history) and history[0].op == "add_machine"
    bench = Workbench(machine=Machine(is_assembly=assembly), rules=rules, saved=dict(saved or {}))
    for entry in history:
        params = dict(entry.params)
        if entry.op == "start" and start_override:
            params.update(start_override)
        bench.call(entry.op, params)
    return bench.machine
