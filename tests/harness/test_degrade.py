"""The shared calibration machinery: which parts a degraded agent corrupts at each fraction."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.harness.degrade import DEGRADE_OPTION, Corruption


def test_corrupted_parts_grow_nested_with_the_fraction_and_draws_do_not_depend_on_it():
    runs = [Corruption(40, f, seed=3) for f in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0)]
    assert [int(c.mask.sum()) for c in runs] == [0, 4, 10, 20, 30, 40]
    assert all(set(a.indices) <= set(b.indices) for a, b in zip(runs, runs[1:], strict=False))
    assert all(np.array_equal(c.u, runs[0].u) for c in runs)


def test_the_episode_seed_decides_and_repeats():
    assert np.array_equal(Corruption(20, 0.5, seed=1).indices, Corruption(20, 0.5, seed=1).indices)
    assert not np.array_equal(Corruption(20, 0.5, seed=1).indices, Corruption(20, 0.5, seed=2).indices)


def test_the_fraction_is_bounded_and_defaults_to_the_declared_value():
    with pytest.raises(ValueError, match="outside"):
        Corruption(5, 1.5, seed=0)
    assert DEGRADE_OPTION.default == 0.5
    assert Corruption(0, 1.0, seed=0).indices.size == 0
