"""Walls, corners, middles (rectangular and L-shaped rooms), room adjacency, areas, counts."""

from __future__ import annotations

from typing import Any

import pytest

from buildbench.scenes.model import Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw
from buildbench.scenes.relations import (
    AGAINST_WALL_ANGLE_DEG,
    AGAINST_WALL_M,
    IN_CORNER_M,
    RelationError,
    adjacent_rooms,
    against_wall,
    connects,
    count,
    in_corner,
    in_middle,
    in_room,
    larger_room,
    on_wall,
    room_area,
)

EPS = 0.01
# An L: a 6 x 3 south arm and a 3 x 3 north-west arm; its reflex corner is (3, 3).
L_ROOM = [(0.0, 0.0), (6.0, 0.0), (6.0, 3.0), (3.0, 3.0), (3.0, 6.0), (0.0, 6.0)]


def box(object_id: str, x: float, z: float, size: tuple[float, float, float] = (0.4, 1.0, 0.4), yaw: float = 0.0,
        room: str = "bedroom", **attributes: Any) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, size[1] / 2, z), size, yaw_quat_xyzw(yaw), room,
                       attributes=dict(attributes))


def walls_of(room_id: str, vertices: list[tuple[float, float]]) -> list[Wall]:
    return [Wall(f"wall|{room_id}|{k}", room_id, vertices[k], vertices[(k + 1) % len(vertices)], 2.5)
            for k in range(len(vertices))]


def house(*objects: SceneObject) -> Scene:
    bedroom = [(0.0, 0.0), (0.0, 4.0), (5.0, 4.0), (5.0, 0.0)]  # clockwise from above, as Holodeck
    kitchen = [(5.0, 0.0), (5.0, 3.0), (8.0, 3.0), (8.0, 0.0)]
    walls = walls_of("bedroom", bedroom) + walls_of("kitchen", kitchen)
    return Scene(
        rooms=[Room("bedroom", bedroom), Room("kitchen", kitchen), Room("hall", [(0, 4), (0, 6), (5, 6), (5, 4)])],
        walls=walls,
        doors=[Opening("door|0|bedroom|kitchen", "door", "d", "bedroom", "kitchen", "wall|bedroom|2",
                       "wall|kitchen|0", (1.0, 0.0), (2.0, 2.1))],
        windows=[Opening("window|0", "window", "w", "bedroom", "bedroom", "wall|bedroom|1", None, (2.0, 1.0),
                         (3.0, 2.0))],
        objects=list(objects),
    )


@pytest.mark.parametrize(("gap", "expected"), [(AGAINST_WALL_M - EPS, True), (AGAINST_WALL_M + EPS, False)])
def test_against_the_north_wall_gap_edges(gap: float, expected: bool) -> None:
    # A bed facing south (yaw 180) with its head to the north wall (z = 4), 2 m deep.
    s = house(box("bed-0", 2.5, 4.0 - gap - 1.0, (1.6, 0.6, 2.0), yaw=180.0))
    v = against_wall(s, "bed-0", "north")
    assert v.holds is expected, v.explanation
    assert v.value == pytest.approx(gap)
    assert "wall|bedroom|1" in v.explanation  # the wall record on that side is named


@pytest.mark.parametrize(("turn", "expected"), [(AGAINST_WALL_ANGLE_DEG - 1, True), (AGAINST_WALL_ANGLE_DEG + 1, False)])
def test_against_wall_back_angle_edges(turn: float, expected: bool) -> None:
    s = house(box("desk-0", 2.5, 3.5, (0.6, 0.75, 0.6), yaw=180.0 + turn))
    assert against_wall(s, "desk-0", "north", max_gap_m=0.5).holds is expected
    assert against_wall(s, "desk-0", "north", max_gap_m=0.5, back_to_wall=False).holds


@pytest.mark.parametrize(("wall", "yaw", "x", "z"), [
    ("south", 0.0, 2.5, 0.5), ("east", 270.0, 4.5, 2.0), ("west", 90.0, 0.5, 2.0), ("north", 180.0, 2.5, 3.5)])
def test_against_each_wall_with_the_right_back(wall: str, yaw: float, x: float, z: float) -> None:
    s = house(box("dresser-0", x, z, (0.8, 1.0, 0.8), yaw=yaw))
    assert against_wall(s, "dresser-0", wall, max_gap_m=0.15).holds
    assert against_wall(s, "dresser-0").holds  # any wall
    turned = house(box("dresser-0", x, z, (0.8, 1.0, 0.8), yaw=yaw + 180.0))
    assert not against_wall(turned, "dresser-0", wall).holds


def test_against_a_wall_by_id_from_the_wrong_side() -> None:
    # A kitchen cabinet backed onto the shared wall is not against the bedroom's side from inside the bedroom.
    s = house(box("cabinet-0", 5.3, 1.5, (0.6, 0.9, 0.6), yaw=90.0, room="kitchen"))
    assert against_wall(s, "cabinet-0", "wall|kitchen|0").holds
    v = against_wall(s, "cabinet-0", "wall|bedroom|2")
    assert not v.holds
    with pytest.raises(RelationError, match="against_wall: wall 'window\\|0' is a window"):
        against_wall(s, "cabinet-0", "window|0")


