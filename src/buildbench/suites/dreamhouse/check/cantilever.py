"""T8 cantilever limits (paper appendix §6.8) and the released ``cantilever`` variant."""

from __future__ import annotations

import numpy as np

from .context import Context
from .result import TestResult


def _sill_message(
    ctx: Context, s: int, sup: np.ndarray, near: np.ndarray, order: np.ndarray, steps: np.ndarray
) -> str | None:
    """Why elevated sill ``s`` fails T8, or None; ``order``/``steps`` sort its near supports."""
    cfg = ctx.cfg
    name, length, count = ctx.names[s], float(ctx.local_sorted[s, 2]), int(near.sum())
    if length <= cfg.cantilever_spacing_m:
        if count:
            return None
        return (
            f"Cantilever: elevated {name} (bottom z = {ctx.lo[s, 2]:.2f} m) has no ground support "
            f"within {cfg.cantilever_lateral_m:g} m"
        )
    if count < 2:
        return (
            f"Cantilever: elevated {name} ({length:.2f} m long, bottom z = {ctx.lo[s, 2]:.2f} m) has "
            f"{count} ground support(s) within {cfg.cantilever_lateral_m:g} m; needs ≥ 2"
        )
    k = int(np.argmax(steps[: count - 1]))
    if steps[k] <= cfg.cantilever_spacing_m:
        return None
    a, b = ctx.names[sup[order[k]]], ctx.names[sup[order[k + 1]]]
    return (
        f"Cantilever: support gap under elevated {name} exceeds {cfg.cantilever_spacing_m:g} m; "
        f"detected spacing {steps[k]:.2f} m between {a} and {b}"
    )


def check_cantilever(ctx: Context) -> TestResult:
    """Paper T8: every elevated sill (z⁻ > 1.0 m) is carried by ground-reaching supports.

    Supports 𝒫 are grounded members (z⁻ < 0.1 m); [S] only upright ones (Δz at least their
    plan extents) count as reaching up to a sill. 𝒫_s are those within c_max = 1.5 m of the
    sill in plan. A sill longer than c_sp = 3.0 m needs |𝒫_s| ≥ 2 and at most 3.0 m between
    consecutive supports along its axis; a shorter one needs one support within 1.5 m.
    """
    cfg = ctx.cfg
    sills = np.flatnonzero(ctx.of("Sill") & (ctx.lo[:, 2] > cfg.elevated_sill_z_m))
    upright = ctx.ext[:, 2] >= np.maximum(ctx.ext[:, 0], ctx.ext[:, 1])
    sup = np.flatnonzero(ctx.grounded & upright)
    msgs: list[str] = []
    bad: list[str] = []
    # Sills × supports matrices, a block of sills at a time to bound memory.
    block = max(1, 2_000_000 // max(sup.size, 1))
    centre = (ctx.lo[sup, :2] + ctx.hi[sup, :2]) / 2.0
    for b0 in range(0, sills.size, block):
        blk = sills[b0 : b0 + block]
        gap = np.maximum(
            0.0,
            np.maximum(
                ctx.lo[blk, None, :2] - ctx.hi[None, sup, :2], ctx.lo[None, sup, :2] - ctx.hi[blk, None, :2]
            ),
        )
        near = np.hypot(gap[..., 0], gap[..., 1]) <= cfg.cantilever_lateral_m
        axis = ctx.long_dir[blk, :2]
        axis = axis / np.maximum(np.hypot(axis[:, 0], axis[:, 1]), 1e-12)[:, None]
        pos = np.where(near, np.einsum("pk,sk->sp", centre, axis), np.nan)
        order = np.argsort(pos, axis=1)  # NaN (not near) sorts last
        pos_sorted = np.take_along_axis(pos, order, axis=1)
        steps = np.diff(pos_sorted, axis=1)
        for r, s in enumerate(blk):
            msg = _sill_message(ctx, int(s), sup, near[r], order[r], steps[r])
            if msg:
                msgs.append(msg)
                bad.append(ctx.names[s])
    return TestResult(
        name="cantilever",
        passed=not bad,
        messages=ctx.cap(msgs),
        members=tuple(bad),
        measured={"elevated_sills": int(sills.size), "supports": int(sup.size), "failed": len(bad)},
    )


def check_cantilever_released(ctx: Context) -> TestResult:
    """README ``cantilever``: "cantilevers don't exceed backspan/4 or 24 in".

    [S] Read per joist: its bearings are the members it touches that are not joists and do
    not sit above it (bottom below the joist's bottom + ε). Projected on the joist's axis,
    the overhang past the outermost bearing at each end may reach max(backspan/4, 24 in),
    backspan being the distance between the outermost bearings. Joists touching no bearing
    are left to the load-path tests.
    """
    cfg = ctx.cfg
    c = ctx.contacts
    if c is None:
        return TestResult("cantilever", False, (ctx.overflow_message(),))
    joist = ctx.of("Joist")
    ii = np.concatenate([c.i, c.j])
    jj = np.concatenate([c.j, c.i])
    keep = joist[ii] & ~joist[jj] & (ctx.lo[jj, 2] < ctx.lo[ii, 2] + cfg.contact_tol_m)
    ii, jj = ii[keep], jj[keep]
    plan = ctx.long_dir[ii, :2]
    axis = plan / np.maximum(np.hypot(plan[:, 0], plan[:, 1]), 1e-12)[:, None]
    centre = (ctx.lo[:, :2] + ctx.hi[:, :2]) / 2.0
    half_j = (np.abs(axis) * ((ctx.hi[jj, :2] - ctx.lo[jj, :2]) / 2.0)).sum(axis=1)
    rel = ((centre[jj] - centre[ii]) * axis).sum(axis=1)
    b_lo, b_hi = rel - half_j, rel + half_j
    order = np.argsort(ii, kind="stable")
    ii, b_lo, b_hi = ii[order], b_lo[order], b_hi[order]
    starts = np.flatnonzero(np.concatenate([[True], ii[1:] != ii[:-1]])) if ii.size else np.zeros(0, np.intp)
    joists = ii[starts]
    first = np.minimum.reduceat(b_lo, starts) if ii.size else np.zeros(0)
    last = np.maximum.reduceat(b_hi, starts) if ii.size else np.zeros(0)
    inner_a = np.minimum.reduceat(b_hi, starts) if ii.size else np.zeros(0)
    inner_b = np.maximum.reduceat(b_lo, starts) if ii.size else np.zeros(0)
    half = ctx.plan_length[joists] / 2.0
    backspan = np.maximum(0.0, inner_b - inner_a)
    overhang = np.maximum.reduce([np.zeros_like(half), first + half, half - last])
    allowed = np.maximum(backspan * cfg.released_cantilever_backspan_ratio, cfg.released_cantilever_max_m)
    worst = np.flatnonzero(overhang > allowed)
    msgs = [
        f"Cantilever: {ctx.names[joists[k]]} overhangs its outermost bearing by {overhang[k]:.2f} m > "
        f"{allowed[k]:.2f} m (max of backspan {backspan[k]:.2f} m / 4 and 24 in)"
        for k in worst
    ]
    bad = [ctx.names[joists[k]] for k in worst]
    n_checked = int(joists.size)
    return TestResult(
        name="cantilever",
        passed=not bad,
        messages=ctx.cap(msgs),
        members=tuple(bad),
        measured={"joists_checked": n_checked, "failed": len(bad)},
    )
