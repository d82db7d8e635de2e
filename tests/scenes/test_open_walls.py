"""Holodeck's top-level ``open_walls``: the walls it removed between rooms joined by an
"open" doorway are read back as empty walls, treated as openings, and written back as the
file has them.

The fixture ``holodeck_open_kitchen_living.json`` is ours, laid out as allenai/Holodeck
writes a house (ai2holodeck/generation/walls.py, ``WallGenerator.generate_walls`` and
``update_walls``; ai2holodeck/generation/holodeck.py, ``generate_doors``): wall ids
``wall|{room}|{direction}|{j}`` over the room's ``full_vertices`` edges, an ``|exterior`` twin
with the reversed polygon and segment before each outside wall, the two sides of the
kitchen/living boundary deleted because the pair is in ``open_room_pairs``, and
``open_walls = {"segments": [each deleted wall's segment, a segment and its reverse once],
"openWallBoxes": [two rectangles 0.5 m either side of each segment]}``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from buildbench.scenes.collision import out_of_bounds
from buildbench.scenes.io import load_scene, read_thor, write_thor
from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.reachability import reachable
from buildbench.scenes.relations import adjacent_rooms, against_wall

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOUSE = FIXTURES / "holodeck_open_kitchen_living.json"
KITCHEN_OPEN = "wall|kitchen|east|2"
LIVING_OPEN = "wall|living room|west|0"
SOFA = "sofa-0 (living room)"  # in the living room, its back to the open boundary x = 4
ARMCHAIR = "armchair-0 (living room)"  # its back to the living room's solid east wall


def _house() -> dict[str, Any]:
    return dict(json.loads(HOUSE.read_text(encoding="utf-8")))


def _with_boundary_walls(house: dict[str, Any]) -> dict[str, Any]:
    """The same house with the two boundary wall sides kept in ``walls`` (as a file edited
    after Holodeck, or written by another tool, may have them)."""
    def side(room: str, wall_id: str, a: list[float], b: list[float]) -> dict[str, Any]:
        polygon = [{"x": a[0], "y": 0, "z": a[1]}, {"x": a[0], "y": 2.7, "z": a[1]},
                   {"x": b[0], "y": 2.7, "z": b[1]}, {"x": b[0], "y": 0, "z": b[1]}]
        return {"id": wall_id, "roomId": room, "material": {"name": "Drywall"}, "polygon": polygon}

    house["walls"] += [side("kitchen", "k-east", [4.0, 4.0], [4.0, 0.0]),
                       side("living room", "l-west", [4.0, 0.0], [4.0, 4.0])]
    return house


# --- reading and writing -------------------------------------------------------------------
def test_the_removed_walls_come_back_empty_under_holodecks_ids() -> None:
    scene = read_thor(_house())
    open_walls = {w.id: w for w in scene.walls if w.empty}
    assert sorted(open_walls) == [KITCHEN_OPEN, LIVING_OPEN]
    kitchen, living = open_walls[KITCHEN_OPEN], open_walls[LIVING_OPEN]
    assert (kitchen.room_id, kitchen.start, kitchen.end) == ("kitchen", (4.0, 4.0), (4.0, 0.0))
    assert (living.room_id, living.start, living.end) == ("living room", (4.0, 0.0), (4.0, 4.0))
    assert kitchen.height_m == living.height_m == 2.7 and not kitchen.exterior
    assert not any(w.empty for w in scene.walls if w.id not in open_walls)


def test_round_trip_is_exact_and_adds_no_empty_key() -> None:
    house = _house()
    written = write_thor(read_thor(copy.deepcopy(house)))
    assert written == house
    assert json.dumps(written, sort_keys=True) == json.dumps(house, sort_keys=True)
    assert all("empty" not in w for w in written["walls"])
    assert write_thor(load_scene(HOUSE)) == house


def test_a_wall_present_on_an_open_segment_is_read_empty_and_written_unchanged() -> None:
    house = _with_boundary_walls(_house())
    scene = read_thor(copy.deepcopy(house))
    assert sorted(w.id for w in scene.walls if w.empty) == ["k-east", "l-west"]  # nothing rebuilt beside them
    written = write_thor(scene)
    assert written == house and all("empty" not in w for w in written["walls"])


def test_making_the_open_boundary_solid_drops_its_segment_and_boxes() -> None:
    scene = read_thor(_house())
    for wall_id in (KITCHEN_OPEN, LIVING_OPEN):
        scene.wall(wall_id).empty = False
    written = write_thor(scene)
    assert written["open_walls"] == {"segments": [], "openWallBoxes": []}
    assert {KITCHEN_OPEN, LIVING_OPEN} <= {w["id"] for w in written["walls"]}
    again = read_thor(written)
    assert not any(w.empty for w in again.walls) and write_thor(again) == written


def test_one_side_made_solid_keeps_the_segment_open() -> None:
    house = _with_boundary_walls(_house())
    scene = read_thor(copy.deepcopy(house))
    scene.wall("k-east").empty = False
    written = write_thor(scene)
    assert written["open_walls"] == house["open_walls"]
    assert next(w for w in written["walls"] if w["id"] == "k-east") == house["walls"][-2]


def test_a_house_without_open_walls_is_unaffected() -> None:
    house = _house()
    house["open_walls"] = {"segments": [], "openWallBoxes": []}
    scene = read_thor(copy.deepcopy(house))
    assert not any(w.empty for w in scene.walls) and write_thor(scene) == house
    del house["open_walls"]
    assert write_thor(read_thor(copy.deepcopy(house))) == house


@pytest.mark.parametrize(("value", "message"), [
    ([[[4.0, 4.0], [4.0, 0.0]]], "open_walls: expected an object"),  # a list of segments ([] is no open walls)
    ({"segments": {}}, "open_walls.segments: expected a list"),
    ({"segments": [[[4.0, 4.0]]]}, "open_walls.segments[0]: expected two [x, z] points"),
    ({"segments": [[[4.0, 4.0], [4.0, 0.0]], [[4.0, "a"], [4.0, 0.0]]]}, "open_walls.segments[1][0]: expected a number"),
    ({"segments": [[[4.0, 4.0], [4.0, float("nan")]]]}, "open_walls.segments[0][1]: expected a finite number"),
    ({"segments": [[[4.0, 4.0], [4.0, 4.0]]]}, "open_walls.segments[0]: the two points are the same"),
    ({"segments": [[[4.0, 4.0], [4.0, 0.0, 1.0]]]}, "open_walls.segments[0][1]: expected an [x, z] pair"),
    ({"segments": [], "openWallBoxes": [[[4.0, 4.0]]]}, "open_walls.openWallBoxes[0]: expected a polygon"),
    ({"segments": [], "openWallBoxes": [[[0, 0], [1, 0], [1, None]]]}, "open_walls.openWallBoxes[0][2]: expected"),
])
def test_a_malformed_open_walls_is_refused_in_one_line(value: Any, message: str) -> None:
    house = _house()
    house["open_walls"] = value
    kept = copy.deepcopy(house)
    with pytest.raises(SceneFormatError) as err:
        read_thor(house)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert house == kept  # bad input changes nothing


# --- the open boundary is an opening -------------------------------------------------------
def _walled(scene_house: dict[str, Any]) -> Any:
    """The house read, with its open boundary made solid: the control for each check."""
    scene = read_thor(scene_house)
    for wall_id in (KITCHEN_OPEN, LIVING_OPEN):
        scene.wall(wall_id).empty = False
    return scene


def test_each_room_is_reached_through_the_open_boundary() -> None:
    scene = read_thor(_house())
    kitchen, living = reachable(scene, "kitchen"), reachable(scene, "living room")
    assert kitchen.doors == () and kitchen.open_walls == (KITCHEN_OPEN,) and kitchen.ok
    assert living.open_walls == (LIVING_OPEN,) and living.ok
    assert "dining table-0 (kitchen)" in kitchen.reachable_objects
    assert reachable(_walled(_house()), "kitchen").open_walls == ()


def test_furniture_beyond_the_open_boundary_closes_the_kitchens_way_out() -> None:
    house = _house()
    house["objects"] = house["objects"][2:]  # the dining table only
    for k, z in enumerate((0.5, 1.5, 2.5, 3.5)):  # a row of wardrobes backed onto x = 4 in the living room
        house["objects"].append({
            "assetId": f"3d4e5f60718293a4b5c6d7e8f90a1b2{k}", "id": f"wardrobe-{k} (living room)",
            "kinematic": True, "position": {"x": 4.3, "y": 1.0, "z": z}, "rotation": {"x": 0, "y": 90, "z": 0},
            "material": None, "roomId": "living room", "object_name": f"wardrobe-{k}", "layer": "Procedural0",
            "vertices": [[400.0, 100 * z - 50], [460.0, 100 * z - 50], [460.0, 100 * z + 50], [400.0, 100 * z + 50]]})
    kitchen = reachable(read_thor(house), "kitchen")
    assert kitchen.unreachable_open_walls == (KITCHEN_OPEN,) and not kitchen.ok
    assert f"{KITCHEN_OPEN} (an empty wall, open to the next room) cannot be walked through" in kitchen.explanation


def test_nothing_stands_against_the_open_side() -> None:
    scene = read_thor(_house())
    assert against_wall(_walled(_house()), SOFA, "west").holds  # the same sofa, the boundary solid
    verdict = against_wall(scene, SOFA, "west")
    assert not verdict.holds and "empty (invisible) wall" in verdict.explanation
    assert not against_wall(scene, SOFA, LIVING_OPEN).holds and not against_wall(scene, SOFA).holds
    assert against_wall(scene, ARMCHAIR).holds and against_wall(scene, ARMCHAIR, "east").holds


def test_the_rooms_are_adjacent_through_the_open_walls() -> None:
    joined = adjacent_rooms(read_thor(_house()), "kitchen", "living room", require_door=True)
    assert joined.holds and joined.evidence["open_walls"] == [KITCHEN_OPEN, LIVING_OPEN]
    assert not adjacent_rooms(_walled(_house()), "kitchen", "living room", require_door=True).holds


def test_straddling_the_open_boundary_is_not_out_of_bounds() -> None:
    house = _house()
    house["objects"][0]["position"]["x"] = 4.0  # the sofa now half in the kitchen
    assert out_of_bounds(read_thor(copy.deepcopy(house))) == []
    assert [o.object_id for o in out_of_bounds(_walled(house))] == [SOFA]
