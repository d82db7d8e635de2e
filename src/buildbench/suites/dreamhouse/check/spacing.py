"""T3 on-centre spacing (paper appendix §6.3) and the neighbour grouping T2 reuses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import libm
from .context import Context
from .result import TestResult


@dataclass(frozen=True)
class Neighbours:
    """Consecutive members of the same spacing group: ``i`` then ``j``, ``gap_m`` apart on centre."""

    i: np.ndarray
    j: np.ndarray
    gap_m: np.ndarray
    groups: int


def cluster_sorted(values: np.ndarray, tol: float) -> np.ndarray:
    """Labels grouping values that chain together within ``tol`` (single linkage in 1-D)."""
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    order = np.argsort(values, kind="stable")
    breaks = np.diff(values[order]) > tol
    labels = np.empty(values.size, dtype=np.intp)
    labels[order] = np.concatenate([[0], np.cumsum(breaks)])
    return labels


def _direction_labels(angle_deg: np.ndarray, tol_deg: float) -> np.ndarray:
    """Cluster plan directions in [0, 180), where 0 and 180 are the same direction."""
    labels = cluster_sorted(angle_deg, tol_deg)
    if labels.size and angle_deg.min() + 180.0 - angle_deg.max() <= tol_deg:
        labels[labels == labels.max()] = 0
    return labels


def neighbour_gaps(ctx: Context, mask: np.ndarray) -> Neighbours:
    """Group members by elevation and plan direction, then pair side-by-side neighbours.

    Paper T3 groups joists "sharing the same elevation and direction" and sorts each group
    by perpendicular position. [S] Elevation is the AABB bottom (within
    ``spacing_elevation_tol_m``), direction the plan angle of the long axis (within
    ``spacing_direction_tol_deg``), and a group is further split into runs of members whose
    extents along that direction overlap, so the joists either side of a centre beam, or in
    two wings at the same level, are not interleaved into false gaps.
    """
    key = ("neighbours", mask.tobytes())
    if key not in ctx.memo:
        ctx.memo[key] = _neighbour_gaps(ctx, mask)
    return ctx.memo[key]  # type: ignore[return-value]


def _neighbour_gaps(ctx: Context, mask: np.ndarray) -> Neighbours:
    idx = np.flatnonzero(mask)
    empty = np.zeros(0, dtype=np.intp)
    if idx.size < 2:
        return Neighbours(empty, empty, np.zeros(0), 0)
    d = ctx.long_dir[idx]
    theta = libm.arctan2(d[:, 1], d[:, 0])  # libm: numpy's kernel depends on the CPU (model.libm)
    angle = np.degrees(theta) % 180.0
    dir_lab = _direction_labels(angle, ctx.cfg.spacing_direction_tol_deg)
    z_lab = cluster_sorted(ctx.lo[idx, 2], ctx.cfg.spacing_elevation_tol_m)
    _, group, counts = np.unique(
        dir_lab * (int(z_lab.max()) + 1) + z_lab, return_inverse=True, return_counts=True
    )
    centre = (ctx.lo[idx, :2] + ctx.hi[idx, :2]) / 2.0
    half = ctx.plan_length[idx] / 2.0
    out_i, out_j, out_gap = [], [], []
    for g in np.flatnonzero(counts >= 2):
        sel = np.flatnonzero(group == g)
        t = math.radians(float(angle[sel[0]]))
        c, s = math.cos(t), math.sin(t)
        # Spelled-out sums, not ``@`` (BLAS dgemv, whose kernel and its fused multiply-adds depend
        # on the CPU): the gaps and the sort order below then have the same bits everywhere.
        x, y = centre[sel, 0], centre[sel, 1]
        along = x * c + y * s
        perp = y * c - x * s
        a0, a1 = along - half[sel], along + half[sel]
        order = np.argsort(a0, kind="stable")
        reach = np.maximum.accumulate(a1[order])
        run = np.empty(sel.size, dtype=np.intp)
        run[order] = np.concatenate([[0], np.cumsum(a0[order][1:] >= reach[:-1])])
        key = np.lexsort((perp, run))
        same_run = run[key][1:] == run[key][:-1]
        out_i.append(idx[sel[key][:-1][same_run]])
        out_j.append(idx[sel[key][1:][same_run]])
        out_gap.append(np.diff(perp[key])[same_run])
    if not out_i:
        return Neighbours(empty, empty, np.zeros(0), int(counts.size))
    return Neighbours(np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_gap), int(counts.size))


def spacing_ok(ctx: Context, gap_m: np.ndarray) -> np.ndarray:
    """Paper T3 Def. 4: a gap is compliant near a standard spacing, or a doubled member."""
    std = np.asarray(ctx.cfg.spacing_standard_m)
    dev = np.abs(gap_m[:, None] - std[None, :]).min(axis=1) if gap_m.size else np.zeros(0)
    return (dev < ctx.cfg.spacing_tol_m) | (gap_m <= ctx.cfg.spacing_doubled_m)


def check_spacing(ctx: Context) -> TestResult:
    """Paper T3: every on-centre gap between neighbouring joists is standard or doubled."""
    nb = neighbour_gaps(ctx, ctx.of("Joist"))
    ok = spacing_ok(ctx, nb.gap_m)
    bad = np.flatnonzero(~ok)
    std = " or ".join(f"{s:.3f}" for s in ctx.cfg.spacing_standard_m)
    msgs = [
        f"O.C. spacing: {ctx.names[nb.i[k]]} → {ctx.names[nb.j[k]]} are {nb.gap_m[k]:.3f} m apart on centre "
        f"(allowed {std} ± {ctx.cfg.spacing_tol_m:g} m, or ≤ {ctx.cfg.spacing_doubled_m:g} m when doubled)"
        for k in bad
    ]
    involved = dict.fromkeys(ctx.names[m] for k in bad for m in (nb.i[k], nb.j[k]))
    return TestResult(
        name="oc_spacing",
        passed=bad.size == 0,
        messages=ctx.cap(msgs),
        members=tuple(involved),
        measured={"groups": nb.groups, "gaps": int(nb.gap_m.size), "bad_gaps": int(bad.size)},
    )
