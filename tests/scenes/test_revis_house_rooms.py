"""A ProcTHOR house written as SceneReVis rooms (scenes convert, scenes evaluate): an object that
lies in no room went into every room's record, counted once per room; it now goes to the room
nearest its centre only, where it is out of bounds."""

from __future__ import annotations

import json
from pathlib import Path

from buildbench.scenes.formats import read_items, write_items

HOUSE = Path(__file__).parent / "fixtures" / "procthor_zg_house_100.json"  # a bathroom and a bedroom


def _objects(house: dict) -> int:
    return sum(1 + len(o.get("children") or []) for o in house["objects"])


def test_object_in_no_room_is_written_once(tmp_path: Path) -> None:
    house = json.loads(HOUSE.read_text())
    stray = {k: v for k, v in house["objects"][0].items() if k != "children"}
    stray.update(id="Stray|9|9", position={"x": 20.0, "y": 0.5, "z": 20.0})
    house["objects"].append(stray)
    source = tmp_path / "house.json"
    source.write_text(json.dumps(house))
    out = tmp_path / "rooms.json"
    write_items(read_items(source, "procthor"), out, "scenerevis-flat", source)
    rooms = json.loads(out.read_text())
    assert len(rooms) == 2
    assert sum(len(r["objects"]) for r in rooms) == _objects(house)
    far = [i for i, r in enumerate(rooms) for o in r["objects"] if o["pos"][0] == 20.0]
    nearest = max(range(2), key=lambda i: max(p[0] + p[2] for p in rooms[i]["bounds_bottom"]))
    assert far == [nearest]
