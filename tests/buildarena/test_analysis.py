"""Trajectory metrics of the released analysers on synthetic paths."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.suites.buildarena.analysis import NEUTRAL, path_quality

T = np.arange(0, 10.04, 0.04)


def _line(end: tuple[float, float, float]) -> np.ndarray:
    return np.outer(T / T[-1], end)


def test_straight_run_to_the_target_is_perfect() -> None:
    m = path_quality(T, _line((10, 10, 0)), (0, 0, 0), (10, 10, 0))
    assert m["max_progress_ratio"] == pytest.approx(1.0)
    assert m["direction_consistency"] == pytest.approx(1.0)
    assert m["lateral_deviation"] == pytest.approx(0.0, abs=1e-9)
    assert m["path_efficiency"] == pytest.approx(0.0, abs=1e-6)
    assert m["final_distance_ratio"] == pytest.approx(0.0, abs=1e-6)
    assert m["backtrack_penalty"] == 0.0


def test_driving_east_is_half_way_and_sideways() -> None:
    m = path_quality(T, _line((10, 0, 0)), (0, 0, 0), (10, 10, 0))
    d = np.hypot(10, 10)
    assert m["max_progress_ratio"] == pytest.approx(10 / np.sqrt(2) / d)
    assert m["direction_consistency"] == pytest.approx(np.cos(np.pi / 4))
    # Lateral distance grows linearly to 10/sqrt(2): its time mean is about half of that, over D.
    assert m["lateral_deviation"] == pytest.approx(10 / np.sqrt(2) / 2 / d, rel=0.01)
    assert m["path_efficiency"] == pytest.approx(np.sqrt(2) - 1, rel=1e-6)


def test_going_back_is_penalised_and_standing_still_is_neutral() -> None:
    out_and_back = np.concatenate([_line((10, 10, 0))[::2], _line((10, 10, 0))[::-2]])
    times = np.arange(len(out_and_back)) * 0.04
    m = path_quality(times, out_and_back, (0, 0, 0), (10, 10, 0))
    assert m["backtrack_penalty"] == pytest.approx(1.0, rel=0.02)
    assert m["final_distance_ratio"] == pytest.approx(1.0, rel=0.02)
    assert path_quality(T[:1], np.zeros((1, 3)), (0, 0, 0), (10, 10, 0)) == NEUTRAL
