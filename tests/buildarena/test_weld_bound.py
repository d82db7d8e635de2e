"""The weld check's shortcut: the bound on weld loads holds, and putting the exact analysis off changes nothing."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.physics import native, stress, welds
from buildbench.suites.buildarena.physics.groups import WeldAnalysis
from buildbench.suites.buildarena.physics.stress import WeldNetwork, stack, weld_network


def _random_network(rng: np.random.Generator, n: int, extra_welds: int) -> WeldNetwork:
    """A random tree of ``n`` nodes plus ``extra_welds`` welds closing loops, with random anchors and stiffness."""
    parents = np.array([-1] + [int(rng.integers(0, k)) for k in range(1, n)])
    centres = rng.normal(scale=3.0, size=(n, 3))
    pairs = [(int(parents[k]), k) for k in range(1, n)]
    while len(pairs) < min(n - 1 + extra_welds, n * (n - 1) // 2):
        a, b = sorted(rng.choice(n, size=2, replace=False).tolist())
        if (a, b) not in pairs:
            pairs.append((a, b))
    ends = np.array(pairs)
    flip = rng.random(len(pairs)) < 0.5  # either end may be the weld's second block
    ends[flip] = ends[flip][:, ::-1]
    anchors = (centres[ends[:, 0]] + centres[ends[:, 1]]) / 2 + rng.normal(scale=0.2, size=(len(pairs), 3))
    stiffness = np.column_stack([rng.uniform(0.25, 1.0, len(pairs)), rng.uniform(0.02, 0.1, len(pairs))])
    tree_welds = np.array([-1] + list(range(n - 1)))
    return weld_network(centres, parents, tree_welds, rng.normal(size=3), ends, anchors, stiffness)


def _assert_bounds_hold(net: WeldNetwork) -> None:
    """``net.bounds`` against the weld loads' exact worst cases.

    The loads are linear in the nodes' wrenches and ``F``, ``T`` sum the norms of the nodes' torques and
    forces, so the bound holds for every input exactly when it holds for a lone torque or a lone force on
    one node in its worst direction: per weld and node, the largest singular value of each 3×3 block of
    the linear map (torque or force in, force or torque out) against its coefficient.
    """
    probes = np.eye(6 * net.nodes).reshape(-1, net.nodes, 6)
    linear = np.stack([net.weld_wrenches(own) for own in probes], axis=-1)  # (rows, 6, 6n)
    blocks = linear.reshape(-1, 2, 3, net.nodes, 2, 3).transpose(0, 3, 1, 4, 2, 5)  # (rows, n, out, in, 3, 3)
    worst = np.linalg.norm(blocks, ord=2, axis=(-2, -1)).max(axis=1)  # (rows, out, in): in 0 = torque, 1 = force
    coefficients = net.bounds[:, :, ::-1]  # per output row, [[b_F, a_F], [b_T, a_T]]: torque in first
    assert np.all(worst <= coefficients * (1 + 1e-9) + 1e-12)


def _probe(rng: np.random.Generator, nodes: int) -> np.ndarray:
    """Random wrenches on every node, or (as often) one wrench on one node: the bound's sums are then that
    wrench's norms, so a missing term shows."""
    if rng.random() < 0.5:
        return rng.normal(size=(nodes, 6)) * rng.uniform(0.0, 100.0, size=(1, 6))
    own = np.zeros((nodes, 6))
    own[rng.integers(nodes)] = rng.normal(size=6) * rng.uniform(0.0, 100.0, size=6)
    return own


