"""Round-2 odd call sequences: what the odd and edge sets leave alone, for ``differential-odd2``.

``Odd2CallGenerator`` extends ``EdgeCallGenerator`` with:

* blocks shifted to touch or overlap a neighbour by a hair: components of
  ``0.5 ± 1e-9``, ``± 1e-9``, ``0.25 + 1e-9``, a shift undone by its exact
  negation, and runs of small shifts whose float sum lands a bit either side
  of 0.5 (``0.1`` five times, ``0.3 + 0.2``);
* rotations of ``-0.0`` and quarter turns a nanodegree off (``90 ± 1e-9``,
  ``-0.0`` on every axis, ``[180, -0.0, 180]``, ``[-90, -90, -90]``),
  and twists of ``-0.0``, ``360.0``, ``±1e-9``, ``NaN`` and ``±inf``;
* NaN and infinity in ``init_shift`` and ``init_rotation``;
* empty and one-element vectors (``[]``, ``[0.5]``, ``[-0.0]``);
* ids Python's ``int`` reads as another number (``"1_0"``, ``"١"``,
  ``"१"``, ``"1\\n"``, ``"\\u20081"``) and unicode look-alikes;
* out-of-order calls: ``start`` again in the middle of a build, queries and
  control on a block just removed, a removed block re-used as a base;
* calls right after an error: a refused attachment tried again on each other
  face of the same block, a refused shift followed by the same shift halved;
* the smallest and largest sequences: 1-3 calls (some never started) and
  attach-heavy builds of 450-650 calls.

Plain Python + numpy, importable from either environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from edge_calls import EDGE_WEIGHTS, EdgeAssemblyGenerator, EdgeCallGenerator
from generate import BLOCKS, AssemblyView, View

HAIR = 1e-9
TOUCH = [0.5 - HAIR, 0.5 + HAIR, -0.5 + HAIR, -0.5 - HAIR, HAIR, -HAIR, 0.25 + HAIR, -0.0, 0.5, -0.5]
ROTATIONS: list[Any] = [[-0.0, -0.0, -0.0], [180, -0.0, 180], [-90, -90, -90], [270, 270, 270],
                        [90 + HAIR, 0, 0], [0, 90 - HAIR, 0], [0, 0, -90 - HAIR], [HAIR, 0, 0], [-0.0, 90, -0.0],
                        [360.0, -360.0, 0], [], [90], [-0.0], [0, 0]]
SHIFTS: list[Any] = [[], [0.5], [-0.0], [-0.0, -0.0, -0.0], [HAIR, HAIR, HAIR], [1e-9, 0, 5], [0, 0, 1e-300]]
NON_FINITE: list[Any] = [[float("nan"), 0, 0], [0, float("inf"), 0], [0, 0, float("-inf")]]
"""Rare: a sequence that reaches a non-finite position is compared only until then (FCL answers erratically)."""
TWISTS: list[Any] = [-0.0, 360.0, -360.0, HAIR, -HAIR, 90 + HAIR, 90 - HAIR, 180 + HAIR, -270 - HAIR,
                     float("nan"), float("inf"), float("-inf"), 0.0]
INT_LOOKALIKES = ["1_0", "١", "१", "٢", "1\n", "\u20081", "1\u200b", "²", "Ⅰ", "0_1", "0o1"]

ODD2_WEIGHTS: dict[str, float] = {**EDGE_WEIGHTS, "shift_block": 14, "twist_block": 12, "remove_block": 7}


class Odd2CallGenerator(EdgeCallGenerator):
    """``EdgeCallGenerator`` with the round-2 edges listed in the module docstring."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 53])
        r = self.rng.random()
        if r < 0.08:
            self.length = int(self.rng.integers(1, 4))
        elif r < 0.16:
            self.length = int(self.rng.integers(450, 651))
        else:
            self.length = int(self.rng.integers(40, 160))
        self.long = self.length >= 450
        self.queue: list[tuple[str, dict[str, Any]]] = []
        """Calls decided by an earlier one (a shift's undoing, the steps of a sum, retries)."""
        self.removed: list[str] = []

    def next_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call given the current state."""
        if self.queue:
            op, params = self.queue.pop(0)
        elif self.length <= 3 and index == 0 and self._p(0.4):
            op, params = self._pick([("get_machine_summary", {}), ("reset", {}), ("twist_block",
                                     {"block_id": 0, "angle": -0.0}), ("shift_block", {"block_id": "0",
                                     "shift_real": [HAIR, 0, 0]})])
        else:
            op, params = self._odd2_call(view, index)
        self.previous = (op, params)
        return op, params

    def _odd2_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        if not view.started:
            return super()._edge_call(view, index)
        r = self.rng.random()
        if self.long and r < 0.55:
            return "attach_block_to", self._attach_block_to(view)
        if r < 0.04:  # start again in the middle of a build
            return "start", self._start()
        if r < 0.1 and self.removed:
            gone = self._pick(self.removed)
            return self._pick([("get_block_details", {"block_id": gone}), ("flip_spin", {"block_id": gone}),
                               ("twist_block", {"block_id": gone, "angle": 90}),
                               ("attach_block_to", {"base_block": gone, "face": "A", "new_block": "Torch"}),
                               ("shift_block", {"block_id": gone, "shift_real": [0.1, 0, 0]})])
        if r < 0.14 and len(view.faces) > 1:  # a refused attachment tried on every other face
            base = self._pick(list(view.faces))
            block = self._pick(BLOCKS)
            faces = list(view.faces[base])
            self.queue += [("attach_block_to", {"base_block": base, "face": f, "new_block": block})
                           for f in faces[1:4]]
            return "attach_block_to", {"base_block": base, "face": faces[0] if faces else "A", "new_block": block}
        names = list(ODD2_WEIGHTS)
        weights = [ODD2_WEIGHTS[n] for n in names]
        total = sum(weights)
        op = names[int(self.rng.choice(len(names), p=[w / total for w in weights]))]
        params = getattr(self, "_" + op)(view)
        if op == "remove_block" and isinstance(params.get("block_id"), str | int) and str(
                params["block_id"]) in view.faces:
            self.removed.append(str(params["block_id"]))
        return op, params

    def _id(self, view: View, among: list[str] | None = None) -> Any:
        if self._p(0.04):
            return self._pick(INT_LOOKALIKES)
        return super()._id(view, among)

    def _start(self, view: View | None = None) -> dict[str, Any]:
        params = super()._start(view)
        if self._p(0.3):
            params["init_rotation"] = self._pick(ROTATIONS)
        if self._p(0.2):
            params["init_shift"] = self._pick(SHIFTS + [[self._pick(TOUCH) for _ in range(3)]])
        if self._p(0.015):
            params[self._pick(["init_rotation", "init_shift"])] = self._pick(NON_FINITE)
        return params

    def _twist_block(self, view: View) -> dict[str, Any]:
        params = super()._twist_block(view)
        if self._p(0.45):
            params["angle"] = self._pick(TWISTS)
        return params

    def _shift_block(self, view: View) -> dict[str, Any]:
        params = super()._shift_block(view)
        block = params["block_id"]
        r = self.rng.random()
        if r < 0.3:
            vector = [self._pick(TOUCH) if self._p(0.6) else 0 for _ in range(3)]
            params["shift_real"] = vector
            if self._p(0.5):  # undone by its exact negation
                self.queue.append(("shift_block", {"block_id": block, "shift_real": [-v for v in vector]}))
        elif r < 0.45:  # steps whose float sum lands a hair off 0.5
            axis = int(self.rng.integers(3))
            steps = self._pick([[0.1] * 5, [0.3, 0.2], [0.2, 0.2, 0.1], [0.25, 0.25 + HAIR], [0.1] * 6])
            unit = [[s if i == axis else 0 for i in range(3)] for s in steps]
            params["shift_real"] = unit[0]
            self.queue += [("shift_block", {"block_id": block, "shift_real": v}) for v in unit[1:]]
            self.queue.append(("get_machine_summary", {}))
        elif r < 0.55:
            params["shift_real"] = self._pick(SHIFTS + NON_FINITE) if self._p(0.1) else self._pick(SHIFTS)
        elif r < 0.62:  # refused, then the same halved
            vector = [self._pick([0.8, -0.8, 1.0, 0]) for _ in range(3)]
            params["shift_real"] = vector
            self.queue.append(("shift_block", {"block_id": block, "shift_real": [v / 2 for v in vector]}))
        elif _unbounded(params["shift_real"]) and self._p(0.85):  # the odd set has these; keep builds finite
            params["shift_real"] = [self._pick(TOUCH) for _ in range(3)]
        return params


def _unbounded(vector: Any) -> bool:
    """Whether a vector holds ``None`` (NaN to numpy), a non-finite number or one beyond 1e150."""
    if not isinstance(vector, list):
        return False
    for v in vector:
        if v is None or isinstance(v, list) and _unbounded(v):
            return True
        if isinstance(v, float | int) and not isinstance(v, bool) and not abs(v) <= 1e150:
            return True
    return False


ODD2_SHIFT_NUDGES = [0.0, HAIR, -HAIR, -0.0]
ODD2_ANGLES: list[Any] = [[-0.0, -0.0, -0.0], [90 + HAIR, 0, 0], [0, 0, 360.0], [180, -0.0, 180], [-90, -90, -90],
                          [270, 0, -270], [], [90], [0, 0]]


class Odd2AssemblyGenerator(EdgeAssemblyGenerator):
    """``EdgeAssemblyGenerator`` sessions with round-2 edges: machines placed to touch or overlap by
    1e-9 (whole-unit shifts nudged by ``±1e-9`` or ``-0.0``), ``-0.0`` and nanodegree-off turns,
    empty and one-element vectors, look-alike machine names (``"m0 "``, ``"M0"``, full-width), the
    same machine added again right after, and a removal followed by an addition of the same machine."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 59])
        self.machine_names = ["m0", "m1"][: int(self.rng.integers(1, 3))]
        self.machine_lengths = [int(self.rng.integers(6, 16)) for _ in self.machine_names]
        self.length = int(self.rng.integers(30, 90))
        self.pending: list[tuple[str, dict[str, Any]]] = []

    def assembly_call(self, view: AssemblyView) -> tuple[str, dict[str, Any]]:
        if self.pending:
            return self.pending.pop(0)
        op, params = super().assembly_call(view)
        if op == "add_machine" and self._p(0.15):
            self.pending.append((op, dict(params)))  # the same machine again, same place
        elif op == "remove_machine" and view.saved and self._p(0.5):
            self.pending.append(("add_machine", {"machine_id": self._pick(view.saved), "init_shift": self._shift()}))
        return op, params

    def _add_machine(self, view: AssemblyView) -> dict[str, Any]:
        params = super()._add_machine(view)
        if view.saved and self._p(0.08):
            params["machine_id"] = self._pick(["m0 ", "M0", "ｍ0", "m0\u200b", "m1\n"])
        return params

    def _shift(self) -> Any:
        r = self.rng.random()
        if r < 0.5:  # whole units apart, nudged: blocks touch, or overlap or part by a hair
            return [int(self.rng.integers(-3, 4)) + self._pick(ODD2_SHIFT_NUDGES),
                    int(self.rng.integers(-1, 2)) + self._pick(ODD2_SHIFT_NUDGES), self._pick([0, -0.0, HAIR])]
        if r < 0.6:
            return self._pick([[], [1], [-0.0], [0.5 + HAIR, 0, 0]])
        return super()._shift()

    def _angles(self) -> Any:
        if self._p(0.4):
            return self._pick(ODD2_ANGLES)
        return super()._angles()
