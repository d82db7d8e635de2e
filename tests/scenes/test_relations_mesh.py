"""Relations at a mesh level: distances, 'under' and 'overlaps' measured on placed meshes;
boxes stay the default and answer exactly as before."""

from __future__ import annotations

import pytest

from buildbench.harness.errors import ConfigError
from buildbench.scenes.model import Room, Scene, SceneObject, yaw_quat_xyzw
from buildbench.scenes.relations import (
    RELATIONS,
    RelationError,
    closer_than,
    measured_with,
    near,
    on_top_of,
    overlaps,
    under,
)
from buildbench.scenes.relations.shape import BOXES, current
from buildbench.suites.legoeval.check import evaluate


def obj(object_id: str, x: float, z: float, size: tuple[float, float, float], yaw: float = 0.0) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, size[1] / 2, z), size, yaw_quat_xyzw(yaw),
                       "living room", None)


def scene(*objects: SceneObject) -> Scene:
    return Scene(rooms=[Room("living room", [(0, 0), (0, 6), (6, 6), (6, 0)])], objects=list(objects))


TABLE = obj("table-0", 3.0, 3.0, (1.2, 0.75, 0.8))  # spans z 2.6 .. 3.4


def pushed_in_chair(depth_m: float) -> SceneObject:
    """A 0.9 m chair facing the table (its back at +z, taller than the table top), its front
    edge ``depth_m`` in under the table's far edge."""
    return obj("chair-0", 3.0, 3.4 - depth_m + 0.25, (0.45, 0.9, 0.5), yaw=180.0)


def test_a_pushed_in_chair_is_under_the_table_and_clear_of_it_by_its_meshes() -> None:
    s = scene(TABLE, pushed_in_chair(0.35))
    with measured_with("box"):
        box_under, box_overlap = under(s, "chair-0", "table-0"), overlaps(s, "chair-0", "table-0")
    # Boxes: the chair's box is taller than the table's and crosses it by 0.35 m.
    assert not box_under.holds and box_overlap.holds and box_overlap.value == pytest.approx(0.35)
    with measured_with("procedural"):
        mesh_under, mesh_overlap = under(s, "chair-0", "table-0"), overlaps(s, "chair-0", "table-0")
        gap = near(s, "chair-0", "table-0")
    assert mesh_under.holds and mesh_under.evidence["rule"] == "tucked" and "procedural meshes" in mesh_under.explanation
    assert not mesh_overlap.holds and mesh_overlap.value <= 0.01
    assert gap.holds and gap.evidence["geometry"] == "procedural"


def test_a_chair_whose_back_crosses_the_top_overlaps_at_every_level() -> None:
    s = scene(TABLE, pushed_in_chair(0.55))  # the back now stands inside the table top
    for level in ("box", "procedural"):
        with measured_with(level):
            assert overlaps(s, "chair-0", "table-0").holds, level
            assert not under(s, "chair-0", "table-0").holds, level


def test_mesh_distance_counts_the_space_a_box_fills() -> None:
    # A chair pushed 0.25 m in: its box crosses the table's, its mesh (seat below the top,
    # back beyond the table's edge) stands 0.15 m from the table's.
    s = scene(TABLE, pushed_in_chair(0.25))
    with measured_with("box"):
        assert near(s, "chair-0", "table-0").value == 0.0
    with measured_with("procedural"):
        assert near(s, "chair-0", "table-0").value == pytest.approx(0.15, abs=0.02)
    # A floor lamp 5 cm from a sofa's arm: its shade is the box's width, its base and pole
    # are narrower, and the shade hangs above the arm.
    sofa = obj("sofa-0", 3.0, 3.0, (2.0, 0.85, 0.9))
    lamp = obj("floor lamp-0", 3.0 + 1.0 + 0.05 + 0.2, 3.0, (0.4, 1.6, 0.4))
    s = scene(sofa, lamp)
    with measured_with("box"):
        boxed = near(s, "floor lamp-0", "sofa-0").value
    with measured_with("procedural"):
        meshed = near(s, "floor lamp-0", "sofa-0").value
    assert boxed == pytest.approx(0.05) and meshed > boxed + 0.03


