"""on_top_of and under: gaps, overlaps, receptacle children, rugs, things tucked under tables."""

from __future__ import annotations

import pytest

from buildbench.scenes.model import Room, Scene, SceneObject, yaw_quat_xyzw
from buildbench.scenes.relations import ON_TOP_GAP_M, RelationError, on_top_of, under

EPS = 0.01


def box(object_id: str, x: float, bottom: float, z: float, size: tuple[float, float, float], yaw: float = 0.0,
        parent: str | None = None) -> SceneObject:
    return SceneObject(object_id, object_id.split("-")[0], "", (x, bottom + size[1] / 2, z), size,
                       yaw_quat_xyzw(yaw), "living room", parent)


def scene(*objects: SceneObject) -> Scene:
    return Scene(rooms=[Room("living room", [(0, 0), (0, 6), (6, 6), (6, 0)])], objects=list(objects))


TABLE = box("table-0", 3.0, 0.0, 3.0, (1.2, 0.75, 0.8))


@pytest.mark.parametrize("offset", [ON_TOP_GAP_M - EPS, -(ON_TOP_GAP_M - EPS)])
def test_on_top_within_gap_either_way(offset: float) -> None:
    s = scene(TABLE, box("vase-0", 3.0, 0.75 + offset, 3.0, (0.2, 0.3, 0.2)))
    v = on_top_of(s, "vase-0", "table-0")
    assert v.holds and v.value == pytest.approx(offset)


@pytest.mark.parametrize("offset", [ON_TOP_GAP_M + EPS, -(ON_TOP_GAP_M + EPS)])
def test_not_on_top_beyond_gap(offset: float) -> None:
    s = scene(TABLE, box("vase-0", 3.0, 0.75 + offset, 3.0, (0.2, 0.3, 0.2)))
    v = on_top_of(s, "vase-0", "table-0")
    assert not v.holds and "gap" in v.explanation


def test_on_top_needs_half_the_footprint_over_the_support() -> None:
    # Table spans x in [2.4, 3.6]; a 0.2 m vase centred at 3.6 -/+ 0.01 m overhangs by half +/- 5 %.
    assert on_top_of(scene(TABLE, box("vase-0", 3.6 - EPS, 0.75, 3.0, (0.2, 0.3, 0.2))), "vase-0", "table-0").holds
    v = on_top_of(scene(TABLE, box("vase-0", 3.6 + EPS, 0.75, 3.0, (0.2, 0.3, 0.2))), "vase-0", "table-0")
    assert not v.holds and v.evidence["overlap"] == pytest.approx(0.45)


def test_on_top_of_a_rotated_table() -> None:
    # A 2 x 0.4 m shelf turned 90°: it now runs along z, so a book at z + 0.8 is on it.
    shelf = box("shelf-0", 3.0, 0.0, 3.0, (2.0, 1.0, 0.4), yaw=90.0)
    assert on_top_of(scene(shelf, box("book-0", 3.0, 1.0, 3.8, (0.2, 0.05, 0.15))), "book-0", "shelf-0").holds
    assert not on_top_of(scene(shelf, box("book-0", 3.8, 1.0, 3.0, (0.2, 0.05, 0.15))), "book-0", "shelf-0").holds


def test_receptacle_child_on_an_inner_shelf() -> None:
    shelf = box("bookshelf-0", 3.0, 0.0, 3.0, (1.0, 1.8, 0.4))
    book = box("book-0", 3.0, 0.9, 3.0, (0.2, 0.25, 0.15), parent="bookshelf-0")
    v = on_top_of(scene(shelf, book), "book-0", "bookshelf-0")
    assert v.holds and v.evidence["receptacle_child"] and "receptacle child" in v.explanation
    stray = box("book-1", 3.0, 0.9, 3.0, (0.2, 0.25, 0.15))  # same place, no parent link
    assert not on_top_of(scene(shelf, stray), "book-1", "bookshelf-0").holds
    moved = box("book-2", 5.0, 0.9, 5.0, (0.2, 0.25, 0.15), parent="bookshelf-0")  # stale parent link
    assert not on_top_of(scene(shelf, moved), "book-2", "bookshelf-0").holds


def test_under_rules() -> None:
    rug = box("rug-0", 3.0, 0.0, 3.0, (2.5, 0.02, 2.0))
    table_on_rug = box("table-0", 3.0, 0.02, 3.0, (1.2, 0.5, 0.8))
    v = under(scene(rug, table_on_rug), "rug-0", "table-0")
    assert v.holds and v.evidence["rule"] == "supports"
    # A rug whose table stands on the floor through it (bounding boxes interpenetrate).
    sunk = box("table-0", 3.0, 0.0, 3.0, (1.2, 0.5, 0.8))
    assert under(scene(rug, sunk), "rug-0", "table-0").holds
    # A box in the space under a table: inside the table's box, below its top.
    crate = box("crate-0", 3.0, 0.0, 3.0, (0.4, 0.3, 0.4))
    v = under(scene(TABLE, crate), "crate-0", "table-0")
    assert v.holds and v.evidence["rule"] == "tucked" and v.value == pytest.approx(-0.3)
    # Strictly below: a bed under a hanging lamp.
    bed = box("bed-0", 3.0, 0.0, 3.0, (1.6, 0.6, 2.0))
    lamp = box("lamp-0", 3.0, 2.0, 3.0, (0.4, 0.4, 0.4))
    v = under(scene(bed, lamp), "bed-0", "lamp-0")
    assert v.holds and v.evidence["rule"] == "below" and v.value == pytest.approx(1.4)
    # Not under: beside the table, or taller than it.
    assert not under(scene(TABLE, box("crate-0", 5.0, 0.0, 5.0, (0.4, 0.3, 0.4))), "crate-0", "table-0").holds
    assert not under(scene(TABLE, box("chair-0", 3.0, 0.0, 3.0, (0.5, 0.9, 0.5))), "chair-0", "table-0").holds
    assert not under(scene(TABLE, box("vase-0", 3.0, 0.75, 3.0, (0.2, 0.3, 0.2))), "vase-0", "table-0").holds
    assert under(scene(TABLE, box("vase-0", 3.0, 0.75, 3.0, (0.2, 0.3, 0.2))), "table-0", "vase-0").holds


def test_vertical_relations_take_objects_only() -> None:
    with pytest.raises(RelationError, match="on_top_of: 'living room' \\(argument b\\) is a room"):
        on_top_of(scene(TABLE), "table-0", "living room")
