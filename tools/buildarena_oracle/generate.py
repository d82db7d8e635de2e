"""Seeded random call sequences for the BuildArena geometry library (a developer tool).

The generator chooses each call from the live state of the library it drives
(which ids exist, which faces each block has, which blocks are powered), so it
runs beside the original library in ``run_original.py``. It is plain Python +
numpy and never imports either library.

Coverage: every operation of the build, refine, query and control groups;
every block and connector (Ballast and the Starting Block included); every
face label plus invalid ones; ids as int and str plus unknown, zero, float and
None ids; out-of-range shifts, wrapped and fractional twist angles, wrongly
typed arguments; short builds (10-49 calls) and long ones (50-150 calls).
``odd_calls.py`` extends both generators with longer builds and odder
arguments (the odd held-out set and the fuzz tool use it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

BLOCKS = ["Small Wooden Block", "Powered Wheel", "Water Cannon", "Torch"]
CONNECTORS = ["Brace", "Winch"]
ODD_BLOCKS = ["Ballast", "Starting Block", "Wheel", "Wooden Block", "small wooden block", ""]
FACES = list("ABCDEF")
ODD_FACES = ["G", "a", "top", "", "E ", "Z"]
ACTIONS = ["spinning_forward", "spinning_backward", "hold_to_fire", "fly"]
KEYS = ["UpArrow", "DownArrow", "LeftArrow", "RightArrow", "Alpha1", "Alpha0", "Keypad3", "Keypad9"]
ODD_KEYS = ["Alpha10", "Space", "alpha2", "Keypad", "W"]
NOTES = [None, None, None, "left wheel", "frame", "thruster", "Top of the frame", "brace (diagonal)"]

#: Relative weight of each operation once the machine is started.
WEIGHTS: dict[str, float] = {
    "attach_block_to": 36, "connect_blocks": 9, "twist_block": 8, "shift_block": 7,
    "get_machine_summary": 7, "get_block_details": 7, "remove_block": 5, "flip_spin": 4,
    "start": 1.5, "reset": 0.6, "change_control_key": 3, "add_control_sequence": 2,
    "remove_control_sequence": 1, "reset_control_sequence": 0.5, "review_powered_blocks": 1,
    "review_control_config": 1, "review_control_sequence": 1,
}


@dataclass
class View:
    """What the generator may know of the library's state.

    Attributes:
        started: Whether ``start`` has succeeded since the last reset.
        faces: Face labels of each block id, in listing order.
        powered: Ids of blocks with control actions.
        keys: Keys bound to any action.
        sequence_length: Entries in the control sequence.
    """

    started: bool
    faces: dict[str, list[str]]
    powered: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    sequence_length: int = 0


class CallGenerator:
    """Draws one call at a time; the same seed and the same answers give the same calls."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 13])
        self.length = int(self.rng.integers(50, 151)) if self.rng.random() < 0.6 else int(self.rng.integers(10, 50))

    def _p(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def _pick(self, items: list[Any]) -> Any:
        return items[int(self.rng.integers(len(items)))]

    def next_call(self, view: View, index: int) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call given the current state."""
        if not view.started and (index == 0 or self._p(0.7)):
            return "start", self._start()
        names = list(WEIGHTS)
        w = np.array([WEIGHTS[n] for n in names])
        op = names[int(self.rng.choice(len(names), p=w / w.sum()))]
        return op, getattr(self, "_" + op)(view)

    # ids, faces, numbers --------------------------------------------------------------
    def _id(self, view: View, among: list[str] | None = None) -> Any:
        ids = among if among is not None else list(view.faces)
        if ids and self._p(0.88):
            chosen = self._pick(ids)
            return int(chosen) if chosen.isdigit() and self._p(0.5) else chosen
        return self._pick(["0", 0, "999", 57, "-1", "A_2", "2.0", 2.5, None, "", "1 "])

    def _face(self, view: View, block_id: Any) -> str:
        labels = view.faces.get(str(block_id), [])
        if labels and self._p(0.85):
            return self._pick(labels)
        return self._pick(FACES) if self._p(0.7) else self._pick(ODD_FACES)

    def _vector(self, scale: float) -> list[Any]:
        r = self.rng.random()
        if r < 0.6:
            return [float(self._pick([-0.5, -0.25, 0, 0.25, 0.5, 0.1, -0.1])) * scale for _ in range(3)]
        if r < 0.8:
            return [int(self._pick([-2, -1, 0, 1, 2, 3])) for _ in range(3)]
        if r < 0.95:
            return [round(float(self.rng.uniform(-1.5, 1.5)), 3) for _ in range(3)]
        return self._pick([[0.5, 0], [1e7, 0, 0], ["a", 0, 0], [0, 0, 0, 0]])

    def _note(self) -> str | None:
        return self._pick(NOTES)

    # operations -------------------------------------------------------------------------
    def _start(self, view: View | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self._p(0.5):
            params["init_shift"] = self._pick([[0, 0, 0], [0, 0, 5], [1, 2, 3], [0.5, -0.5, 0], [-3, 0, 1.5]])
        if self._p(0.4):
            params["init_rotation"] = self._pick(
                [[0, 0, 0], [90, 0, 0], [0, 90, 0], [0, 0, 90], [45, 0, 0], [30, 20, 10], [180, 0, 0], [0, -90, 0]])
        if self._p(0.3):
            params["note"] = self._pick(["a car", "bridge spine", "rocket"])
        return params

    def _attach_block_to(self, view: View) -> dict[str, Any]:
        base = self._id(view)
        r = self.rng.random()
        block = self._pick(BLOCKS) if r < 0.86 else self._pick(ODD_BLOCKS + CONNECTORS)
        if r < 0.86 and self._p(0.35):
            block = "Small Wooden Block"
        params = {"base_block": base, "face": self._face(view, base), "new_block": block}
        note = self._note()
        if note is not None:
            params["note"] = note
        return params

    def _connect_blocks(self, view: View) -> dict[str, Any]:
        a, b = self._id(view), self._id(view)
        r = self.rng.random()
        conn = self._pick(CONNECTORS) if r < 0.85 else self._pick(["Rope", "Ballast", "Small Wooden Block",
                                                                    "Starting Block", "Torch"])
        params = {"block_a": a, "face_a": self._face(view, a), "block_b": b, "face_b": self._face(view, b),
                  "connector": conn}
        if self._p(0.2):
            params["note"] = "brace"
        return params

    def _twist_block(self, view: View) -> dict[str, Any]:
        angle: Any = self._pick([90, -90, 180, 45, 30, 270, 360, -180, 720, 15.5, 0, 90.0, -45.0, 135, 1000])
        if self._p(0.02):
            angle = "90"
        return {"block_id": self._id(view), "angle": angle}

    def _shift_block(self, view: View) -> dict[str, Any]:
        return {"block_id": self._id(view), "shift_real": self._vector(1.0)}

    def _get_machine_summary(self, view: View) -> dict[str, Any]:
        return {}

    def _get_block_details(self, view: View) -> dict[str, Any]:
        return {"block_id": self._id(view)}

    def _remove_block(self, view: View) -> dict[str, Any]:
        return {"block_id": self._id(view)}

    def _flip_spin(self, view: View) -> dict[str, Any]:
        wheels = view.powered if view.powered and self._p(0.6) else None
        return {"block_id": self._id(view, wheels)}

    def _reset(self, view: View) -> dict[str, Any]:
        return {}

    def _change_control_key(self, view: View) -> dict[str, Any]:
        target = self._id(view, view.powered if view.powered and self._p(0.8) else None)
        key = self._pick(KEYS) if self._p(0.85) else self._pick(ODD_KEYS)
        return {"block_id": target, "action": self._pick(ACTIONS), "new_key": key}

    def _add_control_sequence(self, view: View) -> dict[str, Any]:
        key = self._pick(view.keys) if view.keys and self._p(0.75) else self._pick(KEYS + ODD_KEYS)
        return {"time": self._pick([0, 0.5, 1, 2.5, 10, 1.25]), "key": key,
                "hold_for": self._pick([1, 0.5, 3, 2.0, 30])}

    def _remove_control_sequence(self, view: View) -> dict[str, Any]:
        return {"index": int(self.rng.integers(-1, view.sequence_length + 2))}

    def _reset_control_sequence(self, view: View) -> dict[str, Any]:
        return {}

    def _review_powered_blocks(self, view: View) -> dict[str, Any]:
        return {}

    def _review_control_config(self, view: View) -> dict[str, Any]:
        return {}

    def _review_control_sequence(self, view: View) -> dict[str, Any]:
        return {}


# assemblies ---------------------------------------------------------------------------------
STORE = "datacache/default"
"""Folder the original reads saved machines from (``dirname`` of its default ``db_path``)."""

ASSEMBLY_WEIGHTS: dict[str, float] = {
    "add_machine": 6, "shift_machine": 4, "rotate_machine": 3, "remove_machine": 1.5,
    "get_machine_summary": 2, "get_block_details": 2.5, "attach_block_to": 3, "connect_blocks": 3,
    "twist_block": 1, "shift_block": 1, "remove_block": 1, "flip_spin": 0.5, "change_control_key": 0.7,
    "add_control_sequence": 0.5, "review_powered_blocks": 0.3, "review_control_config": 0.3, "reset": 0.15,
}


#: Machine sessions build more and break less than ``WEIGHTS`` (they are saved and reused).
MACHINE_WEIGHTS: dict[str, float] = {
    **WEIGHTS, "attach_block_to": 50, "connect_blocks": 6, "remove_block": 1.5, "reset": 0.1,
    "get_machine_summary": 2, "get_block_details": 2,
}


def output_dir(name: str) -> str:
    """Where ``to_file`` saves machine ``name`` so that ``add_machine(name)`` finds it."""
    return f"{STORE}/machine/{name}"


@dataclass
class AssemblyView(View):
    """The generator's view of an assembly: also its sub-structure letters and the saved machine names."""

    substructures: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)


