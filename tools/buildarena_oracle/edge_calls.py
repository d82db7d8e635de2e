"""Call sequences at the edges the odd set leaves alone, for the ``differential-edge`` set.

``EdgeCallGenerator`` extends ``OddCallGenerator`` with:

* call shapes: a required argument left out, an unknown extra argument, an
  operation name that is not a tool (``"Start"``, ``""``, ``"attach"``);
* calls after errors: the previous call repeated as it was (a refused one
  again, a removal of the block just removed), and queries right after a
  ``reset`` or before any ``start``;
* rotations of 90/180/270/360 on one, two and three axes of ``init_rotation``
  (gimbal lock at a pitch of ±90 included) and a block twisted by the same
  quarter turn four times running;
* notes in other scripts, empty, very long, with line breaks and braces, and
  notes that are not text (a number, a list, ``None``);
* block and connector names in other cases, with a zero-width space or
  full-width letters;
* control arguments at their edges: times and durations of 0, negative,
  tiny, huge, infinite, NaN, text, ``None``, a list; indices that are
  booleans, floats, text or huge; keys that are lists or ``None``;
* builds long enough to run out of room (up to 400 calls, attach-heavy).

Plain Python + numpy, importable from either environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from generate import ASSEMBLY_WEIGHTS, CONNECTORS, AssemblyView, View
from odd_calls import ODD_WEIGHTS, OddAssemblyGenerator, OddCallGenerator

QUARTERS = [90, 180, 270, 360, -90, -180, -270, -360, 0]
NOTES: list[Any] = ["左轮", "колесо", "🚗 wheel", "", " ", "a" * 600, "line1\nline2", "{placeholder}", "{0}", "%s",
                    "<ID 1: x>", "\t", 7, 1.5, ["x"], None, {"a": 1}, True]
NAMES: list[Any] = ["TORCH", "torch", "Torch\u200b", "Ｔorch", "Small Wooden Block\n", "Small  Wooden Block",
                    "Powered\u00a0Wheel", "Water cannon", "Brace ", "WINCH", "winch"]
NUMBERS: list[Any] = [0, -0.0, -1, -1e-9, 1e-300, 5e-324, 1e15, 1e308, float("inf"), float("-inf"), float("nan"),
                      "1", "", None, [1], True, 2**63, 0.1 + 0.2]
INDICES: list[Any] = [True, False, 0.0, 1.5, "0", "", None, -0.0, 2**63, -(2**63), [0], 1e300]
KEYS: list[Any] = [["UpArrow"], None, "", "uparrow", "UpArrow ", "Alpha١", "Keypad٣", 1, True]
NOT_TOOLS = ["Start", "", "attach", "start ", "get_summary", "review"]

EDGE_WEIGHTS: dict[str, float] = {
    **ODD_WEIGHTS, "add_control_sequence": 5, "remove_control_sequence": 3, "change_control_key": 6,
    "review_control_sequence": 2.5, "twist_block": 10, "start": 2.5, "reset": 1.5,
}


class EdgeCallGenerator(OddCallGenerator):
    """``OddCallGenerator`` with the edges listed in the module docstring."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 41])
        r = self.rng.random()
        self.length = int(self.rng.integers(250, 401)) if r < 0.12 else int(self.rng.integers(30, 120))
        self.previous: tuple[str, dict[str, Any]] | None = None
        self.quarter: tuple[str, int, int] | None = None
        """A block being turned by the same quarter turn: its id, the angle and the turns left."""

    def next_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call given the current state."""
        op, params = self._edge_call(view, index)
        self.previous = (op, params)
        return op, params

    def _edge_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        if self.quarter is not None and self.quarter[0] in view.faces and self.quarter[2] > 0:
            block_id, angle, left = self.quarter
            self.quarter = (block_id, angle, left - 1)
            return "twist_block", {"block_id": block_id, "angle": angle}
        self.quarter = None
        if self.previous is not None and self._p(0.1):
            return self.previous[0], dict(self.previous[1])
        if not view.started and index > 0 and self._p(0.15):
            return self._pick([("get_machine_summary", {}), ("review_control_config", {}), ("reset", {}),
                               ("review_control_sequence", {}), ("review_powered_blocks", {}),
                               ("remove_control_sequence", {"index": 0}), ("get_block_details", {"block_id": 0}),
                               ("flip_spin", {"block_id": 1}), ("reset_control_sequence", {})])
        r = self.rng.random()
        if r < 0.03:
            return self._pick(NOT_TOOLS), {}
        if r < 0.06 and view.faces:
            block_id = self._pick(list(view.faces))
            self.quarter = (block_id, self._pick([90, -90, 180, 270]), 3)
            return "twist_block", {"block_id": block_id, "angle": self.quarter[1]}
        if not view.started and (index == 0 or self._p(0.7)):
            return "start", self._start()
        names = list(EDGE_WEIGHTS)
        weights = [EDGE_WEIGHTS[n] for n in names]
        total = sum(weights)
        op = names[int(self.rng.choice(len(names), p=[w / total for w in weights]))]
        params = getattr(self, "_" + op)(view)
        if params and self._p(0.04):  # a required argument left out
            params = dict(params)
            del params[self._pick(sorted(params))]
        elif self._p(0.03):  # an argument the tool does not take
            params = {**params, self._pick(["extra", "block", "faces", "notes"]): self._pick([1, "A", None])}
        return op, params

    def _note_value(self) -> Any:
        return self._pick(NOTES)

    def _start(self, view: View | None = None) -> dict[str, Any]:
        params = super()._start(view)
        r = self.rng.random()
        if r < 0.45:
            params["init_rotation"] = [self._pick(QUARTERS) if self._p(0.7) else 0 for _ in range(3)]
        elif r < 0.55:
            params["init_rotation"] = self._pick([[0, 90, 0], [0, -90, 0], [45, 90, 30], [90, 90, 90], [0, 90, 180],
                                                  [360, 360, 360], [720, -450, 270], [89.9999999, 0, 0]])
        if self._p(0.2):
            params["note"] = self._note_value()
        return params

    def _attach_block_to(self, view: View) -> dict[str, Any]:
        params = super()._attach_block_to(view)
        if self._p(0.08):
            params["new_block"] = self._pick(NAMES)
        if self._p(0.12):
            params["note"] = self._note_value()
        return params

    def _connect_blocks(self, view: View) -> dict[str, Any]:
        params = super()._connect_blocks(view)
        if self._p(0.08):
            params["connector"] = self._pick(NAMES + CONNECTORS)
        if self._p(0.12):
            params["note"] = self._note_value()
        return params

    def _twist_block(self, view: View) -> dict[str, Any]:
        params = super()._twist_block(view)
        if self._p(0.5):
            params["angle"] = self._pick(QUARTERS + [450, 630, -630, 3600.0, 89.99999999999999])
        return params

    def _remove_block(self, view: View) -> dict[str, Any]:
        if view.faces and self._p(0.08):
            return {"block_id": self._pick(["0", 0, "1", 1])}  # the starting block, which the original keeps
        return super()._remove_block(view)

    def _change_control_key(self, view: View) -> dict[str, Any]:
        params = super()._change_control_key(view)
        if self._p(0.15):
            params["new_key"] = self._pick(KEYS)
        if self._p(0.1):
            params["action"] = self._pick(["Spinning_forward", "spinning_forward ", "", None, ["fly"], "fire"])
        return params

    def _add_control_sequence(self, view: View) -> dict[str, Any]:
        params = super()._add_control_sequence(view)
        if self._p(0.35):
            params["time"] = self._pick(NUMBERS)
        if self._p(0.35):
            params["hold_for"] = self._pick(NUMBERS)
        if self._p(0.1):
            params["key"] = self._pick(KEYS)
        return params

    def _remove_control_sequence(self, view: View) -> dict[str, Any]:
        params = super()._remove_control_sequence(view)
        if self._p(0.25):
            params["index"] = self._pick(INDICES)
        elif view.sequence_length and self._p(0.3):
            params["index"] = view.sequence_length - 1  # the last entry
        return params

    def _flip_spin(self, view: View) -> dict[str, Any]:
        params = super()._flip_spin(view)
        if self._p(0.1):
            params["block_id"] = self._pick([[1], {"id": 1}, 1e300, float("nan"), "1,2"])
        return params



EDGE_ASSEMBLY_WEIGHTS: dict[str, float] = {**ASSEMBLY_WEIGHTS, "add_machine": 30, "remove_machine": 3}


class EdgeAssemblyGenerator(OddAssemblyGenerator):
    """``OddAssemblyGenerator`` sessions at the assembly's edges: a machine saved under a name in
    another script, long assemblies of many sub-structures (past ``Z``, where the original's
    letters go on as ``[``, ``\\``, ``]``, ``^``, ``_``), spread far enough apart to fit, quarter turns
    on three axes for ``add_machine`` and ``rotate_machine``, and removals by those letters."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 43])
        self.machine_names = ["m0", "機械 1"][: int(self.rng.integers(1, 3))] + ["m2"]
        self.machine_lengths = [int(self.rng.integers(6, 20)) for _ in self.machine_names]
        self.length = int(self.rng.integers(60, 131))

    def assembly_call(self, view: AssemblyView) -> tuple[str, dict[str, Any]]:
        names = list(EDGE_ASSEMBLY_WEIGHTS)
        weights = np.array([EDGE_ASSEMBLY_WEIGHTS[n] for n in names])
        op = names[int(self.rng.choice(len(names), p=weights / weights.sum()))]
        if op in ("reset", "get_machine_summary", "review_powered_blocks", "review_control_config"):
            return op, {}
        return op, getattr(self, "_" + op)(view)

    def _letter(self, view: AssemblyView) -> Any:
        if view.substructures and self._p(0.8):
            return self._pick(view.substructures)
        return self._pick(["[", "_", "`", "AA", "A_", "Z", "a", " A", "", "Ａ"])

    def _shift(self) -> Any:
        if self._p(0.7):  # far apart: most additions fit
            return [int(self.rng.integers(-40, 41)) * 12, int(self.rng.integers(-3, 4)) * 12, 0]
        return super()._shift()

    def _angles(self) -> Any:
        if self._p(0.6):
            return [self._pick(QUARTERS + [450]) if self._p(0.7) else 0 for _ in range(3)]
        return super()._angles()
