"""Sort-and-sweep contact pairs against an all-pairs brute force."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from buildbench.geometry import AABBs, Boxes, aabb_pairs, contact_pairs, pair_overlaps

GEOMETRY_SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None)


@st.composite
def layouts(draw: st.DrawFn) -> Boxes:
    """Up to 40 boxes in a small region. Half the time on a 0.5 m lattice with quarter-metre
    sizes and axis-aligned or quarter-turn rotations (exact touching and sort ties);
    otherwise arbitrary floats and rotations. Some sizes are zero."""
    n = draw(st.integers(0, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    lattice = draw(st.booleans())
    rng = np.random.default_rng(seed)
    if n == 0:
        return Boxes.empty()
    if lattice:
        centers = 0.5 * rng.integers(0, 8, (n, 3))
        halves = 0.25 * rng.integers(0, 5, (n, 3))
        yaw = Rotation.from_euler("z", 90 * rng.integers(0, 4, (n, 1)), degrees=True)
        rots = yaw.as_matrix().reshape(n, 3, 3)
    else:
        centers = rng.uniform(0, 4, (n, 3))
        halves = rng.uniform(0, 1.2, (n, 3)) * (rng.random((n, 3)) > 0.1)
        rots = Rotation.random(n, random_state=seed % 2**31).as_matrix().reshape(n, 3, 3)
    return Boxes(centers.reshape(n, 3), halves.reshape(n, 3), rots)


def brute_force_pairs(boxes: Boxes, tol: float) -> np.ndarray:
    """Every pair tested with the exact overlap test, in i < j lexicographic order."""
    every = np.array(list(combinations(range(len(boxes)), 2)), dtype=np.int64).reshape(-1, 2)
    if len(every) == 0:
        return every
    return every[pair_overlaps(boxes, every, tol)]


def brute_force_aabb_pairs(bounds: AABBs) -> list[tuple[int, int]]:
    lo, hi = bounds
    return [
        (i, j)
        for i, j in combinations(range(len(lo)), 2)
        if np.all(lo[i] <= hi[j]) and np.all(lo[j] <= hi[i])
    ]


@GEOMETRY_SETTINGS
@given(boxes=layouts(), tol=st.sampled_from([0.0, 1e-6, 0.05, 0.3]))
def test_contact_pairs_equal_brute_force(boxes: Boxes, tol: float) -> None:
    pairs = contact_pairs(boxes, tol)
    assert pairs.dtype == np.int64 and pairs.shape[1] == 2
    np.testing.assert_array_equal(pairs, brute_force_pairs(boxes, tol))


@GEOMETRY_SETTINGS
@given(boxes=layouts())
def test_broad_phase_equals_brute_force_aabb(boxes: Boxes) -> None:
    bounds = boxes.aabbs()
    assert [tuple(p) for p in aabb_pairs(bounds).tolist()] == brute_force_aabb_pairs(bounds)


def test_touching_frame_members() -> None:
    # Three studs standing on a sill: each stud touches the sill, not each other.
    mins = np.array([[0, 0, 0], [0.0, 0, 0.1], [1.9, 0, 0.1], [3.9, 0, 0.1]])
    maxs = np.array([[4, 0.1, 0.1], [0.1, 0.1, 2.5], [2.0, 0.1, 2.5], [4.0, 0.1, 2.5]])
    # Faces that meet exactly are at the mercy of rounding; a nanometre tolerance is how
    # callers ask for "touching".
    assert contact_pairs(Boxes.from_aabbs(mins, maxs), tol=1e-9).tolist() == [[0, 1], [0, 2], [0, 3]]
    # Lower the sill's top by 0.05 m: only a tolerance of at least that bridges the gap.
    lowered = maxs.copy()
    lowered[0, 2] -= 0.05
    boxes = Boxes.from_aabbs(mins, lowered)
    assert contact_pairs(boxes, tol=0.04).tolist() == []
    assert contact_pairs(boxes, tol=0.06).tolist() == [[0, 1], [0, 2], [0, 3]]


def test_empty_single_and_zero_size() -> None:
    assert contact_pairs(Boxes.empty()).shape == (0, 2)
    assert contact_pairs(Boxes.from_aabbs([[0, 0, 0]], [[1, 1, 1]])).shape == (0, 2)
    points = Boxes(
        [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [3, 3, 3]], np.zeros((3, 3)), np.broadcast_to(np.eye(3), (3, 3, 3))
    )
    assert contact_pairs(points).tolist() == [[0, 1]]


def test_exact_flag_keeps_broad_phase_pairs() -> None:
    # Two thin diagonal planks whose bounds overlap although the planks do not.
    rot = Rotation.from_euler("z", 45, degrees=True).as_matrix()
    boxes = Boxes([[0, 0, 0], [1.2, -1.2, 0]], [[1.5, 0.05, 0.05]] * 2, [rot, rot])
    assert contact_pairs(boxes, exact=False).tolist() == [[0, 1]]
    assert contact_pairs(boxes).tolist() == []


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="box 2 has non-finite centers"):
        Boxes([[0, 0, 0], [1, 1, 1], [np.nan, 0, 0]], np.ones((3, 3)), np.broadcast_to(np.eye(3), (3, 3, 3)))
    with pytest.raises(ValueError, match="box 1 has invalid bounds"):
        aabb_pairs(AABBs(np.array([[0.0, 0, 0], [np.nan, 0, 0]]), np.ones((2, 3))))
    with pytest.raises(ValueError, match="tol must be"):
        contact_pairs(Boxes.empty(), tol=float("nan"))


def test_large_batch_runs_without_quadratic_memory() -> None:
    # 100,000 small boxes scattered in a 200 m cube: an n x n matrix would need 10 GB.
    rng = np.random.default_rng(5)
    n = 100_000
    boxes = Boxes(
        rng.uniform(0, 200, (n, 3)),
        rng.uniform(0.1, 0.5, (n, 3)),
        Rotation.random(n, random_state=6).as_matrix(),
    )
    pairs = contact_pairs(boxes, tol=0.01)
    assert pairs.shape[1] == 2 and np.all(pairs[:, 0] < pairs[:, 1])
    assert np.all(np.diff(pairs[:, 0]) >= 0)
    # Spot-check completeness on a region against brute force.
    region = np.flatnonzero(np.all(boxes.centers < 25, axis=1))
    local = brute_force_pairs(boxes.subset(region), 0.01)
    found = {tuple(p) for p in pairs.tolist()}
    assert {(int(region[i]), int(region[j])) for i, j in local.tolist()} <= found


@pytest.mark.parametrize("n", [299, 300])
def test_frame_like_scene_equals_brute_force(n: int) -> None:
    """Hundreds of studs, plates many grid cells long and coincident or touching members
    (a timber frame's mix): each pair is reported once, by the cell owning its overlap."""
    rng = np.random.default_rng(n)
    lo = 0.038 * rng.integers(0, 120, (n, 3)).astype(np.float64)
    long_axis = rng.integers(0, 3, n)
    size = np.full((n, 3), 0.038)
    size[np.arange(n), long_axis] = 0.038 * rng.integers(1, 130, n)  # up to ~5 m
    lo[: n // 10] = lo[n // 10 : 2 * (n // 10)]  # coincident lower corners
    hi = lo + size
    bounds = AABBs(lo, hi)
    overlap = np.all((lo[:, None] <= hi[None]) & (lo[None] <= hi[:, None]), axis=2)
    i, j = np.nonzero(np.triu(overlap, k=1))
    np.testing.assert_array_equal(aabb_pairs(bounds), np.stack([i, j], axis=1))
