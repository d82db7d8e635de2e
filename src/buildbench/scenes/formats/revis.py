"""SceneReVis scene JSON, flat and grouped (:mod:`buildbench.scenes.revis`): one room a
document (a list of rooms allowed); no prompt field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.scenes.revis import FLAT, GROUPED, read_revis, write_revis

from . import Format, Item, ReadOptions, as_records, one_or_list, read_record


def read(data: Any, options: ReadOptions) -> list[Item]:
    items = []
    for i, rec in enumerate(as_records(data, "SceneReVis room")):
        scene = read_record(i, read_revis, rec)
        items.append(Item(scene, name=str(rec.get("room_id", i)), room=scene.rooms[0].room_type))
    return items


def room_records(scene: Any, *, grouped: bool) -> list[dict[str, Any]]:
    """One SceneReVis record per room of ``scene`` (a house becomes several rooms)."""
    if len(scene.rooms) <= 1:
        return [write_revis(scene, grouped=grouped)]
    return [write_revis(scene, grouped=grouped, room_id=room.id) for room in scene.rooms]


def _writer(grouped: bool) -> Any:
    def write(items: Sequence[Item]) -> Any:
        return one_or_list([rec for item in items for rec in room_records(item.scene, grouped=grouped)])
    return write


_LOSSES = ("one room per record: a house becomes one record per room, doors, windows, walls and the prompt "
           "are dropped")
FORMATS = [Format(FLAT, "SceneReVis flat room JSON (bounds_bottom/bounds_top, objects)", read, _writer(False),
                  _LOSSES),
           Format(GROUPED, "SceneReVis grouped room JSON (room_envelope, groups)", read, _writer(True), _LOSSES)]
