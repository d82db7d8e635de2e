"""Physics of hand-built rooms: penetration depths, true rotations, exact outside shares."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scenerevis_scenes_physics as H  # registered by conftest.py
from scipy.spatial.transform import Rotation

from buildbench.geometry import Boxes, box_mesh, sample_surface, sat_separation
from buildbench.scenes.model import SceneFormatError
from buildbench.suites.scenerevis.check import (
    EVALUATION,
    OPTIMIZER,
    REWARD,
    check_physics,
    parse_layout,
    penetrations,
)
from buildbench.suites.scenerevis.check.bounds import outside_fractions


def test_axis_aligned_overlap_depths_and_thresholds() -> None:
    scene = H.room(
        H.rect(6, 6),
        [
            H.obj("a", [1, 1, 1], [0, 0, 0]),
            H.obj("b", [1, 1, 1], [0.9, 0, 0]),  # 0.1 m into a
            H.obj("c", [1, 1, 1], [-0.995, 0, 0]),  # 5 mm into a
        ],
    )
    layout = parse_layout(scene)
    depths = {(c.a, c.b): c.depth_m for c in penetrations(layout)}
    assert depths == pytest.approx({(0, 1): 0.1, (0, 2): 0.005})
    assert check_physics(layout, EVALUATION).colliding == (0, 1)
    assert check_physics(layout, REWARD).colliding == (0, 1, 2)
    assert [c.depth_m for c in check_physics(layout, REWARD).contacts] == pytest.approx([0.1, 0.005])


def test_exact_one_centimetre_overlap_is_not_an_evaluation_collision() -> None:
    scene = H.room(
        H.rect(6, 6), [H.obj("a", [0.5, 1, 0.5], [0.12, 0, 0]), H.obj("b", [0.5, 1, 0.5], [0.61, 0, 0])]
    )
    layout = parse_layout(scene)
    assert penetrations(layout)[0].depth_m == pytest.approx(0.01)
    assert check_physics(layout, EVALUATION).contacts == ()
    assert len(check_physics(layout, REWARD).contacts) == 1


def test_box_inside_box_penetrates_by_its_minimum_translation() -> None:
    scene = H.room(
        H.rect(6, 6),
        [H.obj("wardrobe", [2, 2, 0.6], [0, 0, 0]), H.obj("handle", [0.1, 0.1, 0.1], [0.5, 1.0, 0.0])],
    )
    (contact,) = penetrations(parse_layout(scene))
    # the small box leaves fastest through the nearer z face: 0.3 + 0.05 m
    assert contact.depth_m == pytest.approx(0.35)


def test_quaternion_is_scipy_xyzw_and_yaw_90_faces_plus_x() -> None:
    layout = parse_layout(
        H.room(
            H.rect(6, 6),
            [{"desc": "bed", "size": [1.6, 0.5, 2.0], "pos": [0, 0, 0], "rot": [0, 0.70711, 0, 0.70711]}],
        )
    )
    assert layout.rotations[0][:, 2] == pytest.approx([1, 0, 0], abs=1e-5)  # front (+z) turned to +x
    # the bottom-centre pivot: the box centre sits half the height up
    assert layout.centers[0] == pytest.approx([0, 0.25, 0])


def test_thirty_degree_yaw_uses_the_true_rotation_not_the_mirrored_footprint() -> None:
    # A 2 m long box turned 30 degrees about +y: local +x goes to (cos 30, -sin 30) in (x, z).
    # The released 2-D footprint code turns (x, z) by [[c, -s], [s, c]], i.e. to (cos 30, +sin 30).
    bar = H.obj("bench", [2.0, 0.5, 0.2], [0, 0, 0], yaw_deg=30)
    probe_true = H.obj("box", [0.1, 0.5, 0.1], [0.8, 0, -0.46])
    probe_mirror = H.obj("box", [0.1, 0.5, 0.1], [0.8, 0, 0.46])
    layout = parse_layout(H.room(H.rect(6, 6), [bar, probe_true, probe_mirror]))
    corner = Rotation.from_quat(H.yaw(30)).apply([1.0, 0.0, 0.0])
    assert corner[[0, 2]] == pytest.approx([np.cos(np.radians(30)), -np.sin(np.radians(30))])
    assert check_physics(layout, REWARD).colliding == (0, 1)
    # The mirrored convention (yaw of the opposite sign) would hit the other probe instead.
    mirrored = Boxes(
        layout.centers, layout.sizes / 2, Rotation.from_quat([H.yaw(-30), H.yaw(0), H.yaw(0)]).as_matrix()
    )
    sep = sat_separation(mirrored.subset([0, 0]), mirrored.subset([1, 2]))
    assert sep[0] > 0 > sep[1]


def test_outside_share_of_a_box_through_a_wall_is_exact() -> None:
    # 1 m cube, 0.25 m through the east wall of a 4 x 4 room: the outside part is the far
    # face (1 m2) plus four 0.249 x 1 m strips (the polygon is buffered by 1 mm).
    scene = H.room(H.rect(4, 4), [H.obj("cube", [1, 1, 1], [1.75, 0, 0])])
    share = outside_fractions(parse_layout(scene))[0]
    assert share == pytest.approx((1 + 4 * 0.249) / 6, abs=1e-9)
    report = check_physics(parse_layout(scene))
    assert report.out_of_bounds == (0,)
    assert report.oob_volume_m3[0] == pytest.approx(share)


def test_outside_share_through_the_ceiling() -> None:
    scene = H.room(H.rect(4, 4), [H.obj("lamp", [1, 1, 1], [0, 1.7, 0])], height=2.6)
    assert outside_fractions(parse_layout(scene))[0] == pytest.approx((1 + 4 * 0.099) / 6, abs=1e-9)


def test_flush_against_the_wall_is_inside() -> None:
    scene = H.room(H.rect(4, 4), [H.obj("wardrobe", [1, 2, 0.6], [0, 0, 1.7])])
    assert outside_fractions(parse_layout(scene))[0] == 0.0
    assert check_physics(parse_layout(scene), OPTIMIZER).out_of_bounds == ()


def _sampled_share(layout, i: int, poly_room, n: int = 60_000) -> float:
    boxes = layout.boxes.subset([i])
    pts = sample_surface(box_mesh(boxes), n, np.random.default_rng([7, i])).points
    import shapely

    inside = shapely.intersects_xy(poly_room, pts[:, 0], pts[:, 2])
    inside &= (pts[:, 1] >= layout.floor_y - 0.001) & (pts[:, 1] <= layout.ceiling_y + 0.001)
    return 1.0 - inside.mean()


def test_rotated_and_tilted_boxes_match_dense_surface_sampling() -> None:
    from buildbench.suites.scenerevis.check.bounds import room_polygon

    tilted = {
        "desc": "painting",
        "size": [0.8, 1.3, 0.03],
        "pos": [1.9, 0.5, 0.3],
        "rot": [-0.2, 0.65, 0.2, 0.7],
    }
    scene = H.room(
        H.L_ROOM,
        [
            H.obj("sofa", [2.0, 0.8, 0.9], [3.5, 0, 1.6], yaw_deg=37),  # crosses the L's inner wall
            H.obj("desk", [1.2, 0.75, 0.6], [2.1, 0, 2.1], yaw_deg=45),  # straddles the inner corner
            tilted,
        ],
    )
    layout = parse_layout(scene)
    exact = outside_fractions(layout)
    poly = room_polygon(layout)
    for i in range(len(layout)):
        assert exact[i] == pytest.approx(_sampled_share(layout, i, poly), abs=0.01)
    assert exact.min() > 0.02


def test_l_shaped_room_notch_and_corner() -> None:
    scene = H.room(
        H.L_ROOM,
        [
            H.obj("in notch", [0.5, 0.5, 0.5], [3.0, 0, 3.0]),  # in the missing quarter
            H.obj("in corner", [0.5, 0.5, 0.5], [1.7, 0, 1.7]),  # inside, near the inner corner
            H.obj("across", [1.0, 0.5, 1.0], [2.0, 0, 2.0]),  # a quarter of its footprint in the notch
        ],
    )
    layout = parse_layout(scene)
    shares = outside_fractions(layout)
    assert shares[0] == 1.0
    assert shares[1] == 0.0
    # outside: a quarter of top and bottom, plus the two half side faces in the notch
    # (0.5 x 0.5 each), minus the 1 mm buffer strips
    expected = (2 * 0.499**2 + 2 * 0.499 * 0.5) / (2 * 1.0 + 4 * 0.5)
    assert shares[2] == pytest.approx(expected, abs=1e-6)
    assert check_physics(layout).out_of_bounds == (0, 2)
    assert check_physics(layout, OPTIMIZER).out_of_bounds == (0, 2)


def test_grouped_format_and_record_wrapper_read_like_flat() -> None:
    flat = H.room(H.rect(4, 4), [H.obj("a", [1, 1, 1], [0, 0, 0]), H.obj("b", [1, 1, 1], [0.5, 0, 0])])
    grouped = {
        "room_type": "bedroom",
        "room_envelope": {"bounds_top": flat["bounds_top"], "bounds_bottom": flat["bounds_bottom"]},
        "groups": [
            {"group_name": "g0", "objects": flat["objects"][:1]},
            {"group_name": "g1", "objects": flat["objects"][1:]},
        ],
    }
    reports = [check_physics(parse_layout(s)).to_dict() for s in (flat, grouped, {"scene": flat})]
    assert reports[0] == reports[1] == reports[2]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("size", [1, float("nan"), 1], "objects[0].size"),
        ("size", [1, -1, 1], "objects[0].size"),
        ("rot", [0, 0, 0, 0], "objects[0].rot"),
        ("pos", [0, 0], "objects[0].pos"),
        ("pos", [1e9, 0, 0], "objects[0].pos"),
    ],
)
def test_bad_objects_are_named(field: str, value: object, message: str) -> None:
    scene = H.room(H.rect(4, 4), [H.obj("a", [1, 1, 1], [0, 0, 0])])
    scene["objects"][0][field] = value
    with pytest.raises(SceneFormatError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_layout(scene)


def test_bad_bounds_are_named() -> None:
    scene = H.room(H.rect(4, 4), [])
    scene["bounds_bottom"] = [[0, 0, 0], [1, 0, 0]]
    with pytest.raises(SceneFormatError, match="bounds_bottom"):
        parse_layout(scene)


def test_depths_match_trimesh_fcl_on_shallow_rotated_overlaps() -> None:
    trimesh = pytest.importorskip("trimesh")
    pytest.importorskip("fcl")
    rng = np.random.default_rng(3)
    for _ in range(20):
        size = rng.uniform(0.3, 1.5, (2, 3))
        a = H.obj("a", size[0].tolist(), [0, 0, 0], yaw_deg=float(rng.uniform(0, 90)))
        b = H.obj("b", size[1].tolist(), [0, 0, 0], yaw_deg=float(rng.uniform(0, 90)))
        layout = parse_layout(H.room(H.rect(8, 8), [a, b]))
        # slide b along x until it barely overlaps a
        boxes = layout.boxes
        sep = sat_separation(boxes.subset([0]), boxes.subset([1]))[0]
        shift = -sep + 1.5 * (layout.sizes[0].max() + layout.sizes[1].max())
        b["pos"] = [shift, 0, 0]
        for step in np.linspace(0, 1, 200):
            b["pos"] = [shift * (1 - step), 0, 0]
            layout = parse_layout(H.room(H.rect(8, 8), [a, b]))
            ours = penetrations(layout)
            if ours and ours[0].depth_m > 0.02:
                break
        manager = trimesh.collision.CollisionManager()
        for i in range(2):
            transform = np.eye(4)
            transform[:3, :3], transform[:3, 3] = layout.rotations[i], layout.centers[i]
            manager.add_object(str(i), trimesh.creation.box(extents=layout.sizes[i]), transform=transform)
        _, contacts = manager.in_collision_internal(return_data=True)
        assert max(c.depth for c in contacts) == pytest.approx(ours[0].depth_m, abs=2e-5)


def test_real_rooms_run_and_variants_nest() -> None:
    if not H.REAL_ROOMS.exists():
        pytest.skip(f"shared data absent: {H.REAL_ROOMS}")
    rates = []
    for line in H.REAL_ROOMS.read_text().splitlines():
        layout = parse_layout(json.loads(line))
        evaluation, reward = check_physics(layout, EVALUATION), check_physics(layout, REWARD)
        assert set(evaluation.colliding) <= set(reward.colliding)
        assert np.all((evaluation.outside_fraction >= 0) & (evaluation.outside_fraction <= 1))
        rates.append((evaluation.oob_rate_pct, evaluation.collision_rate_pct))
    obr, cnr = np.mean(rates, axis=0)
    assert len(rates) == 500
    assert 0 < obr < 100 and 0 < cnr < 100


def test_scene_model_rooms_check_like_the_dict() -> None:
    from buildbench.scenes.revis import read_revis
    from buildbench.suites.scenerevis.check import layout_from_scene

    scene = H.room(
        H.L_ROOM,
        [
            H.obj("sofa", [2.0, 0.8, 0.9], [3.5, 0, 1.6], yaw_deg=37),
            H.obj("desk", [1.2, 0.75, 0.6], [2.1, 0, 2.1], yaw_deg=45),
            H.obj("chair", [0.5, 0.9, 0.5], [2.3, 0, 2.2]),
        ],
    )
    from_dict = check_physics(parse_layout(scene), REWARD).to_dict()
    from_model = check_physics(layout_from_scene(read_revis(scene)), REWARD).to_dict()
    assert from_model["colliding"] == from_dict["colliding"]
    assert from_model["out_of_bounds"] == from_dict["out_of_bounds"]
    assert from_model["outside_fraction"] == pytest.approx(from_dict["outside_fraction"], abs=1e-6)


def test_feedback_text_names_the_worst_problems() -> None:
    from buildbench.suites.scenerevis.check import feedback_text

    scene = H.room(
        H.rect(4, 4),
        [
            H.obj("bed", [1.6, 0.5, 2.0], [0, 0, 0]),
            H.obj("chair", [0.5, 0.8, 0.5], [0.9, 0, 0.5]),
            H.obj("wardrobe", [1.0, 2.0, 0.6], [1.8, 0, -1.0]),
        ],
    )
    report = check_physics(parse_layout(scene), REWARD)
    text = feedback_text(report, ["bed", "chair", "wardrobe"])
    assert text.startswith("[Physics] Collisions: 'bed' and 'chair' (depth: 15.0cm)")
    assert "'wardrobe' (" in text and "% outside)" in text
    clean = H.room(H.rect(4, 4), [H.obj("bed", [1.6, 0.5, 2.0], [0, 0, 0])])
    assert feedback_text(check_physics(parse_layout(clean), REWARD), ["bed"]) == ""
