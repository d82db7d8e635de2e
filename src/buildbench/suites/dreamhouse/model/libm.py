"""Elementwise trigonometry through the C library (Python's :mod:`math`), not numpy's ufuncs.

numpy picks a float64 ``sin``/``cos``/``arctan``/``arcsin``/``arctan2`` kernel by CPU at run
time: on AVX-512 machines (numpy's X86_V4 level) it calls Intel's SVML, elsewhere its own SIMD
code or the C library, and these round differently in the last bit. A roof rafter's stored
rotation then depended on the machine that generated the house. :mod:`math` calls the
platform's libm for every value, one code path per machine whatever its vector width; on this
build's CPUs it gives the same bits as numpy's non-SVML path, so houses generated here keep
their bits. The arrays these helpers see are small (a house's sloped members, a validator's
member groups), so a Python-level loop costs little.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Num = float | np.ndarray


def _map1(fn: Callable[[float], float], x: Num) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    values = a.ravel().tolist()
    try:
        out = np.fromiter(map(fn, values), dtype=np.float64, count=a.size)
    except ValueError:  # math refuses an infinite sin/cos argument (or asin beyond 1); numpy gives NaN
        out = np.fromiter(map(_or_nan(fn), values), dtype=np.float64, count=a.size)
    return out.reshape(a.shape)


def _or_nan(fn: Callable[[float], float]) -> Callable[[float], float]:
    def safe(v: float) -> float:
        try:
            return fn(v)
        except ValueError:
            return math.nan

    return safe


def sin(x: Num) -> np.ndarray:
    """``sin`` of each element (radians), same shape."""
    return _map1(math.sin, x)


def cos(x: Num) -> np.ndarray:
    """``cos`` of each element (radians), same shape."""
    return _map1(math.cos, x)


def arctan(x: Num) -> np.ndarray:
    """``atan`` of each element, same shape."""
    return _map1(math.atan, x)


def arcsin(x: Num) -> np.ndarray:
    """``asin`` of each element (each must lie in [-1, 1]: NaN otherwise, as numpy gives), same shape."""
    return _map1(math.asin, x)


def arctan2(y: Num, x: Num) -> np.ndarray:
    """``atan2(y, x)`` of each broadcast pair, the broadcast shape."""
    yb, xb = np.broadcast_arrays(np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = map(math.atan2, yb.ravel().tolist(), xb.ravel().tolist())
    return np.fromiter(out, dtype=np.float64, count=yb.size).reshape(yb.shape)