def test_in_corner_convex_corners_only_in_an_l_room() -> None:
    def l_scene(x: float, z: float) -> Scene:
        return Scene(rooms=[Room("den", L_ROOM)], objects=[box("plant-0", x, z, room="den")])

    # Convex corner (6, 3): the plant's footprint (0.4 m) 0.49 / 0.51 m from both walls.
    assert in_corner(l_scene(6.0 - 0.2 - (IN_CORNER_M - EPS), 3.0 - 0.2 - 0.1), "plant-0").holds
    v = in_corner(l_scene(6.0 - 0.2 - (IN_CORNER_M + EPS), 3.0 - 0.2 - 0.1), "plant-0")
    assert not v.holds and v.value == pytest.approx(IN_CORNER_M + EPS)
    v = in_corner(l_scene(5.7, 2.7), "plant-0")
    assert v.holds and v.evidence["corner"] == "north-east"
    # Right by the reflex corner (3, 3): close to two walls, but not a corner to stand in.
    assert not in_corner(l_scene(2.7, 2.7), "plant-0").holds
    # The far north-west corner.
    assert in_corner(l_scene(0.3, 5.7), "plant-0", "den").evidence["corner"] == "north-west"


def test_collinear_vertices_make_no_corner() -> None:
    # Holodeck's full_vertices put a neighbour's corner in the middle of a straight wall.
    verts = [(0.0, 0.0), (0.0, 2.0), (0.0, 4.0), (5.0, 4.0), (5.0, 0.0)]
    s = Scene(rooms=[Room("bedroom", verts)], objects=[box("plant-0", 0.3, 2.0)])
    assert not in_corner(s, "plant-0").holds


@pytest.mark.parametrize(("x", "z", "expected"), [
    (2.5 + 0.49 * 2.5, 2.0, True), (2.5 + 0.51 * 2.5, 2.0, False),  # along x: half-width 2.5
    (2.5, 2.0 + 0.49 * 2.0, True), (2.5, 2.0 + 0.51 * 2.0, False),  # along z: half-depth 2.0
])
def test_in_middle_radial_edges_rectangle(x: float, z: float, expected: bool) -> None:
    v = in_middle(house(box("rug-0", x, z)), "rug-0")
    assert v.holds is expected, v.explanation


def test_in_middle_of_an_l_room() -> None:
    def l_scene(x: float, z: float) -> Scene:
        return Scene(rooms=[Room("den", L_ROOM)], objects=[box("table-0", x, z, room="den")])

    s = l_scene(1.6, 1.6)
    assert in_middle(s, "table-0").holds
    assert not in_middle(l_scene(5.5, 1.5), "table-0").holds  # end of the east arm
    assert not in_middle(l_scene(1.5, 5.5), "table-0").holds  # end of the north arm


def test_in_room_share_and_on_wall() -> None:
    s = house(box("chest-0", 4.9, 1.5, (0.4, 0.5, 0.4)))  # 75 % in the bedroom, 25 % in the kitchen
    assert in_room(s, "chest-0", "bedroom").value == pytest.approx(0.75)
    assert in_room(s, "chest-0", "bedroom").holds and not in_room(s, "chest-0", "kitchen").holds
    assert on_wall(s, "door|0|bedroom|kitchen", "east").holds
    assert on_wall(s, "window|0", "north").holds and not on_wall(s, "window|0", "south").holds
    assert on_wall(s, "window|0", "wall|bedroom|1").holds


def test_connects_and_adjacency() -> None:
    s = house()
    assert connects(s, "door|0|bedroom|kitchen", "kitchen", "bedroom").holds
    assert not connects(s, "door|0|bedroom|kitchen", "bedroom", "hall").holds
    v = adjacent_rooms(s, "bedroom", "kitchen")
    assert v.holds and v.value == pytest.approx(3.0) and "door|0|bedroom|kitchen" in v.explanation
    hall = adjacent_rooms(s, "bedroom", "hall")
    assert hall.holds and hall.value == pytest.approx(5.0)
    assert not adjacent_rooms(s, "bedroom", "hall", require_door=True).holds
    assert not adjacent_rooms(s, "kitchen", "hall").holds  # they meet at one point only
    assert adjacent_rooms(s, "kitchen", "hall").value == pytest.approx(0.0)
    assert not adjacent_rooms(s, "bedroom", "kitchen", min_shared_m=3.0 + EPS).holds


def test_room_areas() -> None:
    s = house()
    v = larger_room(s, "bedroom", "kitchen")
    assert v.holds and v.value == pytest.approx(11.0)
    assert not larger_room(s, "kitchen", "bedroom").holds
    assert not larger_room(s, "bedroom", "kitchen", margin_m2=11.0 + EPS).holds
    assert room_area(s, "bedroom", min_m2=19.99, max_m2=20.01).holds
    assert not room_area(s, "bedroom", max_m2=19.99).holds
    l_room = Scene(rooms=[Room("den", L_ROOM)])
    assert room_area(l_room, "den").value == pytest.approx(27.0)


def test_counts_with_plurals_attributes_and_rooms() -> None:
    s = house(
        box("chair-0", 1, 1, color="Red"), box("chair-1", 2, 1, color="blue"),
        box("chair-2", 6, 1, room="kitchen", color="red"), box("bookshelf-0", 3, 3, material=["wood", "metal"]),
    )
    assert count(s, "chairs", "bedroom", expected=2).holds
    assert count(s, "chair").value == 3
    v = count(s, "chair", attributes={"color": "red"}, expected=2)
    assert v.holds and "chair-0" in v.explanation and "chair-2" in v.explanation
    assert count(s, "bookshelves", attributes={"material": "metal"}).holds
    assert not count(s, "sofa").holds
    assert count(s, "chair", "bedroom", expected=3, op="<").holds
    with pytest.raises(RelationError, match="count: op must be"):
        count(s, "chair", op="~")
    with pytest.raises(KeyError, match="'garage'"):
        count(s, "chair", "garage")
