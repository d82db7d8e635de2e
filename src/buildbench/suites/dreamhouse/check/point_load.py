"""README ``point_load``: posts and beams land on something that carries them (spec §4.3)."""

from __future__ import annotations

import numpy as np

from .context import Context
from .result import TestResult


def check_point_load(ctx: Context) -> TestResult:
    """[S] Every post-like member (``point_load_categories``) reaches the ground, or bears on
    a member directly below it: one whose top is within ε of its bottom and whose plan
    (grown by ε) contains the centre of its footprint.
    """
    cfg = ctx.cfg
    c = ctx.contacts
    if c is None:
        return TestResult("point_load", False, (ctx.overflow_message(),))
    post = ctx.of(*cfg.point_load_categories)
    need = post & ~ctx.grounded
    ii = np.concatenate([c.i, c.j])
    jj = np.concatenate([c.j, c.i])
    keep = need[ii]
    ii, jj = ii[keep], jj[keep]
    tol = cfg.contact_tol_m
    centre = (ctx.lo[ii, :2] + ctx.hi[ii, :2]) / 2.0
    under = (
        (np.abs(ctx.hi[jj, 2] - ctx.lo[ii, 2]) <= tol)
        & (centre >= ctx.lo[jj, :2] - tol).all(axis=1)
        & (centre <= ctx.hi[jj, :2] + tol).all(axis=1)
    )
    borne = np.zeros(ctx.n, dtype=bool)
    borne[ii[under]] = True
    failed = np.flatnonzero(need & ~borne)
    msgs = [
        f"Point load: {ctx.names[i]} (bottom z = {ctx.lo[i, 2]:.3f} m) lands on no member directly "
        f"below its footprint centre and does not reach the ground"
        for i in failed
    ]
    return TestResult(
        name="point_load",
        passed=failed.size == 0,
        messages=ctx.cap(msgs),
        members=tuple(ctx.names[i] for i in failed),
        measured={"posts": int(post.sum()), "unsupported": int(failed.size)},
    )
