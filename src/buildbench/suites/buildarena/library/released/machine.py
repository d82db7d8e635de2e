"""The released library's machine: every command with the original's checks, order, quirks and crashes.

Each command returns the text the original returned, or raises ``Crash``
with the line the original's exception printed (``Type: message``) after the
same partial state change. Quirks kept on purpose (listed in the suite
README): Ballast may be attached; a non-connector named as connector is
attached at the first face; the starting-block guard checks id ``0``, so
removing block ``1`` deletes it and then crashes; removing a connector
deletes it and then crashes; failed twists and shifts re-list the block last
and undo by the opposite move (leaving rounding noise); all blocks of a type
share one list of control keys; displayed positions come from the base face.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import os
import re
from typing import Any

import numpy as np

from .colliders import Colliders
from .hashorder import set_order
from .parts import ControlEntry, Face, Part, block_table, faces_coincide

ARROW_KEYS = ("UpArrow", "DownArrow", "LeftArrow", "RightArrow")
_DIGIT_KEY = re.compile(r"^(Alpha|Keypad)[0-9]$")
WAIVABLE = ("Ballast",)
"""Disabled blocks that ``attach_block_to`` still accepts."""


class Crash(Exception):
    """The original raised here; the message is its ``Type: message`` line."""


def available_blocks() -> list[str]:
    """Blocks a model may attach (connectors, the starting block and disabled blocks excluded)."""
    return [name for name, raw in block_table().items()
            if raw["type"] in ("basic", "pointer") and name != "Starting Block" and not raw["disable"]]


def available_connectors() -> list[str]:
    """Connector names."""
    return [name for name, raw in block_table().items() if raw["type"] == "connection" and not raw["disable"]]


def _as_key(block_id: Any) -> Any:
    return str(block_id) if isinstance(block_id, int) else block_id


def saved_path(path: str) -> str:
    """The key of a saved file in a session's ``files`` (the same file however its path is spelled)."""
    return os.path.normpath(path)


