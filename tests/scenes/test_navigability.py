"""Navigability and clearance: free floor joined to the doors, the reachable share, door swings
kept free, windows not covered by tall furniture."""

from __future__ import annotations

import pytest

from buildbench.scenes.model import Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw
from buildbench.scenes.navigability import WINDOW_CLEARANCE_M, navigability, scene_navigability

DOOR = "door|0|bedroom|hall"
WINDOW = "window|0|bedroom"


def box(object_id: str, x: float, z: float, size: tuple[float, float, float], yaw: float = 0.0,
        bottom: float = 0.0, parent: str | None = None, room: str = "bedroom") -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, bottom + size[1] / 2, z), size,
                       yaw_quat_xyzw(yaw), room, parent)


def bedroom(*objects: SceneObject, door_asset: str = "Doorway_1") -> Scene:
    """A 4 x 5 m bedroom, a 0.9 m door in the middle of its south wall (z = 0) to a hall, a
    1.2 m window with its sill at 0.9 m in the middle of its north wall (z = 5)."""
    return Scene(
        rooms=[Room("bedroom", [(0, 0), (0, 5), (4, 5), (4, 0)]), Room("hall", [(0, -2), (0, 0), (4, 0), (4, -2)])],
        walls=[Wall("wall|bedroom|south", "bedroom", (4, 0), (0, 0), 2.5),
               Wall("wall|hall|north", "hall", (0, 0), (4, 0), 2.5),
               Wall("wall|bedroom|north", "bedroom", (0, 5), (4, 5), 2.5)],
        doors=[Opening(DOOR, "door", door_asset, "bedroom", "hall", "wall|bedroom|south", "wall|hall|north",
                       (1.55, 0.0), (2.45, 2.1))],
        windows=[Opening(WINDOW, "window", "Window_1", "bedroom", "bedroom", "wall|bedroom|north", None,
                         (1.4, 0.9), (2.6, 2.1))],
        objects=list(objects),
    )


BED = box("bed-0", 2.0, 3.0, (1.6, 0.6, 2.0), yaw=180.0)


def test_a_furnished_room_is_navigable() -> None:
    n = navigability(bedroom(BED, box("desk-0", 0.4, 1.5, (0.6, 0.75, 1.2), yaw=90.0)), "bedroom")
    assert n.ok and n.reachable_share == 1.0 and n.connected_share == pytest.approx(1.0)
    assert n.entrance_shares == {DOOR: pytest.approx(1.0)} and not n.blocked_swings and not n.blocked_windows
    assert n.to_dict()["blocked_doors"] == []


def test_a_wardrobe_in_the_door_swing_is_reported() -> None:
    # 0.6 m off the wall, beside the door's east jamb: inside the east-hinged arc only.
    one_side = navigability(bedroom(BED, box("wardrobe-0", 2.7, 0.55, (0.5, 2.0, 0.4))), "bedroom")
    assert not one_side.blocked_swings  # the leaf can be hinged at the west jamb
    # Right in front of the door, 0.65 m in: every leaf hits it, though a walker passes beside it.
    s = bedroom(BED, box("wardrobe-0", 2.0, 0.8, (0.8, 2.0, 0.3)))
    n = navigability(s, "bedroom")
    assert n.blocked_swings == {DOOR: ("wardrobe-0",)} and not n.ok
    assert n.blocked_doors == () and n.reachable_share == 1.0
    assert f"the swing of {DOOR} into bedroom is blocked by wardrobe-0" in n.explanation
    # A rug in the swing, a door frame without a leaf, and the hall's side of the door are fine.
    assert not navigability(bedroom(box("rug-0", 2.0, 0.55, (0.8, 0.01, 0.4))), "bedroom").blocked_swings
    assert not navigability(bedroom(*s.objects, door_asset="Doorframe_2"), "bedroom").blocked_swings
    assert not navigability(s, "hall").blocked_swings


