"""Elementwise trigonometry through the C library (Python's :mod:`math`), not numpy's ufuncs.

numpy picks a float64 ``sin``/``cos``/``arctan``/``arcsin``/``arctan2``/``power`` kernel by CPU at run
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


def _map1(fn: Callable[[float], float], x: Num, ufunc: Callable[[float], object]) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    return _apply(fn, ufunc, a.ravel().tolist()).reshape(a.shape)


def _apply(fn: Callable[[float], float], ufunc: Callable[[float], object], values: list[float]) -> np.ndarray:
    try:
        return np.fromiter(map(fn, values), dtype=np.float64, count=len(values))
    except (ValueError, OverflowError):
        # math refuses what numpy answers with NaN or an infinity (sin(inf), asin(2), an
        # overflowing pow): those elements take numpy's answer, which no kernel rounds.
        return np.fromiter(map(_or_numpy(fn, ufunc), values), dtype=np.float64, count=len(values))


def _or_numpy(fn: Callable[[float], float], ufunc: Callable[[float], object]) -> Callable[[float], float]:
    def safe(v: float) -> float:
        try:
            return fn(v)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(ufunc(v))  # type: ignore[arg-type]

    return safe


def sin(x: Num) -> np.ndarray:
    """``sin`` of each element (radians), same shape."""
    return _map1(math.sin, x, np.sin)


def cos(x: Num) -> np.ndarray:
    """``cos`` of each element (radians), same shape."""
    return _map1(math.cos, x, np.cos)


def cos_sin(x: Num) -> tuple[np.ndarray, np.ndarray]:
    """``(cos x, sin x)`` of each element, each the shape of ``x`` (one pass over the values)."""
    a = np.asarray(x, dtype=np.float64)
    values = a.ravel().tolist()
    return _apply(math.cos, np.cos, values).reshape(a.shape), _apply(math.sin, np.sin, values).reshape(a.shape)


def arctan(x: Num) -> np.ndarray:
    """``atan`` of each element, same shape."""
    return _map1(math.atan, x, np.arctan)


def arcsin(x: Num) -> np.ndarray:
    """``asin`` of each element (each must lie in [-1, 1]: NaN otherwise, as numpy gives), same shape."""
    return _map1(math.asin, x, np.arcsin)


def power(x: Num, p: float) -> np.ndarray:
    """``x ** p`` of each element for one exponent ``p`` (numpy's ``**`` calls its dispatched ``power``)."""
    return _map1(lambda v: math.pow(v, p), x, lambda v: np.power(v, p))


def arctan2(y: Num, x: Num) -> np.ndarray:
    """``atan2(y, x)`` of each broadcast pair, the broadcast shape."""
    ya, xa = np.asarray(y, dtype=np.float64), np.asarray(x, dtype=np.float64)
    if ya.shape != xa.shape:
        ya, xa = np.broadcast_arrays(ya, xa)
    out = map(math.atan2, ya.ravel().tolist(), xa.ravel().tolist())
    return np.fromiter(out, dtype=np.float64, count=ya.size).reshape(ya.shape)
