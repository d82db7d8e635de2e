"""THOR house JSON: both conventions, lossless round trips, derived fields, bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from buildbench.scenes.io import load_scene, save_scene, scene_problems
from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.revis import read_revis, write_revis
from buildbench.scenes.thor import read_thor, write_thor

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
PROCTHOR = FIXTURES / "procthor_train_1_room5.json"


def _procthor() -> dict:
    return json.loads(PROCTHOR.read_text())


def test_procthor_round_trip_is_lossless() -> None:
    house = _procthor()
    scene = read_thor(copy.deepcopy(house))
    assert scene.source_format == "procthor"
    assert write_thor(scene) == house


def test_procthor_conventions_read() -> None:
    scene = read_thor(_procthor())
    inner = scene.wall("wall|5|0.00|3.51|3.51|3.51")  # both bottom points first
    outer = scene.wall("wall|exterior|0.00|3.51|3.51|3.51")  # top points first, roomId "exterior"
    assert (inner.start, inner.end) == ((3.507, 3.507), (0.0, 3.507))
    assert outer.exterior and outer.room_id == "room|5" and (outer.start, outer.end) == (inner.end, inner.start)
    assert inner.height_m == pytest.approx(2.6135298900884276) and inner.bottom_y == 0.0
    stand = scene.object("TVStand|5|0|0")
    assert stand.category == "tv stand" and stand.room_id == "room|5"  # no roomId in the file
    assert {o.id for o in scene.children_of(stand.id)} == {
        "Television|5|0|1", "CreditCard|surface|5|48", "RemoteControl|surface|5|51"}
    assert stand.attributes["size_source"] == "catalogue"
    assert scene.object("Sofa|5|2").yaw_deg == pytest.approx(90.0)
    x, _, z = scene.opening_center(scene.window("window|5|0"))
    assert (x, z) == pytest.approx((3.507 - 0.5161, 3.507), abs=1e-3)  # along wall0 from its first point
    assert scene_problems(scene) == []


def test_changes_are_written_in_the_files_own_layout() -> None:
    scene = read_thor(_procthor())
    scene.object("Pillow|surface|5|55").center = (0.5, 0.6, 7.0)
    scene.wall("wall|5|0.00|3.51|0.00|8.77").height_m = 3.0
    scene.rooms[0].floor_material = "DarkWoodFloors"
    out = write_thor(scene)
    sofa = next(o for o in out["objects"] if o["id"] == "Sofa|5|2")
    assert sofa["children"][0]["position"] == {"x": 0.5, "y": 0.6, "z": 7.0}
    wall = out["walls"][0]
    assert [p["y"] for p in wall["polygon"]] == [0.0, 0.0, 3.0, 3.0]  # ProcTHOR order kept
    assert "height" not in wall and "direction" not in wall  # derived keys only where the file had them
    assert out["rooms"][0]["floorMaterial"] == {"name": "DarkWoodFloors"}
    again = read_thor(out)
    assert again.object("Pillow|surface|5|55").center == (0.5, 0.6, 7.0)


def test_holodeck_style_record_with_vertices_and_flat_children() -> None:
    house = {
        "rooms": [{"id": "bedroom", "roomType": "bedroom", "vertices": [[0, 0], [0, 4], [4, 4], [4, 0]],
                   "floorMaterial": {"name": "DarkWoodFloors"}}],
        "walls": [{"id": "wall|bedroom|west|0", "roomId": "bedroom", "direction": "west", "width": 4, "height": 2.5,
                   "polygon": [{"x": 0, "y": 0, "z": 0}, {"x": 0, "y": 2.5, "z": 0},
                               {"x": 0, "y": 2.5, "z": 4}, {"x": 0, "y": 0, "z": 4}]}],
        "objects": [
            {"id": "shelf-0 (bedroom)", "assetId": "objaverse-unknown-uid", "position": {"x": 1, "y": 0.9, "z": 0.3},
             "rotation": {"x": 0, "y": 0, "z": 0}, "roomId": "bedroom",
             "vertices": [[50, 10], [150, 10], [150, 50], [50, 50]]},
            {"id": "book-0|shelf-0 (bedroom)", "assetId": "Book_1", "position": {"x": 1, "y": 1.9, "z": 0.3},
             "rotation": {"x": 0, "y": 90, "z": 0}, "roomId": "bedroom"},
            {"id": "lamp-0 (bedroom)", "assetId": "no-such-asset", "position": {"x": 3, "y": 0.5, "z": 3}},
        ],
    }
    scene = read_thor(copy.deepcopy(house))
    assert scene.source_format == "holodeck"
    shelf = scene.object("shelf-0 (bedroom)")
    assert shelf.size == pytest.approx((1.0, 1.8, 0.4)) and shelf.attributes["size_source"] == "vertices"
    assert scene.object("book-0|shelf-0 (bedroom)").parent_id == "shelf-0 (bedroom)"
    lamp = scene.object("lamp-0 (bedroom)")
    assert lamp.attributes["size_source"] == "category-default" and lamp.room_id == "bedroom"
    wall = scene.wall("wall|bedroom|west|0")
    assert (wall.start, wall.end, wall.height_m) == ((0.0, 0.0), (0.0, 4.0), 2.5)
    assert write_thor(scene) == house  # flat small objects stay flat
    wall.end = (0.0, 3.0)
    written = write_thor(scene)["walls"][0]
    assert written["width"] == 3.0 and written["direction"] == "west"


def test_record_bounding_box_sizes() -> None:
    house = {"rooms": [{"id": "r", "vertices": [[0, 0], [0, 2], [2, 2], [2, 0]]}],
             "objects": [{"id": "a", "assetId": "x1", "position": {"x": 1, "y": 0.5, "z": 1},
                          "boundingBox": {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 0.4, "y": 1, "z": 0.2}}}]}
    obj = read_thor(house).object("a")
    assert obj.size == pytest.approx((0.4, 1.0, 0.2)) and obj.attributes["size_source"] == "record"


def test_shared_empty_house_round_trip() -> None:
    path = SHARED / "data" / "holodeck" / "empty_house.json"
    if not path.exists():
        pytest.skip("shared data absent (../shared/data/holodeck/empty_house.json)")
    house = json.loads(path.read_text())
    assert write_thor(read_thor(copy.deepcopy(house))) == house


def test_save_and_load_file(tmp_path: Path) -> None:
    scene = load_scene(PROCTHOR)
    out = tmp_path / "house.json"
    save_scene(scene, out)
    assert json.loads(out.read_text()) == _procthor()


def _broken(mutate) -> dict:  # type: ignore[no-untyped-def]
    house = _procthor()
    mutate(house)
    return house


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda h: h["walls"][3].update(polygon=h["walls"][3]["polygon"][:1]), r"walls\[3\]\.polygon: expected 4 points"),
    (lambda h: h["walls"][0].update(polygon=[{"x": 0, "y": 0, "z": 1}] * 4),
     r"walls\[0\]\.polygon: expected 2 distinct floor points, got 1"),
    (lambda h: h["walls"][1]["polygon"][0].update(x=float("nan")), r"walls\[1\]\.polygon\[0\]\.x: expected a finite"),
    (lambda h: h["objects"][0].pop("position"), r"objects\[0\]\.position: expected an object"),
    (lambda h: h["objects"][0]["children"][1].update(id=""), r"objects\[0\]\.children\[1\]\.id"),
    (lambda h: h["objects"].append(copy.deepcopy(h["objects"][3])), r"objects\[4\]\.id: duplicate id 'Painting\|5\|4' \(also at objects\[3\]\)"),
    (lambda h: h["windows"][0].update(room0="room|99"), r"windows\[0\]\.room0: unknown room 'room\|99'"),
    (lambda h: h["windows"][0].update(wall0="wall|nope"), r"windows\[0\]\.wall0: unknown wall"),
    (lambda h: h["windows"][0].update(holePolygon=[]), r"windows\[0\]\.holePolygon: expected 2 points"),
    (lambda h: h["rooms"][0].pop("floorPolygon"), r"rooms\[0\]: needs 'floorPolygon' or 'vertices'"),
    (lambda h: h["rooms"][0].update(floorPolygon=h["rooms"][0]["floorPolygon"][:2]), r"rooms\[0\].*>= 3 distinct"),
    (lambda h: h.update(walls={}), "walls: expected a list"),
    (lambda h: h["objects"][0].update(rotation={"x": 0, "y": "ninety", "z": 0}), r"rotation\.y: expected a number"),
])
def test_bad_input_names_element_and_field(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SceneFormatError, match=message) as info:
        read_thor(_broken(mutate))
    assert "\n" not in str(info.value)


def test_overlapping_rooms_are_reported_not_fatal() -> None:
    house = _procthor()
    extra = copy.deepcopy(house["rooms"][0])
    extra["id"] = "room|6"
    house["rooms"].append(extra)
    problems = scene_problems(read_thor(house))
    assert any("overlap" in p for p in problems)


def test_cross_format_writes(tmp_path: Path) -> None:
    scene = read_thor(_procthor())
    revis = write_revis(scene, room_id="room|5")
    assert set(revis) == {"room_type", "room_id", "bounds_top", "bounds_bottom", "objects"}
    sofa = next(o for o in revis["objects"] if o["desc"].startswith("sofa"))
    assert sofa["pos"][1] == pytest.approx(0.4475589096546173 - 0.8951 / 2, abs=1e-6)
    back = read_revis(revis)
    assert len(back.objects) == len(scene.objects)
    house = write_thor(back)
    assert set(house) >= {"rooms", "walls", "objects", "metadata"} and "bounds_bottom" not in house
    assert read_thor(house).objects[0].center == pytest.approx(back.objects[0].center)


def test_wall_object_footprint_keeps_a_catalogue_height() -> None:
    house = {"rooms": [{"id": "r", "vertices": [[0, 0], [0, 4], [4, 4], [4, 0]]}],
             "objects": [{"id": "painting-0 (r)", "assetId": "objaverse-uid", "position": {"x": 2, "y": 1.6, "z": 0.02},
                          "rotation": {"x": 0, "y": 0, "z": 0}, "vertices": [[150, 0], [250, 0], [250, 4], [150, 4]]}]}
    obj = read_thor(house).object("painting-0 (r)")
    assert obj.size[0] == pytest.approx(1.0) and obj.size[1] < 1.6  # not twice the centre height