class AssemblyGenerator(CallGenerator):
    """Sequences of several sessions: 2-3 machines built and saved with ``to_file``, then one assembly.

    Machines are short builds (8-30 calls) drawn like ``CallGenerator``'s; one in ten is saved before
    ``start`` or after a ``reset`` (which the original refuses). The assembly session (15-60 calls)
    adds, shifts, rotates and removes sub-structures (saved, unknown, empty and non-string machine
    ids; shifts small enough to collide and large enough not to; short vectors) and builds across them
    with the block operations, ids being compound (``A_3``) or plain.
    """

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rng = np.random.default_rng([seed, 17])
        self.machine_names = [f"m{i}" for i in range(int(self.rng.integers(2, 4)))]
        self.machine_lengths = [int(self.rng.integers(8, 31)) for _ in self.machine_names]
        self.length = int(self.rng.integers(15, 61))

    def machine_call(self, view: View, index: int, length: int, name: str) -> tuple[str, dict[str, Any]]:
        """The ``index``-th call of a machine session of ``length`` calls (the last one saves it)."""
        if index == length - 1:
            return "to_file", {"output_dir": output_dir(name)}
        if index == length - 2 and self._p(0.05):
            return "reset", {}
        if not view.started and (index == 0 or self._p(0.7)):
            return "start", self._start()
        names = list(MACHINE_WEIGHTS)
        w = np.array([MACHINE_WEIGHTS[n] for n in names])
        op = names[int(self.rng.choice(len(names), p=w / w.sum()))]
        if op == "remove_block" and self._p(0.7):
            # mostly the last blocks, so that the starting block usually survives
            return op, {"block_id": list(view.faces)[-1] if len(view.faces) > 1 else "999"}
        return op, getattr(self, "_" + op)(view)

    def _id(self, view: View, among: list[str] | None = None) -> Any:
        ids = among if among is not None else list(view.faces)
        if ids and self._p(0.96):
            chosen = self._pick(ids)
            return int(chosen) if chosen.isdigit() and self._p(0.3) else chosen
        return self._pick(["0", 0, "999", "A_9", 2.5, None, "1 "])

    def assembly_call(self, view: AssemblyView) -> tuple[str, dict[str, Any]]:
        """One call of the assembly session."""
        names = list(ASSEMBLY_WEIGHTS)
        w = np.array([ASSEMBLY_WEIGHTS[n] for n in names])
        op = names[int(self.rng.choice(len(names), p=w / w.sum()))]
        if op in ("add_machine", "shift_machine", "rotate_machine", "remove_machine"):
            return op, getattr(self, "_" + op)(view)
        if op in ("reset", "get_machine_summary", "review_powered_blocks", "review_control_config"):
            return op, {}
        return op, getattr(self, "_" + op)(view)

    def _letter(self, view: AssemblyView) -> Any:
        if view.substructures and self._p(0.85):
            return self._pick(view.substructures)
        return self._pick(["A", "B", "C", "Z", "", "a", 0, None])

    def _shift(self) -> Any:
        r = self.rng.random()
        if r < 0.45:
            return [int(self._pick([-6, -4, -3, 0, 3, 4, 6])), int(self._pick([-4, 0, 0, 4])),
                    int(self._pick([0, 0, 1, 3]))]
        if r < 0.85:
            return self._vector(2.0)
        return self._pick([[1, 0], [0, 0, 0], ["x", 0, 0], [10, 10, 10]])

    def _angles(self) -> Any:
        if self._p(0.9):
            return [self._pick([0, 0, 90, -90, 180, 45, 30]), self._pick([0, 0, 0, 90, 45]),
                    self._pick([0, 0, 0, 90, -30])]
        return self._pick([[90, 0], [0, 0, 0], ["90", 0, 0]])

    def _add_machine(self, view: AssemblyView) -> dict[str, Any]:
        machine = self._pick(view.saved) if view.saved and self._p(0.9) else self._pick(["m9", "", 3, None])
        params: dict[str, Any] = {"machine_id": machine}
        if self._p(0.75):
            params["init_shift"] = self._shift()
        if self._p(0.35):
            params["init_rotation"] = self._angles()
        return params

    def _shift_machine(self, view: AssemblyView) -> dict[str, Any]:
        return {"machine_index": self._letter(view), "position": self._shift()}

    def _rotate_machine(self, view: AssemblyView) -> dict[str, Any]:
        return {"machine_index": self._letter(view), "rotation": self._angles()}

    def _remove_machine(self, view: AssemblyView) -> dict[str, Any]:
        return {"machine_index": self._letter(view)}
