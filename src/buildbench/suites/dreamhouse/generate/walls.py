"""Stud walls: sole plate, studs at 16 in o.c., doubled top plate, framed openings
(king, trimmer, two-ply header, cripples, rough sill), gable studs and shed knee walls.

A wall is described along its own line: coordinate ``s`` in ``[a, b]`` along the wall,
a 89 mm band ``[t0, t0 + 0.089]`` across it, and the sole plate bottom ``zf``. Members are
emitted per wall in a handful of batches (one per member type).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .frame import D2X4, D2X8, D2X12, OC16, STUD_H, T2X, WALLS, FrameBuilder, Num
from .openings import Opening
from .runs import Run, split_run

#: Head of standard openings above the sole plate top (6 ft 8 in door + jamb allowance).
HEAD_M = 2.045
#: Openings wider than this get a 2x12 header tight under the top plate (no cripples).
WIDE_OPENING_M = 1.25
#: Shortest gable stud or cripple worth framing.
MIN_STUD_M = 0.15
#: Header plies sit at the two faces of the wall (two 38 mm plies in an 89 mm wall).
_PLY_T = ((0.0, T2X), (D2X4 - T2X, D2X4))

Profile = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class WallLine:
    """Where one wall runs and what it carries.

    Attributes:
        section: Section name.
        story: Story index.
        side: Name of the wall (``front``, ``back``, ``left``, ``right``, ``bear1``, ``part1``).
        axis: World axis the wall runs along (``x`` or ``y``).
        a: Start of the wall along the axis.
        b: End of the wall along the axis.
        t0: Start of the 89 mm band on the other axis.
        zf: Bottom of the sole plate.
        origin: Where the 16 in stud layout starts (the outside corner).
        mode: ``full`` (studs and top plates), ``seat`` (a lone plate rafters bear on) or
            ``gable`` (an A-frame end: studs from the sole plate up to the roof).
        profile: Roof underside over the wall (gable studs above the top plate / gable-mode
            stud tops), or None.
        knee_top: Shed high wall: top of the knee-wall plate the rafters bear on, or None.
        openings: Rough openings in this wall.
    """

    section: str
    story: int
    side: str
    axis: str
    a: float
    b: float
    t0: float
    zf: float
    origin: float
    mode: str = "full"
    profile: Profile | None = None
    knee_top: float | None = None
    openings: tuple[Opening, ...] = field(default=())


def _box(
    w: WallLine, s_lo: np.ndarray, s_hi: Num, t_lo: Num, t_hi: Num, z_lo: Num, z_hi: Num
) -> tuple[np.ndarray, np.ndarray]:
    """World corners of wall-frame boxes, one per entry of ``s_lo`` (the rest broadcast to it)."""
    k = len(s_lo)
    lo, hi = np.empty((k, 3)), np.empty((k, 3))
    si, ti = (0, 1) if w.axis == "x" else (1, 0)
    lo[:, si], hi[:, si], lo[:, ti], hi[:, ti] = s_lo, s_hi, t_lo, t_hi
    lo[:, 2], hi[:, 2] = z_lo, z_hi
    return lo, hi


def _add_run(
    fb: FrameBuilder,
    w: WallLine,
    prefix: str,
    tag: str,
    z_lo: float,
    z_hi: float,
    offset: float,
    parents: Callable,
) -> Run:
    starts, ends = split_run(w.a, w.b, offset=offset)
    lo, hi = _box(w, starts, ends, w.t0, w.t0 + D2X4, z_lo, z_hi)
    idx = fb.add_aabb(
        prefix, tag, lo, hi, phase=WALLS, section=w.section, story=w.story, parents=parents(starts, ends)
    )
    return Run(starts, ends, idx)


def _top_of(w: WallLine, s: np.ndarray, flat_top: float) -> np.ndarray:
    """Stud tops at positions ``s``: a flat plate line, or the roof profile (lowest point of the stud)."""
    if w.mode == "gable" and w.profile is not None:
        return np.minimum(w.profile(s - T2X / 2), w.profile(s + T2X / 2))
    tops = np.empty(s.shape)
    tops.fill(flat_top)
    return tops


def build_wall(fb: FrameBuilder, w: WallLine, below: Run | None) -> Run:
    """Frame one wall; return the run rafters or the next floor bear on.

    Args:
        fb: Member collector.
        w: The wall.
        below: What the sole plate bears on (rim, beam), for support edges; None = unknown.
    """
    tag = f"s{w.story + 1}{w.side}"
    on_below = (lambda st, en: below.covering((st + en) / 2.0)) if below is not None else (lambda st, en: -1)
    sole = _add_run(fb, w, "SolePlate", tag, w.zf, w.zf + T2X, 0.0, on_below)
    if w.mode == "seat":
        return sole
    zs = w.zf + T2X
    plate_z = zs + STUD_H
    # Common studs on the 16 in layout from the outside corner, plus a stud at each end.
    k = np.arange(int(np.floor((w.b - w.origin) / OC16)) + 1)
    lattice = w.origin + OC16 * k
    lattice = lattice[(lattice > w.a + 2 * T2X) & (lattice < w.b - 2 * T2X)]
    pos = np.concatenate([[w.a + T2X / 2], lattice, [w.b - T2X / 2]])
    for o in w.openings:
        pos = pos[(pos + T2X / 2 < o.lo - 2 * T2X - 0.01) | (pos - T2X / 2 > o.hi + 2 * T2X + 0.01)]
    tops = _top_of(w, pos, plate_z)
    keep = tops - zs >= MIN_STUD_M
    pos, tops = pos[keep], tops[keep]
    lo, hi = _box(w, pos - T2X / 2, pos + T2X / 2, w.t0, w.t0 + D2X4, zs, tops)
    studs = fb.add_aabb(
        "GableStud" if w.mode == "gable" else "Stud", tag, lo, hi,
        phase=WALLS, section=w.section, story=w.story, parents=sole.covering(pos),
    )  # fmt: skip
    _frame_openings(fb, w, tag, sole, zs, plate_z)
    if w.mode == "gable":
        return sole
    order = np.argsort(pos)
    spos, sidx = pos[order], studs[order]

    def on_studs(st: np.ndarray, en: np.ndarray) -> np.ndarray:
        if len(sidx) == 0:
            return np.full(len(st), -1)
        return sidx[np.minimum(np.searchsorted(spos, st), len(sidx) - 1)]

    top1 = _add_run(fb, w, "TopPlate", tag, plate_z, plate_z + T2X, 0.0, on_studs)
    top2 = _add_run(
        fb, w, "TopPlate", tag + "b", plate_z + T2X, plate_z + 2 * T2X, -2 * 1.2192,
        lambda st, en: top1.covering((st + en) / 2.0),
    )  # fmt: skip
    z_top = plate_z + 2 * T2X
    if w.knee_top is not None:
        return _knee_wall(fb, w, tag, top2, z_top)
    if w.profile is not None:
        _gable_studs(fb, w, tag, top2, z_top)
    return top2


def _gable_studs(fb: FrameBuilder, w: WallLine, tag: str, plate: Run, z_top: float) -> None:
    """Studs from the top plate up to the roof underside over a gable-end wall."""
    assert w.profile is not None
    k = np.arange(1, int(np.floor((w.b - w.origin) / OC16)) + 1)
    pos = w.origin + OC16 * k
    pos = pos[(pos > w.a + T2X) & (pos < w.b - T2X)]
    tops = np.minimum(w.profile(pos - T2X / 2), w.profile(pos + T2X / 2))
    keep = tops - z_top >= MIN_STUD_M
    pos, tops = pos[keep], tops[keep]
    lo, hi = _box(w, pos - T2X / 2, pos + T2X / 2, w.t0, w.t0 + D2X4, z_top, tops)
    fb.add_aabb(
        "GableStud",
        tag + "g",
        lo,
        hi,
        phase=WALLS,
        section=w.section,
        story=w.story,
        parents=plate.covering(pos),
    )


def _knee_wall(fb: FrameBuilder, w: WallLine, tag: str, plate: Run, z_top: float) -> Run:
    """Shed high wall: studs from the top plate to a raised plate under the rafters."""
    assert w.knee_top is not None
    k = np.arange(int(np.floor((w.b - w.origin) / OC16)) + 1)
    lattice = w.origin + OC16 * k
    lattice = lattice[(lattice > w.a + 2 * T2X) & (lattice < w.b - 2 * T2X)]
    pos = np.concatenate([[w.a + T2X / 2], lattice, [w.b - T2X / 2]])
    z_plate = w.knee_top - T2X
    lo, hi = _box(w, pos - T2X / 2, pos + T2X / 2, w.t0, w.t0 + D2X4, z_top, z_plate)
    studs = fb.add_aabb(
        "GableStud",
        tag + "k",
        lo,
        hi,
        phase=WALLS,
        section=w.section,
        story=w.story,
        parents=plate.covering(pos),
    )
    return _add_run(
        fb, w, "TopPlate", tag + "k", z_plate, w.knee_top, 0.0,
        lambda st, en: studs[np.minimum(np.searchsorted(pos, st), len(studs) - 1)],
    )  # fmt: skip


def opening_heads(openings: tuple[Opening, ...], zs: float) -> tuple[np.ndarray, np.ndarray]:
    """Head height (top of the rough opening) and header depth of each opening.

    Openings up to :data:`WIDE_OPENING_M` get a 2x8 header at :data:`HEAD_M` with short
    cripples above; wider ones a 2x12 header tight under the top plate.

    Args:
        openings: The wall's openings.
        zs: Top of the sole plate.
    """
    wide = np.array([o.width > WIDE_OPENING_M for o in openings])
    return zs + np.where(wide, STUD_H - D2X12, HEAD_M), np.where(wide, D2X12, D2X8)


def _lattice_in(w: WallLine, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Layout positions strictly inside each ``(lo, hi)`` (its midpoint when none falls there).

    Returns:
        The opening index of each position, and the positions (openings without a layout
        position last, at their midpoints).
    """
    # Plain floats: a wall has a few openings of a few positions each, too few for numpy.
    which: list[int] = []
    pos: list[float] = []
    empty: list[int] = []
    for o, (a, b) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        before = len(pos)
        for k in range(math.ceil((a - w.origin) / OC16), math.floor((b - w.origin) / OC16) + 1):
            p = w.origin + OC16 * k
            if p - T2X / 2 > a + 0.02 and p + T2X / 2 < b - 0.02:
                which.append(o)
                pos.append(p)
        if len(pos) == before:
            empty.append(o)
    pos += [(lo[e] + hi[e]) / 2.0 for e in empty]
    return np.array(which + empty, dtype=np.int64), np.array(pos, dtype=np.float64)


