"""T5 L/360 deflection of joists (paper appendix §6.5)."""

from __future__ import annotations

import numpy as np

from ..model import libm
from .context import Context
from .result import TestResult


def check_deflection(ctx: Context) -> TestResult:
    """Paper T5: δ = 5wL⁴/(384EI) ≤ (1+τ_δ)·L/360 for every joist.

    As written in the appendix, b = min(Δx, Δy) and h = Δz of the world AABB, and
    [S] L = max(Δx, Δy), the joist's length (spec §3.2 derives 3.91 m for a 2x10).
    """
    cfg = ctx.cfg
    idx = np.flatnonzero(ctx.of("Joist"))
    ext = ctx.ext[idx]
    b = np.minimum(ext[:, 0], ext[:, 1])
    h = ext[:, 2]
    length = np.maximum(ext[:, 0], ext[:, 1])
    # libm.power, not ``**`` (numpy's power kernel is Intel SVML on AVX-512 machines, see model.libm).
    inertia = b * libm.power(h, 3.0) / 12.0
    delta = 5.0 * cfg.deflection_load_n_per_m * libm.power(length, 4.0) / (384.0 * cfg.deflection_modulus_pa * inertia)
    limit = (1.0 + cfg.deflection_tol) * length / cfg.deflection_ratio
    bad = np.flatnonzero(delta > limit)
    msgs = [
        f"Deflection: {ctx.names[idx[k]]} δ = {delta[k] * 1000:.1f} mm > {1 + cfg.deflection_tol:.2f} × "
        f"L/{cfg.deflection_ratio:g} = {limit[k] * 1000:.1f} mm (L = {length[k]:.2f} m, "
        f"b×h = {b[k] * 1000:.0f}×{h[k] * 1000:.0f} mm)"
        for k in bad
    ]
    ratio = delta / limit if idx.size else np.zeros(0)
    return TestResult(
        name="deflection",
        passed=bad.size == 0,
        messages=ctx.cap(msgs),
        members=tuple(ctx.names[idx[k]] for k in bad),
        measured={
            "joists": int(idx.size),
            "over_limit": int(bad.size),
            "worst_ratio": float(ratio.max(initial=0.0)),
        },
    )
