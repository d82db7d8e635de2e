"""The flat SceneReVis scene as plain dicts: reading, checking, and small geometric helpers.

The data pipeline works on the JSON form the policy sees (spec §1.3): ``room_type``,
``room_id``, ``bounds_top``/``bounds_bottom`` (polygon vertices ``[x, y, z]`` in metres) and
``objects``, each ``{"id", "desc", "size", "pos", "rot", "jid"}`` with ``pos`` the bottom
centre and ``rot`` a scalar-last quaternion about +y. Plain dicts keep Algorithm 1 fast
(thousands of chains a second) and are exactly what the exports serialise.

``id`` is the unique *instance* handle that tool calls address (:mod:`.replay`); ``jid`` is
the asset id, which real rooms repeat and the data masks (:data:`MASKED_JID`).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from buildbench.jsonio import parse_json

#: The placeholder asset id of objects that still need retrieval. The released code spells
#: it this way (sic) when it masks ids; its parser also accepts ``<NEED_RETRIEVAL>``.
MASKED_JID = "<NEED_RETRIVEAL>"

#: Largest coordinate or extent we accept, metres: anything bigger is a broken record.
MAX_ABS_M = 1000.0

Scene = dict[str, Any]
Obj = dict[str, Any]


class SceneRecordError(ValueError):
    """A scene record is malformed; the message names the record and the field."""


def yaw_quat(yaw_deg: float) -> list[float]:
    """``[0, sin(θ/2), 0, cos(θ/2)]`` for a yaw of θ degrees (front +z → (sin θ, cos θ))."""
    half = math.radians(yaw_deg) / 2.0
    return [0.0, round(math.sin(half), 5), 0.0, round(math.cos(half), 5)]


def quat_yaw_deg(rot: list[float]) -> float:
    """Yaw about +y of a quaternion ``[x, y, z, w]``, degrees in [0, 360).

    Exact for pure yaw rotations (all the data has); for others it is the heading of the
    rotated +z axis projected on the floor.
    """
    x, y, z, w = rot
    fx = 2.0 * (x * z + w * y)
    fz = 1.0 - 2.0 * (x * x + y * y)
    return math.degrees(math.atan2(fx, fz)) % 360.0


def volume_m3(obj: Obj) -> float:
    sx, sy, sz = obj["size"]
    return float(sx) * float(sy) * float(sz)


def empty_room(scene: Scene) -> Scene:
    """The scene with its objects taken away: what ``<create_scene>`` emits on turn 0."""
    return {
        "room_type": scene.get("room_type", ""),
        "room_id": scene.get("room_id", ""),
        "bounds_top": copy.deepcopy(scene["bounds_top"]),
        "bounds_bottom": copy.deepcopy(scene["bounds_bottom"]),
        "objects": [],
    }


def copy_scene(scene: Scene) -> Scene:
    """A copy whose object dicts (and their lists) can be edited freely."""
    out = {k: v for k, v in scene.items() if k != "objects"}
    out["objects"] = [
        {k: (list(v) if isinstance(v, list) else v) for k, v in o.items()} for o in scene["objects"]
    ]
    return out


def footprint_xz(obj: Obj) -> list[tuple[float, float]]:
    """The four floor corners ``(x, z)`` of an object's box under its yaw (true rotation:
    local +x maps to ``(cos θ, −sin θ)``, local +z to ``(sin θ, cos θ)``)."""
    th = math.radians(quat_yaw_deg(obj["rot"]))
    c, s = math.cos(th), math.sin(th)
    hx, hz = obj["size"][0] / 2.0, obj["size"][2] / 2.0
    px, pz = obj["pos"][0], obj["pos"][2]
    return [
        (px + c * ax + s * az, pz - s * ax + c * az)
        for ax, az in ((-hx, -hz), (hx, -hz), (hx, hz), (-hx, hz))
    ]


def room_polygon_xz(scene: Scene) -> list[tuple[float, float]]:
    return [(float(p[0]), float(p[2])) for p in scene["bounds_bottom"]]


def room_heights(scene: Scene) -> tuple[float, float]:
    """``(floor_y, ceiling_y)`` in metres."""
    floor = min(float(p[1]) for p in scene["bounds_bottom"])
    ceiling = max(float(p[1]) for p in scene["bounds_top"])
    return floor, ceiling


def room_area_m2(scene: Scene) -> float:
    pts = room_polygon_xz(scene)
    acc = 0.0
    for (x0, z0), (x1, z1) in zip(pts, pts[1:] + pts[:1], strict=True):
        acc += x0 * z1 - x1 * z0
    return abs(acc) / 2.0


# --- reading -------------------------------------------------------------------------------


def _vec(value: Any, n: int, where: str) -> list[float]:
    if not isinstance(value, list | tuple) or len(value) != n:
        raise SceneRecordError(f"{where}: expected a list of {n} numbers, got {json.dumps(value)[:60]}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or abs(v) > MAX_ABS_M:
            raise SceneRecordError(f"{where}: {v!r} is not a finite number within ±{MAX_ABS_M:g}")
        out.append(float(v))
    return out


def _rot(value: Any) -> Any:
    """``rot`` as a quaternion list: absent or null is no turn, and a bare number a yaw in
    radians, as SceneReVis's scene reader takes them; anything else is checked as given."""
    if value is None:
        return [0.0, 0.0, 0.0, 1.0]
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return [0.0, math.sin(value / 2.0), 0.0, math.cos(value / 2.0)]
    return value


