"""The tower verifier: four deterministic tests over axis-aligned blocks."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from buildbench.geometry import Boxes, contact_pairs

from .model import Blocks

#: Contact tolerance, metres: faces closer than this touch.
TOUCH_TOL_M = 0.005
#: Interpenetration depth tolerated before two blocks count as overlapping, metres.
OVERLAP_TOL_M = 0.002
#: Height shortfall tolerated, metres (block lists are exchanged as 6-decimal JSON).
HEIGHT_TOL_M = 1e-4


@dataclass
class TestOutcome:
    name: str
    passed: bool
    message: str = ""
    blocks: list[int] = field(default_factory=list)


@dataclass
class TowerReport:
    tests: list[TestOutcome]
    height_m: float

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.tests)

    def feedback(self) -> str:
        lines = [f"{'PASS' if t.passed else 'FAIL'} {t.name}: {t.message}" for t in self.tests]
        lines.append(f"height reached: {self.height_m:.3f} m")
        return "\n".join(lines)


def _pairs(blocks: Blocks, tol: float) -> np.ndarray:
    return contact_pairs(Boxes.from_aabbs(blocks.mins, blocks.maxs), tol=tol)


def check_tower(blocks: Blocks, *, target_height_m: float, footprint_half_m: float) -> TowerReport:
    """Run the four tests: inside the lot, no overlaps, supported from the ground, tall enough."""
    n = blocks.count
    tests: list[TestOutcome] = []
    if n == 0:
        empty = TestOutcome("nonempty", False, "no blocks were placed")
        return TowerReport([empty], 0.0)

    outside = np.flatnonzero((np.abs(blocks.mins[:, :2]) > footprint_half_m + 1e-9).any(1)
                             | (np.abs(blocks.maxs[:, :2]) > footprint_half_m + 1e-9).any(1)
                             | (blocks.mins[:, 2] < -TOUCH_TOL_M))
    tests.append(TestOutcome(
        "inside_lot", outside.size == 0,
        "all blocks inside the lot" if outside.size == 0 else
        f"blocks {outside.tolist()[:10]} leave the {2 * footprint_half_m:g} m square lot or go below ground",
        outside.tolist()))

    pairs = _pairs(blocks, TOUCH_TOL_M)
    i, j = (pairs[:, 0], pairs[:, 1]) if pairs.size else (np.zeros(0, int), np.zeros(0, int))
    depth = np.minimum(blocks.maxs[i], blocks.maxs[j]) - np.maximum(blocks.mins[i], blocks.mins[j])
    overlapping = (depth > OVERLAP_TOL_M).all(axis=1) if depth.size else np.zeros(0, bool)
    bad = pairs[overlapping] if pairs.size else np.zeros((0, 2), int)
    tests.append(TestOutcome(
        "no_overlap", bad.size == 0,
        "no blocks interpenetrate" if bad.size == 0 else
        "; ".join(f"blocks {a} and {b} overlap" for a, b in bad[:5].tolist()),
        sorted(set(bad.ravel().tolist()))))

    # Support: j rests on i when j's bottom meets i's top and their footprints overlap in area.
    supported = _grounded(blocks, i, j, depth)
    floating = np.flatnonzero(~supported)
    tests.append(TestOutcome(
        "supported", floating.size == 0,
        "every block rests on the ground or on another block" if floating.size == 0 else
        f"blocks {floating.tolist()[:10]} have no path of support to the ground",
        floating.tolist()))

    height = float(blocks.maxs[:, 2].max())
    tall = height >= target_height_m - HEIGHT_TOL_M
    tests.append(TestOutcome(
        "height", tall,
        f"{height:.3f} m {'>=' if tall else '<'} target {target_height_m:.3f} m"))
    return TowerReport(tests, height)


def _grounded(blocks: Blocks, i: np.ndarray, j: np.ndarray, depth: np.ndarray) -> np.ndarray:
    on_ground = blocks.mins[:, 2] <= TOUCH_TOL_M
    if i.size:
        area_overlap = (depth[:, 0] > TOUCH_TOL_M) & (depth[:, 1] > TOUCH_TOL_M)
        j_on_i = area_overlap & (np.abs(blocks.mins[j, 2] - blocks.maxs[i, 2]) <= TOUCH_TOL_M)
        i_on_j = area_overlap & (np.abs(blocks.mins[i, 2] - blocks.maxs[j, 2]) <= TOUCH_TOL_M)
        below = np.concatenate([i[j_on_i], j[i_on_j]])
        above = np.concatenate([j[j_on_i], i[i_on_j]])
    else:
        below = above = np.zeros(0, int)
    grounded = on_ground.copy()
    frontier = np.flatnonzero(grounded)
    # Breadth-first from the ground upward over "rests on" edges.
    order = np.argsort(below, kind="stable")
    below_sorted, above_sorted = below[order], above[order]
    while frontier.size:
        lo = np.searchsorted(below_sorted, frontier, "left")
        hi = np.searchsorted(below_sorted, frontier, "right")
        nxt = np.unique(np.concatenate([above_sorted[a:b] for a, b in zip(lo, hi, strict=True)]))
        nxt = nxt[~grounded[nxt]]
        grounded[nxt] = True
        frontier = nxt
    return grounded
