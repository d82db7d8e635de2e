"""Round-3 odd call sequences: long scripted sequences and loosely typed arguments, for ``differential-odd3``.

``Odd3CallGenerator`` extends ``Odd2CallGenerator`` with whole sequences rather than single odd calls:

* a query after each step (the details of the block just touched, or the summary), so every
  intermediate state is recorded;
* scripts the random draw rarely reaches: attach a block, query it, remove it, attach the same
  block on the same face again (a new id), query; a twist and its inverse, a flip twice; every
  block but the base removed one by one (newest first or oldest first) and the machine rebuilt;
  a control sequence grown to 10-30 entries and emptied out of order; a refused call in the middle
  of a script, which then goes on;
* builds of 600-900 calls that remove and re-add, so ids climb far past the number of blocks;
* argument types the original takes loosely: numeric strings in vectors (``"0.5"``, ``" 0.25"``,
  ``"1e-9"``), ``bool`` components, ints where floats are usual and the reverse (``90`` / ``90.0``
  / ``"90"`` / ``9e1``), ``None`` for an optional argument, an optional argument left out;
* magnitudes of 1e-12 and 1e9 in shifts, start offsets, twists and control times.

``Odd3AssemblyGenerator`` does the same for assemblies: a summary after each assembly step; a
machine added, removed, added again and moved by 1e-12 and 1e9; machine positions and turns as
numeric strings, booleans and ints; ``init_shift``/``init_rotation`` left out or ``None``.

Plain Python + numpy, importable from either environment.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from generate import BLOCKS, CONNECTORS, KEYS, AssemblyView, View
from odd2_calls import Odd2AssemblyGenerator, Odd2CallGenerator

TINY, HUGE = 1e-12, 1e9
LOOSE_COMPONENTS: list[Any] = ["0.5", " 0.25", "1e-9", "-0", "0.1\n", True, False, 0, 0.0, -0, 1, "0x1", "½", "٠.5"]
MAGNITUDE_SHIFTS: list[Any] = [[TINY, 0, 0], [0, -TINY, 0], [TINY, TINY, TINY], [0.5 - TINY, 0, 0],
                               [0.5 + TINY, 0, 0], [HUGE, 0, 0], [0, 0, -HUGE], [1e-12, 1e-12, 0.5]]
START_OFFSETS: list[Any] = [[HUGE, 0, 0], [0, HUGE, HUGE], [TINY, TINY, TINY], [-HUGE, -HUGE, -HUGE],
                            [0, 0, TINY], ["1", "2", "3"], [1, 2.0, "3"], [True, False, True]]
ANGLES: list[Any] = [90, 90.0, "90", 9e1, True, TINY, -TINY, HUGE, HUGE + 90, 1e9 + 0.5, 90 + TINY, 180.0,
                     "180", "-90", " 90", 0, False]
CONTROL_TIMES: list[Any] = [0, 0.0, TINY, HUGE, 1, 1.0, "1", True, 2.5, 1e-300]
STEP_OPS = ("attach_block_to", "connect_blocks", "twist_block", "shift_block", "remove_block", "flip_spin")

Call = tuple[str, dict[str, Any]]
Step = Call | Callable[[View], Call]


class Odd3CallGenerator(Odd2CallGenerator):
    """``Odd2CallGenerator`` with the round-3 scripts and argument types in the module docstring."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 67])
        r = self.rng.random()
        self.length = int(self.rng.integers(600, 901)) if r < 0.1 else int(self.rng.integers(60, 220))
        self.long = self.length >= 600
        self.script: list[Step] = []
        self.known: set[str] = set()
        """Ids seen after the previous call: a new one is the block the call added."""

    def next_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call given the current state."""
        added = [i for i in view.faces if i not in self.known]
        self.known = set(view.faces)
        if self.script:
            step = self.script.pop(0)
            op, params = step(view) if callable(step) else step
        elif view.started and added and self._p(0.5):
            op, params = "get_block_details", {"block_id": self._pick(added)}
        elif view.started and view.faces and self._p(0.08):
            op, params = self._begin_script(view)
        else:
            op, params = super().next_call(view, index)
            params = self._loosen(op, params)
            if op in STEP_OPS and self._p(0.35):  # query what the step did
                target = params.get("block_id", params.get("base_block"))
                self.script.append(("get_block_details", {"block_id": target}) if self._p(0.5)
                                   else ("get_machine_summary", {}))
        self.previous = (op, params)
        return op, params

    # scripts ----------------------------------------------------------------------------------
    def _begin_script(self, view: View) -> Call:
        kind = self._pick(["readd", "readd", "undo", "clear", "control", "error_mid"])
        base = self._pick(list(view.faces))
        faces = view.faces[base] or ["A"]
        face = self._pick(faces)
        block = self._pick(BLOCKS)
        attach: Call = ("attach_block_to", {"base_block": base, "face": face, "new_block": block})
        if kind == "readd":  # attach, query, remove, attach again on the same face, query
            self.script += [_newest_details, _remove_newest, ("get_machine_summary", {}), attach, _newest_details,
                            ("get_block_details", {"block_id": base})]
            return attach
        if kind == "undo":
            angle = self._pick([90, 45, 15.5, TINY, HUGE, 180])
            self.script += [("get_block_details", {"block_id": base}), ("twist_block", {"block_id": base,
                            "angle": -angle}), ("get_block_details", {"block_id": base}),
                            ("flip_spin", {"block_id": base}), ("flip_spin", {"block_id": base}),
                            ("get_block_details", {"block_id": base})]
            return "twist_block", {"block_id": base, "angle": angle}
        if kind == "clear":  # every block but the base removed, then rebuilt
            ids = [i for i in view.faces if i not in ("0", "1")]
            if self._p(0.5):
                ids.reverse()
            for i in ids:
                self.script += [("remove_block", {"block_id": i if self._p(0.5) else int(i) if i.isdigit() else i}),
                                ("get_machine_summary", {})]
            rebuild: list[Step] = [("attach_block_to", {"base_block": "1", "face": f, "new_block": self._pick(BLOCKS)})
                                   for f in ["A", "B", "C", "D", "E", "F"][: int(self.rng.integers(1, 7))]]
            self.script += rebuild + [("get_machine_summary", {}), ("review_powered_blocks", {})]
            return "get_machine_summary", {}
        if kind == "control":  # a long control sequence, emptied out of order
            n = int(self.rng.integers(10, 31))
            for _ in range(n):
                key = self._pick(view.keys) if view.keys and self._p(0.8) else self._pick(KEYS)
                self.script.append(("add_control_sequence", {"time": self._pick(CONTROL_TIMES), "key": key,
                                                             "hold_for": self._pick(CONTROL_TIMES)}))
            self.script.append(("review_control_sequence", {}))
            for _ in range(n + 2):
                self.script += [("remove_control_sequence", {"index": int(self.rng.integers(-1, n))}),
                                ("review_control_sequence", {})]
            return "review_control_config", {}
        # a refused call in the middle of a script, which then goes on
        bad = self._pick([("shift_block", {"block_id": base, "shift_real": [0.9, 0, 0]}),
                          ("attach_block_to", {"base_block": base, "face": "Q", "new_block": block}),
                          ("twist_block", {"block_id": "no such", "angle": 90}),
                          ("connect_blocks", {"block_a": base, "face_a": face, "block_b": base, "face_b": face,
                                              "connector": self._pick(CONNECTORS)}),
                          ("remove_block", {"block_id": "0"}),
                          ("remove_control_sequence", {"index": 0})])
        self.script += [bad, ("get_block_details", {"block_id": base}), _newest_details,
                        ("shift_block", {"block_id": base, "shift_real": [0.25, 0, 0]}),
                        ("get_block_details", {"block_id": base}), ("get_machine_summary", {})]
        return attach

    # loose types and magnitudes -------------------------------------------------------------------
    def _loosen(self, op: str, params: dict[str, Any]) -> dict[str, Any]:
        params = dict(params)
        if op == "shift_block" and self._p(0.3):
            if self._p(0.5):
                params["shift_real"] = self._pick(MAGNITUDE_SHIFTS)
            else:
                params["shift_real"] = [self._pick(LOOSE_COMPONENTS) if self._p(0.5) else 0.25 for _ in range(3)]
        elif op == "start" and self._p(0.35):
            r = self.rng.random()
            if r < 0.4:
                params["init_shift"] = self._pick(START_OFFSETS)
            elif r < 0.6:
                params["init_rotation"] = self._pick([[90, 0.0, "0"], ["90", "0", "0"], [True, 0, 0],
                                                      [TINY, 0, 0], [HUGE, 0, 0], [HUGE + 90, 0, 0]])
            else:
                params = {k: v for k, v in params.items() if k == "note"} if self._p(0.5) else {
                    **params, "note": None}
        elif op == "twist_block" and self._p(0.35):
            params["angle"] = self._pick(ANGLES)
        elif op in ("attach_block_to", "connect_blocks") and self._p(0.15):
            params["note"] = None
        elif op == "add_control_sequence" and self._p(0.4):
            params["time"] = self._pick(CONTROL_TIMES)
            params["hold_for"] = self._pick(CONTROL_TIMES)
        return params


def _newest(view: View) -> str:
    """The highest numeric id (the block added last), or the base."""
    numeric = [int(i) for i in view.faces if i.isdigit()]
    return str(max(numeric)) if numeric else "1"


def _newest_details(view: View) -> Call:
    return "get_block_details", {"block_id": _newest(view)}


def _remove_newest(view: View) -> Call:
    return "remove_block", {"block_id": _newest(view)}


MACHINE_SHIFTS: list[Any] = [[TINY, 0, 0], [0, 0, -TINY], [HUGE, 0, 0], [0, HUGE, 0], ["12", "0", "0"],
                             [12, 0.0, "0"], [True, 0, 0], [12 + TINY, 0, 0]]
MACHINE_TURNS: list[Any] = [["90", "0", "0"], [90, 0.0, 0], [True, False, 0], [TINY, 0, 0], [HUGE, 0, 0],
                            [HUGE + 90, 0, 0], [0, 0, 90 + TINY]]


class Odd3AssemblyGenerator(Odd2AssemblyGenerator):
    """``Odd2AssemblyGenerator`` sessions with the round-3 assembly scripts of the module docstring."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 71])
        self.length = int(self.rng.integers(40, 120))

    def assembly_call(self, view: AssemblyView) -> tuple[str, dict[str, Any]]:
        if self.pending:
            step: Any = self.pending.pop(0)
            return step(view) if callable(step) else step
        if view.saved and self._p(0.1):  # add, remove, add again, move by a hair and far
            name = self._pick(view.saved)
            shift = self._pick(MACHINE_SHIFTS)
            steps: list[Any] = [("get_machine_summary", {}),
                                lambda v: ("remove_machine", {"machine_index": _newest_letter(v)}),
                                ("get_machine_summary", {}), ("add_machine", {"machine_id": name}),
                                lambda v: ("shift_machine", {"machine_index": _newest_letter(v), "position": shift}),
                                ("get_machine_summary", {})]
            self.pending += steps
            return "add_machine", {"machine_id": name, "init_shift": [24, 0, 0]}
        op, params = super().assembly_call(view)
        params = dict(params)
        if op == "add_machine" and self._p(0.3):
            r = self.rng.random()
            if r < 0.3:
                params.pop("init_shift", None)
                params.pop("init_rotation", None)
            elif r < 0.5:
                params["init_shift"] = None
            elif r < 0.6:
                params["init_rotation"] = None
            elif r < 0.8:
                params["init_shift"] = self._pick(MACHINE_SHIFTS)
            else:
                params["init_rotation"] = self._pick(MACHINE_TURNS)
        elif op == "shift_machine" and self._p(0.4):
            params["position"] = self._pick(MACHINE_SHIFTS)
        elif op == "rotate_machine" and self._p(0.4):
            params["rotation"] = self._pick(MACHINE_TURNS)
        if op in ("add_machine", "shift_machine", "rotate_machine", "remove_machine") and self._p(0.5):
            self.pending.append(("get_machine_summary", {}))
        return op, params


def _newest_letter(view: AssemblyView) -> Any:
    # its own name: it once shared ``_newest``'s, and the later definition replaced the machine one for
    # the machine scripts too (AttributeError: 'View' object has no attribute 'substructures')
    """The newest sub-structure's letter when the step runs (letters are given as machines come)."""
    return view.substructures[-1] if view.substructures else "A"
