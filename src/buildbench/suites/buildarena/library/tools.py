"""Function-calling tool descriptions of the library commands, with the block catalogue injected.

Descriptions are ours, written for the model (the function docstrings are
for programmers). The released code meant to fill the available blocks into
its tool and role texts but never did (spec 4.4); here every description
that names blocks, connectors or keys lists them.
"""

from __future__ import annotations

import inspect
from typing import Any

from buildbench.suites.buildarena.model import Rules, load_catalogue

from .control import VALID_KEYS_TEXT
from .registry import COMMANDS, commands_in

_NUMBER_LIST = {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}
_ID = {"type": ["string", "integer"]}
_SCHEMAS: dict[str, dict[str, Any]] = {
    "base_block": _ID,
    "block_id": _ID,
    "block_a": _ID,
    "block_b": _ID,
    "machine_id": _ID,
    "face": {"type": "string"},
    "face_a": {"type": "string"},
    "face_b": {"type": "string"},
    "new_block": {"type": "string"},
    "connector": {"type": "string"},
    "note": {"type": ["string", "null"]},
    "angle": {"type": "number"},
    "time": {"type": "number"},
    "hold_for": {"type": "number"},
    "index": {"type": "integer"},
    "action": {"type": "string"},
    "new_key": {"type": "string"},
    "key": {"type": "string"},
    "machine_index": {"type": "string"},
    "init_shift": _NUMBER_LIST,
    "init_rotation": _NUMBER_LIST,
    "shift_real": _NUMBER_LIST,
    "position": _NUMBER_LIST,
    "rotation": _NUMBER_LIST,
}
_DESCRIPTIONS = {
    "start": "Create the Starting Block (ID 1), the base of the machine. Optional init_shift [east, north, up] "
    "moves it; init_rotation [yaw, pitch, roll] in degrees turns it; note summarises the machine.",
    "attach_block_to": "Attach a new block at the centre of a free face (a letter) of an existing block. "
    "Available blocks: {blocks}. The answer lists the new block's position and its attachable faces; "
    "a block that would overlap existing blocks is not added.",
    "connect_blocks": "Join two faces of existing blocks with a connector. Available connectors: {connectors}. "
    "Connectors have no volume and occupy no face; they can not be attached to a single face.",
    "remove_block": "Remove a block by id; the faces it occupied become attachable again. "
    "The Starting Block can not be removed.",
    "reset": "Remove every block; the machine must be started again.",
    "twist_block": "Turn a block by an angle in degrees about the normal of the face it is attached to. "
    "Useful to aim torches and water cannons: on a vertical face, 180 degrees turns a block pointing up "
    "to point down; on a top face, 90 degrees turns a block pointing north to point east.",
    "shift_block": "Move a block by [dx, dy, dz] units (+x east, +y north, +z up) to resolve a conflict; "
    "each component must lie within [-{max_shift}, {max_shift}], a larger offset would detach the block.",
    "flip_spin": "Reverse the spinning direction of a Powered Wheel.",
    "get_machine_summary": "List every block with its position and orientation. "
    "Always use it for a final check before finishing.",
    "get_block_details": "Show one block with its position, orientation and attachable faces.",
    "add_machine": "Add a saved machine as the next sub-structure (A, B, ...), optionally shifted by "
    "init_shift [east, north, up] and turned by init_rotation [yaw, pitch, roll] degrees. "
    "Its blocks get ids such as A_2.",
    "remove_machine": "Remove a sub-structure (by letter) with all its blocks.",
    "shift_machine": "Move a sub-structure (by letter) by position [dx, dy, dz] units.",
    "rotate_machine": "Set the rotation [yaw, pitch, roll] in degrees of a sub-structure (by letter) "
    "about its starting block; positive yaw turns clockwise seen from above.",
    "change_control_key": "Bind a key to an action of a powered block (spinning_forward / spinning_backward "
    "for wheels, hold_to_fire for water cannons). Valid keys: " + VALID_KEYS_TEXT + ".",
    "add_control_sequence": "Press a bound key at a time (seconds) and hold it for hold_for seconds.",
    "remove_control_sequence": "Remove the control sequence entry at a 0-based index.",
    "reset_control_sequence": "Remove every control sequence entry.",
    "review_powered_blocks": "List the powered blocks with their actions and bound keys.",
    "review_control_config": "List every bound key with the actions it drives.",
    "review_control_sequence": "List the control sequence with the actions each key press drives.",
}


def _description(name: str, rules: Rules) -> str:
    cat = load_catalogue()
    return _DESCRIPTIONS[name].format(
        blocks=", ".join(cat.buildable()),
        connectors=", ".join(cat.connectors()),
        max_shift=rules.max_shift if rules.max_shift is not None else "any",
    )


def tool_specs(*groups: str, rules: Rules | None = None) -> list[dict[str, Any]]:
    """OpenAI-style function tool specs for the commands of ``groups`` (all groups when none given).

    Args:
        *groups: Tool groups (``build_only``, ``build``, ``refine``, ``default``,
            ``assembly``, ``control``).
        rules: Rules whose limits the descriptions quote (default: ours).
    """
    rules = rules or Rules()
    chosen = commands_in(*groups) if groups else list(COMMANDS.values())
    specs = []
    for command in chosen:
        params = command.parameters()
        properties = {p.name: _SCHEMAS.get(p.name, {"type": "string"}) for p in params}
        required = [p.name for p in params if p.default is inspect.Parameter.empty]
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": command.name,
                    "description": _description(command.name, rules),
                    "parameters": {
                        "type": "object",
                        "properties": properties,
                        "required": required,
                        "additionalProperties": False,
                    },
                },
            }
        )
    return specs
