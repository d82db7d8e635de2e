"""BuildArena's reproduced paper figures for ``buildbench report --figures``.

Figure 6 of the paper breaks failed library calls down by kind; here per run, as shares of all
failed calls, with the count on each bar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from buildbench.harness import Episode

from .metrics import failure_counts


def failure_kinds_figure(groups: Mapping[str, Sequence[Episode]]) -> Any:
    """Horizontal bars per run: failed calls by category (Fig. 6)."""
    import matplotlib.pyplot as plt

    counts = {label: failure_counts(eps) for label, eps in groups.items()}
    kinds = sorted({k for c in counts.values() for k, v in c.items() if v}) or ["(no failed call)"]
    fig, ax = plt.subplots(figsize=(6.4, 0.5 + 0.35 * len(kinds) * max(len(groups), 1)))
    height = 0.8 / max(len(groups), 1)
    for i, (label, c) in enumerate(counts.items()):
        ys = [k + i * height for k in range(len(kinds))]
        values = [c.get(kind, 0.0) for kind in kinds]
        ax.barh(ys, values, height, label=label[:30])
        for y, v in zip(ys, values, strict=True):
            if v:
                ax.text(v, y, f" {v:.0f}", va="center", fontsize=7)
    ax.set_yticks([k + height * (len(groups) - 1) / 2 for k in range(len(kinds))], kinds)
    ax.set_xlabel("failed calls")
    ax.set_title("Figure 6: failed library calls by kind")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figures(groups: Mapping[str, Sequence[Episode]]) -> list[tuple[str, Any]]:
    return [("buildarena_fig6_failure_kinds", failure_kinds_figure(groups))]
