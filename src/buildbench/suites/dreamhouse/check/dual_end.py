"""T10 dual-end connection of rafters and studs (paper appendix §6.10)."""

from __future__ import annotations

import numpy as np

from .context import Context
from .result import TestResult


def check_dual_end(ctx: Context) -> TestResult:
    """Paper T10: every rafter and stud (height ≥ 0.3 m) is touched in both end zones.

    Zones are the bottom and top α = 20% of the member's AABB height. Another member
    connects to a zone when it overlaps the member in plan within ε_c = 0.10 m and its z
    range meets the zone within ε_c. A missing top is a hinge failure, a missing bottom a
    floating column.
    """
    cfg = ctx.cfg
    near = ctx.near_pairs
    if near is None:
        return TestResult("dual_end_connection", False, (ctx.overflow_message(),))
    rafter = ctx.of(*cfg.dual_end_rafters)
    stud = ctx.of(*cfg.dual_end_studs)
    height = ctx.ext[:, 2]
    checked = (rafter | stud) & (height >= cfg.dual_end_min_height_m)
    pairs = near.within(cfg.dual_end_tol_m)
    ii = np.concatenate([pairs.i, pairs.j])
    jj = np.concatenate([pairs.j, pairs.i])
    keep = checked[ii]
    ii, jj = ii[keep], jj[keep]
    tol = cfg.dual_end_tol_m
    zone = cfg.dual_end_alpha * height[ii]
    z_lo, z_hi = ctx.lo[ii, 2], ctx.hi[ii, 2]
    o_lo, o_hi = ctx.lo[jj, 2], ctx.hi[jj, 2]
    # Plan overlap within tol holds for every near pair; only the z condition remains.
    meets_bot = (o_lo <= z_lo + zone + tol) & (o_hi >= z_lo - tol)
    meets_top = (o_lo <= z_hi + tol) & (o_hi >= z_hi - zone - tol)
    bot = np.zeros(ctx.n, dtype=bool)
    top = np.zeros(ctx.n, dtype=bool)
    bot[ii[meets_bot]] = True
    top[ii[meets_top]] = True
    failed = checked & ~(bot & top)
    msgs = []
    for i in np.flatnonzero(failed):
        kind = "rafter" if rafter[i] else "stud"
        ends = [e for e, ok in (("bottom", bot[i]), ("top", top[i])) if not ok]
        why = "floating column" if kind == "stud" and not bot[i] else "free end (hinge failure)"
        msgs.append(
            f"Dual-end: {kind} {ctx.names[i]} has no connection in its {' and '.join(ends)} "
            f"{cfg.dual_end_alpha:.0%} zone (z {ctx.lo[i, 2]:.2f}–{ctx.hi[i, 2]:.2f} m): {why}"
        )
    return TestResult(
        name="dual_end_connection",
        passed=not failed.any(),
        messages=ctx.cap(msgs),
        members=tuple(ctx.names[i] for i in np.flatnonzero(failed)),
        measured={
            "rafters_checked": int((checked & rafter).sum()),
            "rafters_failed": int((failed & rafter).sum()),
            "studs_checked": int((checked & stud).sum()),
            "studs_failed": int((failed & stud).sum()),
        },
    )
