"""Directional relations in the anchor's frame, facing and same direction, at their edges."""

from __future__ import annotations

import math

import pytest

from buildbench.scenes.model import Room, Scene, SceneObject, Wall, yaw_quat_xyzw
from buildbench.scenes.relations import (
    FACING_CONE_DEG,
    RELATIONS,
    SAME_DIRECTION_DEG,
    SIDE_MAX_M,
    RelationError,
    behind,
    facing,
    facing_each_other,
    in_front_of,
    left_of,
    right_of,
    same_direction,
)

YAWS = [0.0, 90.0, 180.0, 270.0, 30.0]
ANCHOR = (10.0, 10.0)
SIDES = {"in_front_of": 0.0, "right_of": 90.0, "behind": 180.0, "left_of": -90.0}


def box(object_id: str, x: float, z: float, size: tuple[float, float, float], yaw: float = 0.0) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, size[1] / 2, z), size, yaw_quat_xyzw(yaw), "hall")


def local_to_world(yaw: float, right: float, forward: float) -> tuple[float, float]:
    """World (x, z) of an offset given in the anchor's (right, forward) frame."""
    t = math.radians(yaw)
    front, side = (math.sin(t), math.cos(t)), (math.cos(t), -math.sin(t))
    return (ANCHOR[0] + right * side[0] + forward * front[0], ANCHOR[1] + right * side[1] + forward * front[1])


def scene_with(yaw: float, bearing_deg: float, centre_distance: float, target_size: float = 0.2) -> Scene:
    """A 1 m anchor at yaw ``yaw`` and a small target at ``bearing_deg`` (clockwise from the
    anchor's front) ``centre_distance`` metres from the anchor's centre."""
    b = math.radians(bearing_deg)
    x, z = local_to_world(yaw, centre_distance * math.sin(b), centre_distance * math.cos(b))
    return Scene(
        rooms=[Room("hall", [(0, 0), (0, 20), (20, 20), (20, 0)])],
        objects=[box("sofa-0", *ANCHOR, (1.0, 0.8, 1.0), yaw),
                 box("lamp-0", x, z, (target_size, 1.5, target_size), yaw)],
    )


@pytest.mark.parametrize("yaw", YAWS)
@pytest.mark.parametrize("relation", list(SIDES))
def test_side_cone_edges_for_rotated_anchors(yaw: float, relation: str) -> None:
    axis = SIDES[relation]
    fn = RELATIONS[relation]
    inside = fn(scene_with(yaw, axis + 44.0, 1.5), "lamp-0", "sofa-0")
    outside = fn(scene_with(yaw, axis + 46.0, 1.5), "lamp-0", "sofa-0")
    inside_ccw = fn(scene_with(yaw, axis - 44.0, 1.5), "lamp-0", "sofa-0")
    outside_ccw = fn(scene_with(yaw, axis - 46.0, 1.5), "lamp-0", "sofa-0")
    assert inside.holds and inside_ccw.holds, inside.explanation
    assert not outside.holds and not outside_ccw.holds, outside.explanation
    assert inside.value == pytest.approx(44.0, abs=1e-6)
    assert outside.value == pytest.approx(46.0, abs=1e-6)
    assert "lamp-0" in inside.explanation and "sofa-0" in inside.explanation


@pytest.mark.parametrize("yaw", YAWS)
def test_exactly_one_side_holds_off_the_diagonals(yaw: float) -> None:
    for bearing in range(-170, 190, 20):
        scene = scene_with(yaw, float(bearing), 1.5)
        held = [name for name in SIDES if RELATIONS[name](scene, "lamp-0", "sofa-0").holds]
        assert len(held) == 1, (bearing, held)


@pytest.mark.parametrize("yaw", YAWS)
def test_left_is_the_anchors_own_left(yaw: float) -> None:
    # Facing north (yaw 0) the anchor's right is east (+x); it turns with the anchor.
    scene = scene_with(yaw, -90.0, 1.5)
    assert left_of(scene, "lamp-0", "sofa-0").holds
    assert not right_of(scene, "lamp-0", "sofa-0").holds
    x = scene.object("lamp-0").center[0]
    if yaw == 0.0:
        assert x < ANCHOR[0]  # west of a north-facing sofa is its left
    if yaw == 180.0:
        assert x > ANCHOR[0]


