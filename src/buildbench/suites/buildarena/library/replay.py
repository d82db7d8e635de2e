"""Replay lists of library calls on fresh machines (the future ``buildbench buildarena replay``).

Input line: ``[{"op": ..., "params": {...}}, ...]``, or a recorded sequence
``{"seed", "calls": [{"op", "params", "result" | "exception", "ids_after"}]}``
as the differential tool writes (``tools/buildarena_oracle``). Output line:
every call's returned text and the final blocks' ids, types, positions (real
frame, displayed centre) and rotations (real-frame quaternion ``w, x, y, z``);
for a recorded sequence also how many answers agree with the recording.

Profiles: ``default`` (our library, with its fixes) and ``released`` (the
original library's behaviour, ``library.released``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from buildbench.jsonio import parse_json
from buildbench.suites.buildarena.model import Machine, Rules

from .frames import matrix_to_quat, rotation_to_real, to_real
from .geometry import block_center
from .released import ReleasedWorkbench
from .released.agreement import (
    default_workspace,
    expected_text,
    measure_sessions,
    normalize,
    released_workspace,
)
from .workbench import Workbench
from .workbench import rebuild as rebuild  # re-exported: callers replay histories through this module


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
    agreement: dict[str, int] | None = None

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


PROFILES = ("default", "released")


def _released_poses(bench: ReleasedWorkbench) -> list[BlockPose]:
    return [
        BlockPose(
            key,
            part.name,
            [round(float(v), 9) + 0.0 for v in to_real(part.shown_position)],
            [round(v, 9) + 0.0 for v in matrix_to_quat(rotation_to_real(part.orientation.matrix))],
        )
        for key, part in bench.machine.blocks.items()
    ]


def replay(
    calls: object, rules: Rules | None = None, saved: Mapping[str, Machine] | None = None,
    profile: str = "default",
) -> ReplayResult:
    """Run ``calls`` on a fresh machine; never raises for malformed calls.

    Args:
        calls: A list of ``{"op": str, "params": dict}``.
        rules: Library rules of the default profile (default: ours).
        saved: Saved machines for assembly commands (default profile).
        profile: ``default`` or ``released``.
    """
    if not isinstance(calls, list):
        return ReplayResult([], [], error=f"expected a JSON list of calls, got {type(calls).__name__}")
    if profile not in PROFILES:
        return ReplayResult([], [], error=f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    if profile == "released":
        return _replay_released(calls)
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


def _replay_released(calls: list[Any]) -> ReplayResult:
    bench = ReleasedWorkbench()
    results: list[CallResult] = []
    for i, call in enumerate(calls):
        if not isinstance(call, dict) or "op" not in call:
            results.append(CallResult("", f"Call {i} must be an object with 'op' and 'params', got {call!r}", False))
            continue
        outcome = bench.call(call["op"], call.get("params"))
        results.append(CallResult(str(call["op"]), outcome.text, outcome.ok))
    return ReplayResult(results, _released_poses(bench))


def _agreement(recorded: list[Any], result: ReplayResult) -> dict[str, int]:
    counts = {"calls": 0, "normalized": 0, "exact": 0}
    for call, got in zip(recorded, result.results, strict=False):
        if isinstance(call, dict) and ("result" in call or "exception" in call):
            theirs = expected_text(call)
            counts["calls"] += 1
            counts["exact"] += got.text == theirs
            counts["normalized"] += normalize(got.text) == normalize(theirs)
    return counts


def _replay_sessions(line: dict[str, Any], profile: str) -> dict[str, Any]:
    """An assembly recording (``run_original.py --assembly``): its agreement and the calls that disagree."""
    workspace = released_workspace if profile == "released" else default_workspace
    try:
        agreement = measure_sessions([line], workspace)
    except (KeyError, TypeError, AttributeError) as exc:
        return {"error": f"malformed assembly recording: {type(exc).__name__} {exc}"}
    total = sum(agreement.total.values())
    counts = {"calls": total, "normalized": sum(agreement.normalized.values()), "exact": sum(agreement.exact.values())}
    return {"seed": line.get("seed"), "agreement": counts, "misses": agreement.misses}


def replay_line(line: str, rules: Rules | None = None, profile: str = "default") -> str:
    """Replay one JSONL input line and return one JSON output line."""
    try:
        calls = parse_json(line)
    except json.JSONDecodeError as exc:
        return json.dumps(
            ReplayResult([], [], error=f"invalid JSON at column {exc.colno}: {exc.msg}").to_json()
        )
    if isinstance(calls, dict) and "sessions" in calls:
        return json.dumps(_replay_sessions(calls, profile), ensure_ascii=False)
    recorded = calls.get("calls") if isinstance(calls, dict) else None
    result = replay(recorded if recorded is not None else calls, rules, profile=profile)
    if isinstance(recorded, list) and result.error is None:
        result = dataclasses.replace(result, agreement=_agreement(recorded, result))
    return json.dumps(result.to_json(), ensure_ascii=False)

