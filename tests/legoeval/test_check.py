"""The deterministic checker on a hand-built house: every program kind, both outcomes."""

from __future__ import annotations

import copy

import pytest

from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import load_scene, write_thor
from buildbench.scenes.model import Scene, yaw_quat_xyzw
from buildbench.suites.legoeval.check import check, evaluate
from buildbench.suites.legoeval.constraints import Count, Selector, parse
from buildbench.suites.legoeval.tasks import holistic


def small_house() -> Scene:
    """Living room (5 x 4 m) between a kitchen (east) and a bedroom (north)."""
    b = HouseBuilder()
    b.room("living room", (0, 0, 5, 4), floor_material="DarkWoodFloors", wall_material="BluePaint")
    b.room("kitchen", (5, 0, 8, 4), floor_material="DarkWoodFloors", wall_material="Drywall")
    b.room("bedroom", (0, 4, 4, 8), floor_material="BedroomCarpet", wall_material="Drywall")
    b.door("living room", "kitchen")
    b.door("living room", "bedroom")
    b.door("living room", "exterior", direction="south")
    b.window("bedroom", "north")
    b.window("kitchen", "east")
    b.place("bb_sofa_red", "living room", center_xz=(2.5, 0.6), yaw_deg=0)
    stand = b.place("bb_tv_stand_black", "living room", center_xz=(2.5, 3.7), yaw_deg=180)
    b.place("bb_tv_40in", "living room", on=stand)
    b.place("bb_coffee_table_wood", "living room", center_xz=(2.5, 1.6), yaw_deg=0)
    b.place("bb_dining_table_oak", "kitchen", center_xz=(6.5, 2.0), yaw_deg=0)
    b.place("bb_chair_wood", "kitchen", center_xz=(6.5, 1.2), yaw_deg=0)
    b.place("bb_chair_wood", "kitchen", center_xz=(6.5, 2.8), yaw_deg=180)
    b.place("bb_bed_blue", "bedroom", center_xz=(2.0, 6.9), yaw_deg=180)
    b.place("bb_plant_ficus", "bedroom", center_xz=(3.7, 4.3), yaw_deg=0)
    return b.build()


@pytest.fixture(scope="module")
def house() -> Scene:
    # Checked after a THOR round trip, as tasks store scenes.
    return load_scene(write_thor(small_house()))


CASES = [
    # (sentence, holds, an id the explanation must name)
    ("There are exactly 2 chairs in the kitchen.", True, "chair-1 (kitchen)"),
    ("There are exactly 3 chairs in the kitchen.", False, "chair-0 (kitchen)"),
    ("There is no rug in the bedroom.", True, None),
    ("There is a blue bed in the bedroom.", True, "bed-0 (bedroom)"),
    ("There is a red bed in the bedroom.", False, None),
    ("The sofa in the living room is red.", True, "sofa-0 (living room)"),
    ("The sofa in the living room is blue.", False, "sofa-0 (living room)"),
    ("The coffee table in the living room is made of wood and rectangular.", True, "coffee table-0"),
    ("The sofa in the living room faces the tv.", True, "tv-0|tv stand-0 (living room)"),
    ("The tv in the living room is on top of the tv stand.", True, "tv stand-0 (living room)"),
    ("The coffee table is under the tv.", False, "coffee table-0 (living room)"),
    ("The sofa in the living room is near the coffee table.", True, "coffee table-0 (living room)"),
    ("The sofa is far from the bed.", True, "bed-0 (bedroom)"),
    ("The sofa is far from the coffee table.", False, "sofa-0 (living room)"),
    ("The coffee table is between the sofa and the tv stand.", True, "tv stand-0 (living room)"),
    ("The coffee table is closer to the sofa than to the bed.", True, "bed-0 (bedroom)"),
    ("The coffee table is in front of the sofa.", True, "sofa-0 (living room)"),
    ("The tv stand is behind the coffee table.", False, "tv stand-0 (living room)"),
    ("The chair in the kitchen is to the left of the dining table.", False, "dining table-0 (kitchen)"),
    ("The chair in the kitchen is aligned with the dining table.", True, "dining table-0 (kitchen)"),
    ("The bed in the bedroom is against a wall.", True, "wall|bedroom|north"),
    ("The plant in the bedroom is in a corner.", True, "plant-0 (bedroom)"),
    ("The sofa is in the middle of its room.", False, "sofa-0 (living room)"),
    ("The chair in the kitchen faces the dining table.", True, "chair-0 (kitchen)"),
    ("The chair in the kitchen faces the same direction as the sofa.", False, "chair-1 (kitchen)"),
    ("A chair in the kitchen faces the same direction as the sofa.", True, "chair-0 (kitchen)"),
    ("Exactly 1 chair in the kitchen faces the same direction as the sofa.", True, "chair-0 (kitchen)"),
    ("At least 2 chairs in the kitchen face the same direction as the sofa.", False, None),
    ("The kitchen is adjacent to the living room.", True, "kitchen"),
    ("The kitchen is adjacent to the bedroom.", False, "bedroom"),
    ("The living room is larger than the kitchen.", True, "kitchen"),
    ("The kitchen is larger than the living room.", False, "kitchen"),
    ("The floor of the living room is wood.", True, "DarkWoodFloors"),
    ("The floor of the bedroom is wood.", False, "BedroomCarpet"),
    ("The walls of the living room are blue.", True, "wall|living room|west|0"),
    ("The walls of the bedroom are blue.", False, "wall|bedroom"),
    ("The north wall of the bedroom is white.", True, "wall|bedroom|north|1"),
    ("The floor of the garage is wood.", False, "garage"),
    ("The house has a kitchen.", True, "kitchen"),
    ("The house has a garage.", False, "garage"),
    ("The house has exactly 3 rooms.", True, "bedroom"),
    ("The house has at least 2 bedrooms.", False, "bedroom"),
    ("The bedroom has an area between 15 and 17 square metres.", True, "16.00"),
    ("The kitchen has an area of at least 15 square metres.", False, "12.00"),
    ("There is a door between the living room and the outside.", True, "door|2|exterior|living room"),
    ("There is a door between the kitchen and the bedroom.", False, "door|0|living room|kitchen"),
    ("The bedroom has a window on its north wall.", True, "window|wall|bedroom|north"),
    ("The bedroom has a window on its south wall.", False, None),
    ("The kitchen has exactly 1 window.", True, "window|wall|kitchen|east"),
    ("The living room has no window.", True, None),
]


