"""A rule-based "model" for SceneReVis, run with::

    buildbench run scenerevis --model python:examples/scenerevis/model.py:chat --split demo --limit 1

It speaks the suite's text protocol: on turn 0 a ``<create_scene>`` block with an empty
rectangular room sized for the room type the request names; on turn 1 a ``<tool_calls>``
list adding that room type's essential furniture against the walls; then ``terminate``.
Swap :func:`chat` for your own model: it receives OpenAI-style messages (the rendered views
arrive as ``image_url`` parts with ``data:`` URLs) and returns the reply text.
"""

from __future__ import annotations

import json
from typing import Any

#: (width x, depth z) of the floor in metres, per room type.
ROOM_SIZE_M = {"bedroom": (4.0, 4.5), "living room": (5.0, 5.5), "dining room": (4.0, 4.5),
               "study room": (3.6, 4.0), "office": (3.6, 4.0)}
#: Furniture per room type: (description, [width, height, depth] m, wall it stands against).
FURNITURE: dict[str, list[tuple[str, list[float], str]]] = {
    "bedroom": [("double bed with headboard", [1.6, 1.0, 2.0], "south"), ("nightstand", [0.5, 0.55, 0.4], "south"),
                ("wardrobe", [1.2, 2.0, 0.6], "north"), ("desk", [1.2, 0.75, 0.6], "east")],
    "living room": [("three-seat sofa", [2.1, 0.85, 0.9], "south"), ("tv stand", [1.6, 0.5, 0.45], "north"),
                    ("bookshelf", [1.0, 1.8, 0.35], "east"), ("armchair", [0.8, 0.9, 0.8], "west")],
    "dining room": [("sideboard", [1.6, 0.85, 0.45], "north"), ("cabinet", [1.0, 1.9, 0.45], "east"),
                    ("dining table", [1.6, 0.75, 0.9], "middle")],
    "study room": [("desk", [1.4, 0.75, 0.7], "south"), ("bookshelf", [1.0, 1.9, 0.35], "north"),
                   ("filing cabinet", [0.5, 1.0, 0.6], "east")],
}
FURNITURE["office"] = FURNITURE["study room"]
#: Quaternion [x, y, z, w] about +y that turns an object's front away from each wall.
FACING = {"south": [0, 0, 0, 1], "north": [0, 1, 0, 0], "east": [0, -0.70711, 0, 0.70711],
          "west": [0, 0.70711, 0, 0.70711], "middle": [0, 0, 0, 1]}


def room_type(request: str) -> str:
    """The room type the request names (bedroom when it names none we know)."""
    text = request.lower().replace("_", " ")
    for name in ("living room", "dining room", "study room", "office", "bedroom"):
        if name in text or name.split()[0] in text:
            return name
    return "bedroom"


def create_scene(kind: str) -> str:
    """Turn 0: the empty room as a ``<create_scene>`` block."""
    width, depth = ROOM_SIZE_M[kind]
    corners = [(0.0, 0.0), (width, 0.0), (width, depth), (0.0, depth)]
    scene = {"room_type": kind.replace(" ", "_"), "room_id": kind.replace(" ", "_") + "-1",
             "bounds_top": [[x, 2.6, z] for x, z in corners], "bounds_bottom": [[x, 0.0, z] for x, z in corners],
             "objects": []}
    return f"<create_scene>\n```json\n{json.dumps(scene)}\n```\n</create_scene>"


def _position(wall: str, size: list[float], start_m: float, width: float, depth: float) -> list[float]:
    """Bottom-face centre of an object against ``wall``, starting ``start_m`` along it."""
    w, _, d = size
    if wall == "south":
        return [start_m + w / 2, 0.0, d / 2 + 0.05]
    if wall == "north":
        return [start_m + w / 2, 0.0, depth - d / 2 - 0.05]
    if wall == "east":  # turned a quarter: its width runs along z
        return [width - d / 2 - 0.05, 0.0, start_m + w / 2]
    if wall == "west":
        return [d / 2 + 0.05, 0.0, start_m + w / 2]
    return [width / 2, 0.0, depth / 2]


def furnish(kind: str) -> str:
    """Turn 1: add the essential furniture side by side along its walls, facing into the room."""
    width, depth = ROOM_SIZE_M[kind]
    # South and north rows start near the west corner; east and west rows start mid-wall,
    # clear of the deep pieces (a bed) standing against the south wall.
    cursor = {"south": 0.3, "north": 0.3, "east": depth / 2, "west": depth / 2, "middle": 0.0}
    calls = []
    for i, (description, size, wall) in enumerate(FURNITURE[kind], start=1):
        position = _position(wall, size, cursor[wall], width, depth)
        cursor[wall] += size[0] + 0.1
        calls.append({"id": f"tool_{i}", "name": "add_object", "arguments": {
            "object_description": description, "position": position, "rotation": FACING[wall], "size": size}})
    return ("<think>\nThe room is empty: add the essential pieces against the walls, fronts facing the room.\n"
            f"</think>\n<tool_calls>\n{json.dumps(calls)}\n</tool_calls>")


def finish() -> str:
    """Any later turn: stop."""
    call = [{"id": "tool_1", "name": "terminate", "arguments": {"reason": "the essential furniture is placed"}}]
    return f"<think>\nThe layout is complete.\n</think>\n<tool_calls>\n{json.dumps(call)}\n</tool_calls>"


def reply(request: str, turn: int) -> str:
    """The reply for ``turn`` (0-based) of a room ``request``."""
    kind = room_type(request)
    if turn == 0:
        return create_scene(kind)
    return furnish(kind) if turn == 1 else finish()


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, **options: Any) -> str:
    """One model turn: the turn number is how many replies the conversation already holds."""
    users = [_text(m) for m in messages if m["role"] == "user"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return reply(users[0] if users else "", turn)
