"""Box meshes, surface sampling and sample allocation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from buildbench.geometry import Boxes, TriangleMesh, allocate_samples, box_mesh, sample_surface

GEOMETRY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def some_boxes(seed: int, n: int = 4) -> Boxes:
    rng = np.random.default_rng(seed)
    return Boxes(
        rng.normal(size=(n, 3)),
        rng.uniform(0.1, 2.0, (n, 3)),
        Rotation.random(n, random_state=seed).as_matrix(),
    )


def test_box_mesh_is_closed_with_outward_normals() -> None:
    boxes = some_boxes(1)
    mesh = box_mesh(boxes)
    assert mesh.vertices.shape == (32, 3) and mesh.faces.shape == (48, 3)
    owner = np.arange(48) // 12
    centroids = mesh.triangles().mean(axis=1)
    outward = np.einsum("ij,ij->i", mesh.face_normals(), centroids - boxes.centers[owner])
    assert np.all(outward > 0)
    h = boxes.half_extents
    surface = 8 * (h[:, 0] * h[:, 1] + h[:, 1] * h[:, 2] + h[:, 0] * h[:, 2])
    np.testing.assert_allclose(np.bincount(owner, mesh.face_areas()), surface)
    # Every edge is shared by exactly two triangles, in opposite directions (closed, oriented).
    edges = np.concatenate([mesh.faces[:, [0, 1]], mesh.faces[:, [1, 2]], mesh.faces[:, [2, 0]]])
    assert len({tuple(e) for e in edges.tolist()}) == len(edges)
    assert {tuple(e) for e in edges.tolist()} == {tuple(e) for e in edges[:, ::-1].tolist()}


@GEOMETRY_SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_samples_lie_on_the_surface_and_repeat_by_seed(seed: int) -> None:
    boxes = some_boxes(seed % 1000, n=2)
    mesh = box_mesh(boxes)
    first = sample_surface(mesh, 500, np.random.default_rng(seed))
    again = sample_surface(mesh, 500, np.random.default_rng(seed))
    np.testing.assert_array_equal(first.points, again.points)
    owner = first.face_index // 12
    local = np.einsum("nji,nj->ni", boxes.rotations[owner], first.points - boxes.centers[owner])
    ratio = np.abs(local) / boxes.half_extents[owner]
    assert np.all(ratio <= 1 + 1e-9)
    np.testing.assert_allclose(ratio.max(axis=1), 1.0, atol=1e-9)


def test_sampling_is_area_weighted() -> None:
    # A 4 x 1 x 1 box: the four long faces hold 16 of 18 square metres.
    box = Boxes([[0, 0, 0]], [[2.0, 0.5, 0.5]], [np.eye(3)])
    samples = sample_surface(box_mesh(box), 40_000, np.random.default_rng(7))
    on_end_caps = np.isclose(np.abs(samples.points[:, 0]), 2.0).mean()
    assert on_end_caps == pytest.approx(2 / 18, abs=0.01)
    # Uniform within a face: the x coordinate on the long faces is uniform on [-2, 2].
    long_face = samples.points[~np.isclose(np.abs(samples.points[:, 0]), 2.0), 0]
    assert np.histogram(long_face, bins=4, range=(-2, 2))[0] / len(long_face) == pytest.approx(
        [0.25] * 4, abs=0.01
    )


def test_degenerate_and_empty_meshes() -> None:
    flat = box_mesh(Boxes([[1, 2, 3]], [[0, 0, 0]], [np.eye(3)]))
    pts = sample_surface(flat, 10, np.random.default_rng(0)).points
    np.testing.assert_allclose(pts, np.tile([1, 2, 3], (10, 1)))
    empty = TriangleMesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64))
    assert sample_surface(empty, 0, np.random.default_rng(0)).points.shape == (0, 3)
    with pytest.raises(ValueError, match="no triangles"):
        sample_surface(empty, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="face indices"):
        TriangleMesh(np.zeros((3, 3)), [[0, 1, 3]])


@GEOMETRY_SETTINGS
@given(
    areas=st.lists(st.floats(0.0, 100.0), min_size=1, max_size=12),
    total=st.integers(0, 20_000),
    lo=st.integers(0, 300),
    extra=st.one_of(st.none(), st.integers(0, 5000)),
)
def test_allocation_properties(areas: list[float], total: int, lo: int, extra: int | None) -> None:
    hi = None if extra is None else lo + extra
    counts = allocate_samples(areas, total, lo, hi)
    n = len(areas)
    assert counts.dtype == np.int64 and len(counts) == n
    assert np.all(counts >= lo)
    if hi is not None:
        assert np.all(counts <= hi)
    cap = np.inf if hi is None else hi
    weights = np.array(areas)
    counted = weights >= 1e-12 * weights.max() if weights.max() > 0 else np.ones(n, dtype=bool)
    weights = np.where(counted, weights, 0.0)
    if n * lo >= total:
        assert np.all(counts == lo)
    else:
        # Objects with (effectively) zero area stay at the minimum while others have area.
        most = np.where(counted, cap, lo).sum()
        assert counts.sum() == min(total, most)
    # Larger area never gets fewer points (up to one for rounding).
    order = np.argsort(weights, kind="stable")
    assert np.all(np.diff(counts[order]) >= -1)


def test_bim_edit_budget() -> None:
    areas = [10.0, 1.0, 0.01, 50.0, 5.0]
    counts = allocate_samples(areas, total=16_384, per_object_min=256, per_object_max=4096)
    assert counts.sum() == 16_384
    assert counts[3] == 4096 and counts[2] == 256
    assert np.all((counts >= 256) & (counts <= 4096))
    assert allocate_samples([3.0], 16_384, 256, 4096).tolist() == [4096]
    assert allocate_samples([1.0] * 100, 16_384, 256, 4096).tolist() == [256] * 100
    # Proportional first, clamped after: the small object keeps its share, the budget is
    # not refilled.
    plain = allocate_samples([10.0, 1.0], 16_384, 256, 4096, redistribute=False)
    assert plain.tolist() == [4096, round(16_384 / 11)]
    assert allocate_samples([10.0, 1.0], 16_384, 256, 4096).tolist() == [4096, 4096]
    assert allocate_samples([1.0, 1e-6], 1000, 256, 4096, redistribute=False).tolist() == [1000, 256]
    with pytest.raises(ValueError, match="object 1 must be finite"):
        allocate_samples([1.0, np.nan], 10)