def test_a_double_door_has_two_half_leaves() -> None:
    # A plant 0.6 m in front of the door's middle: a 0.9 m leaf hits it from either jamb, 0.45 m leaves do not.
    middle = box("plant-0", 2.0, 0.6, (0.2, 0.8, 0.2))
    assert navigability(bedroom(middle), "bedroom").blocked_swings == {DOOR: ("plant-0",)}
    assert not navigability(bedroom(middle, door_asset="Doorway_Double_1"), "bedroom").blocked_swings
    # One by the west jamb stops the double door's west leaf.
    jamb = box("plant-0", 1.75, 0.2, (0.2, 0.8, 0.2))
    assert navigability(bedroom(jamb, door_asset="Doorway_Double_1"), "bedroom").blocked_swings == {
        DOOR: ("plant-0",)}


def test_a_sofa_cutting_the_room_in_two_leaves_floor_unreachable() -> None:
    # A 4 m sofa spans the whole width at z = 2.5: the bed behind it and the floor there are cut off.
    s = bedroom(box("sofa-0", 2.0, 2.5, (4.0, 0.9, 0.9)), box("bed-0", 2.0, 4.0, (1.6, 0.6, 1.6)))
    n = navigability(s, "bedroom")
    assert 0.5 < n.connected_share < 0.9 and n.entrance_shares[DOOR] == n.connected_share
    assert n.reach.unreachable_objects == ("bed-0",) and n.reachable_share == 0.5
    # Without doors the share is the largest free area's (here the same front part).
    alone = navigability(Scene(rooms=[s.rooms[0]], objects=s.objects), "bedroom")
    assert alone.connected_share == pytest.approx(n.connected_share, abs=0.02) and alone.entrance_shares == {}
    # Move the sofa 0.6 m off the east wall: the bed is reached through the gap and most of the floor joins
    # (the pocket west of the bed stays cut off: the bed's foot is 0.25 m from the sofa's back).
    s.objects[0].center = (1.4, 0.45, 2.5)
    opened = navigability(s, "bedroom")
    assert opened.reachable_share == 1.0 and opened.connected_share > n.connected_share + 0.1


def test_a_wardrobe_covering_the_window_is_reported_a_low_bed_is_not() -> None:
    low = navigability(bedroom(box("bed-0", 2.0, 4.0, (1.6, 0.6, 2.0), yaw=180.0)), "bedroom")
    assert not low.blocked_windows
    # A dresser 10 cm above the 0.9 m sill covers under a quarter of the 1.2 m window: fine.
    dresser = navigability(bedroom(box("dresser-0", 2.0, 4.7, (1.2, 1.0, 0.5), yaw=180.0)), "bedroom")
    assert not dresser.blocked_windows
    tall = navigability(bedroom(box("wardrobe-0", 2.0, 4.7, (1.2, 2.0, 0.6), yaw=180.0)), "bedroom")
    assert tall.blocked_windows == {WINDOW: ("wardrobe-0",)}
    # Beyond the clear zone's depth it is out of the way.
    far = 5.0 - WINDOW_CLEARANCE_M - 0.35
    assert not navigability(bedroom(box("wardrobe-0", 2.0, far, (1.2, 2.0, 0.6))), "bedroom").blocked_windows


def test_small_objects_on_receptacles_and_wall_objects_need_not_be_reached() -> None:
    s = bedroom(BED, box("table-0", 3.5, 0.5, (0.5, 0.7, 0.5)),
                box("vase-0", 3.5, 0.5, (0.1, 0.3, 0.1), bottom=0.7, parent="table-0"),
                box("painting-0", 0.05, 2.5, (0.05, 0.8, 1.0), bottom=1.4))
    n = navigability(s, "bedroom")
    assert n.reachable_share == 1.0 and set(n.reach.reachable_objects) == {"bed-0", "table-0"}


def test_scene_totals_and_bad_arguments() -> None:
    s = bedroom(BED, box("wardrobe-0", 2.0, 0.8, (0.8, 2.0, 0.3)))
    totals = scene_navigability(s)
    assert [r["room"] for r in totals["rooms"]] == ["bedroom", "hall"]
    assert totals["blocked_swings"] == 1 and totals["blocked_windows"] == 0 and totals["reachable_share"] == 1.0
    with pytest.raises(ValueError, match="window_clearance_m"):
        navigability(s, "bedroom", window_clearance_m=float("nan"))
    with pytest.raises(KeyError, match="'garage'"):
        navigability(s, "garage")


