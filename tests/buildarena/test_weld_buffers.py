"""The exact weld analysis written into kept buffers gives, bit for bit, what the plain products give."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.suites.buildarena.physics import welds
from buildbench.suites.buildarena.physics.groups import WeldAnalysis
from buildbench.suites.buildarena.physics.stress import WeldNetwork, stack, weld_network


def _network(rng: np.random.Generator, n: int, loops: int) -> WeldNetwork:
    """A random tree of ``n`` nodes and ``loops`` welds that close loops."""
    parents = np.array([-1] + [int(rng.integers(max(0, k - 4), k)) for k in range(1, n)])
    centres = rng.normal(scale=3.0, size=(n, 3))
    pairs = {(int(parents[k]), k) for k in range(1, n)}
    order = [(int(parents[k]), k) for k in range(1, n)]
    while len(order) < n - 1 + loops:
        a, b = sorted(rng.choice(n, size=2, replace=False).tolist())
        if (a, b) not in pairs:
            pairs.add((a, b))
            order.append((a, b))
    ends = np.array(order)
    anchors = (centres[ends[:, 0]] + centres[ends[:, 1]]) / 2 + rng.normal(scale=0.2, size=(len(order), 3))
    stiffness = np.column_stack([rng.uniform(0.25, 1.0, len(order)), rng.uniform(0.02, 0.1, len(order))])
    return weld_network(centres, parents, np.array([-1] + list(range(n - 1))), rng.normal(size=3), ends, anchors,
                        stiffness)


def _plain(net: WeldNetwork, own: np.ndarray) -> np.ndarray:
    """The weld wrenches as the analysis was first written: every product a new array."""
    out = np.empty((net.welds.size, 6))
    tree = out[: net.transfer.shape[0]]
    np.einsum("eij,ej->ei", net.transfer, net.beyond @ own, out=tree)
    for part in net.loops:
        loops = part.weighted @ tree[part.tree].reshape(-1)
        if part.inverse is not None:
            loops = part.inverse @ loops
        tree[part.tree] -= (part.give_up @ loops).reshape(-1, 6)
        out[part.rows] = loops.reshape(-1, 6)
    return out


@pytest.mark.parametrize(("sizes", "sparse"), [([(12, 3)], False), ([(5, 0), (9, 2), (3, 1)], False),
                                               ([(130, 24)], True), ([(130, 24), (8, 2)], True)])
def test_the_buffered_analysis_is_the_plain_one_bit_for_bit(sizes: list[tuple[int, int]], sparse: bool) -> None:
    rng = np.random.default_rng(len(sizes) + 7 * sparse)
    net = stack([_network(rng, n, loops) for n, loops in sizes])
    assert any(not isinstance(part.weighted, np.ndarray) for part in net.loops) == sparse
    nodes = net.beyond.shape[1]
    analysis = WeldAnalysis(net, np.arange(nodes), ((100, slice(0, nodes)),), np.arange(net.welds.size),
                            np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros((0, 3)))
    work = welds._Work(analysis)
    for _ in range(30):  # the same buffers tick after tick: nothing of an earlier tick stays in them
        world = rng.normal(size=(nodes, 6)) * 10.0 ** rng.uniform(-6, 6, size=(nodes, 1))
        turn = np.linalg.qr(rng.normal(size=(3, 3)))[0].reshape(1, 9)
        inputs = (world, turn, np.zeros(0), ())
        own = (world.reshape(-1, 3) @ turn[0].reshape(3, 3)).reshape(-1, 6)
        squares = _plain(net, own).reshape(-1, 2, 3) ** 2
        expected = np.sqrt((squares[:, :, 0] + squares[:, :, 2]) + squares[:, :, 1])
        buffered = welds._magnitudes(analysis, welds._own(analysis, inputs, work), work)
        assert buffered.tobytes() == expected.tobytes()
        assert welds._magnitudes(analysis, welds._own(analysis, inputs)).tobytes() == expected.tobytes()


def test_the_lag_in_place_is_the_plain_lag() -> None:
    rng = np.random.default_rng(3)
    state, loads = rng.uniform(0, 10, size=(40, 2)), rng.uniform(0, 10, size=(40, 2))
    response = welds._WeldResponse(0.37, np.zeros((40, 2)), state=state.copy())
    response._follow_load(loads.copy())
    assert response.state.tobytes() == (state + 0.37 * (loads - state)).tobytes()

