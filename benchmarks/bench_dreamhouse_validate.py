"""DreamHouse validator: all tests on a 1,548-member structure (the dataset's largest size).

The structure is the tests' hand-built compliant frame tiled to exactly 1,548 members
(``tests/dreamhouse/check_frames.py``; the generator is not assumed). Each timed call
builds the :class:`Structure` from plain arrays and validates it, so no derived data is
cached between calls. The baseline is the same validator with its sort-and-sweep
contact detection swapped for the naive all-pairs test (an n x n numpy broadcast),
timed in the same run.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from unittest import mock

import numpy as np
from _common import Figure, median_time

from buildbench.suites.dreamhouse.check import context as check_context
from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.model import Structure

MEMBERS = 1548
TARGET_S = 0.025  # issue #3: validate a 1,548-member structure (all tests) in <= 25 ms


def _frames() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "tests" / "dreamhouse" / "check_frames.py"
    spec = importlib.util.spec_from_file_location("dreamhouse_check_frames", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _all_pairs(lo: np.ndarray, hi: np.ndarray, tol_m: float, max_pairs: int) -> check_context.Pairs:
    """Naive contact detection: every pair's gap, an n x n x 3 array."""
    gap = np.maximum(0.0, np.maximum(lo[:, None], lo[None]) - np.minimum(hi[:, None], hi[None]))
    i, j = np.nonzero(np.triu((gap <= tol_m).all(axis=2), k=1))
    return check_context.Pairs(i, j, gap[i, j])


def _cpu_median(fn: Callable[[], object], repeat: int = 21) -> float:
    """Median process CPU seconds of ``fn()``: less sensitive than wall time to other load on the machine."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def run() -> list[Figure]:
    """Validate under both profiles, ours beside the all-pairs baseline."""
    big = _frames().tiled(MEMBERS)
    names, sizes, mats = big.names, big.sizes_m.copy(), big.matrices.copy()
    figures = []
    for profile in ("paper", "released"):

        def ours(profile: str = profile) -> None:
            validate(Structure(names, sizes, mats), profile)

        def naive(profile: str = profile) -> None:
            with mock.patch.object(check_context, "sweep_pairs", _all_pairs):
                validate(Structure(names, sizes, mats), profile)

        report = validate(Structure(names, sizes, mats), profile)
        with mock.patch.object(check_context, "sweep_pairs", _all_pairs):
            same = validate(Structure(names, sizes, mats), profile).to_json() == report.to_json()
        figures.append(
            Figure(
                name=f"dreamhouse validate {MEMBERS} members ({profile}, all tests)",
                seconds=median_time(ours, repeat=21, warmup=3),
                baseline="same validator, all-pairs contact detection",
                baseline_seconds=median_time(naive, repeat=7, warmup=1),
                target_seconds=TARGET_S,
                extra={
                    "cpu_seconds": _cpu_median(ours),
                    "tests": len(report.results),
                    "passed": report.passed,
                    "baseline_agrees": same,
                },
            )
        )
    return figures
