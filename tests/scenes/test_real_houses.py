"""Real house JSON written by ProcTHOR's and Holodeck's generators (see fixtures/README.md):
lossless round trips, derived geometry that agrees with the files' own world-space fields,
and the scene tools running on them."""

from __future__ import annotations

import copy
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from shapely.geometry import LineString, Point, Polygon

from buildbench.scenes import collision, relations
from buildbench.scenes.io import load_scene, save_scene
from buildbench.scenes.model import EXTERIOR, Scene, SceneFormatError
from buildbench.scenes.relations.verdict import Verdict
from buildbench.scenes.thor import read_thor, write_thor

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROCTHOR = ["procthor_train_1_room5.json", "procthor_zg_house_100.json", "procthor_zg_klbr_house_0.json",
            "procthor_mq_hallway_houses_0.json", "procthor_zg_partial_1_doors.json"]
HOLODECK = ["holodeck_warm_and_cozy_bedroom.json", "holodeck_a_living_room.json",
            "holodeck_a_small_conference_room.json"]
ALL = PROCTHOR + HOLODECK
# Whole houses (the excerpt and the partial house lack walls or objects by design).
FURNISHED = [n for n in ALL if n not in ("procthor_train_1_room5.json", "procthor_zg_partial_1_doors.json")]
OBJAVERSE_UID = re.compile(r"[0-9a-f]{32}")
ON_WALL_TOL_M = 0.03


def _data(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _scene(name: str) -> Scene:
    return read_thor(_data(name))


@pytest.fixture(autouse=True)
def _quiet_size_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="buildbench.scenes.thor")


@pytest.mark.parametrize("name", ALL)
def test_round_trip_is_lossless(name: str) -> None:
    house = _data(name)
    assert write_thor(read_thor(copy.deepcopy(house))) == house


@pytest.mark.parametrize("name", ALL)
def test_load_scene_detects_the_convention_and_saves_back(name: str, tmp_path: Path) -> None:
    scene = load_scene(FIXTURES / name)
    assert scene.source_format == ("procthor" if name.startswith("procthor") else "holodeck")
    out = tmp_path / name
    save_scene(scene, out)
    assert json.loads(out.read_text(encoding="utf-8")) == _data(name)


@pytest.mark.parametrize("name", ALL)
def test_walls_lie_on_their_rooms_edges_and_cover_them(name: str) -> None:
    scene = _scene(name)
    for wall in scene.walls:
        assert wall.room_id != EXTERIOR, f"{wall.id}: exterior wall not tied to a room"
        ring = Polygon(scene.room(wall.room_id).vertices).exterior
        mid = ((wall.start[0] + wall.end[0]) / 2, (wall.start[1] + wall.end[1]) / 2)
        gap = max(ring.distance(Point(p)) for p in (wall.start, wall.end, mid))
        assert gap < 0.01, f"{wall.id} is {gap:.3f} m off room {wall.room_id!r}'s edges"
        assert wall.height_m > 1.5
    for room in scene.rooms:
        inner = scene.walls_of(room.id)
        if inner:  # sub-walls split at windows must still add up to the whole outline
            assert sum(w.width_m for w in inner) == pytest.approx(Polygon(room.vertices).length, abs=0.01)


@pytest.mark.parametrize("name", FURNISHED)
def test_every_exterior_wall_is_an_interior_wall_reversed(name: str) -> None:
    scene = _scene(name)
    inner = {(w.start, w.end) for w in scene.walls if not w.exterior}
    outer = [w for w in scene.walls if w.exterior]
    assert outer
    for wall in outer:
        assert any(abs(a[0] - wall.end[0]) + abs(a[1] - wall.end[1]) + abs(b[0] - wall.start[0])
                   + abs(b[1] - wall.start[1]) < 1e-3 for a, b in inner), wall.id


