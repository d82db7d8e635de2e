"""``stress.weld_network`` builds, byte for byte, what the construction it replaced built.

The construction was made faster by exact rewrites only (index arithmetic instead of dense scans, the
same products and sums in the same order); ``weld_network_reference.py`` keeps the former code. Every
field of the result (dtypes, shapes, bytes, C order) must be equal on: every group the reference designs
analyse (the Support designs through all their weld breaks), random braced groups with and without
axis-aligned geometry (exact zeros, signed zeros), odd groups (one weld, chains, stars, parallel welds,
dense loops) and the 509-block braced deck, which takes the large-group path of the bounds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.physics import groups, stress
from buildbench.suites.buildarena.physics.stress import Loops, RowSums, WeldNetwork

from . import weld_network_reference as reference

pytestmark = pytest.mark.xdist_group("buildarena-weld-network-identity")

Arguments = tuple[np.ndarray, ...]


def _same_array(a: np.ndarray, b: np.ndarray, where: str) -> None:
    assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
    assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != {b.dtype}"
    assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
    assert a.flags.c_contiguous == b.flags.c_contiguous, f"{where}: C order"
    assert a.tobytes() == b.tobytes(), f"{where}: bytes differ"


def _same_row_sums(a: RowSums, b: RowSums, where: str) -> None:
    assert a.size == b.size, where
    for name in ("rows", "starts", "columns", "values"):
        _same_array(getattr(a, name), getattr(b, name), f"{where}.{name}")


def _same_network(a: WeldNetwork, b: WeldNetwork) -> None:
    for name in ("welds", "subtree_nodes", "subtree_starts", "signs", "levers", "arms", "bounds"):
        _same_array(getattr(a, name), getattr(b, name), name)
    assert len(a.loops) == len(b.loops)
    for k, (x, y) in enumerate(zip(a.loops, b.loops, strict=True)):
        assert isinstance(x, Loops) and (x.tree, x.rows) == (y.tree, y.rows), f"loops[{k}]"
        _same_row_sums(x.weighted, y.weighted, f"loops[{k}].weighted")
        _same_row_sums(x.give_up, y.give_up, f"loops[{k}].give_up")
        _same_array(x.inverse, y.inverse, f"loops[{k}].inverse")


def _check(args: Arguments) -> None:
    _same_network(stress.weld_network(*args), reference.weld_network(*args))


def _captured(monkeypatch: pytest.MonkeyPatch, machine: Any, task: str, run: bool) -> list[Arguments]:
    """The arguments of every group analysis that a simulation of ``machine`` makes (its start only, or its
    whole run with every weld break's new groups)."""
    calls: list[Arguments] = []
    plain = groups.weld_network

    def record(*args: np.ndarray) -> WeldNetwork:
        calls.append(tuple(np.array(a, copy=True) for a in args))
        return plain(*args)

    with monkeypatch.context() as patch:
        patch.setattr(groups, "weld_network", record)
        sim = simulation(machine, task)
        if run:
            sim.run()
        else:
            sim.reset()
    assert calls
    return calls


@pytest.mark.parametrize("task", list(designs.REFERENCE))
def test_reference_designs_groups(monkeypatch: pytest.MonkeyPatch, task: str) -> None:
    breaks = task.startswith("support")  # their welds break: each break's new groups are analysed
    calls = _captured(monkeypatch, designs.build(designs.REFERENCE[task]()), task, run=breaks)
    if breaks:
        assert len(calls) > 1
    for args in calls:
        _check(args)


def _group(rng: np.random.Generator, parents: np.ndarray, extra: list[tuple[int, int]], grid: bool) -> Arguments:
    """A group of ``parents``'s tree plus the welds ``extra``, its welds in random order (tree welds among the
    loop welds), either end second; ``grid`` puts centres and anchors on half-metre points (exact zeros)."""
    n = parents.size
    centres = np.round(rng.normal(scale=2.0, size=(n, 3)) * 2) / 2 if grid else rng.normal(scale=3.0, size=(n, 3))
    pairs = [(int(parents[k]), k) for k in range(1, n)] + extra
    order = rng.permutation(len(pairs))
    ends = np.array(pairs)[order]
    flip = rng.random(len(pairs)) < 0.5
    ends[flip] = ends[flip][:, ::-1]
    anchors = (centres[ends[:, 0]] + centres[ends[:, 1]]) / 2
    if not grid:
        anchors = anchors + rng.normal(scale=0.2, size=anchors.shape)
    brace = rng.random(len(pairs)) < 0.3
    stiffness = np.where(brace, 0.25, 1.0)[:, None] * np.array([1.0, 0.04])
    position = np.empty(len(pairs), dtype=int)
    position[order] = np.arange(len(pairs))  # pair p sits at weld position[p]
    tree_welds = np.concatenate([[-1], position[: n - 1]])
    origin = centres.mean(axis=0) if grid else rng.normal(size=3)
    return centres, parents, tree_welds, origin, ends, anchors, stiffness


def _loops(rng: np.random.Generator, n: int, count: int) -> list[tuple[int, int]]:
    """``count`` welds between random pairs of distinct nodes (a pair may repeat: parallel welds)."""
    return [tuple(sorted(rng.choice(n, size=2, replace=False).tolist())) for _ in range(count)]  # type: ignore[misc]


def _random_groups() -> Iterator[Arguments]:
    rng = np.random.default_rng(24)
    for k in range(60):
        n = int(rng.integers(2, 70))
        parents = np.array([-1] + [int(rng.integers(max(0, j - 8), j)) for j in range(1, n)])
        yield _group(rng, parents, _loops(rng, n, int(rng.integers(0, 25))), grid=k % 2 == 0)


def _odd_groups() -> Iterator[Arguments]:
    rng = np.random.default_rng(7)
    single = np.array([-1, 0])
    yield _group(rng, single, [], grid=True)  # one weld
    yield _group(rng, single, [(0, 1)], grid=True)  # two parallel welds
    yield _group(rng, single, [(0, 1)] * 4, grid=False)
    chain = np.arange(-1, 39)
    yield _group(rng, chain, [], grid=True)
    yield _group(rng, chain, [(0, 39)], grid=True)  # one loop through every tree weld
    yield _group(rng, chain, [(5, 5)], grid=True)  # a loop that crosses no tree weld (no block of M)
    yield _group(rng, chain, [(j, j + 3) for j in range(0, 36, 2)], grid=False)
    star = np.array([-1] + [0] * 20)
    yield _group(rng, star, [(j, j + 1) for j in range(1, 20)], grid=True)
    complete = np.array([-1, 0, 0, 1, 1, 2])
    yield _group(rng, complete, [(a, b) for a in range(6) for b in range(a + 1, 6) if complete[b] != a], grid=False)
    yield _group(rng, np.array([-1, 0, 1, 2, 3, 4, 5, 6]), _loops(rng, 8, 40), grid=True)  # more loops than tree


@pytest.mark.parametrize("args", list(_random_groups()) + list(_odd_groups()))
def test_random_and_odd_groups(args: Arguments) -> None:
    _check(args)


@pytest.mark.parametrize("per_side", [5, 69])  # 43 blocks; 509 blocks: the large path of the loop bounds
def test_braced_decks(monkeypatch: pytest.MonkeyPatch, per_side: int) -> None:
    machine = designs.build(designs.Design(f"braced deck {per_side}", designs.beam_bridge(per_side)))
    calls = _captured(monkeypatch, machine, "lift-1", run=False)
    if per_side == 69:
        welds = calls[0][4].shape[0]
        loops = welds - calls[0][0].shape[0] + 1
        assert 36 * loops * (welds - loops) >= stress._TIGHT_FROM  # its bounds take the large path
    for args in calls:
        _check(args)


@pytest.mark.parametrize(
    "change",
    ["tree weld of another pair", "parent after child", "root with a parent", "missing tree weld"],
)
def test_same_refusals(change: str) -> None:
    rng = np.random.default_rng(3)
    centres, parents, tree_welds, origin, ends, anchors, stiffness = _group(
        rng, np.array([-1, 0, 1, 1, 2]), [(0, 4)], grid=True
    )
    parents, tree_welds = parents.copy(), tree_welds.copy()
    if change == "tree weld of another pair":
        tree_welds[2], tree_welds[3] = tree_welds[3], tree_welds[2]
    elif change == "parent after child":
        parents[2] = 3
    elif change == "root with a parent":
        parents[0] = 1
    else:
        tree_welds[4] = -1
    args = (centres, parents, tree_welds, origin, ends, anchors, stiffness)
    with pytest.raises(ValueError) as ours:
        stress.weld_network(*args)
    with pytest.raises(ValueError) as theirs:
        reference.weld_network(*args)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("seed", range(8))
def test_row_sums_of_blocks_finds_what_a_scan_finds(seed: int) -> None:
    """``RowSums.of_blocks`` (the blocks as given) has exactly the entries a scan of the whole dense matrix finds
    (``RowSums.of``): exact and signed zeros inside a block left out, blocks given in any order, transposed too."""
    rng = np.random.default_rng(seed)
    block_rows, block_columns = int(rng.integers(1, 9)), int(rng.integers(1, 7))
    taken = rng.random((block_rows, block_columns)) < rng.uniform(0.1, 0.9)
    major, minor = np.nonzero(taken)
    blocks = rng.normal(size=(major.size, 6, 6))
    blocks[rng.random(blocks.shape) < 0.3] = 0.0
    blocks[rng.random(blocks.shape) < 0.05] = -0.0
    dense = np.zeros((block_rows, 6, block_columns, 6))
    dense[major, :, minor, :] = blocks
    dense = dense.reshape(6 * block_rows, 6 * block_columns)
    shuffled = rng.permutation(major.size)
    ours = RowSums.of_blocks(dense.shape[0], dense.shape[1], major[shuffled], minor[shuffled], blocks[shuffled])
    _same_row_sums(ours, RowSums.of(dense), "of_blocks")
    flipped = RowSums.of_blocks(dense.shape[1], dense.shape[0], minor[shuffled], major[shuffled],
                                blocks[shuffled].transpose(0, 2, 1))
    _same_row_sums(flipped, RowSums.of(np.ascontiguousarray(dense.T)), "of_blocks, transposed")
