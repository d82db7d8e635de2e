"""BuildArena construction library: building a large machine, and caption formatting.

* ``buildarena-build-plate``: attach a 24×24 plate of wooden blocks (577 calls)
  with the hash-grid broad phase, beside the same build testing each new
  collider against every existing one (no broad phase).
* ``buildarena-format-vectors``: our numpy-compatible vector formatter beside
  ``numpy.array2string`` on 20,000 rounded vectors.
"""

from __future__ import annotations

import numpy as np
from _common import Figure, median_time

from buildbench.suites.buildarena.library import Workbench, collision
from buildbench.suites.buildarena.library.frames import _array_text
from buildbench.suites.buildarena.model import Block

SIDE = 24


def _attach(bench: Workbench, base: str, face: str) -> str:
    out = bench.call("attach_block_to", {"base_block": base, "face": face, "new_block": "Small Wooden Block"})
    assert out.ok, out.text
    return str(bench.machine.next_id - 1)


def _build_plate() -> Workbench:
    """A spine running east from the starting block, a column running north from each spine block."""
    bench = Workbench()
    bench.call("start")
    spine = ["1"]
    for _ in range(SIDE - 1):
        spine.append(_attach(bench, spine[-1], "A" if spine[-1] == "1" else "E"))
    for k, root in enumerate(spine):
        last = _attach(bench, root, "E" if k == 0 else "B")
        for _ in range(SIDE - 2):
            last = _attach(bench, last, "E")
    return bench


def _all_pairs_overlapping(self: collision.ColliderIndex, candidate: Block, order: object) -> list[str]:
    shape = collision.collider_shape(candidate)
    if shape is None:
        return []
    obj = collision._fcl_object(shape)
    return [i for i, e in self._entries.items() if i != candidate.id and collision._collide(obj, e.obj)]


def _build_plate_all_pairs() -> None:
    original = collision.ColliderIndex.overlapping
    collision.ColliderIndex.overlapping = _all_pairs_overlapping  # type: ignore[method-assign]
    try:
        _build_plate()
    finally:
        collision.ColliderIndex.overlapping = original  # type: ignore[method-assign]


def run() -> list[Figure]:
    """Time both figures beside their baselines."""
    ours = median_time(_build_plate, repeat=3, warmup=1)
    base = median_time(_build_plate_all_pairs, repeat=1, warmup=0)
    rng = np.random.default_rng(0)
    vectors = [np.round(rng.normal(size=3) * 3, 2) + 0.0 for _ in range(20_000)]
    fast = median_time(lambda: [_array_text(v, ", ") for v in vectors], repeat=3)
    slow = median_time(lambda: [np.array2string(v, separator=", ") for v in vectors], repeat=3)
    return [
        Figure(
            "buildarena-build-plate",
            ours,
            baseline="each new collider against every collider (no broad phase)",
            baseline_seconds=base,
            extra={"blocks": SIDE * SIDE, "calls": SIDE * SIDE},
        ),
        Figure(
            "buildarena-format-vectors",
            fast,
            baseline="numpy.array2string",
            baseline_seconds=slow,
            extra={"vectors": 20_000},
        ),
    ]
