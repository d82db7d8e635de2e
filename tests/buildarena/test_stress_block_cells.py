"""The weld analysis reads a loop part's matrices only where their 6×6 blocks may be nonzero
(``stress._block_cells``, ``RowSums.among``): the entries must be exactly those a scan of the whole
matrix finds (``RowSums.of``), exact zeros inside a block left out as there."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.suites.buildarena.physics.stress import RowSums, _block_cells


def _same(a: RowSums, b: RowSums) -> None:
    assert a.size == b.size
    for name in ("rows", "starts", "columns", "values"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("seed", range(12))
def test_block_cells_find_what_a_scan_finds(seed: int) -> None:
    rng = np.random.default_rng(seed)
    block_rows, block_columns = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    taken = rng.random((block_rows, block_columns)) < rng.uniform(0.1, 0.9)
    major, minor = np.nonzero(taken)  # sorted by block row, then block column
    dense = np.zeros((6 * block_rows, 6 * block_columns))
    blocks = rng.normal(size=(major.size, 6, 6))
    blocks[rng.random(blocks.shape) < 0.3] = 0.0  # zeros inside a block are no entries
    blocks[rng.random(blocks.shape) < 0.05] = -0.0
    for k, (i, j) in enumerate(zip(major.tolist(), minor.tolist(), strict=True)):
        dense[6 * i : 6 * i + 6, 6 * j : 6 * j + 6] = blocks[k]
    cells = _block_cells(taken)
    assert cells.size == 36 * major.size
    _same(RowSums.among(dense, cells), RowSums.of(dense))
    _same(RowSums.among(dense.T, _block_cells(taken.T)), RowSums.of(dense.T))
