"""Collisions of oriented boxes (known depths, FCL cross-check), out of bounds, blocked doors."""

from __future__ import annotations

import math

import fcl
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from buildbench.scenes.collision import (
    RESTING_TOL_M,
    TOUCH_TOL_M,
    blocked_openings,
    collisions,
    out_of_bounds,
)
from buildbench.scenes.model import Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw


def box(object_id: str, center: tuple[float, float, float], size: tuple[float, float, float] = (1.0, 1.0, 1.0),
        yaw: float = 0.0, room: str = "living room", parent: str | None = None,
        rotation: tuple[float, float, float, float] | None = None) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", center, size, rotation or yaw_quat_xyzw(yaw), room,
                       parent)


def house(*objects: SceneObject) -> Scene:
    return Scene(
        rooms=[Room("living room", [(0, 0), (0, 5), (6, 5), (6, 0)], ceiling_y=2.5),
               Room("kitchen", [(6, 0), (6, 5), (10, 5), (10, 0)])],
        walls=[Wall("wall|living room|east", "living room", (6, 0), (6, 5), 2.5),
               Wall("wall|kitchen|west", "kitchen", (6, 5), (6, 0), 2.7)],
        doors=[Opening("door|0|living room|kitchen", "door", "d", "living room", "kitchen", "wall|living room|east",
                       "wall|kitchen|west", (2.0, 0.0), (3.0, 2.1))],
        objects=list(objects),
    )


def test_axis_aligned_depth_and_touch_tolerance() -> None:
    s = house(box("sofa-0", (2.0, 0.5, 2.0)), box("chair-0", (2.8, 0.5, 2.0)))
    (c,) = collisions(s)
    assert (c.a, c.b) == ("sofa-0", "chair-0") and c.depth_m == pytest.approx(0.2)
    assert "sofa-0 and chair-0 interpenetrate by 0.200 m" == c.explanation
    for gap, expected in ((TOUCH_TOL_M - 0.001, 0), (TOUCH_TOL_M + 0.001, 1)):
        s.objects[1].center = (3.0 - gap, 0.5, 2.0)
        assert len(collisions(s)) == expected
    assert collisions(s, min_depth_m=0.05) == []


@pytest.mark.parametrize("yaw", [30.0, 45.0, 60.0])
def test_rotated_corner_penetration_depth(yaw: float) -> None:
    # A cube turned about y pokes a vertical edge 0.1 m into an axis-aligned cube's +x face.
    t = math.radians(yaw)
    reach = 0.5 * (abs(math.cos(t)) + abs(math.sin(t)))
    s = house(box("table-0", (2.0, 0.5, 2.0)), box("chair-0", (2.0 + 0.5 + reach - 0.1, 0.5, 2.0), yaw=yaw))
    (c,) = collisions(s)
    assert c.depth_m == pytest.approx(0.1, abs=1e-9)


def fcl_depths(scene: Scene) -> dict[tuple[str, str], float]:
    objs = []
    for o in scene.objects:
        tf = fcl.Transform(o.rotation, np.asarray(o.center, dtype=float))
        objs.append(fcl.CollisionObject(fcl.Box(*o.size), tf))
    out = {}
    request = fcl.CollisionRequest(enable_contact=True, num_max_contacts=1)
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            result = fcl.CollisionResult()
            if fcl.collide(objs[i], objs[j], request, result):
                out[(scene.objects[i].id, scene.objects[j].id)] = result.contacts[0].penetration_depth
    return out


