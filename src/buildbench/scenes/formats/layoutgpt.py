"""LayoutGPT's 3D output (``llm_output/3D/*.json`` in weixi-feng/LayoutGPT): a list of
``{"query_id", "prompt", "object_list": [[name, {length, width, height, left, top, depth,
orientation}], ...]}``.

Units are LayoutGPT's pixels: the released files normalise each 3D-FRONT room so its shorter
side is 256 px, and undoing it needs the room's true size from 3D-FRONT (not in the file);
we read ``ReadOptions.metres_per_px`` (default 0.01 m, i.e. 1 px = 1 cm, 2.56 m for the
shorter side). ``left``/``top`` are the box centre's x/z from the room's min corner,
``depth`` its centre height; ``length``/``height``/``width`` the full x/y/z extents;
``orientation`` degrees about +y. The room is the prompt's ``Room Size: max length L, max
width W`` rectangle (the released files are the rectangular ``_regular`` split).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from buildbench.scenes.model import Origin, Scene, SceneFormatError

from . import Format, Item, ReadOptions, as_records
from .common import box_object, field_of, floor_box, num, rect_room, signed_yaw

_SIZE = re.compile(r"max length\s*([\d.]+)\s*(?:px)?\s*,\s*max width\s*([\d.]+)", re.I)
_TYPE = re.compile(r"Room Type:\s*([^\n]+)", re.I)
_KEYS = ("length", "width", "height", "left", "top", "depth", "orientation")


def read(data: Any, options: ReadOptions) -> list[Item]:
    s = options.metres_per_px
    items = []
    for i, rec in enumerate(as_records(data, "LayoutGPT scene")):
        prompt = str(field_of(rec, "prompt", f"[{i}]"))
        size = _SIZE.search(prompt)
        if size is None:
            raise SceneFormatError(f"[{i}].prompt: no 'Room Size: max length L, max width W' in {prompt[:60]!r}")
        kind = _TYPE.search(prompt)
        room_type = kind.group(1).strip() if kind else ""
        length, width = float(size.group(1)) * s, float(size.group(2)) * s
        room = rect_room("room", 0.0, 0.0, length, width, room_type, None, {"vertices": f"[{i}].prompt"})
        objects = []
        entries = field_of(rec, "object_list", f"[{i}]")
        if not isinstance(entries, list):
            raise SceneFormatError(f"[{i}].object_list: expected a list")
        for j, entry in enumerate(entries):
            where = f"[{i}].object_list[{j}]"
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)):
                raise SceneFormatError(f"{where}: expected [name, {{length, width, ...}}]")
            name, box = str(entry[0]), entry[1]
            v = {k: num(field_of(box, k, where), f"{where}.{k}") for k in _KEYS}
            origin: Origin = {"center": (f"{where}.left", f"{where}.depth", f"{where}.top"),
                              "size": (f"{where}.length", f"{where}.height", f"{where}.width"),
                              "rotation": f"{where}.orientation"}
            objects.append(box_object(f"{name}-{j}", name, (v["left"] * s, v["depth"] * s, v["top"] * s),
                                      (v["length"] * s, v["height"] * s, v["width"] * s), v["orientation"],
                                      room.id, where, {"layoutgpt": entry}, origin))
        scene = Scene(rooms=[room], objects=objects, source_format="layoutgpt")
        # the condition as LEGO-Eval's template sentences: the room exists and fits its max length x width
        room_word = room_type or "room"
        instruction = (f"The house has a {room_word}. The {room_word} has an area of at most "
                       f"{math.ceil(length * width * 100 - 1e-6) / 100:.2f} square metres.")  # rounded up: it holds
        items.append(Item(scene, name=str(rec.get("query_id", i)), instruction=instruction, room=room_type,
                          extra={"prompt": prompt}))
    return items


def write(items: Sequence[Item], metres_per_px: float = 0.01) -> Any:
    out = []
    for n, item in enumerate(items):
        scene = item.scene
        (x0, z0), (x1, z1) = floor_box(scene, "layoutgpt")
        px = 1.0 / metres_per_px
        entries = []
        for obj in scene.objects:
            cx, cy, cz = obj.center
            sx, sy, sz = obj.size
            entries.append([obj.category.replace(" ", "_"), {
                "length": round(sx * px, 3), "width": round(sz * px, 3), "height": round(sy * px, 3),
                "left": round((cx - x0) * px, 3), "top": round((cz - z0) * px, 3), "depth": round(cy * px, 3),
                "orientation": round(signed_yaw(obj), 3)}])
        room = item.room or (scene.rooms[0].room_type if scene.rooms else "")
        prompt = (f"Condition:\nRoom Type: {room}\nRoom Size: max length {round((x1 - x0) * px)}px, "
                  f"max width {round((z1 - z0) * px)}px\n")
        out.append({"iter": 0, "object_list": entries, "prompt": prompt, "query_id": item.name or str(n)})
    return out  # LayoutGPT writes a list even for one scene


FORMAT = Format("layoutgpt", "LayoutGPT 3D output (list of query_id/prompt/object_list; pixels, 1 px = 1 cm)",
                read, write, "boxes only (no asset ids, materials or colours); one rectangular room without "
                "walls, doors or windows, placed from its min corner at the origin; the pixel scale (3D-FRONT's true room size is not in the file); "
                "the condition prompt (read as 'The house has a <room>. The <room> has an area of at most L x W square metres.')",
                heading_only=True)
