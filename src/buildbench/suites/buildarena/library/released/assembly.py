"""The released library's assemblies: saved machines placed as sub-structures A, B, … of one machine.

``ReleasedAssembly`` adds ``add_machine``, ``remove_machine``, ``shift_machine``
and ``rotate_machine`` to ``ReleasedMachine``, with the original's behaviour
(listed in the suite README): a saved machine is read from the session's
``files`` at ``<store>/machine/<id>/<id>.json`` and rebuilt from its history;
its blocks are copied into the assembly as ``<letter>_<id>`` and every copy is
made afresh from the sub-structures whenever one is added, moved or removed
(so twists, shifts and occupied faces of copies are forgotten); the letter is
the count of successful additions, never reused after a removal; moving a
sub-structure edits its history (a shift adds the *virtual* offset to the
real ``init_shift``; a rotation re-derives ``init_rotation`` with mismatched
Euler conventions) and rebuilds it; an overlapping move is reported but kept;
an overlapping addition is undone through ``remove_machine``, which is then
recorded in the history; twisting or shifting a block into an overlap crashes.
"""

from __future__ import annotations

import copy
import os
from typing import Any

import numpy as np

from .machine import Crash, ReleasedMachine, saved_path, with_defaults
from .parts import Face, Part, from_real, start_rotation

STORE = "datacache/default"
"""The folder the original finds saved machines under (``dirname`` of its default database path)."""

ASSEMBLY_COMMANDS = ("add_machine", "remove_machine", "shift_machine", "rotate_machine")


def replay(machine: ReleasedMachine, history: list[dict[str, Any]]) -> None:
    """Reset ``machine`` and run ``history`` on it, recording as the original's operation log did.

    The answers are not composed (the log keeps empty results): only the state is wanted.
    """
    machine.reset()
    machine.quiet = True
    try:
        for entry in history:
            op, params = entry["op"], entry["params"]
            if not hasattr(machine, op) or op in ("to_file", "saved_history"):
                continue
            record(machine, op, params)
    finally:
        machine.quiet = False


def record(machine: ReleasedMachine, op: str, params: dict[str, Any]) -> str:
    """Run one call and log it with its defaults filled in when it changed the machine."""
    full = with_defaults(machine, op, params)
    machine.changed = False
    text = getattr(machine, op)(**params)
    if machine.changed and op != "reset":
        machine.history.append({"op": op, "params": full, "result": text})
    return text


def shift_history(machine: ReleasedMachine, shift_real: Any) -> None:
    """Move a whole machine: its start's ``init_shift`` gets the offset's virtual [x, up, north] added."""
    offset = from_real(shift_real)
    for entry in machine.history:
        if entry["params"].get("init_shift") is not None:
            entry["params"]["init_shift"] = (entry["params"]["init_shift"] + offset).tolist()
    replay(machine, list(machine.history))


def rotate_history(machine: ReleasedMachine, yaw: Any, pitch: Any, roll: Any) -> None:
    """Turn a whole machine: the start rotation is composed, read back as z-y-x angles and stored reordered."""
    turn = start_rotation(yaw, pitch, roll)
    for entry in machine.history:
        old = entry["params"].get("init_rotation")
        if old is not None:
            r = turn @ start_rotation(old[0], old[1], old[2])
            yaw_new = np.degrees(np.arctan2(r[1, 0], r[0, 0]))
            pitch_new = np.degrees(np.arcsin(-r[2, 0]))
            roll_new = np.degrees(np.arctan2(r[2, 1], r[2, 2]))
            entry["params"]["init_rotation"] = [pitch_new, roll_new, -yaw_new]
    replay(machine, list(machine.history))


def _posed(owner: Part) -> Part:
    """A copy of ``owner`` whose pose no longer follows the original's (faces still shared)."""
    frozen = copy.copy(owner)
    frozen.orientation = copy.copy(owner.orientation)
    frozen.position = owner.position.copy()
    return frozen


def _face_on(face: Face, owner: Part) -> Face:
    moved = copy.copy(face)
    moved.owner = owner
    return moved


def _snapshot(face: Face | None) -> Face | None:
    return None if face is None else _face_on(face, _posed(face.owner))


def copied(part: Part, key: str) -> Part:
    """``part`` copied as the original's deep copy behaves, listed as ``key``.

    The copy's faces, its base face and its faces' partners are private copies frozen at their
    current poses (so moving or freeing anything later does not reach through); its control keys
    are its own. Block tables, face geometry and colliders are never changed in place and are shared.
    """
    duplicate = _posed(part)
    duplicate.local_id = key
    duplicate.locomotion = copy.deepcopy(part.locomotion)
    duplicate.faces = {label: _face_on(face, duplicate) for label, face in part.faces.items()}
    for face in duplicate.faces.values():
        face.partner = _snapshot(face.partner)
    duplicate.anchor = _snapshot(part.anchor)
    duplicate.end = _snapshot(part.end)
    return duplicate


