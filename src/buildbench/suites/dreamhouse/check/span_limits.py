"""T2 span limits against IRC span tables (paper appendix §6.2)."""

from __future__ import annotations

import numpy as np

from .context import Context
from .irc_spans import NOMINAL_MM, SpanTable
from .result import TestResult
from .spacing import neighbour_gaps


def _spacing_per_member(ctx: Context, mask: np.ndarray) -> np.ndarray:
    """On-centre spacing each member carries: its widest gap to a side neighbour (NaN if none).

    Gaps of doubled members (≤ ``spacing_doubled_m``) are not a spacing and are ignored.
    """
    nb = neighbour_gaps(ctx, mask)
    spacing = np.full(ctx.n, np.nan)
    real = nb.gap_m > ctx.cfg.spacing_doubled_m
    for ends in (nb.i, nb.j):
        cur = spacing[ends[real]]
        spacing[ends[real]] = np.fmax(cur, nb.gap_m[real])
    return spacing


_Arrays = tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]
_TABLES: dict[int, tuple[SpanTable, _Arrays]] = {}


def _table_arrays(table: SpanTable) -> _Arrays:
    """Rows, their nominal sizes (mm), column spacings (m) and allowable spans (m) of ``table``.

    Parsed once per table object (every validation checks joists and rafters against the
    same tables; parsing the feet-inch strings cost ~50 µs a report). Keyed by identity,
    the table kept beside its arrays, so a new table object is parsed afresh.
    """
    hit = _TABLES.get(id(table))
    if hit is not None and hit[0] is table:
        return hit[1]
    rows = tuple(table.spans_ft_in)
    sizes = np.array([NOMINAL_MM[r] for r in rows], dtype=np.float64)
    cols = np.asarray(table.spacings_m)
    grid = np.array([[table.span_m(r, c) for c in range(cols.size)] for r in rows])
    for a in (sizes, cols, grid):
        a.flags.writeable = False  # shared by every later call
    if len(_TABLES) >= 64:  # configs made on the fly: keep the cache bounded
        _TABLES.clear()
    _TABLES[id(table)] = (table, (rows, sizes, cols, grid))
    return rows, sizes, cols, grid


def _check_kind(
    ctx: Context, kind: str, mask: np.ndarray, table: SpanTable, halved: np.ndarray
) -> list[tuple[str, str]]:
    """(name, message) for each member of ``mask`` over its allowable span."""
    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return []
    rows, sizes, cols, allowed_grid = _table_arrays(table)
    w_mm, d_mm = ctx.local_sorted[idx, 0] * 1000.0, ctx.local_sorted[idx, 1] * 1000.0
    # Nominal size by the T4 tolerances, restricted to the table's rows.
    match = (np.abs(w_mm[:, None] - sizes[None, :, 0]) < ctx.cfg.lumber_width_tol_mm) & (
        np.abs(d_mm[:, None] - sizes[None, :, 1]) < ctx.cfg.lumber_depth_tol_mm
    )
    tabulated = match.any(axis=1)
    row = np.argmax(match, axis=1)
    # [S] Column: the tightest spacing that covers the measured one; a member with no side
    # neighbour, or wider than the widest column, is checked in the widest column.
    covers = _spacing_per_member(ctx, mask)[idx, None] <= cols[None, :] + ctx.cfg.spacing_tol_m
    col = np.where(covers.any(axis=1), np.argmax(covers, axis=1), cols.size - 1)
    allowed = allowed_grid[row, col]
    length = ctx.plan_length[idx]
    span = np.where(halved[idx], length / 2.0, length)
    tol = ctx.cfg.span_tol
    out: list[tuple[str, str]] = []
    for k in np.flatnonzero(~tabulated):
        name = ctx.names[idx[k]]
        known = ", ".join(f"{NOMINAL_MM[r][0]}×{NOMINAL_MM[r][1]}" for r in rows)
        out.append(
            (
                name,
                f"Span: {name} cross-section {w_mm[k]:.0f}×{d_mm[k]:.0f} mm has no allowable "
                f"{kind} span in {table.source} (sizes {known})",
            )
        )
    for k in np.flatnonzero(tabulated & (span > (1.0 + tol) * allowed)):
        name = ctx.names[idx[k]]
        w, d = NOMINAL_MM[rows[row[k]]]
        what = (
            f"effective span {span[k]:.2f} m (half of {length[k]:.2f} m, purlin-braced)"
            if halved[idx[k]]
            else f"clear span {span[k]:.2f} m"
        )
        out.append(
            (
                name,
                f"Span: {name} {what} > {1 + tol:.2f} × {allowed[k]:.2f} m allowed for "
                f"{w}×{d} at {cols[col[k]] * 1000.0:.0f} mm o.c.",
            )
        )
    return out


def check_span_limits(ctx: Context) -> TestResult:
    """Paper T2: joist span ≤ (1+τ)·𝒯_J and rafter effective span ≤ (1+τ)·𝒯_R.

    [S] The span L is the horizontal projection of the member's long axis (the IRC rafter
    tables are horizontal projections; joists are level), as the paper measures members,
    not supports (spec §3.2 derives the joist limits from member length). A rafter touching
    a ``Purlin`` member has its span halved (paper §6.2.2, decided per rafter). The table
    column is the tightest spacing that covers the member's measured on-centre spacing.
    Hip and valley rafters (README keywords) have no span table (IRC R802.4.3 sizes them
    by depth instead) and are not checked here.
    """
    joists = ctx.of("Joist")
    rafters = ctx.of("Rafter")
    halved = np.zeros(ctx.n, dtype=bool)
    if rafters.any():
        c = ctx.contacts
        if c is None:
            return TestResult("span_limits", False, (ctx.overflow_message(),))
        purlin = ctx.of("Purlin")
        halved[c.i[rafters[c.i] & purlin[c.j]]] = True
        halved[c.j[rafters[c.j] & purlin[c.i]]] = True
    bad = _check_kind(ctx, "joist", joists, ctx.cfg.joist_spans, halved)
    bad += _check_kind(ctx, "rafter", rafters, ctx.cfg.rafter_spans, halved)
    return TestResult(
        name="span_limits",
        passed=not bad,
        messages=ctx.cap([m for _, m in bad]),
        members=tuple(dict.fromkeys(n for n, _ in bad)),
        measured={
            "joists": int(joists.sum()),
            "rafters": int(rafters.sum()),
            "purlin_braced": int(halved.sum()),
            "violations": len(bad),
        },
    )