class ReleasedMachine:
    """State of one released-library session.

    ``name`` names the files ``to_file`` writes into ``files``: saved operation histories by path
    (the original's files on disk, which ``add_machine`` of an assembly reads back).
    """

    assembly = False
    """Assemblies lift the start requirement of ``attach_block_to`` and the id-0 guard of ``remove_block``."""

    def __init__(self, note: str | None = None, name: str = "machine",
                 files: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.note = note
        self.name = name
        self.files: dict[str, list[dict[str, Any]]] = {} if files is None else files
        self.local_index: str | None = None
        self.quiet = False
        """Skip composing answers (a sub-structure's rebuild, whose answers nobody reads)."""
        """Letter of this machine as a sub-structure (cleared by every rebuild, as in the original)."""
        self.blocks: dict[str, Part] = {}
        self.uid = 1
        self.started = False
        self.sequence: list[ControlEntry] = []
        self.prompt = ""
        self.history: list[dict[str, Any]] = []
        self.changed = False
        self.keys: set[str] = set()
        self._locomotion = {name: copy.deepcopy(raw["locomotion"]) for name, raw in block_table().items()}
        self._colliders = Colliders()

    # helpers -----------------------------------------------------------------------------
    def _new_part(self, name: str, anchor: Face | None, note: str | None) -> Part:
        return Part(block_table()[name], str(self.uid) if anchor is not None else "1", anchor, note,
                    self._locomotion[name])

    def _say(self, pre: str | None = None, complete: bool = False, summary: bool = False) -> str:
        if self.quiet:
            self.prompt = ""
            return self.prompt
        lines = [pre] if pre else []
        if summary:
            lines.append(f"Existing Blocks: {len(self.blocks)}")
            if complete:
                lines.append(f"\nMachine Summary: {self.note}")
                lines.extend(block.caption(finished=True) for block in self.blocks.values())
            else:
                lines.append(self.blocks[list(self.blocks)[-1]].caption(finished=False))
        self.prompt = "\n".join(lines)
        return self.prompt

    def _add_collider(self, part: Part) -> None:
        if not part.is_connector:
            self._colliders.add(part.local_id, part.collider)

    def _refresh_colliders(self) -> None:
        self._colliders.clear()
        for part in self.blocks.values():
            self._add_collider(part)

    def _overlaps(self, label: str) -> str | None:
        pairs = self._colliders.overlapping()
        if not pairs:
            return None
        lines = [f"Operation failed! The {label} overlaps with existing blocks and it's been restored to previous "
                 "state already, please try again"]
        for i, j in pairs:
            a, b = self.blocks[i], self.blocks[j]
            lines.append(f"Overlapping detected between <ID {a.local_id}: {a.name}> and <ID {b.local_id}: {b.name}>")
        return "\n".join(lines)

    def _add(self, part: Part) -> str | None:
        self.blocks[str(self.uid)] = part
        self._add_collider(part)
        problem = self._overlaps(f"new block <{self.blocks[str(self.uid)].name}>")
        if problem:
            self._detach(part.local_id)
            self._say(problem)
            return problem
        self.changed = True
        self._say(f"You have successfully added <ID {part.local_id}: {part.name}>.", summary=True)
        self.uid += 1
        return None

    def _detach(self, key: str) -> str:
        part = self.blocks.pop(key)
        if part.local_id not in self._colliders:
            raise Crash(f"ValueError: {part.local_id} not in collision manager!")
        self._colliders.remove(part.local_id)
        if part.anchor is None:
            raise Crash("AttributeError: 'NoneType' object has no attribute 'sticky'")
        part.anchor.free = True
        for face in part.faces.values():
            if face.partner is not None:
                face.partner.free = True
                face.partner.partner = None
        return f"You have successfully removed <ID {part.local_id}: {part.name}>."

    def _moved_label(self, part: Part) -> str:
        """How an overlap message names a twisted or shifted block."""
        return f"block {part.local_id} <{part.name}>"

    def _replace_checked(self, part: Part) -> str | None:
        """Re-list ``part`` last and test every collider (the original's check after a twist or shift)."""
        self.blocks.pop(part.local_id)
        self.blocks[part.local_id] = part
        self._refresh_colliders()
        if not self._colliders.overlapping():
            return None
        problem = self._overlaps(self._moved_label(part))
        if problem:
            self.blocks.pop(part.local_id)
            self.blocks[part.local_id] = part
            self._refresh_colliders()
        return problem

    # build ---------------------------------------------------------------------------------
    def start(self, init_shift: Any = (0, 0, 0), init_rotation: Any = (0, 0, 0), note: Any = None) -> str:
        if self.started:
            return self._say("Machine already exists", complete=True, summary=True)
        part = Part(block_table()["Starting Block"], "1", None, "The starting block", False)
        part.shift(init_shift)
        part.rotate(init_rotation[0], init_rotation[1], init_rotation[2])
        self._add(part)
        self.changed = True
        self.started = True
        self.note = note
        return self.prompt

    def reset(self) -> str:
        self.__init__(note=self.note, name=self.name, files=self.files)  # type: ignore[misc]
        return "The machine has been reset, please start again."

    def attach_block_to(self, base_block: Any, face: Any, new_block: Any, note: Any = None) -> str:
        if not self.started and not self.assembly:
            return self._say("The machine has not been started, please start the machine first.")
        if new_block in available_connectors():
            return self._say("Connectors can not be attached to a single face. "
                             "Use 'connect_blocks' to connect two faces instead.")
        if new_block not in available_blocks() and new_block not in WAIVABLE:
            return self._say(f"Block {new_block} not available, please try again.")
        key = _as_key(base_block)
        if key not in self.blocks:
            return self._say(f"Base block {key} not found, please try again.")
        base = self.blocks[key]
        if face not in base.faces:
            return self._say(f"Base block {base.local_id} {base.name} does not have face {face}, please try again.")
        target = base.faces[face]
        if not target.free:
            return self._say(f"Face {face} of base block {base.local_id} {base.name} is already occupied, "
                             "please try again.")
        part = self._new_part(new_block, target, note)
        target.free = False
        for own in part.faces.values():
            if faces_coincide(target, own):
                own.free = False
                own.partner = target
                target.partner = own
        self._add(part)
        return self.prompt

    def connect_blocks(self, block_a: Any, face_a: Any, block_b: Any, face_b: Any, connector: Any,
                       note: Any = None) -> str:
        if connector in available_blocks():
            return self._say("Basic blocks can not be used as connectors, please try again.")
        key_a, key_b = _as_key(block_a), _as_key(block_b)
        if key_a not in self.blocks:
            return self._say(f"Block {key_a} not found, please try again.")
        if key_b not in self.blocks:
            return self._say(f"Block {key_b} not found, please try again.")
        a, b = self.blocks[key_a], self.blocks[key_b]
        for part, label in ((a, face_a), (b, face_b)):
            if label not in part.faces:
                if not part.faces:
                    return self._say(f"Block {part.local_id} {part.name} does not have any faces, please try again.")
                return self._say(f"Block {part.local_id} {part.name} does not have face {label}, please try again.")
        start, end = a.faces[face_a], b.faces[face_b]
        if np.linalg.norm(start.center - end.center) < 0.01:
            return self._say("The two faces are too close to each other, please try again.")
        if connector not in block_table():
            raise Crash("TypeError: 'NoneType' object is not subscriptable")
        if block_table()[connector]["type"] == "connection":
            _stick_direction(start.center, end.center)
        part = self._new_part(connector, start, note)
        part.end = end
        self._add(part)
        return self.prompt

    def remove_block(self, block_id: Any) -> str:
        key = _as_key(block_id)
        if key == "0" and not self.assembly:
            return self._say("The Starting Block can not be removed")
        if key not in self.blocks:
            return self._say(f"Specified block {key} not found, please try again.")
        message = self._detach(key)
        self.changed = True
        return self._say(message)

    # refine --------------------------------------------------------------------------------
    def twist_block(self, block_id: Any, angle: Any) -> str:
        key = _as_key(block_id)
        if key not in self.blocks:
            return self._say(f"Specified block {key} not found, please try again.")
        part = self.blocks[key]
        part.twist(angle)
        problem = self._replace_checked(part)
        if problem:
            self._say(problem)
            part.twist(angle * -1)
            self._refresh_colliders()
            return self.prompt
        self.changed = True
        return self._say(f"The block {key} <{part.name}> is twisted by {angle} degrees. \n {part.caption(False)}")

    def shift_block(self, block_id: Any, shift_real: Any) -> str:
        key = _as_key(block_id)
        if key not in self.blocks:
            return self._say(f"Specified block {key} not found, please try again.")
        part = self.blocks[key]
        part.shift(shift_real)
        problem = self._replace_checked(part)
        if problem:
            self._say(problem)
            part.shift([value * -1 for value in shift_real])
            self._refresh_colliders()
            return self.prompt
        self.changed = True
        return self._say(f"The block {key} <{part.name}> is shifted by {shift_real}. \n {part.caption(False)}")

    def flip_spin(self, block_id: Any) -> str:
        key = _as_key(block_id)
        if key not in self.blocks:
            return self._say(f"Specified block {key} not found, please try again.")
        part = self.blocks[key]
        if not part.spin:
            return self._say(f"The block {key} <{part.name}> does not spin, please try again.")
        part.flipped = not part.flipped
        self.changed = True
        return self._say(f"The block {key} <{part.name}> is flipped. \n {part.caption(False)}")

    def outline(self, prefix: str | None = None) -> list[str]:
        """How an assembly lists this machine as a sub-structure: its block count and its first block."""
        return [f"Existing Blocks: {len(self.blocks)}",
                self.blocks[list(self.blocks)[0]].caption(finished=False, prefix=prefix)]

    # files ---------------------------------------------------------------------------------
    def saved_history(self) -> list[dict[str, Any]]:
        """The operation history as ``to_file`` writes it: each call's arguments with their defaults filled in."""
        entries = [{"op": h["op"], "params": with_defaults(self, h["op"], h["params"]), "result": h["result"]}
                   for h in self.history]
        return json.loads(json.dumps(entries))

    def to_file(self, output_dir: Any, shift_virtual: Any = (0, 0, 0), rotation: Any = (0, 0, 0, 1)) -> None:
        """Save the history as ``<output_dir>/<name>.json`` into ``files`` (the ``.bsg`` is ``export``'s job).

        The original's checks come first, in its order: the control sequence's end times are summed
        and its times formatted (non-numbers crash), and a machine without a starting block crashes.
        """
        latest: Any = 10
        for entry in self.sequence:
            end = entry.time + entry.hold_for
            if end > latest:
                latest = end
        for entry in self.sequence:  # the original formats them into its control script: non-numbers crash here
            format(entry.time, ".1f"), format(entry.time + entry.hold_for, ".1f")
        starts = [key for key, part in self.blocks.items() if part.name == "Starting Block"]
        if not starts:
            raise Crash("IndexError: list index out of range")
        # The original takes the starting block out to write it first and puts it back last.
        self.blocks[starts[0]] = self.blocks.pop(starts[0])
        self.files[saved_path(os.path.join(output_dir, f"{self.name}.json"))] = self.saved_history()

    # queries -------------------------------------------------------------------------------
    def get_machine_summary(self) -> str:
        return self._say(complete=True, summary=True)

    def get_block_details(self, block_id: Any) -> str:
        key = _as_key(block_id)
        if key in self.blocks:
            return self.blocks[key].caption(finished=False)
        return f"Block {key} not found"

    # control -------------------------------------------------------------------------------
    def _powered(self) -> list[Part]:
        return [part for part in self.blocks.values() if part.locomotion]

    def _bound_keys(self) -> list[str]:
        """Every key bound to an action, block by block and action by action (repeats kept)."""
        return [k for part in self._powered() for keys in part.locomotion.values() for k in keys]  # type: ignore[union-attr]

    def _collect_keys(self) -> None:
        self.keys = set(self._bound_keys())

    def _key_actions(self) -> dict[str, list[str]]:
        """Actions of each bound key, keys in the released library's set order (see ``hashorder``)."""
        bound = self._bound_keys()
        self.keys = set(bound)
        table: dict[str, list[str]] = {k: [] for k in set_order(bound)}
        for part in self._powered():
            for action, keys in part.locomotion.items():  # type: ignore[union-attr]
                for k in keys:
                    table[k].append(f"{action} of block {part.local_id} '{part.name}'")
        return table

    def review_powered_blocks(self) -> str:
        return "\n".join(["The machine has the following powered blocks:",
                          *(part.locomotion_caption() for part in self._powered())])

    def review_control_config(self) -> str:
        table = self._key_actions()
        if not table:
            return "No control key has been added to any block yet."
        return "\n".join(f"Key: {k}, Actions: {', '.join(actions)}" for k, actions in table.items())

    def review_control_sequence(self) -> str:
        if not self.sequence:
            return "No control sequence has been added."
        table = self._key_actions()
        lines = ["Control Sequence:"]
        for i, entry in enumerate(self.sequence):
            lines.append(f"Sequence {i + 1}:")
            lines.append(f"Press key '{entry.key}' at {entry.time} seconds and hold for {entry.hold_for} seconds.")
            if entry.key not in table:
                raise Crash(f"KeyError: {entry.key!r}")
            lines.append(f"Action: {', '.join(table[entry.key]) if table[entry.key] else 'No action'}")
        return "\n".join(lines)

    def change_control_key(self, block_id: Any, action: Any, new_key: Any) -> str:
        if new_key not in ARROW_KEYS and not _DIGIT_KEY.match(new_key):
            return self._say(f"Key '{new_key}' is not in the control key list, please try again.")
        self._collect_keys()
        key = str(block_id)
        if key not in self.blocks:
            return self._say(f"Specified block {block_id} not found, please try again.")
        part = self.blocks[key]
        if not part.locomotion:
            return self._say(f"The block {block_id} '{part.name}' does not have any locomotion actions, "
                             "please try again.")
        assert isinstance(part.locomotion, dict)
        if action not in part.locomotion:
            return self._say(f"Action '{action}' is not in the locomotion actions of the block {block_id} "
                             f"'{part.name}', please try again.")
        part.locomotion[action].append(new_key)
        return self._say(f"The control key of action '{action}' of block {block_id} '{part.name}' has been changed "
                         f"into '{new_key}' \n" + part.locomotion_caption())

    def add_control_sequence(self, time: Any, key: Any, hold_for: Any) -> str:
        self._collect_keys()
        if key not in self.keys:
            return self._say(f"Key '{key}' is not in the control key list, please try again.")
        self.sequence.append(ControlEntry(time, key, hold_for))
        return self._say(f"Control sequence added: Press key '{key}' at {time} seconds and hold for {hold_for} seconds.")

    def remove_control_sequence(self, index: Any) -> str:
        if index < 0 or index >= len(self.sequence):
            return self._say(f"Index '{index}' is out of range, please try again.")
        self.sequence.pop(index)
        if index >= len(self.sequence):
            raise Crash("IndexError: list index out of range")
        entry = self.sequence[index]
        return self._say(f"Control sequence removed: Press key '{entry.key}' at {entry.time} seconds and hold for "
                         f"{entry.hold_for} seconds.")

    def reset_control_sequence(self) -> str:
        self.sequence = []
        return self._say("Control sequence reset to an empty list.")


def method_signature(method: Any) -> inspect.Signature:
    """``inspect.signature(method)``; for a bound method worked out once per function (every
    call of a session, and every step of a replay, asks again, and the answer is the same)."""
    func = getattr(method, "__func__", None)
    return inspect.signature(method) if func is None else _unbound_signature(func)


@functools.lru_cache(maxsize=512)
def _unbound_signature(func: Any) -> inspect.Signature:
    # what inspect answers for the bound method: the function's signature without its first parameter
    signature = inspect.signature(func)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def with_defaults(machine: ReleasedMachine, op: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of a call with every omitted argument at its default, in signature order (as recorded)."""
    bound = method_signature(getattr(machine, op)).bind(**params)
    bound.apply_defaults()
    return dict(bound.arguments)


def _stick_direction(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Unit direction of a connector from ``a`` to ``b``, checked as the released library checked it.

    It built each connector's stick mesh and turned it with an SVD, which fails on a direction
    with a NaN component (ends at infinity or at NaN, e.g. one face connected to itself after an
    overflowing shift); its refusal is kept. A zero-length stick cannot get here (too-close ends
    are refused before).
    """
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        vector = b - a
        direction = vector / np.linalg.norm(vector)
    if np.isnan(direction).any():
        raise Crash("RuntimeError: Failed to align vectors: SVD did not converge")
    return direction
