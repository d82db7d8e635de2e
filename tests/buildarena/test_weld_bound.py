"""The weld check's shortcut: the bound on weld loads holds, and putting the exact analysis off changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.check import simulation
from buildbench.suites.buildarena.physics import welds
from buildbench.suites.buildarena.physics.stress import WeldNetwork, stack, weld_network, wrench_bound


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


@pytest.mark.parametrize("seed", range(12))
def test_bounds_hold_for_any_node_wrenches(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nets = [_random_network(rng, int(rng.integers(2, 12)), int(rng.integers(0, 4))) for _ in range(3)]
    net = stack(nets)
    for _ in range(20):
        own = rng.normal(size=(net.beyond.shape[1], 6)) * rng.uniform(0.0, 100.0, size=(1, 6))
        wrenches = net.weld_wrenches(own).reshape(-1, 2, 3)
        magnitudes = np.linalg.norm(wrenches, axis=2)
        bound = net.bounds @ np.array(wrench_bound(own))
        assert np.all(magnitudes <= bound * (1 + 1e-9) + 1e-12)


def _outcome(task: str, design: designs.Design) -> tuple[bytes, list[tuple[str, float, float, float]], int]:
    out = simulation(designs.build(design), task).run()
    return out.trajectory.position.tobytes(), [(b.label, b.time_s, b.force_n, b.torque_nm) for b in out.broken], \
        out.steps


@pytest.mark.parametrize(("task", "skips"), [("lift-2", True), ("transport-1", True), ("support-1", False)])
def test_putting_the_exact_analysis_off_changes_nothing(task: str, skips: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Broken welds' forces and times are compared bit for bit: the state is what the tick-by-tick analysis gives.
    design = designs.REFERENCE[task]()
    exact = welds._magnitudes
    calls = [0]

    def counted(*args: object) -> np.ndarray:
        calls[0] += 1
        return exact(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(welds, "_magnitudes", counted)
    skipping = _outcome(task, design)
    assert (calls[0] < skipping[2]) == skips  # the bound held on most ticks of a quiet run
    monkeypatch.setattr(welds, "_BOUND_MARGIN", -1.0)  # the bound never holds: the exact analysis every tick
    calls[0] = 0
    assert _outcome(task, design) == skipping
    assert calls[0] == skipping[2]
