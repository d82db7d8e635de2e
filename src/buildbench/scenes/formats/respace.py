"""3D-FRONT rooms as ReSpace's SSR dataset records: ``{"room_type", "n_objects", "split",
"pth_orig_file", "scene": <SceneReVis flat room>}``, one a JSONL line (SceneReVis reads
its 3D-FRONT test rooms this way). Object ``jid`` s carry ReSpace's rescale suffix
``<jid>-(sx)-(sy)-(sz)``, kept verbatim as the asset id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.revis import read_revis

from . import Format, Item, ReadOptions, as_records, one_or_list, read_record
from .revis import room_records


def read(data: Any, options: ReadOptions) -> list[Item]:
    items = []
    for i, rec in enumerate(as_records(data, "ReSpace record")):
        if not isinstance(rec.get("scene"), dict):
            raise SceneFormatError(f"[{i}].scene: expected the room object (a ReSpace record has 'scene')")
        scene = read_record(i, read_revis, rec["scene"], "scene.")
        room = str(rec.get("room_type") or scene.rooms[0].room_type)
        # the room's own id before the index: every line of a JSONL file is index 0
        name = str(rec.get("pth_orig_file") or rec.get("id") or rec["scene"].get("room_id") or i)
        items.append(Item(scene, name=name, instruction=str(rec.get("prompt") or ""), room=room,
                          extra={k: v for k, v in rec.items() if k != "scene"}))
    return items


def write(items: Sequence[Item]) -> Any:
    out = []
    for item in items:
        for rec in room_records(item.scene, grouped=False):
            head = {"room_type": item.room or item.scene.rooms[0].room_type,
                    "n_objects": len(rec.get("objects", [])), **item.extra}
            head["n_objects"] = len(rec.get("objects", []))
            if item.instruction:
                head["prompt"] = item.instruction
            out.append({**head, "scene": rec})
    return one_or_list(out)


FORMAT = Format("respace", "3D-FRONT room as a ReSpace SSR record (JSON or JSONL, 'scene' holds the room)",
                read, write, "one room per record (doors, windows and walls dropped); prompts only in our "
                "optional 'prompt' key")
