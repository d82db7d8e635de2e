"""DreamHouse arithmetic whose bits could depend on the CPU class stays off the CPU-dispatched paths.

numpy sends float64 ``sin``/``cos``/``arctan``/``arcsin``/``arctan2`` to a kernel chosen at run
time (Intel SVML on AVX-512 machines) and ``@`` to BLAS; the generator and the validator use
``model.libm`` (the C library) and fixed-order sums instead. No AVX-512 machine is needed to
guard the named calls: here the generator must make and validate houses with numpy's
transcendental ufuncs, ``np.matmul``/``np.dot``/``np.einsum`` unavailable (the ``@`` operator
cannot be intercepted; the snapshot's cross-class test covers it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.generate import PAPER_DATASET_SIZE, dataset_task_ids, generate_structure
from buildbench.suites.dreamhouse.model import libm

_DISPATCHED = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "matmul", "dot", "einsum")


def test_libm_is_the_c_library_elementwise() -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-10.0, 10.0, 500), np.arange(-8, 9) * (math.pi / 4)])
    y = rng.uniform(-1.0, 1.0, x.size)
    assert libm.sin(x).tolist() == [math.sin(v) for v in x.tolist()]
    assert libm.cos(x).tolist() == [math.cos(v) for v in x.tolist()]
    assert libm.arctan(x).tolist() == [math.atan(v) for v in x.tolist()]
    assert libm.arcsin(y).tolist() == [math.asin(v) for v in y.tolist()]
    assert libm.arctan2(y, x).tolist() == [math.atan2(a, b) for a, b in zip(y.tolist(), x.tolist(), strict=True)]
    # Shapes and broadcasting as numpy's ufuncs give them; NaN where numpy gives NaN (math raises).
    assert libm.cos(0.5).shape == () and libm.sin(np.zeros((2, 3))).shape == (2, 3)
    assert libm.arctan2(np.ones((4, 1)), np.ones(3)).shape == (4, 3)
    out = libm.sin(np.array([np.inf, np.nan, 0.0]))
    assert np.isnan(out[:2]).all() and out[2] == 0.0
    assert np.isnan(libm.arcsin(np.array([1.5, -2.0]))).all()


@pytest.mark.parametrize("k", [0, 5])
def test_houses_generate_and_validate_without_cpu_dispatched_numpy(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = dataset_task_ids(PAPER_DATASET_SIZE)
    tid = str(ids[3019 * k % len(ids)])
    expected = generate_structure(tid, 0)
    reports = {p: validate(expected.structure, p).to_json() for p in ("paper", "released")}

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("a CPU-dispatched numpy float64 kernel was called")

    for name in _DISPATCHED:
        monkeypatch.setattr(np, name, refused)
    house = generate_structure(tid, 0)
    assert house.structure.matrices.tobytes() == expected.structure.matrices.tobytes()
    assert house.skin.matrices.tobytes() == expected.skin.matrices.tobytes()
    assert {p: validate(house.structure, p).to_json() for p in ("paper", "released")} == reports

