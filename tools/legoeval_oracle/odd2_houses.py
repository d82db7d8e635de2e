"""Write round-2 odd variants of ``oracle_houses/three_rooms.json`` for the differential recording.

What ``odd_houses.py`` leaves alone (a developer tool, never imported by buildbench)::

    .venv/bin/python tools/legoeval_oracle/odd2_houses.py   # writes tests/legoeval/data/oracle_houses_odd2/

* ``near_quarter_yaws``: yaws a hair off quarter and eighth turns (``90 ± 1e-9``, ``180 - 1e-9``,
  ``270 + 1e-9``, ``44.9999999999``), ``-360``, ``1080``, ``-45``, ``5e-324``;
* ``clockwise_rooms``: every floor polygon (and its ``vertices``) in the other winding;
* ``closed_polygons``: every floor polygon with its first corner repeated at the end;
* ``triangle_room``: the living room a right triangle over the same corners;
* ``touching_objects``: an object copied onto another's exact position, copies 1e-9 m either
  side, an object centred exactly on the room's corner and on its wall line (x = 0, ± 1e-9);
* ``lookalike_ids``: object ids that differ only by case, a trailing space, Unicode normal form
  (``é`` composed and decomposed), a zero-width joiner, an emoji or right-to-left script;
* ``one_of_each``: one room, its walls, one object, one door (to the outside) and one window;
* ``shifted_storey``: the whole house moved 1 km west and south and 3 m up;
* ``many_objects``: 80 objects in the living room (a grid of the house's assets);
* ``tiny_room``: the bedroom shrunk to 1 mm by 1 mm (walls and objects kept).
"""

from __future__ import annotations

import copy
import json
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "tests" / "legoeval" / "data" / "oracle_houses" / "three_rooms.json"
OUT = ROOT / "tests" / "legoeval" / "data" / "oracle_houses_odd2"
HAIR = 1e-9
YAWS = [90 + HAIR, 90 - HAIR, 180 - HAIR, 270 + HAIR, 44.9999999999, -360, 1080, -45, 5e-324]

House = dict[str, Any]


def _points(house: House, fn: Callable[[dict[str, float]], dict[str, float]]) -> None:
    """Apply ``fn`` to every point of the house (floor polygons, wall polygons, holes are wall-local)."""
    for room in house["rooms"]:
        room["floorPolygon"] = [fn(dict(p)) for p in room["floorPolygon"]]
        room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    for wall in house["walls"]:
        wall["polygon"] = [fn(dict(p)) for p in wall["polygon"]]
        if "segment" in wall:
            moved = [fn({"x": s[0], "y": 0.0, "z": s[1]}) for s in wall["segment"]]
            wall["segment"] = [[p["x"], p["z"]] for p in moved]
    for obj in house["objects"]:
        obj["position"] = fn(dict(obj["position"]))


def near_quarter_yaws(house: House) -> House:
    for obj, yaw in zip(house["objects"], YAWS, strict=False):
        obj["rotation"]["y"] = yaw
    return house


def clockwise_rooms(house: House) -> House:
    for room in house["rooms"]:
        room["floorPolygon"] = room["floorPolygon"][::-1]
        room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    return house


def closed_polygons(house: House) -> House:
    for room in house["rooms"]:
        room["floorPolygon"] = [*room["floorPolygon"], dict(room["floorPolygon"][0])]
        room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    return house


def triangle_room(house: House) -> House:
    room = house["rooms"][0]
    room["floorPolygon"] = room["floorPolygon"][:3]
    room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    return house


def touching_objects(house: House) -> House:
    first = house["objects"][0]
    copies = []
    for k, (dx, suffix) in enumerate([(0.0, "same"), (HAIR, "hair"), (-HAIR, "minus-hair")]):
        obj = copy.deepcopy(first)
        obj["id"] = f"{first['id']} {suffix}"
        obj["object_name"] = f"{first['object_name']}-{k}"
        obj["position"]["x"] += dx
        copies.append(obj)
    for name, x, z in [("corner", 0.0, 0.0), ("on-wall", 0.0, 2.5), ("wall-in", HAIR, 2.5), ("wall-out", -HAIR, 2.5)]:
        obj = copy.deepcopy(house["objects"][1])
        obj["id"] = f"{name} (living room)"
        obj["object_name"] = name
        obj["position"].update(x=x, z=z)
        copies.append(obj)
    house["objects"] += copies
    return house


def lookalike_ids(house: House) -> House:
    composed = unicodedata.normalize("NFC", "café")
    names = ["Sofa-0 (living room)", "sofa-0 (living room) ", composed, unicodedata.normalize("NFD", composed),
             "a\u200db", "🛋️ sofa", "أريكة", "sofa-0 (living room)\t"]
    base = house["objects"][0]
    for k, name in enumerate(names):
        obj = copy.deepcopy(base)
        obj["id"] = name
        obj["object_name"] = f"look-{k}"
        obj["position"]["x"] = 0.5 + 0.6 * k
        obj["position"]["z"] = 4.0
        house["objects"].append(obj)
    return house


def one_of_each(house: House) -> House:
    room = house["rooms"][0]["id"]
    house["rooms"] = house["rooms"][:1]
    house["walls"] = [w for w in house["walls"] if w["roomId"] == room]
    house["objects"] = [o for o in house["objects"] if o.get("roomId") == room][:1]
    house["doors"] = [d for d in house["doors"] if room in (d["room0"], d["room1"])][:1]
    for door in house["doors"]:  # its other room is gone: a door to the outside
        side = 0 if door["room0"] == room else 1
        door.update(room0=room, room1=room, wall0=door[f"wall{side}"], wall1=door[f"wall{side}"])
    house["windows"] = [w for w in house["windows"] if w["room0"] == room][:1]
    return house


def shifted_storey(house: House) -> House:
    def move(p: dict[str, float]) -> dict[str, float]:
        return {**p, "x": p["x"] - 1000.0, "y": p["y"] + 3.0, "z": p["z"] - 1000.0}

    _points(house, move)
    return house


def many_objects(house: House) -> House:
    assets = [o for o in house["objects"] if o.get("roomId") == house["rooms"][0]["id"]]
    grid = []
    for k in range(80):
        obj = copy.deepcopy(assets[k % len(assets)])
        obj["id"] = f"grid-{k} ({house['rooms'][0]['id']})"
        obj["object_name"] = f"grid-{k}"
        obj["position"].update(x=0.3 + 0.6 * (k % 10), z=0.3 + 0.6 * (k // 10) * 0.8)
        grid.append(obj)
    house["objects"] = grid + [o for o in house["objects"] if o not in assets]
    return house


def tiny_room(house: House) -> House:
    room = house["rooms"][-1]
    xs = [p["x"] for p in room["floorPolygon"]]
    zs = [p["z"] for p in room["floorPolygon"]]
    x0, z0 = min(xs), min(zs)
    room["floorPolygon"] = [{"x": x0 + 0.001 * (p["x"] > x0), "y": 0.0, "z": z0 + 0.001 * (p["z"] > z0)}
                            for p in room["floorPolygon"]]
    room["vertices"] = [[p["x"], p["z"]] for p in room["floorPolygon"]]
    return house


VARIANTS: dict[str, Callable[[House], House]] = {
    "near_quarter_yaws": near_quarter_yaws, "clockwise_rooms": clockwise_rooms, "closed_polygons": closed_polygons,
    "triangle_room": triangle_room, "touching_objects": touching_objects, "lookalike_ids": lookalike_ids,
    "one_of_each": one_of_each, "shifted_storey": shifted_storey, "many_objects": many_objects,
    "tiny_room": tiny_room,
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
