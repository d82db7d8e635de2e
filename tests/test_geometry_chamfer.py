"""Chamfer, F-score and Hausdorff against brute-force pairwise distances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from buildbench.geometry import chamfer_distance, nearest_distances, point_set_distances

GEOMETRY_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@st.composite
def clouds(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Two 3-D point sets of 1..60 points; sometimes on a coarse lattice (duplicates, ties)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, m = draw(st.integers(1, 60)), draw(st.integers(1, 60))
    if draw(st.booleans()):
        return 0.5 * rng.integers(0, 4, (n, 3)), 0.5 * rng.integers(0, 4, (m, 3))
    return rng.normal(size=(n, 3)), rng.normal(size=(m, 3)) + rng.normal(size=3)


@GEOMETRY_SETTINGS
@given(pair=clouds(), threshold=st.floats(0.0, 2.0))
def test_metrics_equal_brute_force(pair: tuple[np.ndarray, np.ndarray], threshold: float) -> None:
    a, b = pair
    full = cdist(a, b)
    a_to_b, b_to_a = full.min(axis=1), full.min(axis=0)
    d = point_set_distances(a, b)
    np.testing.assert_allclose(d.a_to_b, a_to_b, atol=1e-12)
    np.testing.assert_allclose(d.b_to_a, b_to_a, atol=1e-12)
    assert d.chamfer() == pytest.approx((a_to_b.mean() + b_to_a.mean()) / 2)
    assert d.chamfer("mean", "sum") == pytest.approx(a_to_b.mean() + b_to_a.mean())
    assert d.chamfer("median", "concat") == pytest.approx(np.median(np.concatenate([a_to_b, b_to_a])))
    assert d.chamfer("median", "average") == pytest.approx((np.median(a_to_b) + np.median(b_to_a)) / 2)
    assert d.hausdorff() == pytest.approx(max(a_to_b.max(), b_to_a.max()))
    precision, recall = np.mean(a_to_b <= threshold), np.mean(b_to_a <= threshold)
    expected = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    assert d.fscore(threshold) == pytest.approx(expected)
    assert chamfer_distance(b, a) == pytest.approx(d.chamfer())


def test_identical_sets_are_perfect() -> None:
    pts = np.random.default_rng(0).normal(size=(500, 3))
    d = point_set_distances(pts, pts[::-1])
    assert d.chamfer() == 0.0 and d.hausdorff() == 0.0 and d.fscore(0.0) == 1.0


def test_empty_sets_are_defined() -> None:
    pts = np.ones((3, 3))
    none = np.zeros((0, 3))
    both_empty = point_set_distances(none, none)
    assert both_empty.chamfer() == 0.0 and both_empty.fscore(0.1) == 1.0 and both_empty.hausdorff() == 0.0
    one_empty = point_set_distances(pts, none)
    assert one_empty.chamfer("median", "concat") == np.inf
    assert one_empty.fscore(0.1) == 0.0 and one_empty.hausdorff() == np.inf
    assert np.all(nearest_distances(pts, none) == np.inf)
    assert len(nearest_distances(none, pts)) == 0


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="point 1 is not finite"):
        point_set_distances([[0, 0, 0], [np.nan, 0, 0]], [[0, 0, 0]])
    with pytest.raises(ValueError, match="dimension 2, expected 3"):
        point_set_distances(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="reduction must be"):
        point_set_distances([[0, 0, 0]], [[1, 1, 1]]).chamfer("max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold must be"):
        point_set_distances([[0, 0, 0]], [[1, 1, 1]]).fscore(-1.0)
