"""The SceneReVis action protocol: parsing replies and applying tool calls (spec §2.1–§2.3).

A reply is either the turn-0 ``<create_scene>`` block (a fenced JSON empty room) or a
``<think>…</think>`` diagnosis followed by ``<tool_calls>[…]</tool_calls>``: a JSON list of
``{"id", "name", "arguments"}`` calls run in order. Tools and argument names are the
released ones; values are absolute (``new_position`` is where the object goes, not a delta).

Addressing (a departure, see README): every object instance carries a unique ``id``
(``obj_1``, ``obj_2``… never reused in an episode) and edits name it with ``id``. Real rooms
repeat an asset ``jid`` (two nightstands of one model), and the released executor edits
*every* object sharing the jid it is given; so a ``jid``/``uid`` argument is accepted only
when it names exactly one object, and is refused (naming the candidates) when it is shared.
``Addressing.JID`` restores the released behaviour (``utils/scene_editor.py``, checked against
it by ``tests/scenerevis/test_original_agreement.py``): no ids in the JSON; the target is read
from ``jid`` (``jid_to_replace``) only, and may be a 3D-FUTURE jid or an Objaverse uid;
``remove_object`` removes every object carrying it, the other tools edit the first one in
scene order; ``add_object`` puts the object in its ``group_name`` (``default_group`` when
absent; the room's own objects are ``main_group``), and the scene lists the groups in the
order they were made, as the released grouped scene does.

A reply is applied atomically: if any call is malformed or names an unknown object, no call
is applied and the feedback lists every problem.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from buildbench.jsonio import parse_json

#: Largest accepted coordinate magnitude, metres (a position beyond is a broken reply).
MAX_COORD_M = 50.0
#: Largest accepted object extent, metres, and the smallest.
MAX_SIZE_M = 20.0
MIN_SIZE_M = 0.005
#: Largest room polygon accepted: vertices and extent, metres.
MAX_ROOM_VERTICES = 32
MAX_ROOM_EXTENT_M = 50.0
#: Most calls one reply may carry, and most objects a scene may hold (flood protection).
MAX_CALLS_PER_TURN = 64
MAX_OBJECTS = 200
MAX_TEXT_CHARS = 2000

#: The placeholder asset id of objects still to be retrieved (the released spelling, sic).
NEED_RETRIEVAL = "<NEED_RETRIVEAL>"
#: The released group of a room's own objects, and of added objects that name none.
MAIN_GROUP = "main_group"
DEFAULT_GROUP = "default_group"

TOOLS: dict[str, tuple[str, ...]] = {
    "add_object": ("object_description", "position", "rotation", "size"),
    "remove_object": (),
    "move_object": ("new_position",),
    "rotate_object": ("new_rotation",),
    "scale_object": ("new_size",),
    "replace_object": ("new_object_description",),
    "terminate": ("reason",),
}
#: Argument keys that name the target object, per tool family.
_TARGET_KEYS = ("id", "object_id", "jid", "uid")
_REPLACE_KEYS = ("id_to_replace", "object_id", "id", "jid_to_replace", "uid_to_replace", "jid", "uid")

#: What a replaced object keeps under jid addressing (the released executor keeps only the pose,
#: the size and the new description; ``id`` is ours and hidden).
_REPLACED_KEPT = ("id", "desc", "size", "pos", "rot")

_PAST = {"move_object": "moved", "rotate_object": "rotated", "scale_object": "scaled",
         "replace_object": "replaced"}

_CREATE = re.compile(r"<create_scene>(.*?)</create_scene>", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_CALLS = re.compile(r"<tool_calls>(.*?)</tool_calls>", re.DOTALL)


class Addressing(StrEnum):
    """How tool calls name objects: by unique instance ``id`` (ours) or by ``jid`` (released)."""

    ID = "id"
    JID = "jid"


class ReplyError(ValueError):
    """The reply could not be used; the message says what and where, one problem a line."""


@dataclass
class SceneState:
    """The scene being edited: the room record and the objects as the model sees them.

    Attributes:
        room: ``room_type``, ``room_id``, ``bounds_top``, ``bounds_bottom`` (``[x, y, z]`` m).
        objects: ``{"id", "desc", "size", "pos", "rot", "jid"?, ...}``; ``pos`` is the bottom
            centre, ``rot`` a scalar-last quaternion. Kept in scene order: group by group.
        next_index: The number the next new object's id gets.
        groups: The released group of each object id not in :data:`MAIN_GROUP`.
        group_order: Group names in the order they were made (emptied groups stay, as in the
            released grouped scene).
    """

    room: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)
    next_index: int = 1
    groups: dict[str, str] = field(default_factory=dict)
    group_order: list[str] = field(default_factory=lambda: [MAIN_GROUP])

    def copy(self) -> SceneState:
        return SceneState(copy.deepcopy(self.room), copy.deepcopy(self.objects), self.next_index,
                          dict(self.groups), list(self.group_order))

    def insert(self, obj: dict[str, Any], group: str) -> None:
        """Add ``obj`` at the end of ``group`` (a new group goes after the others)."""
        rank = self._rank(group)
        at = sum(1 for o in self.objects if self._rank(self.groups.get(o["id"], MAIN_GROUP)) <= rank)
        self.objects.insert(at, obj)
        if group != MAIN_GROUP:
            self.groups[obj["id"]] = group

    def _rank(self, group: str) -> int:
        if group not in self.group_order:
            self.group_order.append(group)
        return self.group_order.index(group)

    def new_id(self) -> str:
        oid = f"obj_{self.next_index}"
        self.next_index += 1
        return oid

    def to_flat(self, addressing: Addressing = Addressing.ID) -> dict[str, Any]:
        """The flat SSR record (spec §1.3); ids are left out under jid addressing."""
        objects = [dict(o) for o in self.objects]
        if addressing is Addressing.JID:
            objects = [{k: v for k, v in o.items() if k != "id"} for o in objects]
        return {**copy.deepcopy(self.room), "objects": copy.deepcopy(objects)}

    @classmethod
    def from_flat(cls, data: dict[str, Any], *, where: str = "scene") -> SceneState:
        """A state from a flat record (or a grouped one: ``room_envelope`` + ``groups``); objects
        keep a unique ``id`` of theirs or get one."""
        data, members, names = _flatten_groups(data, where)
        room = check_room(data, where=where)
        state = cls(room)
        items = data.get("objects") or []
        if not isinstance(items, list):
            raise ReplyError(f"{where}.objects must be a list")
        if len(items) > MAX_OBJECTS:
            raise ReplyError(f"{where}.objects has {len(items)} objects; at most {MAX_OBJECTS} are allowed")
        seen: set[str] = set()
        for i, item in enumerate(items):
            obj = check_object(item, where=f"{where}.objects[{i}]")
            oid = item.get("id")
            if not isinstance(oid, str) or not oid or oid in seen:
                oid = state.new_id()
                while oid in seen:
                    oid = state.new_id()
            seen.add(oid)
            state.objects.append({"id": oid, **obj})
        indices = [int(s[4:]) for s in seen if re.fullmatch(r"obj_\d+", s)]
        state.next_index = max([state.next_index - 1, *indices]) + 1
        if members is not None:
            state.group_order = list(dict.fromkeys(names))
            state.groups = {o["id"]: g for o, g in zip(state.objects, members, strict=True) if g != MAIN_GROUP}
        return state

    def find(self, object_id: str) -> dict[str, Any]:
        for obj in self.objects:
            if obj["id"] == object_id:
                return obj
        raise KeyError(object_id)


def _flatten_groups(data: Any, where: str) -> tuple[Any, list[str] | None, list[str]]:
    """A grouped record as a flat one, with each object's group name and the group names in
    order (empty groups too); a flat record as it is."""
    if not isinstance(data, dict) or "groups" not in data or "objects" in data:
        return data, None, [MAIN_GROUP]
    groups = data["groups"]
    envelope = data.get("room_envelope")
    if not isinstance(groups, list) or not isinstance(envelope, dict):
        raise ReplyError(f"{where}: a grouped scene needs room_envelope (an object) and groups (a list)")
    objects, members, names = [], [], []
    for i, group in enumerate(groups):
        name = group.get("group_name") if isinstance(group, dict) else None
        items = group.get("objects") if isinstance(group, dict) else None
        if not isinstance(name, str) or not isinstance(items, list):
            raise ReplyError(f"{where}.groups[{i}] must have a group_name (string) and objects (a list)")
        objects.extend(items)
        members.extend([name] * len(items))
        names.append(name)
    flat = {k: v for k, v in data.items() if k not in ("groups", "room_envelope")}
    return {**flat, **envelope, "objects": objects}, members, names


# --- validation of values -----------------------------------------------------------------
def _vector(value: Any, n: int, where: str, *, limit: float) -> list[float]:
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise ReplyError(f"{where} must be a list of {n} numbers, got {_short(value)}")
    out = []
    for k, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ReplyError(f"{where}[{k}] must be a number, got {_short(v)}")
        if not math.isfinite(v):
            raise ReplyError(f"{where}[{k}] is {v}; numbers must be finite")
        if abs(v) > limit:
            raise ReplyError(f"{where}[{k}] = {v:g} is out of range (|value| <= {limit:g})")
        out.append(float(v))
    return out


def check_position(value: Any, where: str) -> list[float]:
    return _vector(value, 3, where, limit=MAX_COORD_M)


def check_size(value: Any, where: str) -> list[float]:
    size = _vector(value, 3, where, limit=MAX_SIZE_M)
    small = [k for k, v in enumerate(size) if v < MIN_SIZE_M]
    if small:
        raise ReplyError(f"{where}[{small[0]}] = {size[small[0]]:g} m; extents must be >= {MIN_SIZE_M:g} m")
    return size


def check_rotation(value: Any, where: str) -> list[float]:
    q = _vector(value, 4, where, limit=1e3)
    norm = math.sqrt(sum(v * v for v in q))
    if norm < 1e-6:
        raise ReplyError(f"{where} is a zero quaternion; use [x, y, z, w], e.g. [0, 0, 0, 1]")
    # Five-decimal quaternions (the data's) are kept as written so replays stay exact.
    return q if abs(norm - 1.0) <= 1e-3 else [round(v / norm, 6) for v in q]


def check_text(value: Any, where: str) -> str:
    """``value`` as given, once it is a string with something besides white space. Kept unstripped:
    a group name is matched exactly (the release files ``" main_group"`` in a group of its own)."""
    if not isinstance(value, str) or not value.strip():
        raise ReplyError(f"{where} must be a non-empty string, got {_short(value)}")
    if len(value) > MAX_TEXT_CHARS:
        raise ReplyError(f"{where} is {len(value)} characters long; at most {MAX_TEXT_CHARS} are allowed")
    return value


def check_room(data: Any, *, where: str = "scene") -> dict[str, Any]:
    """The room part of a flat record, checked: same-length bounds of 3-vectors, a simple
    polygon of positive area, the ceiling above the floor."""
    from shapely.geometry import Polygon

    if not isinstance(data, dict):
        raise ReplyError(f"{where} must be a JSON object, got {_short(data)}")
    bounds = {}
    for key in ("bounds_bottom", "bounds_top"):
        pts = data.get(key)
        if not isinstance(pts, list) or not 3 <= len(pts) <= MAX_ROOM_VERTICES:
            raise ReplyError(f"{where}.{key} must be a list of 3 to {MAX_ROOM_VERTICES} [x, y, z] points")
        bounds[key] = [_vector(p, 3, f"{where}.{key}[{i}]", limit=MAX_ROOM_EXTENT_M) for i, p in enumerate(pts)]
    bottom, top = bounds["bounds_bottom"], bounds["bounds_top"]
    if len(bottom) != len(top):
        raise ReplyError(f"{where}: bounds_bottom has {len(bottom)} points but bounds_top has {len(top)}")
    poly = Polygon([(p[0], p[2]) for p in bottom])
    if not poly.is_valid or poly.area < 0.5:
        raise ReplyError(f"{where}.bounds_bottom is not a simple polygon of at least 0.5 m² (area {poly.area:.2f})")
    if min(p[1] for p in top) <= max(p[1] for p in bottom) + 0.5:
        raise ReplyError(f"{where}: the ceiling (bounds_top y) must be at least 0.5 m above the floor")
    room = {"room_type": str(data.get("room_type") or ""), "room_id": str(data.get("room_id") or "")}
    return {**room, **bounds}


def check_object(item: Any, *, where: str) -> dict[str, Any]:
    """An object record ``{"desc", "size", "pos", "rot", "jid"?…}`` checked; other keys kept."""
    if not isinstance(item, dict):
        raise ReplyError(f"{where} must be a JSON object, got {_short(item)}")
    obj = {k: v for k, v in item.items() if k != "id"}
    obj["desc"] = check_text(item.get("desc"), f"{where}.desc")
    obj["size"] = check_size(item.get("size"), f"{where}.size")
    obj["pos"] = check_position(item.get("pos"), f"{where}.pos")
    obj["rot"] = check_rotation(item.get("rot", [0, 0, 0, 1]), f"{where}.rot")
    return obj


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- parsing replies ----------------------------------------------------------------------
def parse_create_scene(text: str) -> dict[str, Any]:
    """The room JSON of a turn-0 reply (``<create_scene>`` with a fenced json block)."""
    blocks = _CREATE.findall(text or "")
    if not blocks:
        raise ReplyError("no <create_scene>…</create_scene> block; turn 0 must create the empty room")
    if len(blocks) > 1:
        raise ReplyError(f"{len(blocks)} <create_scene> blocks; send exactly one")
    fence = _FENCE.search(blocks[0])
    if fence is None:
        raise ReplyError("<create_scene> must contain a ```json fenced block with the room")
    try:
        data = parse_json(fence.group(1))
    except json.JSONDecodeError as exc:
        raise ReplyError(f"<create_scene> JSON is invalid: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ReplyError("<create_scene> JSON must be an object with bounds_top, bounds_bottom, room_type")
    return data


@dataclass(frozen=True)
class ParsedTurn:
    """A diagnose-and-act reply: the ``<think>`` text and the raw call list."""

    think: str
    calls: list[Any]


def parse_turn(text: str, addressing: Addressing = Addressing.ID) -> ParsedTurn:
    """Split a reply into its diagnosis and its JSON call list (not yet validated). A lone call
    object is taken as a one-call list, except under jid addressing: the released code fails
    on it."""
    text = text or ""
    for tag in ("think", "tool_calls"):
        opened, closed = text.count(f"<{tag}>"), text.count(f"</{tag}>")
        if opened != closed:
            raise ReplyError(f"<{tag}> is opened {opened} time(s) but closed {closed} time(s)")
    think = _THINK.findall(text)
    calls = _CALLS.findall(text)
    if not calls:
        raise ReplyError("no <tool_calls>[…]</tool_calls> block; reply with <think>…</think> then <tool_calls>")
    if len(calls) > 1:
        raise ReplyError(f"{len(calls)} <tool_calls> blocks; put every call in one JSON list")
    if not think:
        raise ReplyError("no <think>…</think> block before <tool_calls>; diagnose the scene first")
    body = calls[0].strip()
    fence = _FENCE.search(body)
    if fence is not None:
        body = fence.group(1)
    try:
        data = parse_json(body)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"<tool_calls> JSON is invalid: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if isinstance(data, dict) and addressing is Addressing.ID:
        data = [data]
    if not isinstance(data, list) or not data:
        raise ReplyError("<tool_calls> must hold a non-empty JSON list of calls")
    if len(data) > MAX_CALLS_PER_TURN:
        raise ReplyError(f"<tool_calls> has {len(data)} calls; at most {MAX_CALLS_PER_TURN} per turn")
    return ParsedTurn(think[0].strip(), data)


# --- applying calls -----------------------------------------------------------------------
@dataclass
class ApplyResult:
    """What a reply did.

    Attributes:
        state: The scene after the calls (the input state when ``errors`` is non-empty).
        applied: One line per applied call.
        errors: One line per problem; non-empty means nothing was applied.
        terminated: A ``terminate`` call was reached (its reason in ``reason``).
        added / edited / removed: Object ids per kind of change (added includes replaced
            objects, which need retrieval again).
        ignored: Calls after ``terminate``, which the released executor also skips.
    """

    state: SceneState
    applied: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    terminated: bool = False
    reason: str = ""
    added: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    ignored: int = 0


def apply_calls(state: SceneState, calls: list[Any], addressing: Addressing = Addressing.ID) -> ApplyResult:
    """Run ``calls`` in order on a copy of ``state``; on any problem return ``state`` untouched."""
    work = state.copy()
    result = ApplyResult(work)
    for i, call in enumerate(calls):
        where = f"call {i + 1}"
        try:
            name, args = _call_parts(call, where)
            if name == "terminate":
                result.reason = check_text(args.get("reason"), f"{where} (terminate).reason")
                result.terminated = True
                result.ignored = len(calls) - i - 1
                result.applied.append(f"terminate: {result.reason}")
                break
            _apply_one(work, name, args, where, addressing, result)
        except ReplyError as exc:
            result.errors.append(str(exc))
    if result.errors:
        return ApplyResult(state, errors=result.errors)
    return result


def _call_parts(call: Any, where: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(call, dict):
        raise ReplyError(f"{where} must be an object {{\"name\", \"arguments\"}}, got {_short(call)}")
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ReplyError(f"{where} has no tool name")
    if name not in TOOLS:
        raise ReplyError(f"{where}: unknown tool {name!r}; tools: {', '.join(TOOLS)}")
    args = call.get("arguments", {})
    if isinstance(args, str):
        try:
            args = parse_json(args)
        except json.JSONDecodeError:
            raise ReplyError(f"{where} ({name}): arguments are a string that is not valid JSON") from None
    if not isinstance(args, dict):
        raise ReplyError(f"{where} ({name}): arguments must be a JSON object")
    missing = [k for k in TOOLS[name] if k not in args]
    if missing:
        raise ReplyError(f"{where} ({name}): missing argument(s) {', '.join(missing)}")
    return name, args


def _apply_one(work: SceneState, name: str, args: dict[str, Any], where: str, addressing: Addressing,
               result: ApplyResult) -> None:
    label = f"{where} ({name})"
    if name == "add_object":
        if len(work.objects) >= MAX_OBJECTS:
            raise ReplyError(f"{label}: the scene already holds {MAX_OBJECTS} objects")
        oid = work.new_id()
        desc = check_text(args["object_description"], f"{label}.object_description")
        obj = {"id": oid, "desc": desc, "size": check_size(args["size"], f"{label}.size"),
               "pos": check_position(args["position"], f"{label}.position"),
               "rot": check_rotation(args["rotation"], f"{label}.rotation")}
        if addressing is Addressing.JID:
            work.insert(obj, check_text(args.get("group_name", DEFAULT_GROUP), f"{label}.group_name"))
        else:
            work.objects.append(obj)
        result.added.append(oid)
        result.applied.append(f"added {oid} ({_brief(desc)})")
        return
    if addressing is Addressing.JID:
        keys: tuple[str, ...] = ("jid_to_replace",) if name == "replace_object" else ("jid",)
    else:
        keys = _REPLACE_KEYS if name == "replace_object" else _TARGET_KEYS
    targets = resolve_targets(work, args, keys, label, addressing)
    if addressing is Addressing.JID and name != "remove_object":
        targets = targets[:1]  # the released executor edits the first match and stops
    if name == "remove_object":
        gone = set(targets)
        work.objects = [o for o in work.objects if o["id"] not in gone]
        result.removed.extend(targets)
        result.applied.append(f"removed {', '.join(targets)}")
        return
    value: Any
    if name == "move_object":
        value = check_position(args["new_position"], f"{label}.new_position")
        field_name = "pos"
    elif name == "rotate_object":
        value = check_rotation(args["new_rotation"], f"{label}.new_rotation")
        field_name = "rot"
    elif name == "scale_object":
        value = check_size(args["new_size"], f"{label}.new_size")
        field_name = "size"
    else:
        value = check_text(args["new_object_description"], f"{label}.new_object_description")
        field_name = "desc"
    for oid in targets:
        obj = work.find(oid)
        obj[field_name] = list(value) if isinstance(value, list) else value
        if name == "replace_object":
            # The released executor rebuilds the object from desc, size, pos and rot alone.
            dropped = [k for k in obj if k not in _REPLACED_KEPT] if addressing is Addressing.JID else (
                "jid", "uid", "retrieved_size", "category")
            for key in dropped:
                obj.pop(key, None)
            result.added.append(oid)
        else:
            result.edited.append(oid)
    result.applied.append(f"{_PAST[name]} {', '.join(targets)}")


def resolve_targets(work: SceneState, args: dict[str, Any], keys: tuple[str, ...], label: str,
                    addressing: Addressing) -> list[str]:
    """The ids a call's target argument names (see the module docstring for the rules)."""
    given = [(k, args[k]) for k in keys if k in args]
    if not given:
        wanted = "id" if addressing is Addressing.ID else "jid"
        raise ReplyError(f"{label}: missing the object to edit (argument {wanted!r})")
    key, value = given[0]
    if not isinstance(value, str) or not value:
        raise ReplyError(f"{label}.{key} must be a non-empty string, got {_short(value)}")
    if addressing is Addressing.JID:
        hits = [o["id"] for o in work.objects if value in (_asset_jid(o), o.get("uid"))]
        if not hits:
            raise ReplyError(f"{label}: no object has jid/uid {value!r}")
        return hits
    if any(o["id"] == value for o in work.objects):
        return [value]
    hits = [o["id"] for o in work.objects if value in (o.get("jid"), o.get("uid"))]
    if len(hits) == 1:
        return hits
    if len(hits) > 1:
        raise ReplyError(f"{label}: jid {value!r} is shared by {', '.join(hits)}; name one object by its id")
    known = ", ".join(o["id"] for o in work.objects[:12]) or "none"
    raise ReplyError(f"{label}: no object with id {value!r} (ids: {known})")


def _asset_jid(obj: dict[str, Any]) -> Any:
    """The object's jid, or None while it only holds the retrieval placeholder (no asset yet)."""
    jid = obj.get("jid")
    return None if jid == NEED_RETRIEVAL else jid


def _brief(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
