"""I-Design's output (atcelen/IDesign: ``IDesign.to_json()`` writes ``scene_graph.json``): a
list of objects ``{"new_object_id", "size_in_meters": {length, width, height}, "position":
{x, y, z}, "rotation": {"z_angle"}, "style", "material", "placement", ...}`` plus the
layout elements (``south_wall``… ``ceiling``, skipped). Z up; ``position`` is the box
centre (its Blender script centres each mesh on its bounds), ``length``/``width``/``height``
the x/y/z extents before the turn, and the script turns each asset by ``z_angle`` + 180°,
so the front faces their +y at ``z_angle`` 0.

The room size is an argument of I-Design, not in the file: a document ``{"room_dimensions":
[x, y, height], "prompt": ..., "scene_graph": [...]}`` (our wrapper) gives it; a bare list
gets I-Design's own placement script's room, 4 x 4 x 2.5 m.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.scenes.model import Origin, Scene, SceneFormatError

from . import Format, Item, ReadOptions, as_records
from .common import box_object, field_of, floor_box, num, rect_room, signed_yaw
from .zup import to_ours, to_theirs

LAYOUT_ELEMENTS = frozenset({"south_wall", "north_wall", "east_wall", "west_wall", "middle of the room", "ceiling"})
SCRIPT_ROOM = (4.0, 4.0, 2.5)


def _documents(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list) and data and all(isinstance(d, dict) and "scene_graph" in d for d in data):
        return data
    if isinstance(data, dict) and "scene_graph" in data:
        return [data]
    return [{"scene_graph": data}]


def read(data: Any, options: ReadOptions) -> list[Item]:
    items: list[Item] = []
    for n, doc in enumerate(_documents(data)):
        dims = doc.get("room_dimensions", SCRIPT_ROOM)
        if not (isinstance(dims, list | tuple) and len(dims) == 3):
            raise SceneFormatError(f"[{n}].room_dimensions: expected [x, y, height]")
        dx, dy, dh = (num(v, f"[{n}].room_dimensions") for v in dims)
        # our wrapper's origin_xz: where their (0, 0) lies in ours, so a written scene reads back in place
        origin = doc.get("origin_xz", [0.0, 0.0])
        if not (isinstance(origin, list) and len(origin) == 2):
            raise SceneFormatError(f"[{n}].origin_xz: expected [x, z], got {origin!r}")
        ox, oz = (num(v, f"[{n}].origin_xz") for v in origin)
        dims_at = f"[{n}].room_dimensions" if "room_dimensions" in doc else "room size (I-Design's script room)"
        room = rect_room("room", ox, oz - dy, ox + dx, oz, str(doc.get("room", "")), dh,
                         {"vertices": dims_at, "ceiling_y": dims_at})
        objects = []
        for j, rec in enumerate(as_records(doc["scene_graph"], "I-Design object")):
            where = f"[{j}]" if len(items) == 0 and "room_dimensions" not in doc else f"[{n}].scene_graph[{j}]"
            oid = str(field_of(rec, "new_object_id", where))
            if oid in LAYOUT_ELEMENTS:
                continue
            pos, size = field_of(rec, "position", where), field_of(rec, "size_in_meters", where)
            p = [num(field_of(pos, k, f"{where}.position"), f"{where}.position.{k}") for k in ("x", "y", "z")]
            s = [num(field_of(size, k, f"{where}.size_in_meters"), f"{where}.size_in_meters.{k}")
                 for k in ("length", "height", "width")]
            angle = num(field_of(field_of(rec, "rotation", where), "z_angle", f"{where}.rotation"),
                        f"{where}.rotation.z_angle")
            name = oid.rsplit("_", 1)[0] if oid.rsplit("_", 1)[-1].isdigit() else oid
            cx, cy, cz = to_ours(p)
            # ours = (x, z, -y) of theirs
            keys: Origin = {"center": tuple(f"{where}.position.{axis}" for axis in "xzy"),
                              "size": tuple(f"{where}.size_in_meters.{key}" for key in ("length", "height", "width")),
                              "rotation": f"{where}.rotation.z_angle"}
            obj = box_object(oid, name, (cx + ox, cy, cz + oz), (s[0], s[1], s[2]), angle + 180.0, room.id, where, rec,
                             keys)
            for key in ("style", "material"):
                if rec.get(key):
                    obj.attributes[key] = rec[key]
            objects.append(obj)
        scene = Scene(rooms=[room], objects=objects, source_format="idesign")
        items.append(Item(scene, name=str(doc.get("id", n)), instruction=str(doc.get("prompt", "")),
                          room=room.room_type))
    return items


def write(items: Sequence[Item]) -> Any:
    out = []
    for item in items:
        (x0, z0), (x1, z1) = floor_box(item.scene, "idesign")
        height = item.scene.rooms[0].ceiling_y if item.scene.rooms else None
        graph = []
        for obj in item.scene.objects:
            x, y, z = to_theirs((obj.center[0] - x0, obj.center[1], obj.center[2] - z1))
            turn = (signed_yaw(obj) - 180.0) % 360.0
            graph.append({"new_object_id": obj.id, "size_in_meters": {
                "length": obj.size[0], "width": obj.size[2], "height": obj.size[1]},
                "position": {"x": x, "y": y, "z": z}, "rotation": {"z_angle": turn},
                **{str(k): obj.attributes[k] for k in ("style", "material") if k in obj.attributes}})
        out.append({"room_dimensions": [x1 - x0, z1 - z0, height or SCRIPT_ROOM[2]], "prompt": item.instruction,
                    "room": item.room, "scene_graph": graph, "origin_xz": [x0, z1]})
    return out[0] if len(out) == 1 else out


FORMAT = Format("idesign", "I-Design scene_graph.json (z up; optionally wrapped with room_dimensions and prompt)",
                read, write, "boxes only (asset ids are Objaverse retrievals, not in the graph); one rectangular "
                "room from (0, 0) without doors or windows (a bare list gets I-Design's 4 x 4 x 2.5 m script room); "
                "placement relations are kept only as read",
                heading_only=True)
