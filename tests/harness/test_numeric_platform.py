"""The CPU class recorded in run manifests and used to key the snapshots' exact bits."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from buildbench.harness.runner import versions
from buildbench.numeric_platform import numeric_platform


def test_the_cpu_class_names_machine_vendor_and_simd_level() -> None:
    machine, vendor, level = numeric_platform().split(" ")
    assert machine and vendor and level
    assert versions()["cpu"] == numeric_platform()


def test_a_value_recorded_on_any_class_matches(platform_bits: Callable[..., bool]) -> None:
    assert platform_bits({"other class": 1, "third class": 2}, 2, "x", here="this class")


def test_a_class_recorded_with_another_value_fails(platform_bits: Callable[..., bool]) -> None:
    with pytest.raises(AssertionError, match="recorded on this CPU class"):
        platform_bits({"this class": 1, "other class": 2}, 3, "x", here="this class")


def test_an_unrecorded_class_says_so_and_leaves_the_comparison_to_the_caller(
    platform_bits: Callable[..., bool],
) -> None:
    with pytest.warns(UserWarning, match="no exact value recorded for this CPU class"):
        assert not platform_bits({"other class": 1}, 3, "x", here="this class")
