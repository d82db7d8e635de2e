"""HouseBuilder: Holodeck ids, walls with both sides and exterior twins, openings, objects, refusals."""

from __future__ import annotations

import pytest

from buildbench.scenes.build import BuildError, HouseBuilder
from buildbench.scenes.thor import read_thor, write_thor


def _house() -> HouseBuilder:
    b = HouseBuilder(query="two rooms")
    b.room("living room", (0, 0, 5, 4)).room("bedroom", (5, 0, 9, 4)).room("kitchen", (0, 4, 3, 7))
    return b


def test_walls_sides_and_exterior_twins() -> None:
    scene = _house().build()
    ids = [w.id for w in scene.walls]
    assert "wall|living room|east|3" in ids and "wall|bedroom|west|0" in ids
    assert "wall|living room|east|3|exterior" not in ids  # shared with the bedroom
    assert "wall|living room|south|4|exterior" in ids
    twin = scene.wall("wall|living room|south|4|exterior")
    inner = scene.wall("wall|living room|south|4")
    assert twin.exterior and (twin.start, twin.end) == (inner.end, inner.start)
    # the living room's north side is split where the kitchen's corner lies on it
    assert {w.id for w in scene.walls_of("living room") if w.direction_xz == (1.0, 0.0)} == {
        "wall|living room|north|1", "wall|living room|north|2"}


def test_doors_windows_and_world_positions() -> None:
    b = _house()
    d = b.door("living room", "bedroom")
    e = b.door("exterior", "living room", direction="south")
    w = b.window("bedroom", "east")
    scene = b.build()
    assert d == "door|0|living room|bedroom" and e == "door|1|exterior|living room"
    assert w == "window|wall|bedroom|east|2|0"
    door = scene.door(d)
    assert (door.wall0, door.wall1) == ("wall|living room|east|3", "wall|bedroom|west|0")
    x, y, z = scene.opening_center(door)
    assert (x, z) == pytest.approx((5.0, 2.0)) and y == pytest.approx(door.height_m / 2)
    assert scene.window(w).wall1 == "wall|bedroom|east|2|exterior"
    front = scene.door(e)  # the outside side first, as Holodeck writes it
    assert (front.wall0, front.wall1) == ("wall|living room|south|4|exterior", "wall|living room|south|4")
    assert scene.opening_center(front) == pytest.approx((2.5, front.height_m / 2, 0.0))


def test_objects_ids_heights_and_children() -> None:
    b = _house()
    bed = b.place("bed", "bedroom", (7, 2), 90)
    pillow = b.place("pillow", "bedroom", on=bed)
    sofa = b.place("sofa", "living room", color="red")
    painting = b.place("painting", "living room", (2.5, 0.05), 0)
    scene = b.build()
    assert (bed, pillow, sofa) == ("bed-0 (bedroom)", "pillow-0|bed-0 (bedroom)", "sofa-0 (living room)")
    o_bed, o_pillow = scene.object(bed), scene.object(pillow)
    assert o_bed.bottom_y == pytest.approx(0.0) and o_bed.yaw_deg == pytest.approx(90.0)
    assert o_pillow.parent_id == bed and o_pillow.bottom_y == pytest.approx(o_bed.top_y)
    assert scene.object(sofa).attributes["color"] == "red"
    assert scene.object(painting).center[1] == pytest.approx(1.5)


def test_deterministic_and_round_trips_through_thor() -> None:
    def make() -> dict:
        b = _house()
        b.door("living room", "kitchen")
        b.place("desk", "kitchen", (1.5, 5.5))
        return write_thor(b.build())

    first = make()
    assert first == make()
    scene = read_thor(first)
    assert write_thor(scene) == first
    assert scene.object("desk-0 (kitchen)").room_id == "kitchen"


@pytest.mark.parametrize(("call", "message"), [
    (lambda b: b.room("x", (4, 3, 6, 6)), "overlaps room 'living room'"),
    (lambda b: b.room("bedroom", (20, 20, 22, 22)), "id already used"),
    (lambda b: b.room("y", [(0, 0), (1, 1)]), ">= 3 vertices"),
    (lambda b: b.room("y", [(20, 20), (22, 22), (20, 22), (22, 20)]), "self-intersecting"),
    (lambda b: b.room("y", (20, 20, 22, float("nan"))), "finite number"),
    (lambda b: b.room("y", (20, 20, 22, 22), floor_material="Lava"), "not a known material"),
    (lambda b: b.door("bedroom", "kitchen"), "not adjacent"),
    (lambda b: b.door("bedroom", "attic"), "unknown room 'attic'"),
    (lambda b: b.door("bedroom", "living room", "Sofa_221_1"), "not a known door"),
    (lambda b: b.door("bedroom", "living room", along=2.0), r"along must be in \[0, 1\]"),
    (lambda b: b.window("living room", "east"), "no suitable wall facing east"),
    (lambda b: b.window("kitchen", "up"), "direction must be"),
    (lambda b: b.window("kitchen", "north", "Window_Fixed_96x72", sill_m=2.0), "above the"),
    (lambda b: b.place("spaceship", "bedroom"), "not a catalogue asset id or category"),
    (lambda b: b.place("sofa", "bedroom", color="purple"), "no sofa asset with color=purple"),
    (lambda b: b.place("sofa", "garage"), "unknown room 'garage'"),
    (lambda b: b.place("pillow", "bedroom", on="bed-9 (bedroom)"), "no such object"),
    (lambda b: b.place("sofa", "bedroom", (1.0,)), r"center_xz must be \(x, z\)"),
])
def test_refusals_are_one_line_and_keep_state(call, message: str) -> None:  # type: ignore[no-untyped-def]
    b = _house()
    before = write_thor(b.build())
    with pytest.raises(BuildError, match=message) as info:
        call(b)
    assert "\n" not in str(info.value)
    assert write_thor(b.build()) == before


def test_opening_wider_than_wall_and_overlapping_openings() -> None:
    b = HouseBuilder()
    b.room("closet", (0, 0, 0.8, 0.8))
    with pytest.raises(BuildError, match="does not fit wall"):
        b.door("closet", "exterior")
    b2 = _house()
    b2.window("kitchen", "north")
    with pytest.raises(BuildError, match="overlaps 'window"):
        b2.window("kitchen", "north")


def test_not_a_receptacle_and_room_mismatch() -> None:
    b = _house()
    plant = b.place("plant", "bedroom", (6, 1))
    with pytest.raises(BuildError, match="not a receptacle"):
        b.place("book", "bedroom", on=plant)
    bed = b.place("bed", "bedroom", (7, 2))
    with pytest.raises(BuildError, match="is in room 'bedroom', not 'kitchen'"):
        b.place("book", "kitchen", on=bed)


def test_l_shaped_room_from_vertices() -> None:
    b = HouseBuilder()
    b.room("hall", [(0, 0), (0, 4), (2, 4), (2, 2), (4, 2), (4, 0)])
    scene = b.build()
    assert len(scene.walls_of("hall")) == 6 and len(scene.walls_of("hall", exterior=True)) == 6
    assert scene.rooms[0].area_m2 == pytest.approx(12.0)
