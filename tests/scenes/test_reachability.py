"""Free floor paths from doors to furniture: blocked and unblocked rooms, narrow doors, no doors."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.scenes.model import Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw
from buildbench.scenes.reachability import CLEARANCE_M, reachable


def box(object_id: str, x: float, z: float, size: tuple[float, float, float], yaw: float = 0.0,
        bottom: float = 0.0, parent: str | None = None) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, bottom + size[1] / 2, z), size,
                       yaw_quat_xyzw(yaw), "bedroom", parent)


def bedroom(*objects: SceneObject, door_width: float = 0.9) -> Scene:
    """A 4 x 5 m bedroom with a door in the middle of its south wall (z = 0) to a hall."""
    return Scene(
        rooms=[Room("bedroom", [(0, 0), (0, 5), (4, 5), (4, 0)]), Room("hall", [(0, -2), (0, 0), (4, 0), (4, -2)])],
        walls=[Wall("wall|bedroom|south|0", "bedroom", (4, 0), (0, 0), 2.5),
               Wall("wall|hall|north|0", "hall", (0, 0), (4, 0), 2.5)],
        doors=[Opening("door|0|bedroom|hall", "door", "d", "bedroom", "hall", "wall|bedroom|south|0",
                       "wall|hall|north|0", (2.0 - door_width / 2, 0.0), (2.0 + door_width / 2, 2.1))],
        objects=list(objects),
    )


def test_open_room_everything_reachable() -> None:
    r = reachable(bedroom(box("bed-0", 2.0, 3.9, (1.6, 0.6, 2.0), yaw=180.0),
                          box("desk-0", 0.4, 1.5, (0.6, 0.75, 1.2), yaw=90.0)), "bedroom")
    assert r.ok and r.doors == ("door|0|bedroom|hall",)
    assert r.reachable_objects == ("bed-0", "desk-0")
    assert set(r.sides["bed-0"]) == {"front", "left", "right"}  # its back is against the north wall
    assert r.sides["desk-0"] == ("front",) or "front" in r.sides["desk-0"]
    assert "every door and floor object of bedroom is reachable" in r.explanation
    assert 0.5 < r.free_share < 1.0 and r.free_mask.dtype == np.bool_


def test_a_wardrobe_wall_cuts_off_the_back_of_the_room() -> None:
    # Two wardrobes span the room's whole width at z = 2.5: the bed behind them is out of reach.
    s = bedroom(box("wardrobe-0", 1.0, 2.5, (2.0, 2.0, 0.6)), box("wardrobe-1", 3.0, 2.5, (2.0, 2.0, 0.6)),
                box("bed-0", 2.0, 3.9, (1.6, 0.6, 2.0), yaw=180.0))
    r = reachable(s, "bedroom")
    assert not r.ok and r.unreachable_objects == ("bed-0",)
    assert "bed-0 cannot be reached from the doors of bedroom" in r.explanation
    # Open a gap just wider than a walker between them: the bed is reachable again.
    gap = 2 * CLEARANCE_M + 0.12
    s.objects[0].center = (1.0 - gap / 2, 1.0, 2.5)
    s.objects[1].center = (3.0 + gap / 2, 1.0, 2.5)
    assert reachable(s, "bedroom").ok
    # And a gap just narrower than one: blocked.
    gap = 2 * CLEARANCE_M - 0.08
    s.objects[0].center = (1.0 - gap / 2, 1.0, 2.5)
    s.objects[1].center = (3.0 + gap / 2, 1.0, 2.5)
    assert reachable(s, "bedroom").unreachable_objects == ("bed-0",)


def test_door_blocked_by_a_dresser_or_too_narrow() -> None:
    blocked = reachable(bedroom(box("dresser-0", 2.0, 0.4, (1.4, 0.9, 0.5))), "bedroom")
    assert blocked.unreachable_doors == ("door|0|bedroom|hall",)
    assert "door|0|bedroom|hall cannot be walked through" in blocked.explanation
    # With its only door blocked, nothing in the room can be reached from a door.
    assert blocked.unreachable_objects == ("dresser-0",) and "no door opens onto" in blocked.explanation
    narrow = reachable(bedroom(door_width=2 * CLEARANCE_M - 0.1), "bedroom")
    assert narrow.unreachable_doors == ("door|0|bedroom|hall",)
    wide = reachable(bedroom(door_width=2 * CLEARANCE_M + 0.15), "bedroom")
    assert wide.ok


def test_rugs_wall_objects_and_children_are_not_obstacles() -> None:
    s = bedroom(box("rug-0", 2.0, 1.0, (3.8, 0.02, 1.9)),  # covers the doorway's approach
                box("shelf-0", 2.0, 0.2, (3.0, 0.4, 0.3), bottom=1.5),  # hung on the south wall
                box("table-0", 2.0, 3.0, (1.0, 0.7, 1.0)),
                box("vase-0", 2.0, 3.0, (0.2, 0.3, 0.2), bottom=0.7, parent="table-0"))
    r = reachable(s, "bedroom")
    assert r.ok and r.reachable_objects == ("table-0",)


def test_a_turned_sofa_seals_a_corner() -> None:
    # A 2.4 m sofa at 45° across the north-east corner leaves a pocket behind it; a plant in the
    # pocket is unreachable, one in front of the sofa is not.
    s = bedroom(box("sofa-0", 3.2, 4.2, (2.4, 0.9, 0.8), yaw=225.0),
                box("plant-0", 3.75, 4.75, (0.2, 0.8, 0.2)), box("plant-1", 2.0, 2.5, (0.2, 0.8, 0.2)))
    r = reachable(s, "bedroom")
    assert r.unreachable_objects == ("plant-0",) and "plant-1" in r.reachable_objects


def test_room_without_doors_uses_its_largest_free_area() -> None:
    s = Scene(rooms=[Room("studio", [(0, 0), (0, 4), (4, 4), (4, 0)])],
              objects=[SceneObject("bed-0", "bed", "", (2.0, 0.3, 2.0), (1.6, 0.6, 2.0), room_id="studio")])
    r = reachable(s, "studio")
    assert r.doors == () and r.ok and "has no door" in r.explanation


def test_bad_arguments() -> None:
    with pytest.raises(KeyError, match="'garage'"):
        reachable(bedroom(), "garage")
    with pytest.raises(ValueError, match="cell_m must be a finite positive"):
        reachable(bedroom(), "bedroom", cell_m=0.0)
    with pytest.raises(ValueError, match="needs .* cells"):
        reachable(bedroom(), "bedroom", cell_m=0.0005)
