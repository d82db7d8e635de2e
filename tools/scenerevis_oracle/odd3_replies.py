"""Round-3 odd replies, for the ``differential-original-odd3`` set (``run_original.py --odd3``).

Round 3 records long editing chains (``--steps 30``) where each turn builds on the scene the
release holds after every earlier turn, and argument types the release takes loosely.
:class:`Odd3ReplyGenerator` draws one detail per reply:

* ``valid``: coordinates and sizes written as integers (``[1, 0, 2]``), a quaternion of integers;
  an object moved by 1e-12 m, or moved away and back in one reply; every object moved a hair and
  back (a reply of 2n calls); an ``add_object`` with extra keys the tool does not take, or with
  integer position and size (the only edits left once a chain has removed every jid); an object
  removed and then its jid moved in the same reply (a refused call after an applied one);
* ``no_op``: a jid that is ``null``, an integer, or the jid in a one-element list; a call on an
  unknown jid in the middle of valid calls;
* ``stored``: a position of numeric strings, a coordinate of 1e9 m, a size of 1e-12 m, a
  ``new_position`` that is ``null``; ``add_object`` with no ``rotation`` or no ``size`` (the
  release's own default, if any);
* ``raises``: ``add_object`` with ``group_name`` ``null`` (the release calls ``.lower()`` on it).

Determinism: all draws come from ``numpy.random.default_rng([seed, room_index, step, 13])``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from generate import Reply, _reply_text
from odd2_replies import Odd2ReplyGenerator, _id

TINY, HUGE = 1e-12, 1e9
ODD3_FAULTS = {
    "valid": ("int_values", "tiny_move", "away_and_back", "hair_and_back_all", "extra_key", "removed_then_moved",
              "int_add"),
    "no_op": ("null_jid", "int_jid", "listed_jid", "unknown_mid"),
    "stored": ("string_numbers", "giga_coordinate", "pico_size", "null_position", "no_rotation", "no_size"),
    "raises": ("null_group",),
}
#: ``stored`` and ``raises`` end a recorded chain, so they are drawn rarely.
ODD3_KIND_WEIGHTS = {"valid": 0.74, "no_op": 0.22, "stored": 0.025, "raises": 0.015}


class Odd3ReplyGenerator(Odd2ReplyGenerator):
    """Replies for one room with the round-3 details of the module docstring."""

    def next(self, scene: dict[str, Any], step: int, *, last: bool) -> Reply:
        rng = np.random.default_rng([self.seed, self.room_index, step, 13])
        calls: list[Any] = [self._valid_call(rng, scene) for _ in range(int(rng.integers(0, 3)))]
        kinds = sorted(ODD3_FAULTS)
        kind = str(rng.choice(kinds, p=[ODD3_KIND_WEIGHTS[k] for k in kinds]))
        detail = str(rng.choice(ODD3_FAULTS[kind]))
        objects = [o for o in scene.get("objects") or [] if o.get("jid") or o.get("uid")]
        if not objects:
            kind, detail = "valid", str(rng.choice(["extra_key", "int_add"]))
        body = self._odd3_calls(rng, scene, objects, calls, detail)
        if last and rng.random() < 0.5:
            body.append({"name": "terminate", "arguments": {"reason": "done"}})
        return Reply(_reply_text(step, body), kind, detail)

    def _odd3_calls(self, rng: np.random.Generator, scene: dict[str, Any], objects: list[dict[str, Any]],
                    calls: list[Any], detail: str) -> list[Any]:
        add: dict[str, Any] = {"object_description": "Small side table", "position": [0.3, 0.0, 0.3],
                               "rotation": [0, 0, 0, 1], "size": [0.5, 0.5, 0.5]}
        first = objects[int(rng.integers(0, len(objects)))] if objects else None
        jid = _id(first) if first is not None else ""
        pos = [float(v) for v in first["pos"]] if first is not None else [0.0, 0.0, 0.0]
        made: list[Any]
        if detail == "int_values":
            made = [{"name": "move_object", "arguments": {"jid": jid, "new_position": [round(v) for v in pos]}},
                    {"name": "scale_object", "arguments": {"jid": jid, "new_size": [1, 1, 1]}},
                    {"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": [0, 1, 0, 0]}}]
        elif detail == "tiny_move":
            made = [_move(jid, [pos[0] + TINY, pos[1], pos[2] - TINY])]
        elif detail == "away_and_back":
            made = [_move(jid, self._position(rng, scene)), _move(jid, pos)]
        elif detail == "hair_and_back_all":
            made = [_move(_id(o), [float(o["pos"][0]) + 1e-9, float(o["pos"][1]), float(o["pos"][2])])
                    for o in objects]
            made += [_move(_id(o), [float(v) for v in o["pos"]]) for o in objects]
        elif detail == "null_group":
            made = [{"name": "add_object", "arguments": {**add, "group_name": None}}]
        elif detail == "extra_key":
            made = [{"name": "add_object", "arguments": {**add, "note": "by the window", "jid": "made-up"}}]
        elif detail == "int_add":
            made = [{"name": "add_object", "arguments": {**add, "position": [1, 0, -1], "size": [1, 2, 1]}}]
        elif detail == "removed_then_moved":
            made = [{"name": "remove_object", "arguments": {"jid": jid}}, _move(jid, [0.1, 0.0, 0.1])]
        elif detail == "null_jid":
            made = [_move(None, [0.1, 0.0, 0.1])]
        elif detail == "int_jid":
            made = [{"name": "remove_object", "arguments": {"jid": 7}}]
        elif detail == "listed_jid":
            made = [_move([jid], [0.1, 0.0, 0.1])]
        elif detail == "unknown_mid":
            made = [_move(jid, [pos[0] + 0.1, pos[1], pos[2]]), _move("no-such-jid", [0.0, 0.0, 0.0]),
                    {"name": "scale_object", "arguments": {"jid": jid, "new_size": [0.4, 0.4, 0.4]}}]
        elif detail == "string_numbers":
            made = [_move(jid, [str(round(v, 2)) for v in pos])]
        elif detail == "giga_coordinate":
            made = [_move(jid, [HUGE, 0.0, 0.0])]
        elif detail == "pico_size":
            made = [{"name": "scale_object", "arguments": {"jid": jid, "new_size": [TINY, TINY, TINY]}}]
        elif detail == "null_position":
            made = [_move(jid, None)]
        elif detail == "no_rotation":
            made = [{"name": "add_object", "arguments": {k: v for k, v in add.items() if k != "rotation"}}]
        else:  # no_size
            made = [{"name": "add_object", "arguments": {k: v for k, v in add.items() if k != "size"}}]
        made = json.loads(json.dumps(made))
        at = int(rng.integers(0, len(calls) + 1))
        return [*calls[:at], *made, *calls[at:]]


def _move(jid: Any, position: Any) -> dict[str, Any]:
    return {"name": "move_object", "arguments": {"jid": jid, "new_position": position}}