def test_side_distance_limit_edges() -> None:
    # Anchor half depth 0.5, target half 0.1: footprint gap = centre distance - 0.6.
    near_edge = scene_with(0.0, 0.0, SIDE_MAX_M + 0.6 - 0.01)
    far_edge = scene_with(0.0, 0.0, SIDE_MAX_M + 0.6 + 0.01)
    assert in_front_of(near_edge, "lamp-0", "sofa-0").holds
    verdict = in_front_of(far_edge, "lamp-0", "sofa-0")
    assert not verdict.holds and "too far" in verdict.explanation
    assert in_front_of(far_edge, "lamp-0", "sofa-0", max_m=None).holds


def test_behind_and_front_are_exclusive_and_override_cone() -> None:
    scene = scene_with(30.0, 180.0, 2.0)
    assert behind(scene, "lamp-0", "sofa-0").holds
    assert not in_front_of(scene, "lamp-0", "sofa-0").holds
    assert in_front_of(scene_with(30.0, 60.0, 2.0), "lamp-0", "sofa-0", half_angle_deg=70.0).holds


def tv_scene(sofa_yaw: float, tv_at: tuple[float, float], tv_width: float = 1.2) -> Scene:
    return Scene(
        rooms=[Room("hall", [(0, 0), (0, 20), (20, 20), (20, 0)])],
        walls=[Wall("wall|hall|north|0", "hall", (0, 20), (20, 20), 2.5)],
        objects=[box("sofa-0", 10.0, 10.0, (2.0, 0.8, 0.9), sofa_yaw),
                 box("tv-0", tv_at[0], tv_at[1], (tv_width, 0.7, 0.1), 180.0)],
    )


@pytest.mark.parametrize("yaw", YAWS)
def test_facing_by_ray_for_rotated_objects(yaw: float) -> None:
    x, z = local_to_world(yaw, 0.0, 4.0)
    scene = tv_scene(yaw, (x, z))
    scene.objects[0].center = (10.0, 0.4, 10.0)
    v = facing(scene, "sofa-0", "tv-0")
    assert v.holds and v.evidence["ray_hits"] and v.value == pytest.approx(0.0, abs=1e-6)
    # The TV always faces south (yaw 180): it faces the sofa only when the sofa is south of it.
    assert facing(scene, "tv-0", "sofa-0", cone_deg=10.0).holds is (yaw == 0.0)


def test_facing_cone_edges_when_the_ray_misses() -> None:
    # A thin target 4 m away, off to the side so the ray misses; the angle decides.
    for angle, expected in ((FACING_CONE_DEG - 1.0, True), (FACING_CONE_DEG + 1.0, False)):
        t = math.radians(angle)
        scene = tv_scene(0.0, (10.0 + 4.0 * math.sin(t), 10.0 + 4.0 * math.cos(t)), tv_width=0.05)
        v = facing(scene, "sofa-0", "tv-0")
        assert v.holds is expected, v.explanation
        assert not v.evidence["ray_hits"]
        assert v.value == pytest.approx(angle, abs=1e-6)


def test_facing_a_wall_and_each_other() -> None:
    scene = tv_scene(0.0, (10.0, 14.0))
    assert facing(scene, "sofa-0", "wall|hall|north|0").holds
    assert facing_each_other(scene, "sofa-0", "tv-0").holds
    scene.objects[1].rotation_xyzw = yaw_quat_xyzw(0.0)  # the TV turns its back
    assert not facing_each_other(scene, "sofa-0", "tv-0").holds
    with pytest.raises(RelationError, match="facing: 'wall\\|hall\\|north\\|0' \\(argument a\\) is a wall"):
        facing(scene, "wall|hall|north|0", "sofa-0")


@pytest.mark.parametrize("base", YAWS)
def test_same_direction_edges_across_wraparound(base: float) -> None:
    scene = scene_with(base, 90.0, 3.0)
    for delta, expected in ((SAME_DIRECTION_DEG - 0.5, True), (SAME_DIRECTION_DEG + 0.5, False)):
        for sign in (1.0, -1.0):
            scene.objects[1].rotation_xyzw = yaw_quat_xyzw(base + sign * delta)
            v = same_direction(scene, "lamp-0", "sofa-0")
            assert v.holds is expected, v.explanation
            assert v.value == pytest.approx(delta, abs=1e-6)


def test_anchor_must_be_an_object() -> None:
    scene = scene_with(0.0, 0.0, 2.0)
    with pytest.raises(RelationError, match="left_of: 'hall' \\(argument b\\) is a room"):
        left_of(scene, "lamp-0", "hall")
    with pytest.raises(KeyError, match="no object, room, wall, door or window with id 'lamp'"):
        left_of(scene, "lamp", "sofa-0")