def _pairs(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``first[0], second[0], first[1], second[1], …``: two members per opening, in order."""
    out = np.empty(2 * len(first))
    out[0::2], out[1::2] = first, second
    return out


def _frame_openings(fb: FrameBuilder, w: WallLine, tag: str, sole: Run, zs: float, plate_z: float) -> None:
    """Kings, trimmers, two-ply headers, rough sills and cripples of every opening in the wall."""
    if not w.openings:
        return
    t_lo, t_hi, sec, st = w.t0, w.t0 + D2X4, w.section, w.story
    ops = w.openings
    o_lo = np.array([o.lo for o in ops])
    o_hi = np.array([o.hi for o in ops])
    z_head, depth = opening_heads(ops, zs)
    # Kings (full height, or up to the roof in an A-frame end) and trimmers: two per opening.
    ks = _pairs(o_lo - 2 * T2X, o_hi + T2X)
    lo, hi = _box(w, ks, ks + T2X, t_lo, t_hi, zs, _top_of(w, ks + T2X / 2, plate_z))
    fb.add_aabb("King", tag, lo, hi, phase=WALLS, section=sec, story=st, parents=sole.covering(ks))
    ts = _pairs(o_lo - T2X, o_hi)
    lo, hi = _box(w, ts, ts + T2X, t_lo, t_hi, zs, z_head.repeat(2))
    trim = fb.add_aabb("Trimmer", tag, lo, hi, phase=WALLS, section=sec, story=st, parents=sole.covering(ts))
    # Headers: two plies per opening at the wall faces, bearing on the trimmers.
    (p0, p1), (q0, q1) = _PLY_T
    lo, hi = _box(
        w, (o_lo - T2X).repeat(2), (o_hi + T2X).repeat(2),
        np.array((t_lo + p0, t_lo + q0) * len(ops)), np.array((t_lo + p1, t_lo + q1) * len(ops)),
        z_head.repeat(2), (z_head + depth).repeat(2),
    )  # fmt: skip
    head = fb.add_aabb(
        "Header", tag, lo, hi, phase=WALLS, section=sec, story=st, parents=trim[0::2].repeat(2)
    )
    # Rough sills under windows (flat 2x4 headers: the taxonomy has no window-sill type, and
    # a "Sill" would be read as an elevated foundation sill by T8).
    win = np.array([not o.door for o in ops])
    z_sill = z_head - np.array([o.height for o in ops])
    if win.any():
        lo, hi = _box(w, o_lo[win], o_hi[win], t_lo, t_hi, z_sill[win] - T2X, z_sill[win])
        fb.add_aabb(
            "Header", tag + "sill", lo, hi, phase=WALLS, section=sec, story=st, parents=trim[0::2][win]
        )
    # Cripples on the 16 in layout inside each opening (its middle when none falls inside):
    # above the header up to the plate or roof, and below a window's rough sill.
    which, pos = _lattice_in(w, o_lo, o_hi)
    top = _top_of(w, pos, plate_z)
    above = z_head[which] + depth[which]
    up = top - above >= MIN_STUD_M / 2
    low = win[which]
    p = np.concatenate([pos[up], pos[low]])
    if len(p):
        z_lo = np.concatenate([above[up], np.full(int(low.sum()), zs)])
        z_hi = np.concatenate([top[up], z_sill[which][low] - T2X])
        par = np.concatenate([head[2 * which[up]], sole.covering(pos[low])])
        lo, hi = _box(w, p - T2X / 2, p + T2X / 2, t_lo, t_hi, z_lo, z_hi)
        fb.add_aabb("Cripple", tag, lo, hi, phase=WALLS, section=sec, story=st, parents=par)
