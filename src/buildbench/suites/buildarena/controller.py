"""The Controller's JSON control design: parsing, applying it to a machine, and trajectory feedback.

Format (spec 4.1, stage 6; released ``prompt.yaml`` controller section)::

    {"control_design": "how the machine is driven",
     "control_config": [{"key": "UpArrow", "action": "spinning_forward", "block_id": "3"}, ...],
     "control_sequence": [{"motion_action": "forward", "time": 0, "key": "UpArrow", "hold_for": 5}, ...]}

Bindings are applied with the library's ``change_control_key`` and presses
with ``add_control_sequence`` (sorted by time), so every mistake gets the
library's own message. Feedback after a trial follows the released
simulation script: positions relative to the start at whole seconds, the
cargo labelled "Cargo Load" (spec 3.3).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from buildbench.jsonio import parse_json

from .library import Workbench
from .model import STARTING_BLOCK
from .physics import Trajectory

NOT_MOVING_RADIUS = 1.0
"""From the second trial on, a run whose tracked positions all stay within this distance of their mean
ends the control stage with "The machine is not moving at all" (released simulation script)."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class ControlDesignError(ValueError):
    """The control design could not be read; the message says what is wrong and where."""


@dataclass(frozen=True)
class ControlDesign:
    """A parsed control design.

    Attributes:
        design: The Controller's description of its strategy.
        config: Key bindings ``{"key", "action", "block_id"}``.
        sequence: Key presses ``{"time", "key", "hold_for"}`` sorted by time (extra fields kept).
    """

    design: str
    config: list[dict[str, Any]]
    sequence: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict in the Controller's own field names."""
        return {"control_design": self.design, "control_config": self.config, "control_sequence": self.sequence}


@dataclass
class Applied:
    """What applying a design to a machine did.

    Attributes:
        errors: One line per binding or press the library refused.
        bindings: Bindings accepted.
        presses: Presses accepted.
    """

    errors: list[str] = field(default_factory=list)
    bindings: int = 0
    presses: int = 0


def extract_json(text: str) -> Any:
    """JSON from model text: the first fenced block if there is one, else the whole text."""
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    try:
        return parse_json(body)
    except json.JSONDecodeError as exc:
        raise ControlDesignError(
            f"the control design is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None


def parse_design(raw: Any) -> ControlDesign:
    """Validate the structure of a control design (values are checked by the library when applied).

    Raises:
        ControlDesignError: Not an object, no bindings ("No control keys assigned"), no presses
            ("No control sequence found"), or an entry lacking a field.
    """
    if isinstance(raw, str):
        raw = extract_json(raw)
    if not isinstance(raw, dict):
        raise ControlDesignError(f"the control design must be a JSON object, got {type(raw).__name__}")
    config = raw.get("control_config")
    sequence = raw.get("control_sequence")
    if not isinstance(config, list) or not config:
        raise ControlDesignError("No control keys assigned: control_config must be a non-empty list")
    if not isinstance(sequence, list) or not sequence:
        raise ControlDesignError("No control sequence found: control_sequence must be a non-empty list")
    for i, item in enumerate(config):
        missing = [k for k in ("key", "action", "block_id") if not isinstance(item, dict) or k not in item]
        if missing:
            raise ControlDesignError(f"control_config[{i}] lacks {', '.join(missing)}: {json.dumps(item)[:120]}")
    for i, item in enumerate(sequence):
        missing = [k for k in ("time", "key", "hold_for") if not isinstance(item, dict) or k not in item]
        if missing:
            raise ControlDesignError(f"control_sequence[{i}] lacks {', '.join(missing)}: {json.dumps(item)[:120]}")
    ordered = sorted(sequence, key=lambda e: e["time"] if isinstance(e["time"], int | float) else float("inf"))
    return ControlDesign(str(raw.get("control_design", "")), list(config), ordered)


def apply_design(bench: Workbench, design: ControlDesign) -> Applied:
    """Bind the keys and add the presses through the library; refused entries are listed, not fatal."""
    applied = Applied()
    for i, item in enumerate(design.config):
        params = {"block_id": item["block_id"], "action": item["action"], "new_key": item["key"]}
        outcome = bench.call("change_control_key", params)
        if outcome.ok:
            applied.bindings += 1
        else:
            applied.errors.append(f"control_config[{i}]: {outcome.text}")
    for i, item in enumerate(design.sequence):
        params = {"time": item["time"], "key": item["key"], "hold_for": item["hold_for"]}
        outcome = bench.call("add_control_sequence", params)
        if outcome.ok:
            applied.presses += 1
        else:
            applied.errors.append(f"control_sequence[{i}]: {outcome.text}")
    return applied


def tracked(traj: Trajectory) -> list[tuple[str, str]]:
    """``(logged id, label)`` of what the feedback reports: the starting block and the cargo."""
    starts = traj.ids_of_type(STARTING_BLOCK)
    out = [(starts[0], "Starting Block")] if starts else [(traj.ids[0], f"Block {traj.ids[0]}")]
    if "Ballast" in traj.ids:
        out.append(("Ballast", "Cargo Load"))
    return out


def not_moving(traj: Trajectory) -> bool:
    """Whether every tracked position stays within ``NOT_MOVING_RADIUS`` of its mean; False where nothing was
    logged (a model MuJoCo could not build: ``simulation.ModelRefused``), whose verdict says why."""
    if traj.time.size == 0:
        return False
    for block_id, _ in tracked(traj):
        path = traj.series(block_id)
        if np.max(np.linalg.norm(path - path.mean(axis=0), axis=1)) > NOT_MOVING_RADIUS:
            return False
    return True


def trajectory_text(traj: Trajectory) -> str:
    """Positions relative to the start, ``[east, north, up]``, at every whole second."""
    if traj.time.size == 0:
        return "No trajectory was recorded."
    rows = []
    targets = tracked(traj)
    for second in range(int(np.floor(traj.time[-1] + 1e-9)) + 1):
        k = int(np.argmin(np.abs(traj.time - second)))
        parts = []
        for block_id, label in targets:
            path = traj.series(block_id)
            d = path[k] - path[0]
            parts.append(f"{label} [{d[0]:.2f}, {d[1]:.2f}, {d[2]:.2f}]")
        rows.append(f"t={second}s: " + "; ".join(parts))
    return "\n".join(rows)
