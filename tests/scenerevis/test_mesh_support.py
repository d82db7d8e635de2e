"""Support and floating at a mesh geometry level: objects rest on the meshes' upward faces
(a vase on a table's top, a book on a chair's seat or a bookcase's shelf board), not on the
tops of bounding boxes (a cushion level with a chair's back, over its seat, rests on nothing);
the box level and the released rules keep boxes."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.suites.scenerevis.check.layout import parse_layout
from buildbench.suites.scenerevis.check.meshes import layout_meshes, mesh_centers
from buildbench.suites.scenerevis.check.support import check_support
from buildbench.suites.scenerevis.metrics import scene_metrics
from buildbench.suites.scenerevis.reward import HybridReward, released_support_reward

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]
TABLE = {"desc": "wooden dining table", "size": [1.2, 0.75, 0.8], "pos": [0.0, 0.0, 0.0],
         "rot": [0.0, 0.0, 0.0, 1.0], "jid": "table"}
# A chair facing +z: its back along z = -0.25, its seat top at 0.468 m (procedural).
CHAIR = {"desc": "wooden chair", "size": [0.5, 0.9, 0.5], "pos": [1.5, 0.0, 1.0],
         "rot": [0.0, 0.0, 0.0, 1.0], "jid": "chair"}


def _room(*objects: dict) -> dict:
    return {"room_type": "bedroom", "bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR],
            "objects": [TABLE, CHAIR, *objects]}


def _item(desc: str, size: list[float], pos: list[float]) -> dict:
    return {"desc": desc, "size": size, "pos": pos, "rot": [0.0, 0.0, 0.0, 1.0], "jid": desc}


@pytest.mark.parametrize("level", ["box", "procedural"])
def test_a_vase_on_a_table_top_is_supported(level: str) -> None:
    report = check_support(parse_layout(_room(_item("ceramic vase", [0.2, 0.3, 0.2], [0.3, 0.75, 0.1]))),
                           geometry=level)
    assert report.kinds[2] == "surface"
    assert report.supported == (True, True, True) and report.floating == ()


@pytest.mark.parametrize("x", [0.0, 0.53])  # mid-table, and over a leg's corner
def test_a_box_hovering_between_the_legs_rests_on_nothing(x: float) -> None:
    # Below the top, above the floor: a leg passes through its bottom's height, but a leg's
    # sides carry nothing.
    layout = parse_layout(_room(_item("storage box", [0.2, 0.2, 0.2], [x, 0.3, 0.33])))
    for level in ("box", "procedural"):
        report = check_support(layout, geometry=level)
        assert report.floating == (2,) and not report.supported[2], level


def test_a_book_on_a_chair_seat_rests_on_the_seat_only_at_a_mesh_level() -> None:
    layout = parse_layout(_room(_item("book", [0.2, 0.04, 0.15], [1.5, 0.468, 1.05])))
    assert check_support(layout).floating == (2,)  # the box's top is the back's, 0.9 m
    report = check_support(layout, geometry="procedural")
    # The chair carries things by the released rules (lower than 1.2 m, wider than 0.2 m²).
    assert report.floating == () and report.supported[2]


def test_a_cushion_level_with_a_chairs_back_over_its_seat_rests_on_nothing() -> None:
    layout = parse_layout(_room(_item("cushion", [0.2, 0.1, 0.2], [1.5, 0.9, 1.1])))
    assert check_support(layout).floating == ()  # on the chair's box
    assert check_support(layout, geometry="procedural").floating == (2,)


def test_a_vase_on_a_bookcase_shelf_board_rests_on_the_board() -> None:
    bookcase = _item("wooden bookcase", [0.8, 1.8, 0.35], [-1.5, 0.0, -1.7])
    layout = parse_layout(_room(bookcase))
    meshes = layout_meshes(layout, "procedural")
    # The boards: heights of the bookcase's upward faces strictly between floor and top.
    world = meshes[2].vertices + mesh_centers(layout, meshes)[2]
    tri = world[meshes[2].faces]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    heights = sorted({round(float(y), 4) for y, n in zip(tri[:, 0, 1], normal, strict=True)
                      if n[1] > 0.7 * np.linalg.norm(n) and 0.3 < y < 1.7})
    assert heights, "the procedural bookcase has shelf boards"
    vase = _item("glass vase", [0.1, 0.2, 0.1], [-1.5, heights[0], -1.7])
    layout = parse_layout(_room(bookcase, vase))
    assert check_support(layout).floating == (3,)
    report = check_support(layout, geometry="procedural")
    assert report.floating == () and report.supported[3]


def test_metrics_and_reward_use_the_level_the_released_support_keeps_boxes() -> None:
    scene = _room(_item("small vase", [0.2, 0.1, 0.2], [1.5, 0.9, 1.1]))
    assert scene_metrics(scene, voxels=False)["floating"] == []
    assert scene_metrics(scene, voxels=False, geometry="procedural")["floating"] == [2]
    box = HybridReward("a bedroom", geometry="box")._support(scene, [])
    procedural = HybridReward("a bedroom", geometry="procedural")._support(scene, [])
    assert procedural < box == 1.0
    released = HybridReward("a bedroom", geometry="procedural", released_support=True)._support(scene, [])
    assert released == released_support_reward(scene)
