"""Hungarian matching against exhaustive search over every partial one-to-one matching."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buildbench.geometry import Assignment, match_max_score, match_min_cost

GEOMETRY_SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None)


@st.composite
def matrices(draw: st.DrawFn, special: tuple[float, ...]) -> np.ndarray:
    """Up to 4 x 5 matrices of small integers (many ties) with some special entries."""
    n, m = draw(st.integers(0, 4)), draw(st.integers(0, 5))
    entry = st.one_of(st.integers(-3, 9).map(float), st.sampled_from(special))
    return np.array(draw(st.lists(st.lists(entry, min_size=m, max_size=m), min_size=n, max_size=n))).reshape(
        n, m
    )


def partial_matchings(n: int, m: int) -> Iterator[list[tuple[int, int]]]:
    """Every set of (row, col) pairs with distinct rows and distinct columns."""

    def extend(row: int, used: frozenset[int]) -> Iterator[list[tuple[int, int]]]:
        if row == n:
            yield []
            return
        yield from extend(row + 1, used)
        for col in range(m):
            if col not in used:
                for rest in extend(row + 1, used | {col}):
                    yield [(row, col), *rest]

    yield from extend(0, frozenset())


def check_structure(result: Assignment, shape: tuple[int, int]) -> None:
    n, m = shape
    assert len(set(result.rows.tolist())) == len(result.rows)
    assert len(set(result.cols.tolist())) == len(result.cols)
    assert sorted([*result.rows.tolist(), *result.unmatched_rows.tolist()]) == list(range(n))
    assert sorted([*result.cols.tolist(), *result.unmatched_cols.tolist()]) == list(range(m))
    assert np.all(np.diff(result.rows) > 0)


@GEOMETRY_SETTINGS
@given(cost=matrices((np.inf, np.nan, -np.inf)), max_cost=st.sampled_from([None, 2.0, 6.0]))
def test_min_cost_equals_exhaustive(cost: np.ndarray, max_cost: float | None) -> None:
    allowed = np.isfinite(cost) & (cost <= (np.inf if max_cost is None else max_cost))
    best = (0, 0.0)  # (size, -total): larger size first, then smaller total
    for matching in partial_matchings(*cost.shape):
        if all(allowed[r, c] for r, c in matching):
            key = (len(matching), -sum(cost[r, c] for r, c in matching))
            best = max(best, key)
    result = match_min_cost(cost, max_cost=max_cost)
    check_structure(result, cost.shape)
    assert all(allowed[r, c] for r, c in zip(result.rows, result.cols, strict=True))
    assert len(result) == best[0]
    assert result.total == pytest.approx(-best[1])
    np.testing.assert_array_equal(result.values, cost[result.rows, result.cols])


@GEOMETRY_SETTINGS
@given(score=matrices((np.nan, 0.0, 0.04, 0.5)), min_score=st.sampled_from([None, 0.05, 3.0]))
def test_max_score_equals_exhaustive(score: np.ndarray, min_score: float | None) -> None:
    allowed = np.isfinite(score) & (score > 0) & (score >= (-np.inf if min_score is None else min_score))
    best = 0.0
    for matching in partial_matchings(*score.shape):
        if all(allowed[r, c] for r, c in matching):
            best = max(best, sum(score[r, c] for r, c in matching))
    result = match_max_score(score, min_score=min_score)
    check_structure(result, score.shape)
    assert all(allowed[r, c] for r, c in zip(result.rows, result.cols, strict=True))
    assert result.total == pytest.approx(best)


def test_iou_threshold_example() -> None:
    iou = np.array([[0.9, 0.04, 0.0], [0.8, 0.03, 0.0]])
    result = match_max_score(iou, min_score=0.05)
    assert result.rows.tolist() == [0] and result.cols.tolist() == [0]
    assert result.unmatched_rows.tolist() == [1]
    assert result.unmatched_cols.tolist() == [1, 2]
    # Without the cut-off the second row takes the 0.03 pair rather than nothing.
    assert match_max_score(iou).cols.tolist() == [0, 1]


def test_min_cost_prefers_more_pairs_then_lower_cost() -> None:
    cost = np.array([[1.0, 100.0], [np.inf, 200.0]])
    both = match_min_cost(cost)
    # Two pairs (cost 201) beat the single cheapest pair (cost 1).
    assert both.rows.tolist() == [0, 1] and both.cols.tolist() == [0, 1]
    assert both.total == pytest.approx(201.0)
    capped = match_min_cost(cost, max_cost=150.0)
    assert capped.rows.tolist() == [0] and capped.cols.tolist() == [0]
    assert capped.unmatched_rows.tolist() == [1] and capped.unmatched_cols.tolist() == [1]


def test_empty_and_bad_shapes() -> None:
    empty = match_min_cost(np.zeros((0, 3)))
    assert len(empty) == 0 and empty.unmatched_cols.tolist() == [0, 1, 2]
    assert len(match_max_score(np.full((2, 2), np.nan))) == 0
    with pytest.raises(ValueError, match="must be 2-D"):
        match_min_cost([1.0, 2.0])
    with pytest.raises(ValueError, match=r"score\[0, 1\] is \+inf"):
        match_max_score([[0.5, np.inf]])
