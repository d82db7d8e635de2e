"""The exact weld analysis takes every sum in one fixed order, so numpy and the C tick loop agree bit for bit.

``stress.WeldNetwork.weld_wrenches`` never calls BLAS (whose rounding depends on the machine's kernel):
its subtree and sparse sums are numpy's ``add.reduceat`` (the first value plus the pairwise sum of the
rest), its dense sums numpy's ``sum`` (zero plus the pairwise sum). ``_reference`` spells that order out
in scalar Python, and ``_welds.c`` (``Kernel.loads``) repeats it; inputs over twelve orders of magnitude
make any other order show in the last bits.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.library import Workbench
from buildbench.suites.buildarena.physics import native, welds
from buildbench.suites.buildarena.physics.simulation import Simulation
from buildbench.suites.buildarena.physics.stress import RowSums, WeldNetwork, stack, weld_network


def _pairwise(a: list[float]) -> float:
    """numpy's pairwise summation (``pairwise_sum`` of its loops), without the sum's initial zero."""
    n = len(a)
    if n < 8:
        res = 0.0
        for x in a:
            res += x
        return res
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for x in a[i:]:
            res += x
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a[:half]) + _pairwise(a[half:])


def _segment(a: list[float]) -> float:
    return a[0] + _pairwise(a[1:]) if len(a) > 1 else a[0]


def _cross(a: list[float], f: list[float]) -> list[float]:
    return [a[(i + 1) % 3] * f[(i + 2) % 3] - a[(i + 2) % 3] * f[(i + 1) % 3] for i in range(3)]


def _row_sums(m: RowSums, x: list[float]) -> dict[int, float]:
    ends = [*m.starts.tolist()[1:], m.values.size]
    return {int(row): _segment([float(m.values[k]) * x[int(m.columns[k])] for k in range(start, end)])
            for row, start, end in zip(m.rows.tolist(), m.starts.tolist(), ends, strict=True)}


def _reference(net: WeldNetwork, own: np.ndarray) -> np.ndarray:
    """``net.weld_wrenches(own)`` in scalar Python, every operation in its documented order."""
    rows = own.tolist()
    out = [[0.0] * 6 for _ in range(net.welds.size)]
    ends = [*net.subtree_starts.tolist()[1:], net.subtree_nodes.size]
    for e, (start, end) in enumerate(zip(net.subtree_starts.tolist(), ends, strict=True)):
        nodes = net.subtree_nodes[start:end].tolist()
        sub = [_segment([rows[k][col] for k in nodes]) for col in range(6)]
        sign, lever = float(net.signs[e]), _cross(net.levers[e].tolist(), sub[3:])
        out[e] = [sub[3 + i] * sign for i in range(3)] + [(sub[i] + lever[i]) * sign for i in range(3)]
    for part in net.loops:
        flat = [v for row in out[part.tree] for v in row]
        right = [0.0] * part.inverse.shape[0]
        for row, value in _row_sums(part.weighted, flat).items():
            right[row] = value
        loops = [0.0 + _pairwise([float(a) * b for a, b in zip(line, right, strict=True)]) for line in part.inverse]
        for row, value in _row_sums(part.give_up, loops).items():
            flat[row] = flat[row] - value
        first = part.tree.start
        for k in range(part.tree.stop - first):
            out[first + k] = flat[6 * k : 6 * k + 6]
        for k in range(part.rows.stop - part.rows.start):
            out[part.rows.start + k] = loops[6 * k : 6 * k + 6]
    return np.array(out)


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


def _wild(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Numbers over twelve orders of magnitude, signs mixed: sums in another order round differently."""
    return rng.normal(size=shape) * 10.0 ** rng.uniform(-6, 6, size=shape)


@pytest.mark.parametrize("sizes", [[(12, 3)], [(5, 0), (9, 2), (3, 1)], [(130, 24)], [(130, 24), (8, 2)], [(2, 0)]])
def test_the_analysis_takes_every_sum_in_its_documented_order(sizes: list[tuple[int, int]]) -> None:
    rng = np.random.default_rng(len(sizes) + sum(n for n, _ in sizes))
    net = stack([_network(rng, n, loops) for n, loops in sizes])
    for _ in range(5):
        own = _wild(rng, (net.nodes, 6))
        assert net.weld_wrenches(own).tobytes() == _reference(net, own).tobytes()


