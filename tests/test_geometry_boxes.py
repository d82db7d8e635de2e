"""Boxes, exact overlap (SAT), distance and intersection volume against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.spatial.transform import Rotation

from buildbench.geometry import (
    BOX_CORNER_SIGNS,
    BOX_EDGES,
    Boxes,
    apply_to_points,
    make_transform,
    obb_distance,
    obb_intersection_volume,
    obb_iou,
    obb_iou_matrix,
    obb_overlaps,
    pair_overlaps,
    sat_separation,
)

GEOMETRY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@st.composite
def box_pairs(draw: st.DrawFn) -> tuple[Boxes, Boxes]:
    """Two single boxes, near each other, with sizes that may be zero on some axes and
    rotations that are often exactly axis-aligned or 90-degree yaws."""

    def one() -> tuple[list[float], list[float], np.ndarray]:
        c = [draw(st.floats(-1.5, 1.5)) for _ in range(3)]
        h = [draw(st.sampled_from([0.0, 0.3, draw(st.floats(0.05, 1.2))])) for _ in range(3)]
        kind = draw(st.sampled_from(["eye", "yaw", "random"]))
        if kind == "eye":
            rot = np.eye(3)
        elif kind == "yaw":
            rot = Rotation.from_euler("z", draw(st.floats(0, 360)), degrees=True).as_matrix()
        else:
            q = draw(
                st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda v: np.linalg.norm(v) > 0.1)
            )
            rot = Rotation.from_quat(q).as_matrix()
        return c, h, rot

    (ca, ha, ra), (cb, hb, rb) = one(), one()
    return Boxes([ca], [ha], [ra]), Boxes([cb], [hb], [rb])


def lp_depth(a: Boxes, b: Boxes) -> float:
    """Largest ``s`` such that some point lies ``s`` inside all 12 slabs of two single boxes.

    Independent of the separating-axis code: the boxes intersect exactly when ``s >= 0``.
    """
    rows, rhs = [], []
    for box in (a, b):
        rot, c, h = box.rotations[0], box.centers[0], box.half_extents[0]
        for axis in range(3):
            for sign in (1.0, -1.0):
                normal = sign * rot[:, axis]
                rows.append([*normal, 1.0])
                rhs.append(h[axis] + normal @ c)
    res = linprog([0, 0, 0, -1.0], A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(None, None)] * 4)
    assert res.status == 0, res.message
    return float(res.x[3])


def exact_distance(a: Boxes, b: Boxes) -> float:
    """Distance of two boxes as a bounded least-squares problem over both boxes' local
    coordinates: min |(ca + Ra u) - (cb + Rb v)| with |u| <= ha, |v| <= hb. Convex, so the
    solver's optimum is the true distance (python-fcl's GJK answered 1.204 for two
    axis-aligned boxes 0.9 apart, so it cannot be the reference)."""
    from scipy.optimize import lsq_linear

    matrix = np.hstack([a.rotations[0], -b.rotations[0]])
    target = b.centers[0] - a.centers[0]
    half = np.concatenate([a.half_extents[0], b.half_extents[0]])
    solution = lsq_linear(matrix, target, bounds=(-half, half), tol=1e-12)
    return float(np.linalg.norm(matrix @ solution.x - target))


def monte_carlo_volume(a: Boxes, b: Boxes, n: int, seed: int) -> tuple[float, float]:
    """Intersection volume estimate and its standard error, sampling a's bounds."""
    lo, hi = a.aabbs()
    pts = np.random.default_rng(seed).uniform(lo[0], hi[0], (n, 3))
    inside = a.contains_points(pts)[0] & b.contains_points(pts)[0]
    box_volume = float(np.prod(hi[0] - lo[0]))
    p = inside.mean()
    return p * box_volume, np.sqrt(max(p * (1 - p), 1.0 / n) / n) * box_volume


# --- the Boxes container ---------------------------------------------------------------


