"""near, far, closer_than, between, aligned at their thresholds; doors, windows and walls as ids."""

from __future__ import annotations

import math

import pytest

from buildbench.scenes.model import Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw
from buildbench.scenes.relations import (
    ALIGNED_M,
    BETWEEN_OFFSET_M,
    FAR_M,
    NEAR_M,
    RelationError,
    aligned,
    between,
    closer_than,
    far,
    near,
)

EPS = 0.01


def box(object_id: str, x: float, z: float, size: tuple[float, float, float] = (1.0, 1.0, 1.0),
        yaw: float = 0.0) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, size[1] / 2, z), size, yaw_quat_xyzw(yaw),
                       "living room")


def room_scene(*objects: SceneObject) -> Scene:
    return Scene(
        rooms=[Room("living room", [(0, 0), (0, 8), (10, 8), (10, 0)])],
        walls=[Wall("wall|living room|south|0", "living room", (10, 0), (0, 0), 2.5),
               Wall("wall|living room|north|0", "living room", (0, 8), (10, 8), 2.5)],
        windows=[Opening("window|0", "window", "w", "living room", "living room", "wall|living room|north|0", None,
                         (4.0, 1.0), (6.0, 2.0))],
        objects=list(objects),
    )


@pytest.mark.parametrize("yaw", [0.0, 90.0, 180.0, 270.0])
def test_near_and_far_edges_use_footprint_gaps(yaw: float) -> None:
    # Two 1 m cubes whose facing sides are `gap` apart whatever the yaw (cubes are symmetric).
    for gap, is_near, is_far in ((NEAR_M - EPS, True, False), (NEAR_M + EPS, False, False),
                                 (FAR_M - EPS, False, False), (FAR_M + EPS, False, True)):
        scene = room_scene(box("sofa-0", 2.0, 4.0, yaw=yaw), box("table-0", 3.0 + gap, 4.0, yaw=yaw))
        n, f = near(scene, "sofa-0", "table-0"), far(scene, "sofa-0", "table-0")
        assert n.holds is is_near and f.holds is is_far, (gap, n.explanation, f.explanation)
        assert n.value == pytest.approx(gap, abs=1e-9)


def test_near_at_a_non_axis_yaw_measures_the_corner_gap() -> None:
    # A 1 m cube turned 45° reaches sqrt(2)/2 towards +x from its centre.
    reach = math.sqrt(2) / 2
    scene = room_scene(box("sofa-0", 2.0, 4.0, yaw=45.0), box("table-0", 2.0 + reach + 0.5 + NEAR_M - EPS, 4.0))
    v = near(scene, "sofa-0", "table-0")
    assert v.holds and v.value == pytest.approx(NEAR_M - EPS, abs=1e-9)
    assert v.explanation == "sofa-0 is 0.99 m from table-0: near (<= 1.00 m)"


def test_near_takes_windows_and_walls() -> None:
    scene = room_scene(box("desk-0", 5.0, 6.8))  # back 0.7 m from the north wall, under the window
    assert near(scene, "desk-0", "window|0").value == pytest.approx(0.7)
    assert near(scene, "desk-0", "wall|living room|north|0").holds
    assert far(scene, "desk-0", "wall|living room|south|0").holds
    with pytest.raises(RelationError, match="near: 'living room' \\(argument b\\) is a room"):
        near(scene, "desk-0", "living room")
    with pytest.raises(RelationError, match="named twice"):
        near(scene, "desk-0", "desk-0")
    with pytest.raises(RelationError, match="max_m must be a finite non-negative"):
        near(scene, "desk-0", "window|0", max_m=float("nan"))


def test_closer_than_with_margin() -> None:
    scene = room_scene(box("chair-0", 5.0, 4.0), box("desk-0", 6.5, 4.0), box("bed-0", 3.0, 4.0))
    # chair-desk gap 0.5 m, chair-bed gap 1.0 m
    v = closer_than(scene, "chair-0", "desk-0", "bed-0")
    assert v.holds and v.value == pytest.approx(-0.5)
    assert not closer_than(scene, "chair-0", "bed-0", "desk-0").holds
    assert closer_than(scene, "chair-0", "desk-0", "bed-0", margin_m=0.49).holds
    assert not closer_than(scene, "chair-0", "desk-0", "bed-0", margin_m=0.51).holds


@pytest.mark.parametrize(
    ("x", "z", "expected"),
    [
        (5.0, 4.0 + BETWEEN_OFFSET_M - EPS, True),
        (5.0, 4.0 + BETWEEN_OFFSET_M + EPS, False),
        (2.0 + EPS, 4.0, True),  # just past b's centre
        (2.0 - EPS, 4.0, False),  # just before it
        (8.0 + EPS, 4.0, False),
    ],
)
def test_between_edges(x: float, z: float, expected: bool) -> None:
    scene = room_scene(box("sofa-0", 2.0, 4.0), box("armchair-0", 8.0, 4.0),
                       box("lamp-0", x, z, (0.3, 1.5, 0.3)))
    v = between(scene, "lamp-0", "sofa-0", "armchair-0")
    assert v.holds is expected, v.explanation
    assert "lamp-0" in v.explanation and "sofa-0 - armchair-0" in v.explanation


def test_between_on_a_diagonal() -> None:
    scene = room_scene(box("sofa-0", 1.0, 1.0), box("armchair-0", 7.0, 7.0), box("lamp-0", 4.2, 3.8, (0.3, 1.5, 0.3)))
    v = between(scene, "lamp-0", "sofa-0", "armchair-0")
    assert v.holds and v.value == pytest.approx(0.2 * math.sqrt(2))


def test_aligned_world_axes_and_anchor_frame() -> None:
    scene = room_scene(box("chair-0", 3.0, 4.0 + ALIGNED_M - EPS), box("chair-1", 7.0, 4.0))
    assert aligned(scene, "chair-0", "chair-1").holds
    assert aligned(scene, "chair-0", "chair-1", axis="x").holds
    assert not aligned(scene, "chair-0", "chair-1", axis="z").holds
    scene.objects[0].center = (3.0, 0.5, 4.0 + ALIGNED_M + EPS)
    v = aligned(scene, "chair-0", "chair-1")
    assert not v.holds and v.value == pytest.approx(ALIGNED_M + EPS)
    # In a desk's own frame (turned 30°), a chair straight in front of it is aligned with
    # its front-back axis though it is on no world axis line.
    t = math.radians(30.0)
    desk = box("desk-0", 5.0, 4.0, yaw=30.0)
    chair = box("chair-2", 5.0 + 1.5 * math.sin(t), 4.0 + 1.5 * math.cos(t))
    scene = room_scene(desk, chair)
    assert not aligned(scene, "chair-2", "desk-0").holds
    v = aligned(scene, "chair-2", "desk-0", frame="anchor", axis="z")
    assert v.holds and v.value == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="axis must be"):
        aligned(scene, "chair-2", "desk-0", axis="y")
