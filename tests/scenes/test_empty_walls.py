"""Empty (invisible) walls, the open boundaries of ProcTHOR's open floor plans: read and
written back as the file has them, built by ``HouseBuilder.open_wall``, and treated as
openings by reachability, relations, out-of-bounds, the renderer and the LEGO-Eval tools."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from buildbench.render import Renderer, RenderUnavailableError
from buildbench.scenes.build import BuildError, HouseBuilder
from buildbench.scenes.collision import blocked_openings, out_of_bounds
from buildbench.scenes.io import load_scene, read_thor, write_thor
from buildbench.scenes.model import Scene, SceneFormatError
from buildbench.scenes.reachability import reachable
from buildbench.scenes.relations import adjacent_rooms, against_wall, in_corner, on_wall
from buildbench.suites.legoeval.tools import ToolContext, run_tool

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOM5 = FIXTURES / "procthor_train_1_room5.json"
ROOM5_OPEN_WALL = "wall|5|3.51|3.51|3.51|8.77"
KITCHEN_OPEN = "wall|kitchen|east|2"
LIVING_OPEN = "wall|living|west|0"


def open_plan(*, open_: bool = True, place: Any = None) -> Scene:
    """A kitchen (4 x 4 m) open to a living room (5 x 4 m) east of it, a bedroom north of
    the kitchen behind a door, and a front door in the living room's south wall. With
    ``open_=False`` the kitchen and living room are walled off from each other instead."""
    b = HouseBuilder()
    b.room("kitchen", (0, 0, 4, 4), room_type="Kitchen").room("living", (4, 0, 9, 4), room_type="LivingRoom")
    b.room("bedroom", (0, 4, 4, 8), room_type="Bedroom")
    if open_:
        b.open_wall("kitchen", "living")
    b.door("living", "exterior", direction="south")
    b.door("kitchen", "bedroom")
    if place is not None:
        place(b)
    return b.build()


def _json(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


# --- the model, the reader and the writer --------------------------------------------------
def test_real_procthor_open_wall_is_read_and_written_back_as_the_file_has_it() -> None:
    house = _json(ROOM5)
    scene = read_thor(copy.deepcopy(house))
    assert [w.id for w in scene.walls if w.empty] == [ROOM5_OPEN_WALL]
    assert write_thor(scene) == house
    scene.wall(ROOM5_OPEN_WALL).empty = False
    written = write_thor(scene)
    changed = next(w for w in written["walls"] if w["id"] == ROOM5_OPEN_WALL)
    assert changed["empty"] is False and read_thor(written).wall(ROOM5_OPEN_WALL).empty is False
    scene.wall("wall|5|0.00|3.51|0.00|8.77").empty = True
    again = next(w for w in write_thor(scene)["walls"] if w["id"] == "wall|5|0.00|3.51|0.00|8.77")
    assert again["empty"] is True


def test_solid_walls_stay_without_the_key() -> None:
    house = _json(ROOM5)
    written = write_thor(read_thor(copy.deepcopy(house)))
    assert [w["id"] for w in written["walls"] if "empty" in w] == [ROOM5_OPEN_WALL]


@pytest.mark.parametrize("value", ["yes", 1, [True]])
def test_a_malformed_empty_flag_is_named(value: Any) -> None:
    house = _json(ROOM5)
    house["walls"][1]["empty"] = value
    with pytest.raises(SceneFormatError, match=r"^walls\[1\]\.empty: expected true or false"):
        read_thor(house)


def test_null_empty_flag_is_a_solid_wall_and_round_trips() -> None:
    house = _json(ROOM5)
    house["walls"][1]["empty"] = None
    scene = read_thor(copy.deepcopy(house))
    assert not scene.wall(house["walls"][1]["id"]).empty and write_thor(scene) == house


# --- HouseBuilder.open_wall ----------------------------------------------------------------
def test_builder_open_wall_makes_both_sides_empty_and_writes_thor_flags() -> None:
    scene = open_plan()
    assert sorted(w.id for w in scene.walls if w.empty) == [KITCHEN_OPEN, LIVING_OPEN]
    assert not any(w.exterior for w in scene.walls if w.id.startswith((KITCHEN_OPEN, LIVING_OPEN)))
    house = write_thor(scene)
    flagged = sorted(w["id"] for w in house["walls"] if w.get("empty") is True)
    assert flagged == [KITCHEN_OPEN, LIVING_OPEN] and sum("empty" in w for w in house["walls"]) == 2
    back = read_thor(house)
    assert sorted(w.id for w in back.walls if w.empty) == flagged and write_thor(back) == house


def test_builder_refuses_bad_open_walls_and_keeps_its_state() -> None:
    b = HouseBuilder().room("a", (0, 0, 3, 3)).room("b", (3, 0, 6, 3)).room("c", (10, 0, 12, 2))
    door = b.door("a", "b")
    for args, message in [(("a", "c"), "not adjacent"), (("a", "exterior"), "two different rooms"),
                          (("a", "a"), "two different rooms"), (("a", "b"), "a door already joins them"),
                          (("a", "nowhere"), "unknown room 'nowhere'")]:
        with pytest.raises(BuildError, match=message):
            b.open_wall(*args)
    assert [d.id for d in b.build().doors] == [door] and not any(w.empty for w in b.build().walls)
    b2 = HouseBuilder().room("a", (0, 0, 3, 3)).room("b", (3, 0, 6, 3)).open_wall("a", "b")
    with pytest.raises(BuildError, match="joined by an open wall"):
        b2.door("b", "a")


# --- relations -----------------------------------------------------------------------------
def _sofas(b: HouseBuilder) -> None:
    b.place("sofa", "living", (4.45, 2.0), yaw_deg=90)  # back to the open boundary
    b.place("sofa", "living", (8.55, 2.0), yaw_deg=270)  # back to the east wall
    b.place("armchair", "kitchen", (3.55, 0.45), yaw_deg=270)  # south-east corner, open on the east
    b.place("armchair", "kitchen", (0.45, 0.45), yaw_deg=90)  # south-west corner, two walls
    b.place("painting", "living", (4.02, 2.0), yaw_deg=90)


def test_nothing_stands_against_or_hangs_on_an_empty_wall() -> None:
    scene = open_plan(place=_sofas)
    solid = open_plan(open_=False, place=_sofas)
    west, east = "sofa-0 (living)", "sofa-1 (living)"
    assert against_wall(solid, west, "west").holds  # the same sofa against a real wall
    verdict = against_wall(scene, west, "west")
    assert not verdict.holds and verdict.evidence["open"] and "empty (invisible) wall" in verdict.explanation
    assert not against_wall(scene, west, LIVING_OPEN).holds
    assert not against_wall(scene, west).holds
    assert against_wall(scene, east).holds and against_wall(scene, east, "east").holds
    assert on_wall(solid, "painting-0 (living)", "west").holds
    assert not on_wall(scene, "painting-0 (living)", "west").holds


def test_a_partly_open_side_is_solid_where_its_wall_stands() -> None:
    b = HouseBuilder().room("kitchen", (0, 0, 4, 4)).room("living", (4, 0, 9, 6)).open_wall("kitchen", "living")
    open_part = b.place("sofa", "living", (4.45, 2.0), yaw_deg=90)
    solid_part = b.place("sofa", "living", (4.45, 5.0), yaw_deg=90)
    scene = b.build()
    assert [w.id for w in scene.walls if w.empty] == [KITCHEN_OPEN, LIVING_OPEN]
    verdict = against_wall(scene, solid_part, "west")
    assert verdict.holds and verdict.evidence["wall"] == "wall|living|west|1"
    assert not against_wall(scene, open_part, "west").holds
    assert against_wall(scene, open_part, "west").evidence["gap_m"] > 0.5  # measured to the solid part


def test_a_corner_with_an_open_side_is_no_corner() -> None:
    scene = open_plan(place=_sofas)
    solid = open_plan(open_=False, place=_sofas)
    assert in_corner(solid, "armchair-0 (kitchen)").holds
    open_corner = in_corner(scene, "armchair-0 (kitchen)")
    assert not open_corner.holds and "south-east corner is open" in open_corner.explanation
    walled = in_corner(scene, "armchair-1 (kitchen)")
    assert walled.holds and walled.evidence["corner"] == "south-west"


def test_adjacent_rooms_count_an_open_wall_as_joining_them() -> None:
    joined = adjacent_rooms(open_plan(), "kitchen", "living", require_door=True)
    assert joined.holds and joined.evidence["open_walls"] == [KITCHEN_OPEN, LIVING_OPEN]
    assert not adjacent_rooms(open_plan(open_=False), "kitchen", "living", require_door=True).holds
    assert adjacent_rooms(open_plan(), "kitchen", "bedroom", require_door=True).evidence["open_walls"] == []


def test_real_procthor_room_has_no_wall_on_its_open_side() -> None:
    scene = load_scene(ROOM5)
    lamp = in_corner(scene, "FloorLamp|5|3")
    assert not lamp.holds and "north-east corner is open" in lamp.explanation
    assert not against_wall(scene, "FloorLamp|5|3", "east").holds
    assert against_wall(scene, "FloorLamp|5|3", "north").holds


# --- reachability --------------------------------------------------------------------------
def _wardrobes_on_the_boundary(b: HouseBuilder) -> None:
    for z in (0.6, 1.8, 3.0, 3.4):
        b.place("wardrobe", "living", (4.3, z), yaw_deg=90)
    b.place("dining table", "kitchen", (2.0, 2.0))


def test_an_open_wall_is_an_entrance() -> None:
    scene = open_plan(place=lambda b: b.place("dining table", "kitchen", (2.0, 2.0)))
    kitchen = reachable(scene, "kitchen")
    assert kitchen.open_walls == (KITCHEN_OPEN,) and kitchen.unreachable_open_walls == () and kitchen.ok
    assert "every door or open wall and floor object of kitchen is reachable" in kitchen.explanation
    living = reachable(scene, "living")
    assert living.open_walls == (LIVING_OPEN,) and living.ok


def test_furniture_along_the_whole_boundary_closes_the_open_wall() -> None:
    scene = open_plan(place=_wardrobes_on_the_boundary)
    living = reachable(scene, "living")
    assert living.unreachable_open_walls == (LIVING_OPEN,) and not living.ok
    assert f"{LIVING_OPEN} (an empty wall, open to the next room) cannot be walked through" in living.explanation
    # from the kitchen the wardrobes stand in the neighbouring room, past the open wall
    kitchen = reachable(scene, "kitchen")
    assert kitchen.unreachable_open_walls == (KITCHEN_OPEN,)
    assert kitchen.reachable_objects == ("dining table-0 (kitchen)",)  # entered by the bedroom door


def test_a_room_entered_only_through_a_blocked_open_wall_reaches_nothing() -> None:
    b = HouseBuilder().room("kitchen", (0, 0, 4, 4)).room("living", (4, 0, 9, 4)).open_wall("kitchen", "living")
    b.door("living", "exterior", direction="south")
    _wardrobes_on_the_boundary(b)
    kitchen = reachable(b.build(), "kitchen")
    assert kitchen.doors == () and kitchen.unreachable_objects == ("dining table-0 (kitchen)",)
    assert "no door or open wall opens onto the main free area of kitchen" in kitchen.explanation


def test_real_procthor_room_lists_its_open_wall() -> None:
    r = reachable(load_scene(ROOM5), "room|5")
    assert r.open_walls == (ROOM5_OPEN_WALL,) and r.doors == ()
    assert r.unreachable_open_walls == () and "Sofa|5|2" in r.reachable_objects


# --- out of bounds and door zones ----------------------------------------------------------
def test_straddling_an_open_boundary_is_not_out_of_bounds() -> None:
    def place(b: HouseBuilder) -> None:
        b.place("sofa", "living", (4.0, 2.0), yaw_deg=90)  # half in the kitchen
        b.place("sofa", "kitchen", (2.0, 4.0))  # half in the bedroom, through a solid wall

    scene = open_plan(place=place)
    assert [o.object_id for o in out_of_bounds(scene)] == ["sofa-0 (kitchen)"]
    walled = out_of_bounds(open_plan(open_=False, place=place))
    assert [o.object_id for o in walled] == ["sofa-0 (living)", "sofa-0 (kitchen)"]
    assert walled[0].other_rooms == ("kitchen",)


def test_no_free_zone_is_kept_in_front_of_an_open_wall() -> None:
    scene = open_plan(place=_wardrobes_on_the_boundary)
    assert all(b.opening_id.startswith("door|") for b in blocked_openings(scene))
    assert not any("wardrobe" in b.object_id for b in blocked_openings(scene))


# --- the renderer --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def _gl() -> None:
    try:
        Renderer(16, 16, samples=0).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


def test_empty_walls_are_not_rendered_as_slabs() -> None:
    from buildbench.scenes.views.geometry import scene_geometry

    owners = set(scene_geometry(open_plan()).boxes.owners)
    assert KITCHEN_OPEN not in owners and LIVING_OPEN not in owners
    assert "wall|kitchen|north|1" in owners and KITCHEN_OPEN in set(scene_geometry(open_plan(open_=False)).boxes.owners)


def test_dashed_outline_draws_about_half_the_line() -> None:
    from buildbench.scenes.views.drawing import Canvas

    canvas = Canvas(np.zeros((20, 200, 4), np.uint8), background=(1.0, 1.0, 1.0))
    canvas.dashed(np.array([[0.0, 10.0], [100.0, 10.0], [200.0, 10.0]]), (0.0, 0.0, 0.0), 1, dash_px=10, gap_px=10)
    dark = canvas.array()[10, :, 0] < 128
    assert 90 <= int(dark.sum()) <= 115 and dark[:10].all() and not dark[12:19].any()


@pytest.mark.usefixtures("_gl")
def test_topdown_views_show_the_open_boundary_dashed() -> None:
    from buildbench.scenes.views import topdown_room, topdown_scene

    px = 160
    open_room, solid_room = topdown_room(open_plan(), "living", px=px), topdown_room(open_plan(open_=False), "living", px=px)
    assert open_room.shape == (px, px, 4) and not np.array_equal(open_room, solid_room)
    assert not np.array_equal(topdown_scene(open_plan(), px=px), topdown_scene(open_plan(open_=False), px=px))


# --- LEGO-Eval tools -----------------------------------------------------------------------
def test_wall_info_says_empty_outside_the_original_compatible_mode() -> None:
    scene = open_plan()
    ids = [KITCHEN_OPEN, "wall|kitchen|north|1"]
    default = run_tool(ToolContext.for_scene(scene, render=False), "get_wall_info", ids)
    assert default[f"{KITCHEN_OPEN}_empty"] is True and "wall|kitchen|north|1_empty" not in default
    listing = run_tool(ToolContext.for_scene(scene, render=False), "get_wall_list", ["kitchen"])
    assert KITCHEN_OPEN in listing["kitchen_wall_list"]  # listed like the original, as the file has it
    compatible = run_tool(ToolContext.for_scene(scene, wall_midpoint_positions=True, render=False),
                          "get_wall_info", ids)
    for wall in scene.walls:
        wall.empty = False
    unflagged = run_tool(ToolContext.for_scene(scene, wall_midpoint_positions=True, render=False),
                         "get_wall_info", ids)
    assert json.dumps(compatible) == json.dumps(unflagged)


def test_wall_scene_names_an_empty_wall_outside_the_compatible_mode() -> None:
    scene = open_plan()
    out = run_tool(ToolContext.for_scene(scene, render=False), "get_wall_scene", [KITCHEN_OPEN, "wall|kitchen|north|1"])
    assert out == {f"{KITCHEN_OPEN}_empty": True}
    compatible = run_tool(ToolContext.for_scene(scene, wall_midpoint_positions=True, render=False),
                          "get_wall_scene", [KITCHEN_OPEN])
    assert compatible == {}
