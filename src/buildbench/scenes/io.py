"""Load and save scenes in any supported format, detected from the content.

Formats: AI2-THOR house JSON (Holodeck and ProcTHOR conventions; :mod:`.thor`) and
SceneReVis flat/grouped scene JSON (:mod:`.revis`; a ReSpace-style record with the room
under ``scene`` is accepted too). Errors are :class:`SceneFormatError` with one line naming
the file and the element/field, e.g. ``house.json: walls[3].polygon: expected 4 points``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from shapely.geometry import Polygon

from buildbench.inputs import decode_text, read_bytes
from buildbench.jsonio import parse_json
from buildbench.scenes import scene_warnings
from buildbench.scenes.model import Scene, SceneFormatError, check_scene, relocate
from buildbench.scenes.revis import FLAT, GROUPED, is_revis, read_revis, write_revis
from buildbench.scenes.thor import read_thor, write_thor

__all__ = ["load_scene", "save_scene", "read_thor", "write_thor", "read_revis", "write_revis",
           "detect_format", "scene_problems", "scene_lines", "revis_records", "MAX_SCENE_BYTES"]

#: Larger files are refused before parsing (a house JSON is a few MB at most).
MAX_SCENE_BYTES = 200 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"


def scene_text(path: Path) -> str:
    """A scene file's text (a byte-order mark dropped); a gzip-compressed file (ProcTHOR-10k ships
    its houses as ``.jsonl.gz``) is read as its content, bounded by the same cap.

    Raises:
        OSError: Unreadable, over the cap, or not UTF-8 (naming the line).
    """
    data = read_bytes(path, max_bytes=MAX_SCENE_BYTES, limit_name="json_file_bytes")
    if data.startswith(_GZIP_MAGIC):
        data = read_bytes(path, max_bytes=MAX_SCENE_BYTES, limit_name="json_file_bytes", gunzip=True)
    return decode_text(path, data).removeprefix("\ufeff")


def is_jsonl(path: Path) -> bool:
    """Whether ``path`` names a JSON-lines file (``.jsonl``, also compressed: ``.jsonl.gz``)."""
    return path.suffix == ".jsonl" or path.suffixes[-2:] == [".jsonl", ".gz"]
FORMATS = ("thor", "holodeck", "procthor", FLAT, GROUPED)


def detect_format(data: Any) -> str:
    """``thor`` or ``scenerevis-flat``/``scenerevis-grouped``; SceneFormatError otherwise."""
    if isinstance(data, dict) and isinstance(data.get("rooms"), list):
        return "thor"
    if is_revis(data):
        return GROUPED if ("groups" in data or "room_envelope" in data) else FLAT
    from buildbench.scenes.formats.front import is_front

    if is_front(data):
        rooms = data["scene"]["room"]
        raise SceneFormatError(f"not one scene: a 3D-FRONT house ({len(rooms) if isinstance(rooms, list) else '?'} "
                               "rooms); write a room as one with `buildbench scenes convert --from 3dfront`")
    foreign = converter_format(data)
    if foreign:
        raise SceneFormatError(f"not one scene this command reads: a {foreign} file; read it with `buildbench "
                               f"scenes convert --from {foreign.split()[0].lower()} --to thor` first"
                               + (" (its objects name assets, not sizes: give them with --asset-sizes)"
                                  if foreign.startswith(("SceneEval", "LayoutVLM")) else ""))
    if isinstance(data, dict):
        keys = ", ".join(sorted(map(str, data))[:8]) or "none"
        raise SceneFormatError(f"not a scene: no 'rooms' (THOR) or 'bounds_bottom'/'room_envelope' "
                               f"(SceneReVis); top-level keys: {keys}")
    if isinstance(data, list):
        raise SceneFormatError(f"not a scene: expected a JSON object, got a list of {len(data)} "
                               "(several scenes in one file? pass one)")
    raise SceneFormatError(f"not a scene: expected a JSON object, got {type(data).__name__}")


def converter_format(data: Any) -> str:
    """The name of the other generator's format ``data`` is written in, by the keys its own
    readers require ('' when none): such files reach commands that read one THOR or SceneReVis
    scene (legoeval --scene, scenes export), which should name the converter, not list keys."""
    if isinstance(data, dict):
        if data.get("format") == "sceneState" or (isinstance(data.get("arch"), dict)
                                                  and isinstance(data.get("object"), list)):
            return "SceneEval scene state"
        if isinstance(data.get("task"), dict) and isinstance(data.get("layout"), dict):
            return "LayoutVLM layout"
    if isinstance(data, list) and data and all(isinstance(r, dict) and "object_list" in r for r in data):
        return "LayoutGPT output"
    return ""


def load_scene(path_or_dict: str | Path | dict[str, Any]) -> Scene:
    """A scene from a file path or an already-parsed dict, format auto-detected."""
    if isinstance(path_or_dict, dict):
        return _read(path_or_dict)
    if isinstance(path_or_dict, list) and converter_format(path_or_dict):
        detect_format(path_or_dict)  # names the converter
    if isinstance(path_or_dict, list):  # ProcTHOR saves several houses to one file as a list
        raise SceneFormatError(f"scene: expected a path or a JSON object, got a list of {len(path_or_dict)} "
                               "(several scenes in one file? pass one)")
    if not isinstance(path_or_dict, (str, Path)):
        raise SceneFormatError(f"scene: expected a path or a JSON object, got {type(path_or_dict).__name__}")
    path = Path(path_or_dict)
    try:
        text = scene_text(path)
        data = parse_json(text, unique_keys=True)
    except OSError as exc:
        raise SceneFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise SceneFormatError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    at = ""
    if isinstance(data, dict) and "scene" in data and is_revis(data["scene"]):
        data, at = data["scene"], "scene."  # a ReSpace dataset record: the room sits under "scene"

    def in_file(detail: str) -> str:
        from buildbench.scenes.formats.where import line_of

        line = line_of(text, detail) if detail else None
        place = f"{path}: line {line}" if line else str(path)
        return f"{place}: {detail}" if detail else place

    try:
        with scene_warnings.named(in_file):
            return _read(data, at)
    except SceneFormatError as exc:
        raise SceneFormatError(in_file(exc.args[0])) from None


def save_scene(scene: Scene, path: str | Path, format: str | None = None) -> None:  # noqa: A002
    """Write ``scene`` as JSON (2-space indent). ``format``: ``thor`` (also ``holodeck``,
    ``procthor``), ``scenerevis-flat`` or ``scenerevis-grouped``; default: the format it
    was read from (THOR for scenes made in code)."""
    fmt = format or (scene.source_format if scene.source_format in (FLAT, GROUPED) else "thor")
    if fmt not in FORMATS:
        raise SceneFormatError(f"unknown scene format {fmt!r} (known: {', '.join(FORMATS)})")
    if fmt in (FLAT, GROUPED):
        data = write_revis(scene, grouped=fmt == GROUPED)
    else:
        data = write_thor(scene)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(target)  # never leave a half-written scene behind


def scene_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, JSON text)`` of each scene document in a file's ``text``: each
    non-blank line of a JSONL file, or the whole text (line 1) when the file is one JSON
    document over several lines, as pretty-printed scene files are. A JSONL file whose first
    line is broken stays a list of lines (the broken one is reported, the others read)."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) > 1 and _json_document(lines[0][1]) is None:
        if _json_document(text) is not None or all(_json_document(line) is None for _, line in lines[1:]):
            return [(lines[0][0], text)]
    return lines


def _json_document(text: str) -> dict[str, Any] | list[Any] | None:
    """``text`` parsed when it is a JSON object or list, else None (a scalar, as a line inside
    a pretty-printed document may be, is no document)."""
    try:
        data = parse_json(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict | list) else None


def revis_records(data: Any) -> list[Any]:
    """The SceneReVis room records a parsed document holds: those of each item of a list of
    objects (ProcTHOR writes houses as a list), one flat record per room of a THOR house
    (its objects in SceneReVis form, ids kept) or of a 3D-FRONT house (each room with a floor,
    as ``scenes convert --from 3dfront`` reads it), or the document itself (for the caller to
    refuse). SceneFormatError when such a house cannot be read."""
    from buildbench.scenes.formats import ReadOptions
    from buildbench.scenes.formats.front import is_front
    from buildbench.scenes.formats.front import read as read_front

    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        records = []
        for i, item in enumerate(data):
            with scene_warnings.under(f"[{i}]."):
                records += revis_records(item)
        return records
    if isinstance(data, dict) and isinstance(data.get("rooms"), list):
        scene = read_thor(data)
        return [write_revis(scene, room_id=room.id) for room in scene.rooms]
    if is_front(data):
        return [write_revis(item.scene) for item in read_front(data, ReadOptions())]
    return [data]


def scene_problems(scene: Scene) -> list[str]:
    """Soft problems worth reporting but not refusing: overlapping or self-intersecting
    rooms, objects outside every room, non-finite object numbers."""
    problems: list[str] = []
    polys = []
    for room in scene.rooms:
        poly = Polygon(room.vertices)
        if not poly.is_valid:
            problems.append(f"room {room.id!r}: floor polygon is self-intersecting")
            poly = poly.buffer(0)
        polys.append((room.id, poly))
    for i, (a_id, a) in enumerate(polys):
        for b_id, b in polys[i + 1:]:
            overlap = a.intersection(b).area
            if overlap > 1e-4:
                problems.append(f"rooms {a_id!r} and {b_id!r} overlap by {overlap:.3f} m²")
    for obj in scene.objects:
        if not all(math.isfinite(v) for v in (*obj.center, *obj.size, *obj.rotation_xyzw)):
            problems.append(f"object {obj.id!r}: non-finite position, size or rotation")
        elif scene.rooms and not obj.room_id:
            problems.append(f"object {obj.id!r}: centre lies outside every room")
    return problems


def _read(data: Any, at: str = "") -> Scene:
    """The scene of ``data``, found at key path ``at`` of its file (errors name the file's keys)."""
    fmt = detect_format(data)
    # a scene check_scene refuses gets its error line alone, without the reader's warnings
    with scene_warnings.under(at):
        try:
            scene = read_thor(data) if fmt == "thor" else read_revis(data)
        except SceneFormatError as exc:
            raise SceneFormatError(f"{at}{exc.args[0]}") from None
        relocate(scene, at)
        check_scene(scene)  # the rules every scene reader applies (formats.read_items too)
    return scene