def test_corners_edges_and_bounds() -> None:
    rot = Rotation.from_euler("xyz", [0.4, -0.3, 1.1]).as_matrix()
    boxes = Boxes([[1.0, 2.0, 3.0]], [[0.5, 1.0, 2.0]], [rot])
    corners = boxes.corners()[0]
    local = (corners - [1, 2, 3]) @ rot
    np.testing.assert_allclose(np.abs(local), np.broadcast_to([0.5, 1.0, 2.0], (8, 3)), atol=1e-12)
    lengths = np.linalg.norm(corners[BOX_EDGES[:, 0]] - corners[BOX_EDGES[:, 1]], axis=1)
    np.testing.assert_allclose(np.sort(lengths), np.repeat([1.0, 2.0, 4.0], 4), atol=1e-12)
    lo, hi = boxes.aabbs()
    np.testing.assert_allclose(lo[0], corners.min(axis=0), atol=1e-12)
    np.testing.assert_allclose(hi[0], corners.max(axis=0), atol=1e-12)
    assert boxes.volumes()[0] == pytest.approx(8.0)
    # The box frame maps local corner offsets to the world corners, and back.
    offsets = BOX_CORNER_SIGNS * [0.5, 1.0, 2.0]
    np.testing.assert_allclose(apply_to_points(boxes.matrices()[0], offsets), corners, atol=1e-12)
    np.testing.assert_allclose(boxes.to_local(corners)[0], offsets, atol=1e-12)
    with pytest.raises(ValueError, match="read-only"):
        boxes.centers[0, 0] = 5.0


def test_from_matrices_reads_scale_into_extents() -> None:
    rot = Rotation.from_euler("xyz", [0.1, 0.2, 0.3]).as_matrix()
    world = make_transform([1, 2, 3], rot, [2.0, 3.0, -1.0])
    boxes = Boxes.from_matrices(world[None], [[1.0, 1.0, 0.2]])
    np.testing.assert_allclose(boxes.half_extents, [[1.0, 1.5, 0.1]])
    np.testing.assert_allclose(boxes.centers, [[1, 2, 3]])
    # The mesh's corners land where the world matrix sends the unit-cube corners.
    unit = np.array([[x, y, z] for z in (-0.5, 0.5) for y in (-0.5, 0.5) for x in (-0.5, 0.5)]) * [1, 1, 0.2]
    mapped = unit @ world[:3, :3].T + world[:3, 3]
    np.testing.assert_allclose(np.sort(boxes.corners()[0], axis=0), np.sort(mapped, axis=0), atol=1e-12)


def test_from_aabbs_subset_and_contains() -> None:
    boxes = Boxes.from_aabbs([[0, 0, 0], [2, 2, 2]], [[1, 1, 1], [3, 4, 5]])
    inside = boxes.contains_points([[0.5, 0.5, 0.5], [1.0, 1.0, 1.0], [2.5, 3.9, 4.9], [1.5, 1.5, 1.5]])
    assert inside.tolist() == [[True, True, False, False], [False, False, True, False]]
    assert len(boxes.subset([1, 1, 0])) == 3
    np.testing.assert_allclose(boxes.subset(np.array([False, True])).centers, [[2.5, 3.0, 3.5]])
    assert len(Boxes.concatenate([boxes, Boxes.empty(), boxes])) == 4