@pytest.mark.parametrize("name", ALL)
def test_door_and_window_centres_lie_on_both_their_walls(name: str) -> None:
    scene = _scene(name)
    openings = list(scene.openings())
    assert openings
    for opening in openings:
        x, y, z = scene.opening_center(opening)
        wall0 = scene.wall(opening.wall0)
        assert -0.01 <= opening.hole_min[0] < opening.hole_max[0] <= wall0.width_m + 0.01, opening.id
        assert 0.0 < y < wall0.bottom_y + wall0.height_m
        for wall_id in filter(None, (opening.wall0, opening.wall1)):
            wall = scene.wall(wall_id)
            gap = LineString([wall.start, wall.end]).distance(Point(x, z))
            assert gap < ON_WALL_TOL_M, f"{opening.id}: centre {gap:.3f} m off {wall_id}"


@pytest.mark.parametrize("name", HOLODECK)
def test_opening_centres_match_holodecks_world_segments(name: str) -> None:
    """Holodeck also writes each hole's floor segment in world coordinates; our centre,
    read from the wall-local holePolygon, must be its midpoint."""
    scene = _scene(name)
    for opening in scene.openings():
        (x0, z0), (x1, z1) = opening.raw.get("doorSegment") or opening.raw["windowSegment"]
        x, _, z = scene.opening_center(opening)
        assert (x, z) == pytest.approx(((x0 + x1) / 2, (z0 + z1) / 2), abs=1e-3), opening.id
        assert opening.width_m == pytest.approx(abs(x1 - x0) + abs(z1 - z0), abs=1e-3)


@pytest.mark.parametrize("name", FURNISHED)
def test_objects_fall_inside_their_rooms(name: str) -> None:
    scene = _scene(name)
    assert scene.objects and all(o.room_id for o in scene.objects)
    floors = {r.id: Polygon(r.vertices).buffer(0.02) for r in scene.rooms}
    inside = [o for o in scene.objects if floors[o.room_id].contains(Point(o.center[0], o.center[2]))]
    assert len(inside) >= 0.95 * len(scene.objects)


@pytest.mark.parametrize("name", FURNISHED)
def test_thor_assets_have_catalogue_sizes(name: str) -> None:
    scene = _scene(name)
    thor = [o for o in scene.objects if not OBJAVERSE_UID.fullmatch(o.asset_id)]
    assert thor
    unknown = [o.asset_id for o in thor if o.attributes["size_source"] != "catalogue"]
    assert not unknown, f"THOR asset ids without a catalogue size: {unknown}"
    for obj in scene.objects:
        assert all(0.0 < s < 8.0 for s in obj.size), obj.id
    if name in HOLODECK:  # floor and wall objects carry their footprint in centimetres
        assert any(o.attributes["size_source"] == "vertices" for o in scene.objects)


@pytest.mark.parametrize("name", FURNISHED)
def test_collision_and_relations_run(name: str) -> None:
    scene = _scene(name)
    for hit in collision.collisions(scene):
        assert hit.depth_m > 0 and scene.kind_of(hit.a) == scene.kind_of(hit.b) == "object"
    for miss in collision.out_of_bounds(scene):
        assert 0.0 <= miss.outside_fraction <= 1.0 and miss.reasons, miss
    collision.blocked_openings(scene, windows=True)
    a, b, c = (o.id for o in scene.objects[:3])
    room = scene.objects[0].room_id
    wall = scene.walls_of(room)[0].id
    opening = next(o.id for o in scene.openings() if room in o.rooms)
    calls = {
        "near": (a, b), "far": (a, b), "left_of": (a, b), "right_of": (a, b), "in_front_of": (a, b),
        "behind": (a, b), "facing": (a, b), "facing_each_other": (a, b), "on_top_of": (a, b),
        "under": (a, b), "against_wall": (a,), "in_corner": (a,), "in_middle": (a,), "between": (a, b, c),
        "closer_than": (a, b, c), "aligned": (a, b), "same_direction": (a, b), "in_room": (a, room),
        "on_wall": (a, wall), "connects": (opening, room), "room_area": (room,),
        "count": (scene.objects[0].category, room),
    }
    if len(scene.rooms) > 1:
        calls.update(adjacent_rooms=(scene.rooms[0].id, scene.rooms[1].id),
                     larger_room=(scene.rooms[0].id, scene.rooms[1].id))
    for relation, ids in calls.items():
        verdict = relations.RELATIONS[relation](scene, *ids)
        assert isinstance(verdict, Verdict) and verdict.explanation, relation
    assert relations.RELATIONS["in_room"](scene, a, room).holds
    assert relations.RELATIONS["connects"](scene, opening, room).holds


