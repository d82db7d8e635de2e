"""Write odd variants of ``oracle_houses/three_rooms.json`` for the differential recording.

Each variant changes one thing the other houses never have (a developer tool, never imported
by buildbench)::

    .venv/bin/python tools/legoeval_oracle/odd_houses.py   # writes tests/legoeval/data/oracle_houses_odd/

* ``rotations``: object yaws of 360, 450, -90, -270, 720, 89.9999999, 1e-9, 180.0000001, -0.0;
* ``unicode_ids``: the living room's id in other scripts (``"salón 客厅"``), everywhere it is named;
* ``pipe_ids``: object ids holding ``|``, spaces and a quote;
* ``far_objects``: objects at x = 5 km, outside every room and below the floor;
* ``empty``: rooms and walls, no objects, doors or windows;
* ``degenerate_room``: the living room's polygon with a repeated and a collinear vertex.

Two more odd houses are not recorded, as our scene reader refuses them (one error line naming
the field; legoeval README "Houses we refuse"): two objects with one id, an object at x = 1e6.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "tests" / "legoeval" / "data" / "oracle_houses" / "three_rooms.json"
OUT = ROOT / "tests" / "legoeval" / "data" / "oracle_houses_odd"
YAWS = [360, 450, -90, -270, 720, 89.9999999, 1e-9, 180.0000001, -0.0]

House = dict[str, Any]


def rotations(house: House) -> House:
    for obj, yaw in zip(house["objects"], YAWS * 3, strict=False):
        obj["rotation"]["y"] = yaw
    return house


def unicode_ids(house: House) -> House:
    return dict(json.loads(json.dumps(house).replace('living room', 'salón 客厅')))


def pipe_ids(house: House) -> House:
    for k, obj in enumerate(house["objects"][:4]):
        obj["id"] = ["a|b|c", "two words", 'quo"te', "x|" + obj["id"]][k]
    return house


def far_objects(house: House) -> House:
    house["objects"][0]["position"]["x"] = 5000.0
    house["objects"][1]["position"].update(x=-50.0, z=-50.0)
    house["objects"][2]["position"]["y"] = -1.0
    return house


def empty(house: House) -> House:
    house.update(objects=[], doors=[], windows=[])
    return house


def degenerate_room(house: House) -> House:
    room = house["rooms"][0]
    first, second = room["floorPolygon"][0], room["floorPolygon"][1]
    middle = {"x": first["x"], "y": 0.0, "z": (first["z"] + second["z"]) / 2}
    room["floorPolygon"] = [first, dict(first), middle, *room["floorPolygon"][1:]]
    room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    return house


VARIANTS: dict[str, Callable[[House], House]] = {
    "rotations": rotations, "unicode_ids": unicode_ids, "pipe_ids": pipe_ids,
    "far_objects": far_objects, "empty": empty, "degenerate_room": degenerate_room,
}


def main() -> None:
    base = json.loads(BASE.read_text(encoding="utf-8"))
    OUT.mkdir(parents=True, exist_ok=True)
    for name, change in VARIANTS.items():
        house = change(copy.deepcopy(base))
        (OUT / f"{name}.json").write_text(json.dumps(house, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(VARIANTS)} houses in {OUT}")


if __name__ == "__main__":
    main()
