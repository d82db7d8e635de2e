"""Seeded replies of a SceneReVis policy, valid and invalid, drawn from the live scene.

:class:`ReplyGenerator` writes one ``<think>…</think><tool_calls>[…]</tool_calls>`` reply
at a time, looking at the scene the original code holds now (so jids exist, repeat, or were
removed). Most replies are well formed; the rest carry one kind of fault each, named in
``kind``:

* ``no_op`` faults the released executor skips with a warning: unknown jids, an empty jid,
  the retrieval placeholder as a jid, ``uid`` as the argument key, an unknown tool name;
* ``stored`` faults it stores unchecked: NaN/Infinity, huge numbers, negative or wrong-length
  vectors, strings for numbers, missing arguments (it fills defaults);
* ``raises`` faults that make it raise (a call that is not an object, arguments that are not
  an object, a call object in place of the list);
* ``text`` faults of the reply text: bad JSON, no ``<tool_calls>``, the tags out of order.

``terminate`` appears mid-list (later calls must be skipped) or alone. Determinism: all
draws come from ``numpy.random.default_rng([seed, room_index, step])``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

NEED_RETRIEVAL = "<NEED_RETRIVEAL>"
DESCRIPTIONS = (
    "Modern wooden nightstand with two drawers",
    "Queen-sized bed with grey fabric headboard",
    "Tall white wardrobe with sliding doors",
    "Minimalist oak desk",
    "Black leather office chair",
    "Round wool rug in beige",
    "Floor lamp with linen shade",
    "Low walnut TV stand",
    "Potted fiddle-leaf fig plant",
    "Three-seat blue velvet sofa",
    "Glass coffee table with metal legs",
    "Wall mirror with brass frame",
    "Pendant ceiling lamp",
    "Small table lamp with ceramic base",
    "Bookshelf with five shelves",
)
FAULTS = {
    "no_op": ("unknown_jid", "empty_jid", "placeholder_jid", "uid_key", "unknown_tool", "list_jid"),
    "stored": ("nan", "infinity", "huge", "negative_size", "short_vector", "string_number", "missing_args"),
    "raises": ("call_not_object", "arguments_not_object", "single_call_object"),
    "text": ("bad_json", "no_tool_calls", "tags_reversed", "empty_list"),
}
#: Faults that end a recorded sequence (``stored``, ``raises``) are drawn less often.
KIND_WEIGHTS = {"no_op": 0.45, "text": 0.25, "stored": 0.18, "raises": 0.12}


@dataclass(frozen=True)
class Reply:
    """One generated reply: its text, the kind of fault (``valid`` if none) and the detail."""

    text: str
    kind: str
    detail: str


def yaw_quaternion(yaw_deg: float) -> list[float]:
    """Scalar-last quaternion of a yaw about +y, five decimals as in the data."""
    half = math.radians(yaw_deg) / 2
    return [0.0, round(math.sin(half), 5), 0.0, round(math.cos(half), 5)]


class ReplyGenerator:
    """Replies for one room; ``next(scene, step)`` draws the reply of one turn."""

    def __init__(self, seed: int, room_index: int, fault_share: float = 0.35) -> None:
        self.seed = seed
        self.room_index = room_index
        self.fault_share = fault_share

    def next(self, scene: dict[str, Any], step: int, *, last: bool) -> Reply:
        rng = np.random.default_rng([self.seed, self.room_index, step])
        calls = [self._valid_call(rng, scene) for _ in range(int(rng.integers(1, 5)))]
        if last and rng.random() < 0.5:
            calls.insert(int(rng.integers(0, len(calls) + 1)), {"name": "terminate", "arguments": {
                "reason": "The layout is complete."}})
        kind, detail = "valid", ""
        if rng.random() < self.fault_share:
            kind = str(rng.choice(sorted(FAULTS), p=[KIND_WEIGHTS[k] for k in sorted(FAULTS)]))
            detail = str(rng.choice(FAULTS[kind]))
            if kind == "text":
                return Reply(self._text_fault(rng, calls, detail), kind, detail)
            calls = self._call_fault(rng, scene, calls, detail)
        for k, call in enumerate(calls):
            if isinstance(call, dict):
                call.setdefault("id", f"tool_{k + 1}")
        return Reply(_reply_text(step, calls), kind, detail)

    # --- valid calls -------------------------------------------------------------------
    def _valid_call(self, rng: np.random.Generator, scene: dict[str, Any]) -> dict[str, Any]:
        objects = scene.get("objects") or []
        addressable = [o for o in objects if o.get("jid") or o.get("uid")]
        weights = {"add_object": 0.3, "remove_object": 0.12, "move_object": 0.2, "rotate_object": 0.14,
                   "scale_object": 0.1, "replace_object": 0.14}
        if not addressable:
            weights = {"add_object": 1.0}
        names = sorted(weights)
        p = np.array([weights[n] for n in names])
        name = str(rng.choice(names, p=p / p.sum()))
        if name == "add_object":
            args: dict[str, Any] = {"object_description": str(rng.choice(DESCRIPTIONS)),
                                    "position": self._position(rng, scene),
                                    "rotation": yaw_quaternion(float(rng.choice([0, 90, 180, -90, 37.5]))),
                                    "size": [round(float(v), 2) for v in rng.uniform(0.2, 2.0, 3)]}
            roll = rng.random()
            if roll < 0.2:
                args["group_name"] = "main_group"
            elif roll < 0.3:
                args["group_name"] = "Sleeping Area"
            return {"name": name, "arguments": args}
        target = self._target(rng, addressable)
        if name == "replace_object":
            return {"name": name, "arguments": {"jid_to_replace": target,
                                                "new_object_description": str(rng.choice(DESCRIPTIONS))}}
        args = {"jid": target}
        if name == "move_object":
            args["new_position"] = self._position(rng, scene)
        elif name == "rotate_object":
            args["new_rotation"] = yaw_quaternion(float(rng.uniform(-180, 180)))
        elif name == "scale_object":
            args["new_size"] = [round(float(v), 2) for v in rng.uniform(0.2, 2.0, 3)]
        return {"name": name, "arguments": args}

    @staticmethod
    def _target(rng: np.random.Generator, objects: list[dict[str, Any]]) -> str:
        """A jid (or uid) of the scene, a repeated one a third of the time when there is one."""
        ids = [str(o.get("jid") or o.get("uid")) for o in objects]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated and rng.random() < 0.35:
            return str(rng.choice(repeated))
        return ids[int(rng.integers(0, len(ids)))]

    @staticmethod
    def _position(rng: np.random.Generator, scene: dict[str, Any]) -> list[float]:
        xs = [p[0] for p in scene["bounds_bottom"]]
        zs = [p[2] for p in scene["bounds_bottom"]]
        x = rng.uniform(min(xs) - 0.4, max(xs) + 0.4)
        z = rng.uniform(min(zs) - 0.4, max(zs) + 0.4)
        y = 0.0 if rng.random() < 0.85 else float(rng.uniform(0.0, 1.5))
        return [round(float(x), 2), round(y, 2), round(float(z), 2)]

    # --- faults ------------------------------------------------------------------------
    def _call_fault(self, rng: np.random.Generator, scene: dict[str, Any], calls: list[Any],
                    detail: str) -> Any:
        objects = [o for o in scene.get("objects") or [] if o.get("jid") or o.get("uid")]
        jid = self._target(rng, objects) if objects else "missing-jid"
        at = int(rng.integers(0, len(calls) + 1))
        bad: Any
        if detail == "unknown_jid":
            bad = {"name": "move_object", "arguments": {"jid": "no-such-jid-1234", "new_position": [0, 0, 0]}}
        elif detail == "empty_jid":
            bad = {"name": "remove_object", "arguments": {"jid": ""}}
        elif detail == "placeholder_jid":
            bad = {"name": "scale_object", "arguments": {"jid": NEED_RETRIEVAL, "new_size": [0.5, 0.5, 0.5]}}
        elif detail == "uid_key":
            bad = {"name": "move_object", "arguments": {"uid": jid, "new_position": [0.1, 0.0, 0.1]}}
        elif detail == "unknown_tool":
            bad = {"name": "teleport_object", "arguments": {"jid": jid, "new_position": [0, 0, 0]}}
        elif detail == "list_jid":
            bad = {"name": "rotate_object", "arguments": {"jid": [jid], "new_rotation": [0, 0, 0, 1]}}
        elif detail in ("nan", "infinity", "huge", "negative_size", "short_vector", "string_number"):
            bad = self._bad_value(rng, jid, detail)
        elif detail == "missing_args":
            bad = {"name": str(rng.choice(["move_object", "add_object", "scale_object"])), "arguments": {}}
            if bad["name"] != "add_object":
                bad["arguments"]["jid"] = jid
        elif detail == "call_not_object":
            bad = "move_object"
        elif detail == "arguments_not_object":
            bad = {"name": "move_object", "arguments": [jid, [0, 0, 0]]}
        else:  # single_call_object: a call object where the list belongs
            return calls[0] if isinstance(calls[0], dict) else calls
        calls.insert(at, bad)
        return calls

    @staticmethod
    def _bad_value(rng: np.random.Generator, jid: str, detail: str) -> dict[str, Any]:
        value: Any = {"nan": float("nan"), "infinity": float("inf"), "huge": 1e9, "negative_size": -0.5,
                      "string_number": "1.5"}.get(detail)
        if detail == "short_vector":
            return {"name": "move_object", "arguments": {"jid": jid, "new_position": [0.5, 0.0]}}
        vector = [0.4, 0.0, 0.4] if detail != "negative_size" else [0.6, 0.6, 0.6]
        vector[int(rng.integers(0, 3))] = value
        key = {"negative_size": ("scale_object", "new_size")}.get(
            detail, (str(rng.choice(["move_object", "scale_object"])), ""))
        name, arg = key
        arg = arg or ("new_position" if name == "move_object" else "new_size")
        return {"name": name, "arguments": {"jid": jid, arg: vector}}

    @staticmethod
    def _text_fault(rng: np.random.Generator, calls: list[Any], detail: str) -> str:
        body = json.dumps(calls)
        if detail == "bad_json":
            cut = int(rng.integers(1, max(2, len(body) - 1)))
            return f"<think>Fix the layout.</think>\n<tool_calls>\n{body[:cut]}\n</tool_calls>"
        if detail == "no_tool_calls":
            return f"<think>Fix the layout.</think>\n{body}"
        if detail == "tags_reversed":
            return f"<tool_calls>\n{body}\n</tool_calls>\n<think>Fix the layout.</think>"
        return "<think>Nothing to do.</think>\n<tool_calls>\n[]\n</tool_calls>"


def _reply_text(step: int, calls: Any) -> str:
    return (f"<think>Step {step}: I check the overlaps and the empty areas, then edit.</think>\n"
            f"<tool_calls>\n{json.dumps(calls, indent=1)}\n</tool_calls>")