def _broken(task: str, seconds: float) -> Callable[[], Simulation]:
    def make() -> Simulation:
        sim = simulation(designs.build(designs.REFERENCE[task]()), task)
        sim.step(round(seconds / sim._tick_s))
        return sim
    return make


def _heated_engine_with_a_winch() -> Simulation:
    """Lift Lv.1's engine with two blocks joined by a winch: rope loads on the nodes beside the cannon's."""
    bench = Workbench()
    for op, params in [("start", {}),
                       ("attach_block_to", {"base_block": 1, "face": "A", "new_block": "Water Cannon"}),
                       ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Torch"}),
                       ("twist_block", {"block_id": 3, "angle": 270}),
                       ("attach_block_to", {"base_block": 1, "face": "B", "new_block": "Small Wooden Block"}),
                       ("attach_block_to", {"base_block": 1, "face": "D", "new_block": "Small Wooden Block"}),
                       ("connect_blocks", {"block_a": 4, "face_a": "A", "block_b": 5, "face_b": "A",
                                           "connector": "Winch"})]:
        assert bench.call(op, params).ok
    return simulation(bench.machine, "lift-1")


# Loops (support), thrust (lift-3's cannons), several groups after welds broke (support-3 past 2.6 s), rope loads
# with thrust (a winch beside a cannon).
CASES: dict[str, Callable[[], Simulation]] = {
    "winch": _heated_engine_with_a_winch,
    "support-1": lambda: simulation(designs.build(designs.REFERENCE["support-1"]()), "support-1"),
    "support-3": lambda: simulation(designs.build(designs.REFERENCE["support-3"]()), "support-3"),
    "lift-3": lambda: simulation(designs.build(designs.REFERENCE["lift-3"]()), "lift-3"),
    "support-3 broken": _broken("support-3", 3.0),
}


@pytest.mark.skipif(isinstance(native._loaded(), str), reason="the C tick loop is not built here")
@pytest.mark.parametrize("case", list(CASES))
def test_the_c_analysis_is_numpys_bit_for_bit(case: str) -> None:
    sim = CASES[case]()
    sim._response.prepare(sim.compiled)
    analysis = sim.compiled.analysis
    assert analysis is not None
    if case.endswith("broken"):
        assert len(analysis.spans) > 1
    kernel = native.kernel(sim)
    rng = np.random.default_rng(11)
    nodes, groups, cannons = analysis.bodies.size, len(analysis.spans), analysis.cannon_nodes.size
    for trial in range(40):
        world = _wild(rng, (nodes, 6))
        turns = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0].reshape(9) for _ in range(groups)])
        thrust = _wild(rng, (cannons,)) if trial % 2 else np.zeros(cannons)
        if trial == 7:
            world[nodes - 1, 4] = np.nan  # not the root: a weld lies beyond every other node
        # Rope ends on any node, a cannon's among them, one node twice (merged as numpy merges them).
        ends = rng.choice(nodes, size=min(trial % 3, len(sim.compiled.ropes) * 2))
        if ends.size and cannons and trial % 4 == 1:
            ends[0] = analysis.cannon_nodes[0]
        rope_loads = _wild(rng, (ends.size, 6))
        ropes = tuple((int(node), load) for node, load in zip(ends, rope_loads, strict=True))
        expected = welds._magnitudes(analysis, welds._own(analysis, (world, turns, thrust, ropes)))
        got = np.empty_like(expected)
        kernel.loads(np.concatenate([world.reshape(-1), turns.reshape(-1), thrust]), ends.astype(np.int64),
                     rope_loads.reshape(-1), got)
        if trial == 7:  # NaN spreads through the same rows (its sign bit is not a result)
            assert np.array_equal(np.isnan(got), np.isnan(expected)) and np.isnan(got).any()
            assert np.array_equal(got, expected, equal_nan=True)
        else:
            assert got.tobytes() == expected.tobytes(), trial


def test_the_lag_in_place_is_the_plain_lag() -> None:
    rng = np.random.default_rng(3)
    state, loads = rng.uniform(0, 10, size=(40, 2)), rng.uniform(0, 10, size=(40, 2))
    response = welds._WeldResponse(0.37, np.zeros((40, 2)), state=state.copy())
    response._follow_load(loads.copy())
    assert response.state.tobytes() == (state + 0.37 * (loads - state)).tobytes()