def test_two_sofas_on_the_floor_measure_alike_at_both_levels() -> None:
    # Procedural sofas fill their footprint up to the seat, so between two of them standing
    # on the floor the meshes' gap is the boxes' (measured facing and at 45 degrees).
    a = obj("sofa-0", 2.0, 3.0, (2.0, 0.85, 0.9), yaw=90.0)
    for yaw in (0.0, 45.0):
        b = obj("sofa-1", 3.5, 3.0, (2.0, 0.85, 0.9), yaw=-90.0 + yaw)
        s = scene(a, b)
        with measured_with("box"):
            boxed = near(s, "sofa-0", "sofa-1").value
        with measured_with("procedural"):
            meshed = near(s, "sofa-0", "sofa-1").value
        assert meshed == pytest.approx(boxed, abs=1e-6)


def test_closer_than_uses_the_level() -> None:
    # The lamp is 0.05 m from the sofa's box and 0.08 m from the plant's box; by the meshes the
    # sofa is farther (lamp base vs. arm), the plant's pot closer.
    sofa = obj("sofa-0", 3.0, 3.0, (2.0, 0.85, 0.9))
    lamp = obj("floor lamp-0", 4.25, 3.0, (0.4, 1.6, 0.4))
    s = scene(sofa, lamp, obj("chair-0", 4.25, 2.0, (0.45, 0.9, 0.5)))
    with measured_with("box"):
        box_v = closer_than(s, "floor lamp-0", "sofa-0", "chair-0")
    with measured_with("procedural"):
        mesh_v = closer_than(s, "floor lamp-0", "sofa-0", "chair-0")
    assert box_v.evidence["distance_ab_m"] == pytest.approx(0.05)
    assert mesh_v.evidence["distance_ab_m"] > box_v.evidence["distance_ab_m"]
    assert "geometry" not in box_v.evidence and mesh_v.evidence["geometry"] == "procedural"


def raised(object_id: str, x: float, bottom: float, z: float, size: tuple[float, float, float]) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, bottom + size[1] / 2, z), size,
                       yaw_quat_xyzw(0.0), "living room", None)


@pytest.mark.parametrize(("bottom", "by_box", "by_mesh"), [
    (0.45, False, True),   # on the chair's seat: below the top of the box its back makes
    (0.9, True, False),    # level with the back's top, over the seat: floating
    (0.3, False, False),   # between the legs, under the seat
])
def test_on_top_of_a_chair_means_its_seat_at_a_mesh_level(bottom: float, by_box: bool, by_mesh: bool) -> None:
    s = scene(obj("chair-0", 3.0, 3.0, (0.45, 0.9, 0.5)), raised("book-0", 3.0, bottom, 3.05, (0.2, 0.05, 0.15)))
    assert on_top_of(s, "book-0", "chair-0").holds is by_box
    with measured_with("procedural"):
        v = on_top_of(s, "book-0", "chair-0")
    assert v.holds is by_mesh and v.evidence["surface_contact"] is by_mesh
    if not by_mesh:
        assert "no surface of its procedural mesh" in v.explanation


def test_a_box_beside_a_table_leg_under_the_top_is_on_nothing() -> None:
    # Its footprint covers a leg's corner, which passes its bottom's height: a leg's sides
    # carry nothing, so it is not on top of the table at any level.
    table = obj("table-0", 3.0, 3.0, (1.2, 0.75, 0.8))
    box = raised("box-0", 3.53, 0.3, 3.33, (0.2, 0.2, 0.2))
    for level in ("box", "procedural"):
        with measured_with(level):
            assert not on_top_of(scene(table, box), "box-0", "table-0").holds, level