def test_real_houses() -> None:
    from pathlib import Path

    from buildbench.scenes.io import load_scene

    fixtures = Path(__file__).parent / "fixtures"
    house = scene_navigability(load_scene(fixtures / "procthor_zg_house_100.json"))
    assert house["blocked_doors"] == 0 and house["connected_share"] == pytest.approx(1.0)
    room3 = next(r for r in house["rooms"] if r["room"] == "room|3")
    assert room3["blocked_swings"] == {"door|2|3": ["RoboTHORdresseraspelund|3|1"]}
    bedroom = scene_navigability(load_scene(fixtures / "holodeck_warm_and_cozy_bedroom.json"))
    assert bedroom["rooms"][0]["blocked_windows"] == {"window|wall|bedroom|south|3|2|2": ["wardrobe-0 (bedroom)"]}


# --- as relations and LEGO-Eval facts ----------------------------------------------------------------
def test_reachable_and_door_opens_relations() -> None:
    from buildbench.scenes.relations import RELATIONS, RelationError

    s = bedroom(box("sofa-0", 2.0, 2.5, (4.0, 0.9, 0.9)), box("bed-0", 2.0, 4.0, (1.6, 0.6, 1.6)),
                box("lamp-0", 2.0, 4.0, (0.2, 0.4, 0.2), bottom=0.6, parent="bed-0"),
                box("painting-0", 0.05, 2.5, (0.05, 0.8, 1.0), bottom=1.4))
    assert RELATIONS["reachable"](s, "sofa-0").holds
    blocked = RELATIONS["reachable"](s, "lamp-0")  # through the bed it stands on, cut off by the sofa
    assert not blocked.holds and "through bed-0" in blocked.explanation
    assert RELATIONS["reachable"](s, "bed-0", clearance_m=0.05).holds is False  # the sofa still spans the room
    with pytest.raises(RelationError, match="does not stand on the floor"):
        RELATIONS["reachable"](s, "painting-0")
    assert RELATIONS["door_opens"](s, DOOR).holds
    s.objects.append(box("wardrobe-0", 2.0, 0.8, (0.8, 2.0, 0.3)))
    swing = RELATIONS["door_opens"](s, DOOR)
    assert not swing.holds and swing.value == 1.0 and "wardrobe-0 in bedroom" in swing.explanation
    with pytest.raises(RelationError, match="takes door"):
        RELATIONS["door_opens"](s, "bed-0")


def test_a_lego_eval_constraint_names_a_clear_path() -> None:
    from buildbench.suites.legoeval.check.evaluate import check
    from buildbench.suites.legoeval.constraints import (
        Quant,
        Relation,
        Selector,
        parse,
        parse_program,
        program_to_json,
        render,
    )

    program = parse("The bed in the bedroom can be reached from a door.")
    assert program == Relation("reachable", Selector("bed", room="bedroom"), quant=Quant("all"))
    assert render(program) == "The bed in the bedroom can be reached from a door."
    assert parse_program(program_to_json(program)) == program
    split = bedroom(box("sofa-0", 2.0, 2.5, (4.0, 0.9, 0.9)), box("bed-0", 2.0, 4.0, (1.6, 0.6, 1.6)))
    for o in split.objects:
        o.category = o.id.split("-")[0]
    assert not check(split, program).holds
    split.objects[0].center = (1.4, 0.45, 2.5)  # a gap by the east wall
    assert check(split, program).holds


def test_a_lego_eval_constraint_names_a_door_that_opens_freely() -> None:
    from buildbench.suites.legoeval.check.evaluate import check
    from buildbench.suites.legoeval.constraints import Layout, parse, parse_program, program_to_json, render

    text = "The door between the bedroom and the hall can open freely."
    program = parse(text)
    assert program == Layout("door_opens", rooms=("bedroom", "hall")) and render(program) == text
    assert parse_program(program_to_json(program)) == program
    s = bedroom(BED)
    assert check(s, program).holds
    s.objects.append(box("wardrobe-0", 2.0, 0.8, (0.8, 2.0, 0.3)))
    blocked = check(s, program)
    assert not blocked.holds and "wardrobe-0 in bedroom" in blocked.explanation
    assert not check(s, parse("The door between the bedroom and the outside can open freely.")).holds
