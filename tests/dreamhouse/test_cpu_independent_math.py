"""DreamHouse arithmetic whose bits could depend on the CPU class stays off the CPU-dispatched paths,
and ``rigid`` is idempotent (structures re-made from their own arrays keep their bits).

numpy sends float64 ``sin``/``cos``/``arctan``/``arcsin``/``arctan2`` to a kernel chosen at run
time (Intel SVML on AVX-512 machines) and ``@`` to BLAS; the generator and the validator use
``model.libm`` (the C library) and fixed-order sums instead. No AVX-512 machine is needed to
guard the named calls: here the generator must make and validate houses with numpy's
transcendental ufuncs, ``np.power``, ``np.matmul``/``np.dot``/``np.einsum`` unavailable (the ``@`` and
``**`` operators cannot be intercepted this way).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.generate import PAPER_DATASET_SIZE, dataset_task_ids, generate_structure
from buildbench.suites.dreamhouse.model import Structure, libm
from buildbench.suites.dreamhouse.model.rigid import orthogonality_error, rigid

_DISPATCHED = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "power", "matmul", "dot", "einsum")


def test_libm_is_the_c_library_elementwise() -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-10.0, 10.0, 500), np.arange(-8, 9) * (math.pi / 4)])
    y = rng.uniform(-1.0, 1.0, x.size)
    assert libm.sin(x).tolist() == [math.sin(v) for v in x.tolist()]
    assert libm.cos(x).tolist() == [math.cos(v) for v in x.tolist()]
    assert libm.arctan(x).tolist() == [math.atan(v) for v in x.tolist()]
    assert libm.arcsin(y).tolist() == [math.asin(v) for v in y.tolist()]
    assert libm.power(np.abs(x), 3.0).tolist() == [math.pow(abs(v), 3.0) for v in x.tolist()]
    assert libm.arctan2(y, x).tolist() == [math.atan2(a, b) for a, b in zip(y.tolist(), x.tolist(), strict=True)]
    # Shapes and broadcasting as numpy's ufuncs give them; NaN where numpy gives NaN (math raises).
    assert libm.cos(0.5).shape == () and libm.sin(np.zeros((2, 3))).shape == (2, 3)
    assert libm.arctan2(np.ones((4, 1)), np.ones(3)).shape == (4, 3)
    out = libm.sin(np.array([np.inf, np.nan, 0.0]))
    assert np.isnan(out[:2]).all() and out[2] == 0.0
    assert np.isnan(libm.arcsin(np.array([1.5, -2.0]))).all()
    assert libm.power(np.array([1e200, -1e200, -2.0]), 3.0).tolist() == [np.inf, -np.inf, -8.0]


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


def _near_rotations(n: int, seed: int) -> np.ndarray:
    """4x4 transforms as a submission writes them: random rotations times random (some negative)
    sizes, rounded to 6 decimals; the first tenth sheared far beyond rounding, a few not finite."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    q /= np.sqrt((q * q).sum(axis=1))[:, None]
    w, x, y, z = q.T
    rot = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=1,
    )
    size = rng.uniform(0.03, 5.0, (n, 3)) * np.where(rng.random((n, 3)) < 0.1, -1.0, 1.0)
    m = np.tile(np.eye(4), (n, 1, 1))
    m[:, :3, :3] = np.round(rot * size[:, None, :], 6)
    m[: n // 10, 0, 1] += 0.3
    m[n // 10 : n // 10 + 3, :3, 0] = [[0.0, 0.0, 0.0], [1e300, 0.0, 0.0], [np.inf, 0.0, 0.0]]
    return m


def test_rigid_is_idempotent_on_submission_like_transforms() -> None:
    m = _near_rotations(5000, 11)
    once = rigid(m)
    assert once.tobytes() == rigid(once).tobytes()
    # The rest (not sheared, not degenerate) are rotations to a few ulps.
    snapped = np.ones(len(m), dtype=bool)
    snapped[:503] = False
    assert orthogonality_error(once[snapped, :3, :3]).max() <= 4 * np.finfo(float).eps
    assert np.array_equal(rigid(np.tile(np.eye(4), (2, 1, 1))), np.tile(np.eye(4), (2, 1, 1)))


@pytest.mark.parametrize("k", [1, 7, 9])
def test_structures_remade_from_their_arrays_keep_their_bits(k: int) -> None:
    """Subset, concatenation and ``from_arrays`` run ``rigid`` again: a round trip is byte-exact."""
    ids = dataset_task_ids(PAPER_DATASET_SIZE)
    house = generate_structure(str(ids[3019 * k % len(ids)]), 0)
    for s in (house.structure, house.skin):
        assert rigid(s.matrices).tobytes() == s.matrices.tobytes()
        again = Structure.from_arrays(s.names, s.sizes_m, s.matrices, s.meta)
        assert again.matrices.tobytes() == s.matrices.tobytes()
        half = np.arange(len(s)) % 2 == 0
        joined = s.subset(np.flatnonzero(half)).concat(s.subset(np.flatnonzero(~half)))
        order = np.concatenate([np.flatnonzero(half), np.flatnonzero(~half)])
        assert joined.matrices.tobytes() == s.matrices[order].tobytes()
