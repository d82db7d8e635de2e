"""Control commands: key bindings of powered blocks and the timed key-press sequence (spec 2.7).

Each block keeps its own key lists (the released code shared one list
between all blocks of a type, so binding a key to one wheel bound it to all).
"""

from __future__ import annotations

import re

from buildbench.suites.buildarena.model import ControlEntry

from .bench import Bench, Outcome, block_key, finite_number
from .captions import block_caption
from .geometry import spec_of

ARROW_KEYS = ("UpArrow", "DownArrow", "LeftArrow", "RightArrow")
_DIGIT_KEY = re.compile(r"^(Alpha|Keypad)[0-9]$")
VALID_KEYS_TEXT = "UpArrow, DownArrow, LeftArrow, RightArrow, Alpha0-Alpha9 and Keypad0-Keypad9"


def is_valid_key(key: object) -> bool:
    """Whether ``key`` is one of the keys the Lua key emulator accepts."""
    return isinstance(key, str) and (key in ARROW_KEYS or _DIGIT_KEY.match(key) is not None)


def _num(x: float) -> str:
    return str(int(x)) if x.is_integer() else repr(x)


def _press(entry: ControlEntry) -> str:
    return (
        f"Press key '{entry.key}' at {_num(entry.time)} seconds and hold for {_num(entry.hold_for)} seconds."
    )


def _bound_actions(bench: Bench, key: str) -> list[str]:
    return [
        f"{action} of block {b.id} '{b.type}'"
        for b in bench.machine.blocks.values()
        for action, keys in b.keys.items()
        if key in keys
    ]


def change_control_key(bench: Bench, block_id: object, action: str, new_key: str) -> Outcome:
    """Bind ``new_key`` (in addition to existing keys) to ``action`` of a powered block."""
    if not is_valid_key(new_key):
        return Outcome(
            f"Key '{new_key}' is not a valid control key, valid keys are {VALID_KEYS_TEXT}, please try again.",
            ok=False,
        )
    block = bench.find(block_id)
    if block is None:
        return Outcome(f"Block {block_key(block_id)} not found, please try again.", ok=False)
    actions = spec_of(block).actions
    if not actions:
        return Outcome(
            f"The block {block.id} <{block.type}> has no controllable locomotion, please try again.", ok=False
        )
    if action not in actions:
        options = ", ".join(actions)
        return Outcome(
            f"Action '{action}' is not available for block {block.id} '{block.type}', available actions: {options}, please try again.",
            ok=False,
        )
    keys = block.keys.setdefault(action, [])
    if new_key not in keys:
        keys.append(new_key)
    caption = block_caption(bench.machine, block, faces=False, controls=True)
    text = f"The control key of action '{action}' of block {block.id} '{block.type}' has been changed into '{new_key}' \n{caption}"
    return Outcome(text, ok=True, changed=True)


def add_control_sequence(bench: Bench, time: object, key: str, hold_for: object) -> Outcome:
    """Press ``key`` at ``time`` seconds for ``hold_for`` seconds; the key must be bound to some action."""
    start = finite_number(time)
    hold = finite_number(hold_for)
    if start is None or start < 0:
        return Outcome(
            f"time must be a finite number of seconds >= 0, got {time!r}, please try again.", ok=False
        )
    if hold is None or hold <= 0:
        return Outcome(
            f"hold_for must be a finite number of seconds > 0, got {hold_for!r}, please try again.", ok=False
        )
    if not isinstance(key, str) or not _bound_actions(bench, key):
        return Outcome(f"Key '{key}' is not in the control key list, please try again.", ok=False)
    entry = ControlEntry(start, key, hold)
    bench.machine.control_sequence.append(entry)
    return Outcome(f"Control sequence added: {_press(entry)}", ok=True, changed=True)


def remove_control_sequence(bench: Bench, index: object) -> Outcome:
    """Remove the entry at 0-based ``index``."""
    seq = bench.machine.control_sequence
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(seq):
        return Outcome(f"Index '{index}' is out of range, please try again.", ok=False)
    entry = seq.pop(index)
    return Outcome(f"Control sequence removed: {_press(entry)}", ok=True, changed=True)


def reset_control_sequence(bench: Bench) -> Outcome:
    """Remove every timed key press."""
    bench.machine.control_sequence.clear()
    return Outcome("The control sequence has been reset.", ok=True, changed=True)


def review_powered_blocks(bench: Bench) -> Outcome:
    """Captions of all powered blocks with their key bindings."""
    powered = [b for b in bench.machine.blocks.values() if spec_of(b).actions]
    if not powered:
        return Outcome("The machine has no powered blocks.", ok=True)
    captions = [block_caption(bench.machine, b, faces=False, controls=True) for b in powered]
    return Outcome("\n".join(["The machine has the following powered blocks:", *captions]), ok=True)


def review_control_config(bench: Bench) -> Outcome:
    """Every bound key with the actions it drives."""
    keys: list[str] = []
    for b in bench.machine.blocks.values():
        for bound in b.keys.values():
            keys += [k for k in bound if k not in keys]
    if not keys:
        return Outcome("No control key has been added to any block yet.", ok=True)
    lines = [f"Key: {k}, Actions: {', '.join(_bound_actions(bench, k))}" for k in keys]
    return Outcome("\n".join(lines), ok=True)


def review_control_sequence(bench: Bench) -> Outcome:
    """The numbered key-press sequence with the actions each press drives."""
    seq = bench.machine.control_sequence
    if not seq:
        return Outcome("No control sequence has been added.", ok=True)
    lines = ["Control Sequence:"]
    for i, entry in enumerate(seq, start=1):
        lines += [f"Sequence {i}:", _press(entry), f"Action: {', '.join(_bound_actions(bench, entry.key))}"]
    return Outcome("\n".join(lines), ok=True)
