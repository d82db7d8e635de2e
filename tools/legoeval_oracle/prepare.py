"""Houses and the asset annotation file the original LEGO-Eval tools need (project venv).

Writes ``tests/legoeval/data/oracle_houses/*.json``: houses on Holodeck's ``empty_house.json``
skeleton (its ``metadata`` and ``proceduralParameters``) whose rooms, walls, doors, windows
and objects come from :class:`buildbench.scenes.build.HouseBuilder` — several rooms, interior
and exterior doors, windows, objects at 0/90/180/270 and at other yaws, small objects on
receptacles, and a wall object.

Writes ``WORK/evaluation/utils/obj_annotations.json``: the original reads object extents from
this file, which its public snapshot lacks. THOR asset ids take their ``boundingBox`` from
ProcTHOR's ``asset-database.json`` (the same metadata the original's file carries); every
other asset takes the size our reader gives it, so those ``coordinates`` test the footprint
arithmetic, not the sizes. Usage::

    .venv/bin/python tools/legoeval_oracle/prepare.py --work /tmp/lego_work
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from houses import house_paths

from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import load_scene, write_thor

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared" / "data" / "holodeck"
HOUSES_DIR = ROOT / "tests" / "legoeval" / "data" / "oracle_houses"


def three_rooms() -> HouseBuilder:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 5), room_type="living room", floor_material="DarkWoodFloors",
           wall_material="BluePaint")
    b.room("kitchen", (6, 0, 10, 5), room_type="kitchen")
    b.room("bedroom 0", (0, 5, 6, 9), room_type="bedroom")
    b.door("living room", "kitchen", along=0.3)
    b.door("living room", "bedroom 0")
    b.door("living room", "exterior", direction="south")
    b.window("kitchen", "east")
    b.window("bedroom 0", "north", along=0.25)
    b.window("bedroom 0", "west")
    b.place("sofa", "living room", center_xz=(3, 1.2), yaw_deg=0)
    table = b.place("table", "living room", center_xz=(3, 2.8), yaw_deg=90)
    b.place("book", "living room", on=table)
    b.place("armchair", "living room", center_xz=(5, 1.5), yaw_deg=270)
    b.place("armchair", "living room", center_xz=(1.2, 3.5), yaw_deg=45)
    b.place("bed", "bedroom 0", center_xz=(3, 7.5), yaw_deg=180)
    b.place("chair", "kitchen", center_xz=(8, 2.5), yaw_deg=30)
    b.place("chair", "kitchen", center_xz=(8.8, 3.2), yaw_deg=-60)
    b.place("painting", "bedroom 0", center_xz=(3, 8.95), yaw_deg=180)
    return b


def two_rooms_l() -> HouseBuilder:
    b = HouseBuilder()
    b.room("office", [(0, 0), (0, 4), (3, 4), (3, 6), (7, 6), (7, 0)], room_type="office",
           floor_material="WhiteMarble")
    b.room("bathroom", (7, 0, 10, 3), room_type="bathroom")
    b.door("office", "bathroom")
    b.window("office", "south", along=0.7)
    b.place("desk", "office", center_xz=(5, 3), yaw_deg=135)
    b.place("bookshelf", "office", center_xz=(0.4, 2), yaw_deg=90)
    b.place("toilet", "bathroom", center_xz=(8.5, 0.5), yaw_deg=0)
    return b


def on_empty_house(builder: HouseBuilder, query: str) -> dict[str, Any]:
    """Holodeck's skeleton with the builder's structure and objects."""
    house = json.loads((SHARED / "empty_house.json").read_text(encoding="utf-8"))
    built = write_thor(builder.build())
    house.update({k: built[k] for k in ("rooms", "walls", "doors", "windows", "objects")})
    house["query"] = query
    return house


def write_houses() -> None:
    HOUSES_DIR.mkdir(parents=True, exist_ok=True)
    for name, builder, query in (("three_rooms", three_rooms(), "a living room between a kitchen and a bedroom"),
                                 ("l_office", two_rooms_l(), "an L-shaped office beside a bathroom")):
        text = json.dumps(on_empty_house(builder, query), indent=1) + "\n"
        (HOUSES_DIR / f"{name}.json").write_text(text, encoding="utf-8")


def thor_boxes() -> dict[str, dict[str, float]]:
    db = json.loads((SHARED / "procthor_databases" / "asset-database.json").read_text(encoding="utf-8"))
    return {a["assetId"]: a["boundingBox"] for assets in db.values() for a in assets if "boundingBox" in a}


def annotation_db(paths: list[Path]) -> dict[str, Any]:
    """``{assetId: {"assetMetadata": {"boundingBox": {x, y, z}}}}`` (metres) for every asset
    the houses use; see the module docstring for where each size comes from."""
    thor = thor_boxes()
    out: dict[str, Any] = {}
    for path in paths:
        for obj in load_scene(path).objects:
            if not obj.asset_id or obj.asset_id in out:
                continue
            sx, sy, sz = obj.size
            box = thor.get(obj.asset_id, {"x": sx, "y": sy, "z": sz})
            out[obj.asset_id] = {"assetMetadata": {"boundingBox": box},
                                 "size_source": "asset-database" if obj.asset_id in thor else "buildbench reader"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="folder for the annotation file")
    ap.add_argument("--no-houses", action="store_true", help="keep the committed oracle houses")
    ap.add_argument("--houses", type=Path, nargs="*", default=[],
                    help="more house files to annotate (fresh houses run with run_original.py --houses)")
    args = ap.parse_args()
    if not args.no_houses:
        write_houses()
    target = args.work / "evaluation" / "utils" / "obj_annotations.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    paths = house_paths() + [p.resolve() for p in args.houses]
    target.write_text(json.dumps(annotation_db(paths), indent=1), encoding="utf-8")
    print(f"{len(paths)} houses; annotations in {target}")


if __name__ == "__main__":
    main()