@pytest.mark.parametrize(
    ("centers", "halves", "message"),
    [
        ([[0, 0, 0], [np.nan, 0, 0]], [[1, 1, 1], [1, 1, 1]], "box 1 has non-finite centers"),
        ([[0, 0, 0], [0, 0, 0]], [[1, 1, 1], [1, -1, 1]], "box 1 has a negative half extent"),
        ([[0, 0, 0]], [[1, 1, np.inf]], "box 0 has non-finite half_extents"),
    ],
)
def test_bad_boxes_name_the_index(centers: list, halves: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Boxes(np.array(centers), np.array(halves), np.broadcast_to(np.eye(3), (len(centers), 3, 3)))


def test_non_rotation_rejected() -> None:
    with pytest.raises(ValueError, match=r"rotations\[0\] is not a proper rotation"):
        Boxes([[0, 0, 0]], [[1, 1, 1]], [np.diag([1.0, 1.0, -1.0])])
    with pytest.raises(ValueError, match=r"rotations\[0\] is not a proper rotation"):
        Boxes([[0, 0, 0]], [[1, 1, 1]], [2 * np.eye(3)])
    with pytest.raises(ValueError, match="maxs .* < mins"):
        Boxes.from_aabbs([[0, 0, 0]], [[1, -1, 1]])


# --- overlap -----------------------------------------------------------------------------


@GEOMETRY_SETTINGS
@given(pair=box_pairs())
def test_sat_agrees_with_linear_program(pair: tuple[Boxes, Boxes]) -> None:
    a, b = pair
    depth = lp_depth(a, b)
    if abs(depth) < 1e-7:
        return  # touching within rounding: either answer is right
    assert bool(obb_overlaps(a, b)[0]) == (depth > 0)
    assert bool(obb_overlaps(b, a)[0]) == (depth > 0)


@GEOMETRY_SETTINGS
@given(pair=box_pairs(), tol=st.floats(0.0, 0.5))
def test_tolerance_means_faces_grown_by_half_tol(pair: tuple[Boxes, Boxes], tol: float) -> None:
    a, b = pair
    depth = lp_depth(a.inflated(tol / 2), b.inflated(tol / 2))
    if abs(depth) > 1e-7:
        assert bool(obb_overlaps(a, b, tol)[0]) == (depth > 0)
    distance = obb_distance(a, b)[0]
    if distance < tol - 1e-9:
        assert obb_overlaps(a, b, tol)[0]
    if obb_overlaps(a, b, tol)[0]:
        assert distance <= np.sqrt(3) * tol + 1e-9


@GEOMETRY_SETTINGS
@given(pair=box_pairs())
def test_distance_matches_exact_and_bounds(pair: tuple[Boxes, Boxes]) -> None:
    a, b = pair
    distance = obb_distance(a, b)[0]
    separation = sat_separation(a, b)[0]
    assert distance >= max(separation, 0.0) - 1e-9
    assert (distance == 0) == (separation <= 0)
    # No two corners are closer than the boxes themselves.
    corner_gap = np.linalg.norm(a.corners()[0][:, None] - b.corners()[0][None], axis=2).min()
    assert distance <= corner_gap + 1e-9
    if distance > 0 and np.all(a.half_extents > 0.01) and np.all(b.half_extents > 0.01):
        assert distance == pytest.approx(exact_distance(a, b), abs=1e-6)


def test_overlap_edge_cases() -> None:
    unit = Boxes.from_aabbs([[0, 0, 0]], [[1, 1, 1]])
    touching = Boxes.from_aabbs([[1, 0, 0]], [[2, 1, 1]])
    gap = Boxes.from_aabbs([[1.01, 0, 0]], [[2, 1, 1]])
    assert obb_overlaps(unit, touching)[0]
    assert not obb_overlaps(unit, gap)[0]
    assert obb_overlaps(unit, gap, tol=0.02)[0]
    assert sat_separation(unit, gap)[0] == pytest.approx(0.01)
    assert obb_distance(unit, gap)[0] == pytest.approx(0.01)
    point = Boxes([[0.5, 0.5, 0.5]], [[0, 0, 0]], [np.eye(3)])
    assert obb_overlaps(unit, point)[0]
    # Edge-to-edge: a cube turned 45 degrees about z points a vertical edge along +x; one
    # turned 45 degrees about y points an edge along y back at it. Only the cross-product
    # axis x separates them.
    ra = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    rb = Rotation.from_euler("y", 45, degrees=True).as_matrix()
    cx = np.sqrt(2)
    near = Boxes([[0, 0, 0], [0, 0, 0]], [[0.5, 0.5, 0.5]] * 2, [ra, ra])
    far = Boxes([[cx + 0.01, 0, 0], [cx - 0.01, 0, 0]], [[0.5, 0.5, 0.5]] * 2, [rb, rb])
    assert obb_overlaps(near, far).tolist() == [False, True]
    assert obb_distance(near, far)[0] == pytest.approx(0.01, rel=1e-9)
    assert sat_separation(near, far)[0] == pytest.approx(0.01, rel=1e-9)
    assert sat_separation(near, far)[1] == pytest.approx(-0.01, rel=1e-9)
    assert len(sat_separation(Boxes.empty(), Boxes.empty())) == 0
    with pytest.raises(ValueError, match="equal length"):
        obb_overlaps(unit, Boxes.empty())
    with pytest.raises(ValueError, match="tol must be"):
        obb_overlaps(unit, unit, tol=-1)
    with pytest.raises(ValueError, match="pair indices"):
        pair_overlaps(unit, [[0, 1]])


# --- intersection volume and IoU ---------------------------------------------------------


@GEOMETRY_SETTINGS
@given(pair=box_pairs(), seed=st.integers(0, 2**16))
def test_intersection_volume_matches_monte_carlo(pair: tuple[Boxes, Boxes], seed: int) -> None:
    a, b = pair
    exact = obb_intersection_volume(a, b)[0]
    estimate, stderr = monte_carlo_volume(a, b, 40_000, seed)
    assert abs(exact - estimate) <= 5 * stderr + 1e-9
    assert exact <= min(a.volumes()[0], b.volumes()[0]) + 1e-9
    assert obb_intersection_volume(b, a)[0] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    iou = obb_iou(a, b)[0]
    assert 0.0 <= iou <= 1.0 + 1e-12


def test_iou_known_values() -> None:
    cube = Boxes([[0, 0, 0]], [[1, 1, 1]], [np.eye(3)])
    turned = Boxes([[0, 0, 0]], [[1, 1, 1]], [Rotation.from_euler("z", 45, degrees=True).as_matrix()])
    # A square and the same square turned 45 degrees meet in a regular octagon of area
    # 8 (sqrt 2 - 1) for half-size 1; the prism is 2 tall.
    octagon = 8 * (np.sqrt(2) - 1) * 2
    assert obb_intersection_volume(cube, turned)[0] == pytest.approx(octagon, rel=1e-9)
    assert obb_iou(cube, turned)[0] == pytest.approx(octagon / (16 - octagon), rel=1e-9)
    assert obb_iou(cube, cube)[0] == pytest.approx(1.0)
    assert obb_iou(turned, turned)[0] == pytest.approx(1.0)
    # A small tilted box wholly inside, and one poking a single corner through a face.
    tilt = Rotation.from_euler("xyz", [0.3, 0.4, 0.5]).as_matrix()
    inner = Boxes([[0.1, -0.2, 0.1]], [[0.3, 0.2, 0.1]], [tilt])
    assert obb_intersection_volume(cube, inner)[0] == pytest.approx(inner.volumes()[0], rel=1e-9)
    assert obb_intersection_volume(inner, cube)[0] == pytest.approx(inner.volumes()[0], rel=1e-9)
    corner_in = Boxes([[1.0 + 0.5 * np.sqrt(3) - 0.1, 0, 0]], [[0.5, 0.5, 0.5]], [_corner_first()])
    # Its tip, 0.1 deep, is the corner tetrahedron cut off by a plane normal to the cube
    # diagonal: three perpendicular edges of h * sqrt(3), so volume (sqrt(3) / 2) h^3.
    assert obb_intersection_volume(cube, corner_in)[0] == pytest.approx(np.sqrt(3) / 2 * 0.1**3, rel=1e-9)
    half = Boxes.from_aabbs([[0, -1, -1]], [[1, 1, 1]])
    assert obb_iou(cube, half)[0] == pytest.approx(0.5)
    flat = Boxes([[0, 0, 0]], [[1, 1, 0]], [np.eye(3)])
    assert obb_iou(flat, flat)[0] == 0.0
    shifted = Boxes.from_aabbs([[1, -1, -1]], [[3, 1, 1]])
    assert obb_iou(cube, shifted)[0] == 0.0


def _corner_first() -> np.ndarray:
    """A rotation that turns the cube diagonal (-1, -1, -1) to point along -x."""
    diagonal = np.array([-1.0, -1.0, -1.0]) / np.sqrt(3)
    return Rotation.align_vectors([[-1.0, 0, 0]], [diagonal])[0].as_matrix()


def test_iou_matrix_matches_pairwise() -> None:
    rng = np.random.default_rng(11)
    a = Boxes(
        rng.uniform(0, 2, (6, 3)), rng.uniform(0.2, 1, (6, 3)), Rotation.random(6, random_state=1).as_matrix()
    )
    b = Boxes(
        rng.uniform(0, 2, (4, 3)), rng.uniform(0.2, 1, (4, 3)), Rotation.random(4, random_state=2).as_matrix()
    )
    matrix = obb_iou_matrix(a, b)
    assert matrix.shape == (6, 4)
    for i in range(6):
        for j in range(4):
            assert matrix[i, j] == pytest.approx(obb_iou(a.subset([i]), b.subset([j]))[0], abs=1e-12)
    assert obb_iou_matrix(Boxes.empty(), b).shape == (0, 4)