@pytest.mark.parametrize(("sentence", "holds", "named"), CASES, ids=[c[0] for c in CASES])
def test_each_program_kind_holds_or_fails_with_ids(house: Scene, sentence: str, holds: bool, named: str | None) -> None:
    result = check(house, parse(sentence))
    assert result.holds is holds, result.explanation
    if named is not None:
        assert named in result.explanation


def test_room_names_match_across_conventions(house: Scene) -> None:
    assert check(house, parse("The floor of the LivingRoom is wood.")).holds
    assert check(house, parse("The floor of the living_room is brown.")).holds


def test_swapping_an_asset_changes_the_attribute(house: Scene) -> None:
    program = parse("The sofa in the living room is red.")
    edited = copy.deepcopy(house)
    edited.object("sofa-0 (living room)").asset_id = "bb_sofa_blue"
    assert check(house, program).holds and not check(edited, program).holds


def test_turning_one_chair_breaks_all_but_not_exists(house: Scene) -> None:
    edited = copy.deepcopy(house)
    edited.object("chair-1 (kitchen)").rotation_xyzw = yaw_quat_xyzw(90)
    every = parse("The chair in the kitchen faces the dining table.")
    some = parse("A chair in the kitchen faces the dining table.")
    assert not check(edited, every).holds and check(edited, some).holds


def test_all_needs_a_match(house: Scene) -> None:
    result = check(house, parse("The armchair in the kitchen is red."))
    assert not result.holds and "no armchair" in result.explanation


def test_an_exact_id_selector(house: Scene) -> None:
    assert check(house, Count(Selector(id="bed-0 (bedroom)"), "eq", 1)).holds
    assert check(house, Count(Selector(id="bed-9 (bedroom)"), "eq", 0)).holds


def test_evaluate_goes_on_after_bad_constraints(house: Scene) -> None:
    constraints = [
        {"id": "c0", "text": "There is a blue bed in the bedroom."},
        {"id": "c1", "program": {"op": "relation", "rel": "near", "a": {"category": "sofa"}}},
        {"id": "c2", "text": "The living room feels cosy."},
        {"id": "c3", "program": {"op": "relation", "rel": "near", "a": {"category": "sofa"},
                                 "b": {"category": "coffee table"}, "params": {"bogus_m": 1.0}}},
        {"id": "c4", "program": {"op": "relation", "rel": "near", "a": {"category": "sofa"},
                                 "b": {"category": "coffee table"}, "params": {"max_m": 0.1}}},
        {"id": "c5", "text": "The sofa in the living room is red."},
    ]
    verdicts = evaluate(house, constraints)
    assert [v.id for v in verdicts] == ["c0", "c1", "c2", "c3", "c4", "c5"]
    assert [v.holds for v in verdicts] == [True, None, None, None, False, True]
    assert verdicts[1].explanation.startswith("error: constraint c1.b")
    assert "matches no template" in verdicts[2].explanation
    assert all("\n" not in v.explanation for v in verdicts)
    assert holistic(verdicts) is False
    assert holistic([v for v in verdicts if v.holds is not False]) is None
    assert holistic([verdicts[0], verdicts[5]]) is True
