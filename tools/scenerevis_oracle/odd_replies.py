"""Odder replies than ``generate.ReplyGenerator``'s, for the ``differential-original-odd`` set.

:class:`OddReplyGenerator` keeps the four kinds of ``generate`` (``valid``, ``no_op``,
``stored``, ``raises``, ``text``: what the released executor does with the reply) and draws
details the first set never uses:

* ``valid``: quarter turns (yaw 90/180/270/360/-90 and the identity's negative), one jid
  moved, turned or scaled twice in one reply, descriptions and group names in other scripts,
  very long or empty, twenty calls in one reply, every object removed and one added, a
  position exactly on the room's corner, extra keys in a call or its arguments;
* ``no_op``: a jid as a number, padded with spaces or in upper case, a tool name in another
  case, a jid replaced earlier in the same reply, a call with no ``name``, an empty object;
* ``stored``: a zero or unnormalised quaternion, Euler angles where the quaternion belongs,
  a zero size, booleans, nested lists or a dict for a vector, ``add_object`` with no arguments
  or with an empty description or group name;
* ``raises``: arguments as a JSON string (the function-calling style), ``null`` in the list,
  a group name that is a number, a JSON string or number where the list belongs;
* ``text``: two ``<tool_calls>`` blocks, an empty reply, tags in upper case, a code fence
  inside the tags, only whitespace between them.

``odd_rooms`` gives turn-0 rooms the first set lacks: the corners clockwise, a triangle, a
repeated or collinear corner, no area, a square turned 45 degrees, the ceiling below the floor,
2-vectors for corners, corners 1 km out, no corners, a room type in another script, a number
as the room id.

Determinism: all draws come from ``numpy.random.default_rng([seed, room_index, step, 7])``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from generate import Reply, ReplyGenerator, _reply_text, yaw_quaternion

ODD_FAULTS = {
    "valid": ("quarter_turns", "same_jid_twice", "unicode_text", "many_calls", "remove_all", "corner_position",
              "extra_keys"),
    "no_op": ("number_jid", "padded_jid", "upper_jid", "tool_case", "replaced_then_moved", "no_name",
              "empty_call"),
    "stored": ("zero_quaternion", "unnormalised_quaternion", "euler_rotation", "zero_size", "bool_value",
               "nested_vector", "dict_vector", "add_no_arguments", "empty_text"),
    "raises": ("string_arguments", "null_call", "number_group", "string_body", "number_body"),
    "text": ("two_blocks", "empty_reply", "upper_tags", "fenced", "blank"),
}
ODD_KIND_WEIGHTS = {"valid": 0.35, "no_op": 0.25, "text": 0.15, "stored": 0.15, "raises": 0.10}
TEXTS = ("双人床", "Кровать с тумбочкой", "🛏️ bed", "a" * 400, "Lamp \"quoted\" \\ backslash", "Bett\u200b")


class OddReplyGenerator(ReplyGenerator):
    """Replies for one room with the odd details of the module docstring; one detail per reply."""

    def next(self, scene: dict[str, Any], step: int, *, last: bool) -> Reply:
        rng = np.random.default_rng([self.seed, self.room_index, step, 7])
        calls: list[Any] = [self._valid_call(rng, scene) for _ in range(int(rng.integers(1, 4)))]
        kinds = sorted(ODD_FAULTS)
        kind = str(rng.choice(kinds, p=[ODD_KIND_WEIGHTS[k] for k in kinds]))
        detail = str(rng.choice(ODD_FAULTS[kind]))
        objects = [o for o in scene.get("objects") or [] if o.get("jid") or o.get("uid")]
        if detail == "remove_all" and not last:  # an empty room ends the edits worth drawing
            detail = "same_jid_twice"
        if not objects and kind != "text":
            kind, detail = "valid", "unicode_text"
        if kind == "text":
            return Reply(self._odd_text(calls, detail), kind, detail)
        jid = self._target(rng, objects) if objects else ""
        body: Any = self._odd_calls(rng, scene, calls, kind, detail, jid)
        if last and isinstance(body, list) and rng.random() < 0.5:
            body.append({"name": "terminate", "arguments": {"reason": "done"}})
        return Reply(_reply_text(step, body), kind, detail)

    def _odd_calls(self, rng: np.random.Generator, scene: dict[str, Any], calls: list[Any], kind: str,
                   detail: str, jid: str) -> Any:
        at = int(rng.integers(0, len(calls) + 1))
        add = {"object_description": "Small side table", "position": [0.3, 0.0, 0.3],
               "rotation": [0, 0, 0, 1], "size": [0.5, 0.5, 0.5]}
        if kind == "valid":
            return self._odd_valid(rng, scene, calls, detail, jid, add)
        bad: Any
        if detail == "number_jid":
            bad = {"name": "remove_object", "arguments": {"jid": 12345}}
        elif detail == "padded_jid":
            bad = {"name": "move_object", "arguments": {"jid": f" {jid} ", "new_position": [0.2, 0.0, 0.2]}}
        elif detail == "upper_jid":
            bad = {"name": "scale_object", "arguments": {"jid": jid.upper() + "X", "new_size": [0.5, 0.5, 0.5]}}
        elif detail == "tool_case":
            bad = {"name": "Move_Object", "arguments": {"jid": jid, "new_position": [0.1, 0.0, 0.1]}}
        elif detail == "replaced_then_moved":
            calls = [{"name": "replace_object", "arguments": {"jid_to_replace": jid,
                                                              "new_object_description": "Oak wardrobe"}}]
            at, bad = 1, {"name": "move_object", "arguments": {"jid": jid, "new_position": [0.2, 0.0, 0.2]}}
        elif detail == "no_name":
            bad = {"arguments": {"jid": jid, "new_position": [0.1, 0.0, 0.1]}}
        elif detail == "empty_call":
            bad = {}
        elif detail == "zero_quaternion":
            bad = {"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": [0, 0, 0, 0]}}
        elif detail == "unnormalised_quaternion":
            bad = {"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": [0, 2, 0, 2]}}
        elif detail == "euler_rotation":
            bad = {"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": [0, 90, 0]}}
        elif detail == "zero_size":
            bad = {"name": "scale_object", "arguments": {"jid": jid, "new_size": [0.0, 0.5, 0.5]}}
        elif detail == "bool_value":
            bad = {"name": "move_object", "arguments": {"jid": jid, "new_position": [True, 0, False]}}
        elif detail == "nested_vector":
            bad = {"name": "move_object", "arguments": {"jid": jid, "new_position": [[0.1, 0.0, 0.1]]}}
        elif detail == "dict_vector":
            bad = {"name": "scale_object", "arguments": {"jid": jid, "new_size": {"x": 1, "y": 1, "z": 1}}}
        elif detail == "empty_text":
            key = str(rng.choice(["object_description", "group_name"]))
            bad = {"name": "add_object", "arguments": {**add, key: ""}}
        elif detail == "add_no_arguments":
            bad = {"name": "add_object", "arguments": {}}
        elif detail == "string_arguments":
            bad = {"name": "move_object", "arguments": json.dumps({"jid": jid, "new_position": [0.1, 0.0, 0.1]})}
        elif detail == "null_call":
            bad = None
        elif detail == "number_group":
            bad = {"name": "add_object", "arguments": {**add, "group_name": 7}}
        elif detail == "string_body":
            return "move_object"
        else:  # number_body
            return 3
        calls.insert(at, bad)
        return calls

    def _odd_valid(self, rng: np.random.Generator, scene: dict[str, Any], calls: list[Any], detail: str, jid: str,
                   add: dict[str, Any]) -> list[Any]:
        if detail == "quarter_turns":
            yaw = float(rng.choice([90, 180, 270, 360, -90, -180, 450]))
            rotation = yaw_quaternion(yaw) if rng.random() < 0.8 else [0, 0, 0, -1]
            return [{"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": rotation}},
                    {"name": "add_object", "arguments": {**add, "rotation": yaw_quaternion(yaw)}}]
        if detail == "same_jid_twice":
            first = {"name": "move_object", "arguments": {"jid": jid, "new_position": [0.1, 0.0, 0.1]}}
            second = self._pick_edit(rng, jid)
            return [first, second, self._pick_edit(rng, jid)]
        if detail == "unicode_text":
            text = str(rng.choice(TEXTS))
            group = str(rng.choice(["睡眠区", "Зона", "main_group", " main_group", "MAIN_GROUP"]))
            calls = [{"name": "add_object", "arguments": {**add, "object_description": text, "group_name": group}}]
            if jid:
                calls.append({"name": "replace_object", "arguments": {"jid_to_replace": jid,
                                                                      "new_object_description": text}})
            return calls
        if detail == "many_calls":
            objects = [o for o in scene.get("objects") or [] if o.get("jid") or o.get("uid")]
            return [self._valid_call(rng, {**scene, "objects": objects}) for _ in range(20)]
        if detail == "remove_all":
            ids = sorted({str(o.get("jid") or o.get("uid")) for o in scene.get("objects") or []
                          if o.get("jid") or o.get("uid")})
            return [{"name": "remove_object", "arguments": {"jid": i}} for i in ids] + [
                {"name": "add_object", "arguments": add}]
        if detail == "corner_position":
            corner = scene["bounds_bottom"][int(rng.integers(len(scene["bounds_bottom"])))]
            return [{"name": "move_object", "arguments": {"jid": jid, "new_position": list(corner)}}, *calls]
        # extra_keys: keys the tools do not take, on the call and in its arguments
        return [{"name": "move_object", "id": "call_9", "type": "function",
                 "arguments": {"jid": jid, "new_position": [0.2, 0.0, 0.2], "reason": "closer to the wall"}},
                *calls]

    @staticmethod
    def _pick_edit(rng: np.random.Generator, jid: str) -> dict[str, Any]:
        r = rng.random()
        if r < 0.4:
            return {"name": "rotate_object", "arguments": {"jid": jid, "new_rotation": yaw_quaternion(90)}}
        if r < 0.7:
            return {"name": "scale_object", "arguments": {"jid": jid, "new_size": [0.6, 0.7, 0.8]}}
        return {"name": "move_object", "arguments": {"jid": jid, "new_position": [-0.2, 0.0, 0.3]}}

    @staticmethod
    def _odd_text(calls: list[Any], detail: str) -> str:
        body = json.dumps(calls)
        if detail == "two_blocks":
            return (f"<think>Two tries.</think>\n<tool_calls>\n{body}\n</tool_calls>\n"
                    "<tool_calls>\n[]\n</tool_calls>")
        if detail == "empty_reply":
            return ""
        if detail == "upper_tags":
            return f"<think>Shout.</think>\n<TOOL_CALLS>\n{body}\n</TOOL_CALLS>"
        if detail == "fenced":
            return f"<think>Fenced.</think>\n<tool_calls>\n```json\n{body}\n```\n</tool_calls>"
        return "<think>Nothing.</think>\n<tool_calls>\n   \n</tool_calls>"


def odd_rooms(base: dict[str, Any]) -> dict[str, Any]:
    """Turn-0 rooms made from ``base`` (a valid flat room), one oddity each."""
    bottom, top = base["bounds_bottom"], base["bounds_top"]
    height = top[0][1]
    xs, zs = [p[0] for p in bottom], [p[2] for p in bottom]
    cx, cz, r = (min(xs) + max(xs)) / 2, (min(zs) + max(zs)) / 2, (max(xs) - min(xs)) / 2

    def room(corners: list[list[float]], h: float = height) -> dict[str, Any]:
        return {**base, "bounds_bottom": [[x, 0.0, z] for x, z in corners],
                "bounds_top": [[x, h, z] for x, z in corners]}

    flat = [[p[0], p[2]] for p in bottom]
    diamond = [[cx + r, cz], [cx, cz + r], [cx - r, cz], [cx, cz - r]]
    return {
        "clockwise": room(flat[::-1]),
        "triangle": room(flat[:3]),
        "repeated_corner": room([flat[0], *flat]),
        "collinear_corner": room([flat[0], [(flat[0][0] + flat[1][0]) / 2, (flat[0][1] + flat[1][1]) / 2], *flat[1:]]),
        "no_area": room([[cx, z] for z in (cz - 1, cz, cz + 1, cz + 2)]),
        "turned_45": room(diamond),
        "upside_down": room(flat, -height),
        "two_vectors": {**base, "bounds_bottom": flat, "bounds_top": flat},
        "far_out": room([[x + 1000.0, z] for x, z in flat]),
        "no_corners": {**base, "bounds_bottom": [], "bounds_top": []},
        "other_script": {**base, "room_type": "卧室"},
        "number_id": {**base, "room_id": 7},
    }