class ReleasedAssembly(ReleasedMachine):
    """An assembly session; ``files`` holds the saved machines, ``store`` is where it looks for them."""

    assembly = True

    def __init__(self, note: str | None = None, name: str = "assembly",
                 files: dict[str, list[dict[str, Any]]] | None = None, store: str = STORE) -> None:
        super().__init__(note, name, files)
        self.store = store
        self.machines: dict[str, ReleasedMachine] = {}
        self.count = 0
        self.sources: dict[str, str] = {}
        """The saved machine each sub-structure letter was built from."""

    def reset(self) -> str:
        self.__init__(note=self.note, name=self.name, files=self.files, store=self.store)  # type: ignore[misc]
        return "The machine has been reset, please start again."

    def _letter(self) -> str:
        return chr(65 + self.count)

    def _moved_label(self, part: Part) -> str:
        # The original looks the block id up among sub-structures and finds nothing.
        raise Crash("AttributeError: 'NoneType' object has no attribute 'local_index'")

    def outline(self, prefix: str | None = None) -> list[str]:
        """Block and sub-structure counts, then each sub-structure's outline under its letter."""
        lines = [f"Existing Blocks: {len(self.blocks)}", f"Existing Machines: {len(self.machines)}"]
        lines.extend("\n".join(machine.outline(letter)) for letter, machine in self.machines.items())
        return lines

    def _say_assembly(self, pre: str) -> str:
        self.prompt = "\n".join([pre, *self.outline()])
        return self.prompt

    def _copy_blocks(self, letters: list[str]) -> None:
        for letter in letters:
            for key, part in self.machines[letter].blocks.items():
                self.blocks[f"{letter}_{key}"] = copied(part, f"{letter}_{key}")

    def _load(self, machine_id: Any) -> list[dict[str, Any]]:
        path = os.path.join(self.store, "machine", machine_id, f"{machine_id}.json")
        saved = self.files.get(saved_path(path))
        if saved is None:
            raise Crash(f"FileNotFoundError: [Errno 2] No such file or directory: {path!r}")
        return copy.deepcopy(saved)

    # assembly ------------------------------------------------------------------------------
    def add_machine(self, machine_id: Any, init_shift: Any = None, init_rotation: Any = None) -> str:
        history = self._load(machine_id)
        nested = history[0]["op"] != "start"
        sub_name = f"Sub-structure {self.count}"
        sub = (ReleasedAssembly(name=sub_name, files=self.files) if nested
               else ReleasedMachine(name=sub_name, files=self.files))
        replay(sub, history)
        if init_shift is not None:
            shift_history(sub, init_shift)
        if init_rotation is not None:
            rotate_history(sub, init_rotation[0], init_rotation[1], init_rotation[2])
        letter = self._letter()
        sub.local_index = letter
        self.machines[letter] = sub
        self._copy_blocks(list(self.machines))
        self._refresh_colliders()
        if nested:
            self._copy_blocks([letter])
        problem = self._overlaps(f"sub-structure {sub_name}")
        if problem:
            removal = self.remove_machine(letter)
            self.history.append({"op": "remove_machine", "params": {"machine_index": letter}, "result": removal})
            self.changed = False
            return self._say(problem)
        self.changed = True
        self._say_assembly(f"You have successfully added sub-structure {letter} using machine {machine_id}")
        sub.started = True
        self.sources[letter] = str(machine_id)
        self.count += 1
        return self.prompt

    def remove_machine(self, machine_index: Any) -> str:
        if machine_index not in self.machines:
            return self._say(f"Sub-structure {machine_index} not found")
        for key in [key for key in self.blocks if key.startswith(machine_index)]:
            self.blocks.pop(key)
        self.machines.pop(machine_index)
        self.sources.pop(machine_index, None)
        self._copy_blocks(list(self.machines))
        self._refresh_colliders()
        self.changed = True
        return self._say_assembly(f"Removed sub-structure {machine_index}")

    def _moved(self, machine_index: str, pre: str) -> str:
        self._copy_blocks(list(self.machines))
        self._refresh_colliders()
        problem = self._overlaps(f"sub-structure {self.machines[machine_index].local_index}")
        if problem:
            return self._say(problem)
        self.changed = True
        return self._say_assembly(pre)

    def shift_machine(self, machine_index: Any, position: Any) -> str:
        if machine_index not in self.machines:
            return self._say(f"Sub-structure {machine_index} not found")
        shift_history(self.machines[machine_index], position)
        return self._moved(machine_index, f"Shifted sub-structure {machine_index} by {position}")

    def rotate_machine(self, machine_index: Any, rotation: Any) -> str:
        if machine_index not in self.machines:
            return self._say(f"Sub-structure {machine_index} not found")
        rotate_history(self.machines[machine_index], rotation[0], rotation[1], rotation[2])
        return self._moved(machine_index, f"Rotated sub-structure {machine_index} by {rotation}")