# --- what the real files broke, pinned ---------------------------------------------------
def test_procthor_generator_ids_are_not_taken_for_holodeck_children() -> None:
    """``6|2|0`` (room 6, group 2, member 0) ends in ``2|0``, another object's id; only a
    Holodeck receptacle id (``{category}-{k} ({room})``) makes a flat child."""
    scene = _scene("procthor_mq_hallway_houses_0.json")
    assert scene.kind_of("2|0") == "object"
    table = scene.object("6|2|0")
    assert table.parent_id is None and table.room_id == "room|6"
    assert [o.id for o in scene.children_of("6|2|0")][:2] == ["small|6|0", "small|6|1"]
    bedroom = _scene("holodeck_warm_and_cozy_bedroom.json")
    assert bedroom.object("pillow-2|nightstand-0 (bedroom)").parent_id == "nightstand-0 (bedroom)"


def test_partial_house_null_lists_and_missing_outside_wall(caplog: pytest.LogCaptureFixture) -> None:
    house = _data("procthor_zg_partial_1_doors.json")
    assert house["windows"] is None and house["objects"] == []
    caplog.set_level(logging.WARNING, logger="buildbench.scenes.thor")
    scene = read_thor(copy.deepcopy(house))
    door = scene.door("door|1|2")
    assert scene.windows == [] and scene.objects == []
    assert door.wall1 is None and door.wall0 == "wall|2|0.00|0.00|0.00|6.71"
    assert "doors[0].wall1" in caplog.text
    out = write_thor(scene)
    assert out["windows"] is None and out["doors"][0]["wall1"] == "wall|exterior|0.00|0.00|0.00|6.71"
    scene.windows.extend(_scene("procthor_zg_klbr_house_0.json").windows[:1])
    scene.windows[0].wall0 = door.wall0
    assert isinstance(write_thor(scene)["windows"], list)  # null only while there is nothing to write


def test_unknown_interior_wall1_is_still_refused() -> None:
    house = _data("procthor_zg_partial_1_doors.json")
    house["doors"][0]["wall1"] = "wall|9|0.00|0.00|0.00|6.71"
    with pytest.raises(SceneFormatError, match=r"doors\[0\]\.wall1: unknown wall"):
        read_thor(house)


def test_size_given_as_a_list_of_metres() -> None:
    """Holodeck derivatives that generate assets (Hippo) store ``size: [sx, sy, sz]``."""
    house = {"rooms": [{"id": "r", "vertices": [[0, 0], [0, 4], [4, 4], [4, 0]]}],
             "objects": [{"id": "cardboard box-4768-7579", "assetId": "cardboard box-4768-7579",
                          "size": [0.78, 0.65, 0.79], "position": {"x": 2, "y": 0.33, "z": 2},
                          "rotation": {"x": 0, "y": 0, "z": 0}, "roomId": "r"}]}
    obj = read_thor(copy.deepcopy(house)).object("cardboard box-4768-7579")
    assert obj.size == pytest.approx((0.78, 0.65, 0.79)) and obj.attributes["size_source"] == "record"
    house["objects"][0]["size"] = [0.78, 0.65]
    with pytest.raises(SceneFormatError, match=r"objects\[0\]\.size: expected \[sx, sy, sz\], got 2 values"):
        read_thor(house)
