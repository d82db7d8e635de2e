"""T1 load path (paper appendix §6.1) and the released ``load_path`` variant."""

from __future__ import annotations

import numpy as np

from ..model import SUBSYSTEM
from .context import Context
from .result import TestResult


def _unsupported_message(ctx: Context, i: int) -> str:
    z = ctx.lo[i, 2]
    return (
        f"{ctx.names[i]} (bottom z = {z:.3f} m) has no contact chain (gap ≤ {ctx.cfg.contact_tol_m:g} m) "
        f"to a grounded member (z⁻ < {ctx.cfg.ground_z_m:g} m)"
    )


def check_load_path(ctx: Context) -> TestResult:
    """Paper T1: σ(v) = 1 for every member (σ = connected to the ground set through contacts)."""
    sigma = ctx.supported
    if sigma is None:
        return TestResult("load_path", False, (ctx.overflow_message(),))
    floating = np.flatnonzero(ctx.valid & ~sigma)
    total = int(ctx.valid.sum())
    return TestResult(
        name="load_path",
        passed=floating.size == 0,
        messages=ctx.cap([f"Load path: {_unsupported_message(ctx, int(i))}" for i in floating]),
        members=tuple(ctx.names[i] for i in floating),
        measured={"members": total, "unsupported": int(floating.size)},
    )


def check_load_path_released(ctx: Context) -> TestResult:
    """README ``load_path``: a continuous load path from the roof down to the foundation.

    [S] Read as: roof members and foundation members exist, and every roof member is
    connected through contacts to a grounded member. Unlike T1 it ignores other floating
    members, which matches the released example (``load_path`` true with 6/120 members
    ungrounded) and the stub smoke test (four sills fail: no roof).
    """
    sigma = ctx.supported
    if sigma is None:
        return TestResult("load_path", False, (ctx.overflow_message(),))
    roof = ctx.of(*[c for c, sub in SUBSYSTEM.items() if sub == "roof"])
    foundation = ctx.of(*[c for c, sub in SUBSYSTEM.items() if sub == "foundation"])
    msgs: list[str] = []
    if not roof.any():
        msgs.append("Load path: no roof members, so there is no load path from roof to foundation")
    if not foundation.any():
        msgs.append("Load path: no foundation members (Sill/Post/BeamPost) for the load path to reach")
    floating = np.flatnonzero(roof & ~sigma)
    msgs += [f"Load path: roof member {_unsupported_message(ctx, int(i))}" for i in floating]
    return TestResult(
        name="load_path",
        passed=not msgs,
        messages=ctx.cap(msgs),
        members=tuple(ctx.names[i] for i in floating),
        measured={"roof_members": int(roof.sum()), "unsupported_roof": int(floating.size)},
    )
