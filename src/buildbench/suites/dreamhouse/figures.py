"""DreamHouse's reproduced paper figures for ``buildbench report --figures``.

Figure 7 (right) of the paper shows how structural tests fail together; here as a matrix per
run: the share of failing structures that fail both tests of a pair (the diagonal: each test
alone), so a reader sees which failures travel together (e.g. span limits with deflection).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from buildbench.harness import Episode
from buildbench.harness.episode import is_scored


def _failed_tests(ep: Episode) -> set[str]:
    return {k.removeprefix("test_") for k, v in ep.metrics.items() if k.startswith("test_") and v == 0.0}


def co_failure_figure(groups: Mapping[str, Sequence[Episode]]) -> Any:
    """One heat map per run: share of failing structures that fail both tests of a pair."""
    import matplotlib.pyplot as plt

    tests = sorted({k.removeprefix("test_") for eps in groups.values() for ep in eps for k in ep.metrics
                    if k.startswith("test_")})
    fig, axes = plt.subplots(1, max(len(groups), 1), figsize=(4.2 * max(len(groups), 1), 4.2), squeeze=False)
    for ax, (label, eps) in zip(axes[0], groups.items(), strict=False):
        failing = [f for f in (_failed_tests(ep) for ep in eps if is_scored(ep)) if f]
        share = [[sum(1 for f in failing if a in f and b in f) / len(failing) if failing else 0.0 for b in tests]
                 for a in tests]
        ax.imshow(share, vmin=0.0, vmax=1.0, cmap="Reds")
        ax.set_xticks(range(len(tests)), tests, rotation=70, ha="right", fontsize=6)
        ax.set_yticks(range(len(tests)), tests, fontsize=6)
        ax.set_title(f"{label[:30]} ({len(failing)} failing)", fontsize=8)
    fig.suptitle("Figure 7: tests failing together (share of failing structures)")
    fig.tight_layout()
    return fig


def figures(groups: Mapping[str, Sequence[Episode]]) -> list[tuple[str, Any]]:
    return [("dreamhouse_fig7_co_failures", co_failure_figure(groups))]
