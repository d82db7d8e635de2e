"""Voxelisation and voxel IoU against a brute-force point-in-box test on every voxel centre."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from buildbench.geometry import (
    Boxes,
    grid_for_bounds,
    obb_iou,
    occupancy_iou,
    voxel_iou,
    voxelize_boxes,
    voxelize_points,
)

GEOMETRY_SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None)


@st.composite
def small_scenes(draw: st.DrawFn) -> Boxes:
    """Up to 6 boxes of arbitrary pose within a 3 m cube (some axis-aligned, some flat)."""
    n = draw(st.integers(0, 6))
    if n == 0:
        return Boxes.empty()
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rots = Rotation.random(n, random_state=int(rng.integers(2**31))).as_matrix().reshape(n, 3, 3)
    rots[rng.random(n) < 0.3] = np.eye(3)
    halves = rng.uniform(0.0, 0.8, (n, 3)) * (rng.random((n, 3)) > 0.1)
    return Boxes(rng.uniform(0, 3, (n, 3)), halves, rots)


def brute_occupancy(boxes: Boxes, centers: np.ndarray) -> np.ndarray:
    flat = centers.reshape(-1, 3)
    if len(boxes) == 0:
        return np.zeros(centers.shape[:-1], dtype=bool)
    return boxes.contains_points(flat).any(axis=0).reshape(centers.shape[:-1])


@GEOMETRY_SETTINGS
@given(a=small_scenes(), b=small_scenes(), pitch=st.sampled_from([0.1, 0.17, 0.25]))
def test_voxel_iou_equals_brute_force(a: Boxes, b: Boxes, pitch: float) -> None:
    both = Boxes.concatenate([a, b])
    lo, hi = both.aabbs() if len(both) else (np.zeros((1, 3)), np.zeros((1, 3)))
    grid = grid_for_bounds(lo.min(axis=0), hi.max(axis=0), pitch)
    centers = grid.centers()
    occ_a, occ_b = brute_occupancy(a, centers), brute_occupancy(b, centers)
    np.testing.assert_array_equal(voxelize_boxes(a, grid=grid).occupied, occ_a)
    np.testing.assert_array_equal(voxelize_boxes(b, grid=grid).occupied, occ_b)
    union = np.count_nonzero(occ_a | occ_b)
    expected = 1.0 if union == 0 else np.count_nonzero(occ_a & occ_b) / union
    assert voxel_iou(a, b, pitch) == pytest.approx(expected, abs=1e-15)


def test_grid_is_pitch_aligned_and_covers_bounds() -> None:
    grid = grid_for_bounds([0.03, -0.26, 1.0], [0.31, 0.26, 1.0], 0.1)
    np.testing.assert_allclose(grid.origin, [0.0, -0.3, 1.0])
    assert grid.shape == (4, 6, 1)
    assert np.all(grid.upper >= [0.31, 0.26, 1.0])
    assert grid.size == 24


def test_fine_voxel_iou_approaches_exact_iou() -> None:
    rot = Rotation.from_euler("xyz", [0.3, 0.5, -0.2]).as_matrix()
    a = Boxes([[0, 0, 0]], [[1.0, 0.6, 0.4]], [rot])
    b = Boxes([[0.3, 0.2, 0.1]], [[0.8, 0.8, 0.5]], [np.eye(3)])
    assert voxel_iou(a, b, 0.02) == pytest.approx(obb_iou(a, b)[0], abs=0.01)


def test_axis_aligned_box_occupies_exact_voxel_count() -> None:
    box = Boxes.from_aabbs([[0, 0, 0]], [[1.0, 0.5, 0.3]])
    occ = voxelize_boxes(box, pitch=0.1)
    assert occ.count == 10 * 5 * 3
    assert occ.volume == pytest.approx(0.15)


def test_points_voxelize_and_clip() -> None:
    grid = grid_for_bounds([0, 0, 0], [1, 1, 1], 0.5)
    occ = voxelize_points([[0.1, 0.1, 0.1], [0.9, 0.2, 0.7], [0.2, 0.1, 0.3], [5, 5, 5]], grid=grid)
    assert occ.count == 2
    assert occ.occupied[0, 0, 0] and occ.occupied[1, 0, 1]
    assert voxelize_points(np.zeros((0, 3)), pitch=0.1).count == 0


def test_empty_and_errors() -> None:
    assert voxel_iou(Boxes.empty(), Boxes.empty(), 0.1) == 1.0
    a = Boxes.from_aabbs([[0, 0, 0]], [[1, 1, 1]])
    assert voxel_iou(a, Boxes.empty(), 0.1) == 0.0
    with pytest.raises(ValueError, match="exceeds max_voxels"):
        voxel_iou(a, Boxes.from_aabbs([[999, 999, 999]], [[1000, 1000, 1000]]), 0.01)
    with pytest.raises(ValueError, match="exceeds max_voxels=1,000"):
        voxelize_boxes(a, pitch=0.05, max_voxels=1000)
    with pytest.raises(ValueError, match="pitch must be a positive"):
        voxelize_boxes(a, pitch=0.0)
    with pytest.raises(ValueError, match="exactly one of pitch and grid"):
        voxelize_boxes(a)
    with pytest.raises(ValueError, match="point 1 is not finite"):
        voxelize_points([[0, 0, 0], [np.nan, 0, 0]], pitch=0.1)
    other = voxelize_boxes(a, pitch=0.2)
    with pytest.raises(ValueError, match="grids differ"):
        occupancy_iou(voxelize_boxes(a, pitch=0.1), other)