def check_scene(raw: Any, where: str) -> Scene:
    """A checked flat scene from a bare scene dict (flat or grouped) or a record holding one
    under ``"scene"``.

    Objects get instance ids ``obj_1 …`` when they have none. Raises SceneRecordError naming
    ``where`` and the bad field.
    """
    if isinstance(raw, dict) and isinstance(raw.get("scene"), dict):
        outer, raw = raw, raw["scene"]
        raw = {**raw, "room_type": raw.get("room_type") or outer.get("room_type", "")}
    if not isinstance(raw, dict):
        raise SceneRecordError(f"{where}: expected a JSON object (a scene or a record with 'scene')")
    if isinstance(raw.get("room_envelope"), dict) and isinstance(raw.get("groups"), list):
        raw = _flatten_grouped(raw, where)
    for key in ("bounds_top", "bounds_bottom", "objects"):
        if not isinstance(raw.get(key), list):
            raise SceneRecordError(f"{where}.{key}: missing or not a list")
    top = [_vec(p, 3, f"{where}.bounds_top[{i}]") for i, p in enumerate(raw["bounds_top"])]
    bottom = [_vec(p, 3, f"{where}.bounds_bottom[{i}]") for i, p in enumerate(raw["bounds_bottom"])]
    if len(bottom) < 3 or len(top) != len(bottom):
        raise SceneRecordError(f"{where}.bounds_bottom: need ≥ 3 vertices and as many in bounds_top")
    objects = []
    for i, o in enumerate(raw["objects"]):
        w = f"{where}.objects[{i}]"
        if not isinstance(o, dict):
            raise SceneRecordError(f"{w}: expected an object")
        desc = o.get("desc") or o.get("sampled_asset_desc")  # ReSpace: the retrieved asset's
        if not isinstance(desc, str) or not desc.strip():
            raise SceneRecordError(f"{w}.desc: missing or empty")
        size = _vec(o.get("size", o.get("sampled_asset_size")), 3, f"{w}.size")
        if min(size) < 0:  # zero extents occur in the real 3D-FRONT rooms and are kept
            raise SceneRecordError(f"{w}.size: extents must not be negative, got {size}")
        obj: Obj = {
            "id": str(o.get("id") or f"obj_{i + 1}"),
            "desc": desc,
            "size": size,
            "pos": _vec(o.get("pos"), 3, f"{w}.pos"),
            "rot": _vec(_rot(o.get("rot")), 4, f"{w}.rot"),
            "jid": str(o.get("jid") or o.get("uid") or o.get("sampled_asset_jid") or MASKED_JID),
        }
        objects.append(obj)
    ids = [o["id"] for o in objects]
    if len(set(ids)) != len(ids):
        raise SceneRecordError(f"{where}.objects: instance ids repeat")
    return {
        "room_type": str(raw.get("room_type") or ""),
        "room_id": str(raw.get("room_id") or ""),
        "bounds_top": top,
        "bounds_bottom": bottom,
        "objects": objects,
    }


