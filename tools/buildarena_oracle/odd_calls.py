"""Odder call sequences than ``generate.CallGenerator``'s, for the fresh held-out set and the fuzz tool.

``OddCallGenerator`` draws from the same live state but reaches further:

* longer builds (a quarter of the sequences run 150-300 calls);
* ids padded (``" 2"``, ``"02"``), in full-width digits (``"２"``), boolean,
  signed, float-spelled, or a list;
* faces in lower case, doubled or multi-letter (``"AB"``, ``"Face A"``),
  full-width, ``None``, an int or a list;
* vectors holding ``None``, strings, booleans or nested lists, whole-vector
  strings and ``None``, boundary shifts (exactly ±0.5, a hair either side,
  ``-0.0``), tiny (``1e-300``) and huge (``1e15``, ``1e308``) components;
* tiny, wrapped and enormous twist angles (``1e-12``, ``359.9999999``,
  ``1e20``), and angles as ``None``, a boolean, a string or a list;
* same-face ``connect_blocks`` (one block, one face) and connections between
  faces already touching;
* a ``shift_block`` often followed by a call on the same neighbourhood (a
  second shift, a twist, an attachment to the moved block, a summary), so
  that overlaps after a shift are asked about;
* more Powered Wheels, attached to wheels and to odd faces;
* many keys per action, so ``review_control_config`` lists several keys.

Plain Python + numpy, importable from either environment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from generate import BLOCKS, FACES, WEIGHTS, AssemblyGenerator, CallGenerator, View

FULL_WIDTH = str.maketrans("0123456789ABCDEF", "０１２３４５６７８９ＡＢＣＤＥＦ")
ODD_IDS: list[Any] = ["0", 0, "999", -1, "A_2", "2.0", 2.5, 1.0, None, "", " 1", "1 ", "01", "+1", "１", True, False,
                      "True", [1], "1e0", "0x1", "\t2"]
ODD_FACE_LABELS: list[Any] = ["AB", "AA", "Face A", "A,B", "a ", "ａ", "Ａ", "G", "", None, 0, 1, ["A"], "top", "É"]
BOUNDARY = [0.5, -0.5, 0.5000001, -0.5000001, 0.4999999, -0.4999999, 0.5 + 1e-12, -0.0, 1e-12, -1e-300, 1e-300]
HUGE = [1e6, -1e6, 1e15, -1e15, 1e300, 1e308, -1e308]
TINY_ANGLES = [1e-12, -1e-12, 1e-300, 5e-324, 1e-7, -0.0]
WRAPPED_ANGLES = [359.9999999, 360.0000001, -359.99, 180.0000001, -180.0000001, 540, -540, 3600, 1e6, 1e20,
                  -1e18, 1e300, 89.99999999, 90.00000001]
ODD_ANGLES: list[Any] = [None, "90", "abc", True, False, [90], ""]

ODD_WEIGHTS: dict[str, float] = {
    **WEIGHTS, "connect_blocks": 10, "shift_block": 9, "change_control_key": 5, "review_control_config": 3,
    "review_control_sequence": 1.5, "add_control_sequence": 2.5,
}


def variant(block_id: str, rng: np.random.Generator) -> Any:
    """An odd spelling of an existing id: padded, zero-led, full-width, boolean, float-spelled."""
    forms: list[Any] = [f" {block_id}", f"{block_id} ", f"0{block_id}", block_id.translate(FULL_WIDTH),
                        f"{block_id}.0", f"+{block_id}", block_id.lower(), block_id.upper()]
    if block_id == "1":
        forms += [True, True]
    if block_id == "0":
        forms += [False]
    if block_id.isdigit():
        forms += [float(block_id), int(block_id)]
    return forms[int(rng.integers(len(forms)))]


class OddCallGenerator(CallGenerator):
    """``CallGenerator`` with the odd arguments and sequences listed in the module docstring."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 29])
        r = self.rng.random()
        if r < 0.25:
            self.length = int(self.rng.integers(150, 301))
        elif r < 0.7:
            self.length = int(self.rng.integers(50, 150))
        else:
            self.length = int(self.rng.integers(10, 50))
        self.follow: str | None = None
        """Id of the block the previous call shifted (the next call often asks about its neighbourhood)."""

    def next_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call given the current state."""
        if not view.started and (index == 0 or self._p(0.7)):
            self.follow = None
            return "start", self._start()
        followed = self.follow if self.follow in view.faces else None
        self.follow = None
        if followed is not None and self._p(0.6):
            op, params = self._after_shift(view, followed)
        else:
            names = list(ODD_WEIGHTS)
            w = np.array([ODD_WEIGHTS[n] for n in names])
            op = names[int(self.rng.choice(len(names), p=w / w.sum()))]
            params = getattr(self, "_" + op)(view)
        if op == "shift_block" and isinstance(params.get("block_id"), (str, int)) and not isinstance(
                params.get("block_id"), bool):
            self.follow = str(params["block_id"])
        return op, params

    def _after_shift(self, view: View, block_id: str) -> tuple[str, dict[str, Any]]:
        """A call about a just-shifted block: shift again, twist, attach to it or next to it, or a summary."""
        r = self.rng.random()
        if r < 0.3:
            return "shift_block", {"block_id": block_id, "shift_real": self._vector(1.0)}
        if r < 0.45:
            return "twist_block", {"block_id": block_id, "angle": self._pick([90, 45, 180, -90, 30])}
        if r < 0.7:
            base = block_id if self._p(0.6) or len(view.faces) < 2 else self._pick(list(view.faces))
            return "attach_block_to", {"base_block": base, "face": self._face(view, base),
                                       "new_block": self._pick(BLOCKS + ["Powered Wheel"])}
        if r < 0.85:
            return "get_machine_summary", {}
        other = self._pick(list(view.faces))
        return "shift_block", {"block_id": other, "shift_real": self._vector(1.0)}

    # odd arguments -----------------------------------------------------------------------------
    def _id(self, view: View, among: list[str] | None = None) -> Any:
        ids = among if among is not None else list(view.faces)
        if ids and self._p(0.82):
            chosen = self._pick(ids)
            if self._p(0.08):
                return variant(chosen, self.rng)
            return int(chosen) if chosen.isdigit() and self._p(0.5) else chosen
        return self._pick(ODD_IDS)

    def _face(self, view: View, block_id: Any) -> Any:
        labels = view.faces.get(str(block_id), [])
        r = self.rng.random()
        if labels and r < 0.78:
            return self._pick(labels)
        if labels and r < 0.86:
            label = self._pick(labels)
            return self._pick([label.lower(), label * 2, label + self._pick(FACES), f" {label}",
                               label.translate(FULL_WIDTH)])
        return self._pick(FACES) if self._p(0.5) else self._pick(ODD_FACE_LABELS)

    def _vector(self, scale: float) -> Any:
        r = self.rng.random()
        if r < 0.5:
            return super()._vector(scale)
        if r < 0.7:  # boundary shifts: one or more components at or a hair around ±0.5
            return [self._pick(BOUNDARY) if self._p(0.6) else 0 for _ in range(3)]
        if r < 0.78:
            return [self._pick(HUGE) if self._p(0.5) else 0 for _ in range(3)]
        if r < 0.9:  # one odd component
            vector: list[Any] = [self._pick([0, 0.25, -0.5, 1]) for _ in range(3)]
            vector[int(self.rng.integers(3))] = self._pick([None, "0.5", "a", "", True, False, [0.5], {"x": 1}])
            return vector
        return self._pick([None, "0,0,1", "", [], [0.5], [None, None, None], [0, 0, 0, 0], {"x": 0, "y": 0, "z": 1},
                           [float("1e-320"), 0, 0], [[0, 0, 0]]])

    def _angle(self) -> Any:
        r = self.rng.random()
        if r < 0.55:
            return self._pick([90, -90, 180, 45, 30, 270, 360, -180, 720, 15.5, 0, 90.0, -45.0, 135])
        if r < 0.72:
            return self._pick(TINY_ANGLES)
        if r < 0.94:
            return self._pick(WRAPPED_ANGLES)
        return self._pick(ODD_ANGLES)

    # operations --------------------------------------------------------------------------------
    def _twist_block(self, view: View) -> dict[str, Any]:
        return {"block_id": self._id(view), "angle": self._angle()}

    def _attach_block_to(self, view: View) -> dict[str, Any]:
        params = super()._attach_block_to(view)
        if self._p(0.2):
            params["new_block"] = "Powered Wheel"
        if self._p(0.03):
            params["new_block"] = self._pick(["powered wheel", "Powered Wheel ", None, ["Torch"], 3])
        return params

    def _connect_blocks(self, view: View) -> dict[str, Any]:
        params = super()._connect_blocks(view)
        if self._p(0.15):  # one face of one block at both ends
            params["block_b"], params["face_b"] = params["block_a"], params["face_a"]
        return params

    def _start(self, view: View | None = None) -> dict[str, Any]:
        params = super()._start(view)
        if self._p(0.1):
            params["init_shift"] = self._vector(2.0)
        if self._p(0.06):
            params["init_rotation"] = self._pick([[self._angle(), 0, 0], [0, self._angle(), 0], [0, 0, self._angle()],
                                                  [90, 0], None, "0,0,0", [0, 0, 0, 0]])
        return params

    def _change_control_key(self, view: View) -> dict[str, Any]:
        params = super()._change_control_key(view)
        if self._p(0.3):
            params["new_key"] = self._pick([f"Alpha{d}" for d in range(10)] + [f"Keypad{d}" for d in range(10)])
        if self._p(0.03):
            params["new_key"] = self._pick(["Ａlpha1", "Alpha１", "UPARROW", "Alpha1 ", "Alpha", None])
        return params


class OddAssemblyGenerator(AssemblyGenerator, OddCallGenerator):
    """``AssemblyGenerator``'s sessions (machines saved with ``to_file``, then an assembly) with odd arguments:
    ids, faces, vectors (shifts of machines included) and angles as ``OddCallGenerator`` draws them."""

    _id = OddCallGenerator._id