@pytest.mark.parametrize("full_rotation", [False, True])
def test_agrees_with_fcl_on_random_rotated_boxes(full_rotation: bool) -> None:
    rng = np.random.default_rng([11, int(full_rotation)])
    objects = []
    for k in range(40):
        size = tuple(rng.uniform(0.2, 1.0, 3))
        center = (rng.uniform(0.5, 5.5), rng.uniform(0.5, 2.0), rng.uniform(0.5, 4.5))
        if full_rotation:
            q = Rotation.random(random_state=int(rng.integers(1 << 30))).as_quat()
            objects.append(box(f"box-{k}", center, size, rotation=tuple(q)))
        else:
            objects.append(box(f"box-{k}", center, size, yaw=float(rng.uniform(0, 360))))
    s = house(*objects)
    ours = {(c.a, c.b): c.depth_m for c in collisions(s, touch_tol_m=0.0, resting_tol_m=0.0)}
    theirs = {k: d for k, d in fcl_depths(s).items() if d > 1e-9}
    assert set(ours) == set(theirs) and len(ours) > 5
    for key, depth in ours.items():
        if full_rotation:  # FCL reports a depth along a valid, not always minimal, direction
            assert depth <= theirs[key] + 1e-9
            assert depth >= 0.8 * theirs[key]
        else:
            assert depth == pytest.approx(theirs[key], abs=1e-6)


def test_receptacle_children_and_resting_objects_do_not_collide() -> None:
    shelf = box("bookshelf-0", (2.0, 0.9, 2.0), (1.0, 1.8, 0.4))
    book = box("book-0", (2.0, 0.8, 2.0), (0.2, 0.25, 0.15), parent="bookshelf-0")
    stray = box("book-1", (2.2, 0.8, 2.0), (0.2, 0.25, 0.15))  # inside the shelf, not its child
    rug = box("rug-0", (4.0, 0.01, 3.0), (2.0, 0.02, 2.0))
    table = box("table-0", (4.0, 0.25, 3.0), (1.0, 0.5, 0.6))  # its bottom 2 cm into the rug
    vase = box("vase-0", (4.0, 0.5 + 0.1 - (RESTING_TOL_M - 0.01), 3.0), (0.2, 0.2, 0.2))  # sunk 4 cm
    s = house(shelf, book, stray, rug, table, vase)
    assert [(c.a, c.b) for c in collisions(s)] == [("bookshelf-0", "book-1")]
    s.objects[5].center = (4.0, 0.5 + 0.1 - (RESTING_TOL_M + 0.01), 3.0)  # sunk 6 cm: a collision
    assert ("table-0", "vase-0") in {(c.a, c.b) for c in collisions(s)}


def test_room_filter_and_cross_wall_pairs() -> None:
    s = house(box("cabinet-0", (5.9, 0.5, 1.0), (0.6, 1.0, 0.6)),
              box("fridge-0", (6.2, 0.5, 1.0), (0.6, 1.0, 0.6), room="kitchen"),
              box("sofa-0", (2.0, 0.5, 3.0)), box("chair-0", (2.5, 0.5, 3.0)))
    assert len(collisions(s)) == 2
    assert [(c.a, c.b) for c in collisions(s, room_id="kitchen")] == [("cabinet-0", "fridge-0")]
    with pytest.raises(KeyError, match="'garage'"):
        collisions(s, room_id="garage")
    with pytest.raises(ValueError, match="min_depth_m must be"):
        collisions(s, min_depth_m=-1.0)


def test_out_of_bounds_fractions_and_crossings() -> None:
    s = house(
        box("cabinet-0", (5.9, 0.5, 1.0), (0.6, 1.0, 0.6)),  # 0.2 of 0.6 m wide past x = 6: a third out
        box("sofa-0", (2.0, 0.5, 2.0)),
        box("shelf-0", (3.0, 0.5, 5.0 + 0.5 - 0.01), (1.0, 1.0, 1.0)),  # all but 1 cm beyond the north wall
        box("lamp-0", (1.0, 2.2, 1.0), (0.3, 0.8, 0.3)),  # top at 2.6 m, ceiling 2.5 m
        box("pit-0", (1.0, 0.3, 4.0), (0.3, 0.8, 0.3)),  # bottom 0.1 m below the floor
        box("ghost-0", (20.0, 0.5, 20.0), room="nowhere"),
    )
    found = {o.object_id: o for o in out_of_bounds(s)}
    assert set(found) == {"cabinet-0", "shelf-0", "lamp-0", "pit-0", "ghost-0"}
    cab = found["cabinet-0"]
    assert cab.outside_fraction == pytest.approx((0.2 - 0.02) / 0.6, abs=1e-6)  # 2 cm tolerance
    assert cab.other_rooms == ("kitchen",) and "crossing into kitchen" in cab.explanation
    assert found["shelf-0"].outside_fraction == pytest.approx(0.97, abs=1e-6) and found["shelf-0"].other_rooms == ()
    assert found["lamp-0"].reasons == ("above ceiling",) and found["lamp-0"].vertical_m == pytest.approx(0.1)
    assert found["pit-0"].reasons == ("below floor",) and found["pit-0"].vertical_m == pytest.approx(0.1)
    assert found["ghost-0"].reasons == ("no room",) and found["ghost-0"].outside_fraction == 1.0
    assert [o.object_id for o in out_of_bounds(s, vertical=False)] == ["cabinet-0", "shelf-0", "ghost-0"]
    assert out_of_bounds(s, room_id="kitchen") == []