def prepare_source(scene: Scene) -> tuple[Scene, int]:
    """The scene as a chain can rebuild it, and how many objects were dropped for that.

    The environment refuses extents under 5 mm or over 20 m and coordinates beyond 50 m
    (:mod:`..actions`), and strips descriptions; a source object it could never add is
    dropped (the real 3D-FRONT rooms hold a few zero-size boxes). Ids become ``obj_1 …``.
    """
    from ..actions import MAX_COORD_M, MAX_SIZE_M, MAX_TEXT_CHARS, MIN_SIZE_M

    kept: list[Obj] = []
    for o in scene["objects"]:
        desc = o["desc"].strip()
        if (min(o["size"]) < MIN_SIZE_M or max(o["size"]) > MAX_SIZE_M or len(desc) > MAX_TEXT_CHARS
                or max(abs(v) for v in o["pos"]) > MAX_COORD_M):
            continue
        kept.append({**o, "id": f"obj_{len(kept) + 1}", "desc": desc})
    return {**scene, "objects": kept}, len(scene["objects"]) - len(kept)


def _flatten_grouped(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """The grouped format (§1.3: ``room_envelope`` + ``groups``) as a flat record."""
    objects = []
    for i, group in enumerate(raw["groups"]):
        if not isinstance(group, dict) or not isinstance(group.get("objects", []), list):
            raise SceneRecordError(f"{where}.groups[{i}]: expected an object with an 'objects' list")
        objects.extend(group.get("objects", []))
    return {**{k: v for k, v in raw.items() if k not in ("room_envelope", "groups")},
            **raw["room_envelope"], "objects": objects}


def read_scenes(path: Path) -> Iterator[Scene]:
    """Scenes of a JSONL file (one bare scene or ``{"scene": …}`` record a line), or of a
    file that is one JSON document: a scene, a list of scenes, or a THOR house (one scene
    per room; :func:`buildbench.scenes.io.revis_records`). The first malformed scene raises
    SceneRecordError."""
    for item in scene_items(path):
        if isinstance(item, SceneRecordError):
            raise item
        yield item


def scene_items(path: Path) -> Iterator[Scene | SceneRecordError]:
    """What :func:`read_scenes` reads, item by item, with a malformed line or scene given as
    its SceneRecordError in its place, so batch commands can report it and carry on. A file
    that cannot be read raises SceneRecordError at once."""
    from buildbench.scenes import scene_warnings
    from buildbench.scenes.io import revis_records, scene_lines, scene_text
    from buildbench.scenes.model import SceneFormatError

    try:
        text = scene_text(path)  # a .jsonl.gz as its content
    except OSError as exc:
        raise SceneRecordError(f"{path}: cannot read ({exc.strerror})") from None
    for n, line in scene_lines(text):
        try:
            with scene_warnings.named(scene_warnings.in_document(str(path), n, line)):
                records = revis_records(parse_json(line, unique_keys=True))
        except json.JSONDecodeError as exc:
            yield SceneRecordError(f"{path}:{n + exc.lineno - 1}: invalid JSON at column {exc.colno}: {exc.msg}")
            continue
        except SceneFormatError as exc:
            yield SceneRecordError(f"{path}:{n}: {exc}")
            continue
        for k, raw in enumerate(records):
            try:
                yield check_scene(raw, f"{path.name}:{n}" + (f"[{k}]" if len(records) > 1 else ""))
            except SceneRecordError as exc:
                yield exc


def canonical_objects(scene: Scene) -> list[tuple[Any, ...]]:
    """The scene's objects as a sorted list of exact ``(desc, size, pos, rot)`` tuples: what
    a replayed chain must reproduce (ids and asset jids come from the environment)."""
    return sorted((o["desc"], tuple(o["size"]), tuple(o["pos"]), tuple(o["rot"])) for o in scene["objects"])
