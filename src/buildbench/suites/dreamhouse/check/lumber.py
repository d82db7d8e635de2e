"""T4 standard lumber dimensions (paper appendix §6.4)."""

from __future__ import annotations

import numpy as np

from .context import Context
from .result import TestResult


def check_standard_lumber(ctx: Context) -> TestResult:
    """Paper T4: each member's two smallest sizes match a size in Λ within 10 / 20 mm.

    The sizes are the member's *local* extents (spec §4.2 [S]), so a sloped rafter is
    judged by its real cross-section, not its inflated world AABB.
    """
    idx = np.flatnonzero(ctx.valid)
    lam = np.asarray(ctx.cfg.lumber_mm, dtype=np.float64)
    d1 = ctx.local_sorted[idx, 0] * 1000.0
    d2 = ctx.local_sorted[idx, 1] * 1000.0
    dw = np.abs(d1[:, None] - lam[None, :, 0])
    dd = np.abs(d2[:, None] - lam[None, :, 1])
    ok = ((dw < ctx.cfg.lumber_width_tol_mm) & (dd < ctx.cfg.lumber_depth_tol_mm)).any(axis=1)
    bad = np.flatnonzero(~ok)
    nearest = np.argmin(dw + dd, axis=1) if idx.size else np.zeros(0, dtype=np.intp)
    msgs = []
    for k in bad:
        w, d = lam[nearest[k]]
        msgs.append(
            f"Std. dimensions: {ctx.names[idx[k]]} cross-section {d1[k]:.0f}×{d2[k]:.0f} mm is not standard "
            f"lumber (nearest {w:.0f}×{d:.0f}; tolerance ±{ctx.cfg.lumber_width_tol_mm:g}/"
            f"±{ctx.cfg.lumber_depth_tol_mm:g} mm)"
        )
    return TestResult(
        name="standard_lumber",
        passed=bad.size == 0,
        messages=ctx.cap(msgs),
        members=tuple(ctx.names[idx[k]] for k in bad),
        measured={"members": int(idx.size), "non_standard": int(bad.size)},
    )
