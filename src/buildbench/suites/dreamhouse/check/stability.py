"""T9 stability score (paper appendix §6.9) and the released ``stability_score`` variant."""

from __future__ import annotations

import numpy as np

from .context import Context
from .result import TestResult


def check_stability(ctx: Context, *, released: bool) -> TestResult:
    """Topological Stability Index Σ = grounded-through-contacts members / all members.

    Paper T9 passes at Σ ≥ 1.0. The README passes at Σ ≥ 0.8 ("at least 80% of members
    connected to the ground"); [S] there a structure with nothing above the ground
    threshold fails, since it has nothing to stabilise (the released stub of four sills
    fails ``stability_score``). An empty structure scores 0.
    """
    sigma = ctx.supported
    if sigma is None:
        return TestResult("stability_score", False, (ctx.overflow_message(),))
    total = int(ctx.valid.sum())
    grounded = int(sigma.sum())
    score = grounded / total if total else 0.0
    limit = ctx.cfg.stability_min_released if released else ctx.cfg.stability_min_paper
    msgs: list[str] = []
    if total == 0:
        msgs.append("Stability: no valid members, Σ = 0")
    elif score < limit:
        floating = np.flatnonzero(ctx.valid & ~sigma)
        shown = ", ".join(ctx.names[i] for i in floating[:8]) + (" …" if floating.size > 8 else "")
        msgs.append(
            f"Stability: Σ = {grounded}/{total} = {score:.3f} < {limit:g}; not connected to ground: {shown}"
        )
    if released and total and not (ctx.valid & ~ctx.grounded).any():
        msgs.append("Stability: every member lies on the ground; nothing is framed above it")
    floating_all = np.flatnonzero(ctx.valid & ~sigma)
    return TestResult(
        name="stability_score",
        passed=not msgs,
        messages=tuple(msgs),
        members=tuple(ctx.names[i] for i in floating_all) if score < limit else (),
        measured={"score": score, "total_members": total, "grounded_members": grounded, "limit": limit},
    )
