"""Round-2 odd replies, for the ``differential-original-odd2`` set (``run_original.py --odd2``).

:class:`Odd2ReplyGenerator` keeps the kinds of ``generate`` and draws details neither earlier
set uses (one per reply):

* ``valid``: an object moved to touch another exactly, or 1e-9 m into or away from it; rotations
  and positions written with ``-0.0`` and the half turn as ``[0, -1, 0, 0]``; an object moved to
  where it already is, twice; two ``add_object`` calls with the same arguments; sizes and
  coordinates exactly at our limits (20 m, 5 mm, 50 m); a jid removed and an object of its
  description added in its place; calls after ``terminate`` in the same reply;
* ``no_op``: a jid with a zero-width space, in full-width letters, or with a trailing newline; a
  jid removed twice in one reply;
* ``stored``: a size of 1e-9 m, a size with ``-0.0``, a coordinate 50 m and 1e-9 out;
* ``text``: a ``<think>`` with no ``<tool_calls>``, an unclosed ``<tool_calls>``, tags nested in
  tags.

``odd2_rooms`` gives turn-0 rooms neither set has: corners written with ``-0.0``, a corner 1e-9 m
off the rectangle, one corner, two corners, four copies of one point, 1 km across, an empty room
type, a ceiling at the floor.

Determinism: all draws come from ``numpy.random.default_rng([seed, room_index, step, 11])``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from generate import Reply, _reply_text
from odd_replies import OddReplyGenerator

HAIR = 1e-9
ODD2_FAULTS = {
    "valid": ("touching", "signed_zero", "move_in_place", "twin_adds", "at_limits", "remove_then_add",
              "after_terminate"),
    "no_op": ("zero_width_jid", "full_width_jid", "newline_jid", "removed_twice"),
    "stored": ("hair_size", "negative_zero_size", "past_limit"),
    "text": ("think_only", "unclosed", "nested_tags"),
}
ODD2_KIND_WEIGHTS = {"valid": 0.5, "no_op": 0.2, "stored": 0.15, "text": 0.15}
FULL_WIDTH = str.maketrans("0123456789abcdefABCDEF-", "０１２３４５６７８９ａｂｃｄｅｆＡＢＣＤＥＦ－")


class Odd2ReplyGenerator(OddReplyGenerator):
    """Replies for one room with the round-2 details of the module docstring."""

    def next(self, scene: dict[str, Any], step: int, *, last: bool) -> Reply:
        rng = np.random.default_rng([self.seed, self.room_index, step, 11])
        calls: list[Any] = [self._valid_call(rng, scene) for _ in range(int(rng.integers(0, 3)))]
        kinds = sorted(ODD2_FAULTS)
        kind = str(rng.choice(kinds, p=[ODD2_KIND_WEIGHTS[k] for k in kinds]))
        detail = str(rng.choice(ODD2_FAULTS[kind]))
        objects = [o for o in scene.get("objects") or [] if o.get("jid") or o.get("uid")]
        if len(objects) < 2 and kind != "text":
            kind, detail = "valid", "twin_adds"
        if kind == "text":
            return Reply(self._odd2_text(calls, detail), kind, detail)
        body = self._odd2_calls(rng, scene, objects, calls, detail)
        if last and detail != "after_terminate" and rng.random() < 0.5:
            body.append({"name": "terminate", "arguments": {"reason": "done"}})
        return Reply(_reply_text(step, body), kind, detail)

    def _odd2_calls(self, rng: np.random.Generator, scene: dict[str, Any], objects: list[dict[str, Any]],
                    calls: list[Any], detail: str) -> list[Any]:
        add = {"object_description": "Small side table", "position": [0.3, 0.0, 0.3],
               "rotation": [0, 0, 0, 1], "size": [0.5, 0.5, 0.5]}
        first, second = (objects[int(i)] for i in rng.choice(len(objects), size=2, replace=False)) if len(
            objects) > 1 else (None, None)
        jid = self._target(rng, objects) if objects else ""
        made: list[Any]
        if detail == "touching" and first is not None and second is not None:
            offset = float(rng.choice([0.0, HAIR, -HAIR]))
            gap = (first["size"][0] + second["size"][0]) / 2 + offset
            pos = [second["pos"][0] + gap, second["pos"][1], second["pos"][2]]
            if abs(pos[0]) > 45:  # keep every stored scene one our env can start from (|x| <= 50 m)
                pos[0] = second["pos"][0] - gap
            made = [{"name": "move_object", "arguments": {"jid": _id(first), "new_position": pos}}]
        elif detail == "signed_zero":
            made = [{"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": [-0.0, -0.0, -0.0, 1.0]}},
                    {"name": "move_object", "arguments": {"jid": jid, "new_position": [-0.0, -0.0, -0.0]}},
                    {"name": "add_object", "arguments": {**add, "rotation": [0.0, -1.0, 0.0, 0.0]}}]
        elif detail == "move_in_place" and first is not None:
            move = {"name": "move_object", "arguments": {"jid": _id(first), "new_position": list(first["pos"])}}
            made = [move, json.loads(json.dumps(move))]
        elif detail == "twin_adds":
            made = [{"name": "add_object", "arguments": dict(add)}, {"name": "add_object", "arguments": dict(add)}]
        elif detail == "at_limits":
            made = [{"name": "scale_object", "arguments": {"jid": jid, "new_size": [20.0, 0.005, 20.0]}},
                    {"name": "move_object", "arguments": {"jid": jid, "new_position": [50.0, 0.0, -50.0]}}]
        elif detail == "remove_then_add" and first is not None:
            made = [{"name": "remove_object", "arguments": {"jid": _id(first)}},
                    {"name": "add_object", "arguments": {**add, "object_description": first.get("desc", "bed"),
                                                         "position": list(first["pos"]),
                                                         "size": list(first["size"])}}]
        elif detail == "after_terminate":
            return [*calls, {"name": "terminate", "arguments": {"reason": "done"}},
                    {"name": "move_object", "arguments": {"jid": jid, "new_position": [0.1, 0.0, 0.1]}}]
        elif detail == "zero_width_jid":
            made = [{"name": "move_object", "arguments": {"jid": jid + "\u200b", "new_position": [0.1, 0.0, 0.1]}}]
        elif detail == "full_width_jid":
            made = [{"name": "remove_object", "arguments": {"jid": jid.translate(FULL_WIDTH)}}]
        elif detail == "newline_jid":
            made = [{"name": "scale_object", "arguments": {"jid": jid + "\n", "new_size": [0.5, 0.5, 0.5]}}]
        elif detail == "removed_twice":
            made = [{"name": "remove_object", "arguments": {"jid": jid}}] * 2
        elif detail == "hair_size":
            made = [{"name": "scale_object", "arguments": {"jid": jid, "new_size": [HAIR, HAIR, HAIR]}}]
        elif detail == "negative_zero_size":
            made = [{"name": "scale_object", "arguments": {"jid": jid, "new_size": [-0.0, 0.5, 0.5]}}]
        else:  # past_limit
            made = [{"name": "move_object", "arguments": {"jid": jid, "new_position": [50.0 + HAIR, 0.0, 0.0]}}]
        at = int(rng.integers(0, len(calls) + 1))
        return [*calls[:at], *made, *calls[at:]]

    @staticmethod
    def _odd2_text(calls: list[Any], detail: str) -> str:
        body = json.dumps(calls)
        if detail == "think_only":
            return "<think>I will leave the room as it is.</think>"
        if detail == "unclosed":
            return f"<think>Cut off.</think>\n<tool_calls>\n{body}\n"
        return f"<think>Nested.</think>\n<tool_calls>\n<tool_calls>\n{body}\n</tool_calls>\n</tool_calls>"


def _id(obj: dict[str, Any]) -> str:
    return str(obj.get("jid") or obj.get("uid"))


def odd2_rooms(base: dict[str, Any]) -> dict[str, Any]:
    """Round-2 turn-0 rooms made from ``base`` (a valid flat room), one oddity each."""
    bottom, top = base["bounds_bottom"], base["bounds_top"]
    height = top[0][1]

    def room(corners: list[list[float]]) -> dict[str, Any]:
        return {**base, "bounds_bottom": [[x, 0.0, z] for x, z in corners],
                "bounds_top": [[x, height, z] for x, z in corners]}

    flat = [[p[0], p[2]] for p in bottom]
    xs, zs = [p[0] for p in flat], [p[1] for p in flat]
    return {
        "signed_zero": {**base, "bounds_bottom": [[-0.0 if v == 0 else v for v in p] for p in bottom],
                        "bounds_top": [[-0.0 if v == 0 else v for v in p] for p in top]},
        "hair_off": room([[flat[0][0] + HAIR, flat[0][1] - HAIR], *flat[1:]]),
        "one_corner": room(flat[:1]),
        "two_corners": room(flat[:2]),
        "one_point": room([flat[0]] * 4),
        "huge": room([[min(xs) - 500.0, min(zs) - 500.0], [min(xs) - 500.0, max(zs) + 500.0],
                      [max(xs) + 500.0, max(zs) + 500.0], [max(xs) + 500.0, min(zs) - 500.0]]),
        "empty_type": {**base, "room_type": ""},
        "zero_height": room(flat) | {"bounds_top": [[x, 0.0, z] for x, z in flat]},
    }