def test_out_of_bounds_in_an_l_room_and_the_kitchen_ceiling_from_walls() -> None:
    l_room = Room("den", [(0, 0), (6, 0), (6, 3), (3, 3), (3, 6), (0, 6)])
    inside = box("table-0", (2.0, 0.4, 2.0), (1.0, 0.8, 1.0), room="den")
    # A 1 m desk centred on the reflex corner: a quarter of it lies in the missing square,
    # less the 2 cm tolerance strip along both walls.
    notch = box("desk-0", (3.0, 0.4, 3.0), (1.0, 0.8, 1.0), room="den")
    s = Scene(rooms=[l_room], objects=[inside, notch])
    (o,) = out_of_bounds(s)
    assert o.object_id == "desk-0" and o.outside_fraction == pytest.approx(0.48 * 0.48, abs=1e-9)
    k = house(box("fridge-0", (8.0, 1.4, 2.0), (0.8, 2.8, 0.8), room="kitchen"))  # 2.8 m > 2.7 m walls
    (o,) = out_of_bounds(k)
    assert o.reasons == ("above ceiling",) and o.vertical_m == pytest.approx(0.1)


def test_door_blocking_zone() -> None:
    # The door hole runs z in [2, 3] on x = 6; its zone reaches 0.6 m into each room.
    s = house(box("cabinet-0", (6.0 - 0.6 - 0.3 + 0.05, 0.5, 2.5), (0.6, 1.0, 0.6)),
              box("rug-0", (5.5, 0.01, 2.5), (1.0, 0.02, 1.0)),
              box("painting-0", (5.98, 2.3, 2.5), (0.8, 0.3, 0.03), yaw=270.0))
    (b,) = blocked_openings(s)
    assert (b.opening_id, b.object_id, b.room_id) == ("door|0|living room|kitchen", "cabinet-0", "living room")
    assert b.overlap_m2 == pytest.approx(0.05 * 0.6)
    s.objects[0].center = (6.0 - 0.6 - 0.3 - 0.05, 0.5, 2.5)
    assert blocked_openings(s) == []
    assert blocked_openings(s, clearance_m=0.7)[0].object_id == "cabinet-0"
    s.objects.append(box("fridge-0", (6.4, 0.9, 2.5), (0.6, 1.8, 0.6), room="kitchen"))
    assert [(b.object_id, b.room_id) for b in blocked_openings(s)] == [("fridge-0", "kitchen")]
    assert blocked_openings(s, room_id="living room") == []


def test_window_blocking_counts_only_objects_reaching_the_sill() -> None:
    s = house(box("wardrobe-0", (3.0, 1.0, 4.5), (1.2, 2.0, 0.6)), box("bench-0", (1.0, 0.2, 4.7), (1.0, 0.4, 0.4)))
    s.walls.append(Wall("wall|living room|north", "living room", (0, 5), (6, 5), 2.5))
    s.windows.append(Opening("window|0", "window", "w", "living room", "living room", "wall|living room|north", None,
                             (0.5, 0.9), (3.5, 2.0)))
    assert blocked_openings(s) == []  # doors only by default
    found = blocked_openings(s, windows=True)
    assert [(b.opening_id, b.object_id) for b in found] == [("window|0", "wardrobe-0")]
    assert found[0].overlap_m2 == pytest.approx(1.1 * 0.4)  # x in [2.4, 3.5] under the hole, z in [4.4, 4.8]