@pytest.mark.parametrize("tight", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_bounds_hold_for_any_node_wrenches(seed: int, tight: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small groups take their loops' bounds on the factors, large ones on the products (``_TIGHT_FROM``): both hold.
    monkeypatch.setattr(stress, "_TIGHT_FROM", 0 if tight else 1 << 62)
    rng = np.random.default_rng(seed)
    nets = [_random_network(rng, int(rng.integers(2, 12)), int(rng.integers(0, 4))) for _ in range(3)]
    net = stack(nets)
    _assert_bounds_hold(net)
    for _ in range(40):
        own = _probe(rng, net.nodes)
        wrenches = net.weld_wrenches(own).reshape(-1, 2, 3)
        magnitudes = np.linalg.norm(wrenches, axis=2)
        torques, forces = np.linalg.norm(own.reshape(-1, 2, 3), axis=2).sum(axis=0)  # F, T of ``bounds``
        bound = net.bounds @ np.array([forces, torques])
        assert np.all(magnitudes <= bound * (1 + 1e-9) + 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_bounds_on_the_products_are_never_looser(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    n, extra = int(rng.integers(8, 40)), int(rng.integers(1, 12))
    monkeypatch.setattr(stress, "_TIGHT_FROM", 1 << 62)
    loose = _random_network(np.random.default_rng(seed), n, extra).bounds
    monkeypatch.setattr(stress, "_TIGHT_FROM", 0)
    tight = _random_network(np.random.default_rng(seed), n, extra).bounds
    assert np.all(tight <= loose * (1 + 1e-6))


def test_a_large_braced_deck_keeps_its_loops_cancellations() -> None:
    # A 223-block braced deck (its Mᵀ·D⁻¹ over ``_TIGHT_FROM``): a weld's load per newton anywhere on the deck
    # is bounded within a few hundredths of its limit (on the factors: about two, measured), and the bound
    # holds for random wrenches on every node.
    machine = designs.build(designs.Design("braced deck", designs.beam_bridge(30)))
    compiled = simulation(machine, "lift-1", duration_s=0.1).compiled
    assert compiled.analysis is not None
    net = compiled.analysis.network
    assert len(net.loops) == 1 and net.loops[0].inverse.shape[0] * 6 * net.tree_rows >= stress._TIGHT_FROM
    limits = np.column_stack([compiled.weld_break_force[compiled.analysis.welds],
                              compiled.weld_break_torque[compiled.analysis.welds]])
    assert (net.bounds[:, :, 0] / limits).max() < 0.1
    _assert_bounds_hold(net)
    rng = np.random.default_rng(7)
    for _ in range(200):
        own = _probe(rng, net.nodes)
        magnitudes = np.linalg.norm(net.weld_wrenches(own).reshape(-1, 2, 3), axis=2)
        torques, forces = np.linalg.norm(own.reshape(-1, 2, 3), axis=2).sum(axis=0)
        assert np.all(magnitudes <= net.bounds @ np.array([forces, torques]) * (1 + 1e-9) + 1e-12)


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    return q * np.sign(np.diag(r))


@pytest.mark.parametrize("seed", range(12))
def test_the_change_since_a_reference_bounds_every_weld_load(seed: int) -> None:
    # A tick's loads over their limits are at most the reference's worst plus the change's share (``_change``),
    # whatever the groups' rotations, the nodes' wrenches and the cannons' thrusts at either tick.
    rng = np.random.default_rng(seed)
    nets = [_random_network(rng, int(rng.integers(2, 9)), int(rng.integers(0, 3))) for _ in range(int(rng.integers(1, 4)))]
    net = stack(nets)
    sizes = [n.nodes for n in nets]
    starts = np.cumsum([0, *sizes])
    nodes = int(starts[-1])
    cannons = rng.choice(nodes, size=int(rng.integers(0, 3)), replace=False)
    axes = np.array([_rotation(rng)[0] for _ in cannons]).reshape(-1, 3)
    analysis = WeldAnalysis(net, np.arange(nodes), tuple((100 + g, slice(int(starts[g]), int(starts[g + 1])))
                                                         for g in range(len(nets))),
                            np.arange(net.welds.size), cannons, np.arange(cannons.size), axes)
    compiled = SimpleNamespace(analysis=analysis, ropes=[], weld_break_force=rng.uniform(50, 500, net.welds.size),
                               weld_break_torque=rng.uniform(5, 50, net.welds.size))
    response = welds._WeldResponse(0.5, np.zeros((net.welds.size, 2)))
    response._follow(compiled)  # type: ignore[arg-type]

    def inputs(scale: float) -> welds._Inputs:
        world = rng.normal(size=(nodes, 6)) * rng.uniform(0.0, scale, size=(nodes, 1))
        turns = np.array([_rotation(rng).reshape(9) for _ in nets])
        return world, turns, rng.uniform(0.0, scale, size=cannons.size), ()

    for _ in range(10):
        reference = inputs(50.0)
        loads = welds._magnitudes(analysis, welds._own(analysis, reference))
        response._refer(reference, loads)
        for _ in range(5):
            tick = inputs(rng.choice([1.0, 50.0]))
            share = welds._magnitudes(analysis, welds._own(analysis, tick)) / response.limits
            assert share.max() <= (response.reference_worst + response._change(tick)) * (1 + 1e-9)


def _outcome(task: str, design: designs.Design) -> tuple[bytes, list[tuple[str, float, float, float]], int]:
    out = simulation(designs.build(design), task).run()
    return out.trajectory.position.tobytes(), [(b.label, b.time_s, b.force_n, b.torque_nm) for b in out.broken], \
        out.steps


@pytest.mark.parametrize("loop", ["python", "native"])
@pytest.mark.parametrize(("task", "skips"), [("lift-2", True), ("lift-3", True), ("transport-1", True), ("transport-3", True),
                                            ("support-1", False), ("deck", True)])
def test_putting_the_exact_analysis_off_changes_nothing(task: str, skips: bool, loop: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Broken welds' forces and times are compared bit for bit: the state is what the tick-by-tick analysis gives.
    # The C loop takes the margin when its kernel is made, and runs its own analysis (``_welds.c``): only the
    # Python loop's calls can be counted.
    if loop == "native" and isinstance(native._loaded(), str):
        pytest.skip(f"no C tick loop here: {native._loaded()}")
    monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if loop == "native" else "0")
    # "deck": a 223-block braced deck dropped onto flat ground (its bounds on the products: ``_TIGHT_FROM``).
    design = designs.Design("braced deck", designs.beam_bridge(30)) if task == "deck" else designs.REFERENCE[task]()
    task = "lift-1" if task == "deck" else task
    exact = welds._magnitudes
    calls = [0]

    def counted(*args: object) -> np.ndarray:
        calls[0] += 1
        return exact(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(welds, "_magnitudes", counted)
    skipping = _outcome(task, design)
    if loop == "python":
        assert (calls[0] < skipping[2]) == skips  # the bound held on most ticks of a quiet run
    monkeypatch.setattr(welds, "_BOUND_MARGIN", -1.0)  # the bound never holds: the exact analysis every tick
    calls[0] = 0
    assert _outcome(task, design) == skipping
    if loop == "python":
        assert calls[0] >= skipping[2]  # (a tick that fails the bound may be analysed on its own first)


def test_the_plain_sums_of_squares_are_einsums() -> None:
    # Drag and weld magnitudes add three squares as np.einsum did in the recorded runs (snapshots): first and
    # third, then second; the cargo hold's three products in order. Should numpy's einsum kernel change, this says so before the snapshots do.
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(20000, 6)) * 10.0 ** rng.uniform(-6, 6, size=(20000, 1))
    for shaped, einsum in ((rows[:, :3], np.einsum("bi,bi->b", rows[:, :3], rows[:, :3])),
                           (rows.reshape(-1, 2, 3), np.einsum("wki,wki->wk", *[rows.reshape(-1, 2, 3)] * 2))):
        squares = shaped * shaped
        assert np.array_equal((squares[..., 0] + squares[..., 2]) + squares[..., 1], einsum)
    # The cargo hold's contact axes: a strided operand, added in order.
    local = np.ascontiguousarray(rows[:, :3])
    frames = (rng.normal(size=(rows.shape[0], 9)) * 10.0 ** rng.uniform(-6, 6, size=(rows.shape[0], 1)))
    axes = frames.reshape(-1, 3, 3)[:, :, 2]
    products = local * axes
    assert np.array_equal((products[:, 0] + products[:, 1]) + products[:, 2], np.einsum("ki,ki->k", local, axes))


def test_a_c_loop_built_from_other_sources_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound's arrays and registers change with the source: a stale build runs the Python loop, and says why.
    loaded = native._loaded()
    if isinstance(loaded, str):
        pytest.skip(f"no C tick loop here: {loaded}")
    monkeypatch.setattr(loaded[0], "LAYOUT", native.LAYOUT + 1)
    native._loaded.cache_clear()
    try:
        assert native._loaded() == "python: the C tick loop was built from other sources (rebuild it: setup.py build_ext)"
    finally:
        monkeypatch.undo()
        native._loaded.cache_clear()
    assert not isinstance(native._loaded(), str)
