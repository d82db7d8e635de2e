"""Format rewards of the policy's replies (SceneReVis spec §4.3): r_init at turn 0, r_fmt after.

**r_init** (turn 0, the whole turn reward) is −1 when the reply holds ``<think>`` or
``<conclusion>``, lacks ``<create_scene>``, has no fenced ``json`` block inside it or the
JSON does not parse, places any object, or has missing/ragged bounds (points not 3-vectors,
different vertex counts). Otherwise the room type is compared with the instruction's (an
alias table): both ``room_type`` and ``room_id`` wrong → −1, one wrong → 0; otherwise a
bounding-box area over 30 m² → −1; otherwise the shape: 4 vertices 1.0, 6 or 8 → 0.5,
any other count −1. An instruction naming no known room type leaves the type unjudged.

**r_fmt** (later turns): −1 without ``<think>…</think>`` and ``<tool_calls>…</tool_calls>``,
for a non-list or empty list; −0.8 when ``<tool_calls>`` comes before ``<think>``; −0.9 when
the list's JSON does not parse; otherwise ``1 − min(p, 1)`` where p adds, per call: 0.1 not
an object, 0.1 no ``name``, 0.15 unknown tool, 0.1 no ``arguments``, 0.1 arguments not an
object, 0.1 a required argument missing, 0.15 no object id, 0.2 an id not in the scene.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from buildbench.jsonio import parse_json

from ..actions import TOOLS

#: Required arguments of each tool (the object id is checked separately): the env's own table.
TOOL_ARGUMENTS = TOOLS
#: Argument names that may carry the target object's id, per tool.
ID_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "remove_object": ("id", "jid", "uid"),
    "move_object": ("id", "jid", "uid"),
    "rotate_object": ("id", "jid", "uid"),
    "scale_object": ("id", "jid", "uid"),
    "replace_object": ("id_to_replace", "jid_to_replace", "uid_to_replace", "id", "jid"),
}

ROOM_ALIASES: dict[str, tuple[str, ...]] = {
    "living room": ("living room", "livingroom", "living-room", "lounge"),
    "bedroom": ("bedroom", "bed room", "bed-room"),
    "kitchen": ("kitchen",),
    "bathroom": ("bathroom", "bath room", "bath-room", "restroom", "washroom"),
    "dining room": ("dining room", "diningroom", "dining-room"),
    "office": ("office", "home office", "workspace", "work room"),
    "study room": ("study room", "studyroom", "study-room", "study"),
    "nursery": ("nursery", "baby room", "children's room", "kids room"),
    "game room": ("game room", "gameroom", "game-room", "gaming room", "playroom"),
    "gym": ("gym", "fitness room", "workout room", "exercise room"),
    "home theater": ("home theater", "hometheater", "home-theater", "theater", "theatre", "media room"),
    "library": ("library", "reading room", "book room"),
}
MAX_ROOM_AREA_M2 = 30.0

_CREATE = re.compile(r"<create_scene>\s*```json\s*(.*?)\s*```\s*</create_scene>", re.DOTALL)
_CALLS = re.compile(r"<tool_calls>\s*(.*?)\s*</tool_calls>", re.DOTALL)


def instruction_room_type(instruction: str) -> str | None:
    """The first room type of :data:`ROOM_ALIASES` an alias of which the text mentions."""
    text = instruction.lower()
    for room, aliases in ROOM_ALIASES.items():
        if any(a in text for a in aliases):
            return room
    return None


def init_reward(reply: str, instruction: str) -> tuple[float, str]:
    """r_init of a turn-0 reply, with the reason. The checks run in the released order: the
    room type is judged before the bounds' shape, so a room of the wrong type scores −1 or 0
    whatever its bounds."""
    if "<think>" in reply or "<conclusion>" in reply:
        return -1.0, "turn 0 must not think or conclude"
    if "<create_scene>" not in reply or "</create_scene>" not in reply:
        return -1.0, "no <create_scene> block"
    match = _CREATE.search(reply)
    if not match:
        return -1.0, "no fenced json block inside <create_scene>"
    try:
        scene = parse_json(match.group(1))
    except json.JSONDecodeError as exc:
        return -1.0, f"scene JSON does not parse: {exc.msg}"
    if not isinstance(scene, dict):
        return -1.0, "scene JSON is not an object"
    if _object_count(scene):
        return -1.0, "the initial room must be empty"
    inner = scene.get("room_envelope")
    envelope: dict[str, Any] = inner if isinstance(inner, dict) else scene
    bottom, top = envelope.get("bounds_bottom"), envelope.get("bounds_top")
    if not isinstance(bottom, list) or not isinstance(top, list) or not bottom or not top:
        return -1.0, "bounds missing"
    if instruction_room_type(instruction) is not None:
        # The release reads both with str.lower(): anything else present there raised, and an
        # unexpected error at turn 0 scores -1.
        wrong = [key for key in ("room_type", "room_id") if key in scene and not isinstance(scene[key], str)]
        if wrong:
            return -1.0, f"{wrong[0]} must be text, got {type(scene[wrong[0]]).__name__}"
    type_score = room_type_score(scene, instruction)
    if type_score < 0:
        return -1.0, "room_type and room_id both contradict the instruction"
    if type_score == 0:
        return 0.0, "one of room_type and room_id contradicts the instruction"
    if not _points3(bottom) or not _points3(top) or len(bottom) != len(top):
        return -1.0, "bounds are not [x, y, z] points, or have different vertex counts"
    xs, zs = [p[0] for p in bottom], [p[2] for p in bottom]
    area = (max(xs) - min(xs)) * (max(zs) - min(zs))
    if area > MAX_ROOM_AREA_M2:
        return -1.0, f"room bounding box {area:.1f} m² exceeds {MAX_ROOM_AREA_M2:g} m²"
    shape = {4: 1.0, 6: 0.5, 8: 0.5}.get(len(bottom), -1.0)
    return shape, f"{len(bottom)} vertices"


def room_type_score(scene: dict[str, Any], instruction: str) -> float:
    """1 both ``room_type`` and ``room_id`` fit the instruction (or it names none), 0 one, −1 neither.

    As released: an alias matches with its spaces removed, inside the room type with its
    spaces removed, or inside the room id with spaces, hyphens and underscores removed (so
    ``living_room`` is not a living room type, while ``Living_Room-2`` is a living room id).
    """
    expected = instruction_room_type(instruction)
    if expected is None:
        return 1.0
    written_type = str(scene.get("room_type") or "").lower().strip().replace(" ", "")
    written_id = re.sub(r"[ \-_]", "", str(scene.get("room_id") or "").lower().strip())
    aliases = [a.replace(" ", "") for a in ROOM_ALIASES[expected]]
    hits = sum(any(a in text for a in aliases) for text in (written_type, written_id))
    return {2: 1.0, 1: 0.0, 0: -1.0}[hits]


def parse_tool_calls(reply: str) -> list[Any] | None:
    """The JSON list inside ``<tool_calls>``, or None when absent or unparsable."""
    match = _CALLS.search(reply)
    if not match:
        return None
    try:
        calls = parse_json(match.group(1))
    except json.JSONDecodeError:
        return None
    return calls if isinstance(calls, list) else None


def format_reward(reply: str, scene_ids: Collection[str], uids: Collection[str] | None = None) -> tuple[float, str]:
    """r_fmt of a tool-call reply, given the ids the current scene's objects answer to: a ``uid``
    argument is looked up in ``uids`` when given (the released checker keeps jids and uids
    apart), every other id argument in ``scene_ids``."""
    if not (
        "<think>" in reply and "</think>" in reply and "<tool_calls>" in reply and "</tool_calls>" in reply
    ):
        return -1.0, "missing <think> or <tool_calls>"
    if reply.find("<tool_calls>") < reply.find("<think>"):
        return -0.8, "<tool_calls> before <think>"
    match = _CALLS.search(reply)
    if not match:
        return -1.0, "no <tool_calls> body"
    try:
        calls = parse_json(match.group(1))
    except json.JSONDecodeError as exc:
        return -0.9, f"tool_calls JSON does not parse: {exc.msg}"
    if not isinstance(calls, list) or not calls:
        return -1.0, "tool_calls must be a non-empty list"
    if any(_unhashable_id(call) for call in calls):
        return -1.0, "an object id is a list or an object"
    penalty, notes = 0.0, []
    for k, call in enumerate(calls):
        p, why = _call_penalty(call, scene_ids, scene_ids if uids is None else uids)
        penalty += p
        if why:
            notes.append(f"call {k}: {why}")
    return 1.0 - min(penalty, 1.0), "; ".join(notes) or "ok"


def _unhashable_id(call: Any) -> bool:
    """Whether the call's first given id is a list or an object (the released checker fails on
    it and scores the whole reply −1)."""
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
        return False
    name = call.get("name")
    keys = ID_ARGUMENTS.get(name, ()) if isinstance(name, str) else ()
    given = [call["arguments"][a] for a in keys if call["arguments"].get(a)]
    return bool(given) and isinstance(given[0], list | dict)


def _call_penalty(call: Any, scene_ids: Collection[str], uids: Collection[str]) -> tuple[float, str]:
    if not isinstance(call, dict):
        return 0.1, "not an object"
    if "name" not in call:
        return 0.1, "no name"
    name = call["name"]
    if name not in TOOL_ARGUMENTS:
        return 0.15, f"unknown tool {name!r}"
    if "arguments" not in call:
        return 0.1, "no arguments"
    args = call["arguments"]
    if not isinstance(args, dict):
        return 0.1, "arguments not an object"
    penalty, why = 0.0, []
    missing = [a for a in TOOL_ARGUMENTS[name] if a not in args]
    if missing:
        penalty += 0.1
        why.append(f"missing {', '.join(missing)}")
    if name in ID_ARGUMENTS:
        given = [(a, args[a]) for a in ID_ARGUMENTS[name] if args.get(a)]
        if not given:
            penalty += 0.15
            why.append("no object id")
        elif str(given[0][1]) not in (uids if given[0][0].startswith("uid") else scene_ids):
            penalty += 0.2
            why.append(f"unknown id {given[0][1]!r}")
    return penalty, ", ".join(why)


def _object_count(scene: dict[str, Any]) -> int:
    count = len(scene.get("objects") or []) if isinstance(scene.get("objects"), list) else 0
    for group in scene.get("groups") or []:
        if isinstance(group, dict) and isinstance(group.get("objects"), list):
            count += len(group["objects"])
    return count


def _points3(points: Any) -> bool:
    return (
        isinstance(points, list)
        and bool(points)
        and all(
            isinstance(p, list | tuple)
            and len(p) == 3
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in p)
            for p in points
        )
    )
