"""AI2-THOR house JSON as Holodeck and ProcTHOR write it (:mod:`buildbench.scenes.thor`).

One house per document, or a list of houses (ProcTHOR's dataset files); the prompt is the
house's ``query``. Holodeck's ``open_walls`` is read as empty walls and written back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from buildbench.scenes.thor import read_thor, write_thor

from . import Format, Item, ReadOptions, as_records, one_or_list, read_record


def read(data: Any, options: ReadOptions) -> list[Item]:
    items = []
    for i, house in enumerate(as_records(data, "house")):
        scene = read_record(i, read_thor, house)
        room = scene.rooms[0].room_type if len(scene.rooms) == 1 else ""
        items.append(Item(scene, name=str(house.get("id", i)), instruction=scene.query, room=room))
    return items


def write(items: Sequence[Item]) -> Any:
    houses = []
    for item in items:
        if item.instruction and not item.scene.query:
            item.scene.query = item.instruction
        houses.append(write_thor(item.scene))
    return one_or_list(houses)


_LOSSES = ("object sizes are the assets' (THOR keeps asset ids, not boxes: an asset unknown to the "
           "catalogue reads back at its category's default size); the prompt is the house's 'query'")
FORMATS = [Format(name, desc, read, write, _LOSSES) for name, desc in (
    ("thor", "AI2-THOR house JSON (either id convention)"),
    ("holodeck", "Holodeck's house JSON, open_walls included"),
    ("procthor", "ProcTHOR house JSON (a list of houses allowed)"),
)]