def test_on_top_of_a_table_and_a_rug_agree_at_both_levels() -> None:
    table = obj("table-0", 3.0, 3.0, (1.2, 0.75, 0.8))
    vase = raised("vase-0", 3.0, 0.75, 3.0, (0.2, 0.3, 0.2))
    rug = obj("rug-0", 3.0, 3.0, (2.0, 0.01, 1.4))
    on_rug = raised("table-0", 3.0, 0.01, 3.0, (1.2, 0.75, 0.8))
    for level in ("box", "procedural"):
        with measured_with(level):
            assert on_top_of(scene(table, vase), "vase-0", "table-0").holds, level
            assert on_top_of(scene(rug, on_rug), "table-0", "rug-0").holds, level
            assert under(scene(rug, on_rug), "rug-0", "table-0").evidence["rule"] == "supports", level


def test_box_level_is_the_default_and_answers_as_before() -> None:
    s = scene(TABLE, pushed_in_chair(0.35), obj("sofa-0", 1.5, 1.5, (2.0, 0.85, 0.9)))
    assert current() is BOXES
    pairs = [("chair-0", "table-0"), ("sofa-0", "table-0"), ("table-0", "sofa-0")]
    for name in ("near", "far", "under", "on_top_of", "overlaps", "left_of", "facing"):
        plain = [RELATIONS[name](s, a, b) for a, b in pairs]
        with measured_with("box"):
            boxed = [RELATIONS[name](s, a, b) for a, b in pairs]
        assert plain == boxed, name
        assert all("geometry" not in v.evidence for v in plain if name != "overlaps"), name
    with measured_with("procedural"):
        pass
    assert current() is BOXES


def test_overlaps_checks_its_threshold_and_kinds() -> None:
    s = scene(TABLE, pushed_in_chair(0.35))
    with pytest.raises(RelationError, match="overlaps: depth_m"):
        overlaps(s, "chair-0", "table-0", depth_m=-1.0)
    assert overlaps(s, "chair-0", "table-0", depth_m=0.5).holds is False


def test_deterministic_checker_measures_at_the_level() -> None:
    s = scene(TABLE, pushed_in_chair(0.35))
    constraint = [{"id": "c0", "program": {"op": "relation", "rel": "under", "a": {"category": "chair"},
                                           "b": {"category": "table"}}}]
    assert evaluate(s, constraint)[0].holds is False
    with measured_with("procedural"):
        assert evaluate(s, constraint)[0].holds is True


def test_compatible_mode_keeps_boxes_and_mesh_needs_assets(monkeypatch: pytest.MonkeyPatch) -> None:
    from buildbench.suites.legoeval.agents import _relations_level
    from buildbench.suites.legoeval.options import LegoEvalOptions

    assert _relations_level(LegoEvalOptions(geometry="procedural")) == "procedural"
    assert _relations_level(LegoEvalOptions(geometry="procedural", wall_midpoint_positions=True)) == "box"
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    with pytest.raises(ConfigError, match="geometry=mesh needs an asset folder"):
        _relations_level(LegoEvalOptions(geometry="mesh"))


def test_a_rug_is_not_on_the_legs_of_the_bed_over_it() -> None:
    bed = obj("bed-0", 3.0, 3.0, (1.6, 0.6, 2.1))
    rug = obj("rug-0", 3.0, 3.0, (2.0, 0.01, 2.4))
    with measured_with("procedural"):
        assert not on_top_of(scene(bed, rug), "rug-0", "bed-0").holds
        assert not overlaps(scene(bed, rug), "rug-0", "bed-0").holds


def test_what_rests_on_another_does_not_overlap_it() -> None:
    # FCL reports the TV's bottom face on the stand's top face as a deep contact.
    stand = obj("tv stand-0", 3.0, 3.0, (1.8, 0.5, 0.45))
    tv = raised("tv-0", 3.0, 0.5, 3.0, (0.9, 0.53, 0.08))
    with measured_with("procedural"):
        v = overlaps(scene(stand, tv), "tv-0", "tv stand-0")
        assert on_top_of(scene(stand, tv), "tv-0", "tv stand-0").holds
    assert not v.holds and v.evidence["rests"]
