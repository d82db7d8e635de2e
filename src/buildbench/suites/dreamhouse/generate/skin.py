"""The facade ("skin") of a frame for the paper's Facade condition: sheathing on the outer
face of every exterior wall (openings left open) and roofing on the rafters.

The skin is a separate list of thin boxes; the frame is untouched. Roofing is one panel
per rafter, lifted onto the rafter's top face and as wide as the 24 in rafter spacing, so
the roof planes close without computing plane outlines (the panel on a hip rafter caps the
stepped ends of the jack panels beside it). Wall sheathing follows each wall's top line,
stepping along gable and A-frame profiles in strips.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import libm
from .frame import D2X4, OC24, ROOF, STUD_H, T2X, WALLS, FrameArrays, FrameBuilder
from .walls import WallLine, opening_heads

#: Wall sheathing thickness (1/2 in panels).
SHEATHING_M = 0.012
#: Roof deck thickness (5/8 in panels).
ROOFING_M = 0.016
#: Widest strip used to step sheathing along a sloped top.
STRIP_M = OC24
#: Panels thinner or lower than this are left out.
_MIN_M = 0.02


@dataclass(frozen=True)
class Cladding:
    """An exterior wall to clad.

    Attributes:
        line: The framed wall.
        z_bottom: Bottom of the cladding (sill bottom on the ground floor, rim bottom above).
        blocked: Parts of the wall another section stands against, as ``(start, end, z_top)``:
            not clad below ``z_top`` (the neighbour's eaves), clad above it (where the
            neighbour's roof stands against the wall the panels are hidden in its attic).
    """

    line: WallLine
    z_bottom: float
    blocked: tuple[tuple[float, float, float], ...]


def _outside(intervals: list[tuple[float, float]], a: float, b: float) -> list[tuple[float, float]]:
    """Parts of ``[a, b]`` outside every interval."""
    out, cur = [], a
    for lo, hi in sorted(intervals):
        if lo > cur:
            out.append((cur, min(lo, b)))
        cur = max(cur, hi)
    if cur < b:
        out.append((cur, b))
    return [(s, e) for s, e in out if e - s > _MIN_M]


def _regions(c: Cladding) -> list[tuple[float, float, float, float | Callable[[np.ndarray], np.ndarray]]]:
    """(s0, s1, z_lo, top) rectangles or profile-topped regions covering the wall face."""
    w = c.line
    grow = D2X4 + SHEATHING_M if w.axis == "y" else 0.0
    a, b = w.a - grow, w.b + grow
    zs = w.zf + T2X
    plate_top = zs + STUD_H + 2 * T2X
    top: float | Callable[[np.ndarray], np.ndarray] = plate_top
    if w.mode == "gable" and w.profile is not None:
        top = w.profile
    blocked = [(lo, hi) for lo, hi, _ in c.blocked]
    holes = [(o.lo, o.hi) for o in w.openings] + blocked
    out: list[tuple[float, float, float, float | Callable[[np.ndarray], np.ndarray]]] = [
        (s, e, c.z_bottom, top) for s, e in _outside(holes, a, b)
    ]
    if w.openings:
        heads, _ = opening_heads(w.openings, zs)
        for o, z_head in zip(w.openings, heads.tolist(), strict=True):
            out.append((o.lo, o.hi, z_head, top))
            out.append((o.lo, o.hi, c.z_bottom, w.zf if o.door else z_head - o.height))
    for lo, hi, z_top in c.blocked:
        # Above a lower neighbour's eaves the wall shows again (openings stay clear of it).
        for s, e in _outside([(o.lo, o.hi) for o in w.openings if o.lo < hi and o.hi > lo], lo, hi):
            out.append((s, e, max(c.z_bottom, z_top), top))
    free = _outside([(lo, hi) for lo, hi, z_top in c.blocked if z_top > plate_top], a, b)
    if w.mode == "full" and w.knee_top is not None:
        out += [(s, e, plate_top, w.knee_top) for s, e in free]
    elif w.mode == "full" and w.profile is not None:
        out += [(s, e, plate_top, w.profile) for s, e in free]
    return out


def _wall_panels(c: Cladding) -> tuple[np.ndarray, np.ndarray]:
    """Corner arrays of one wall's sheathing panels."""
    # Rectangles add one-element lists: np.concatenate converts them in C.
    s0: list[Any] = []
    s1: list[Any] = []
    z0: list[Any] = []
    z1: list[Any] = []
    for a, b, z_lo, top in _regions(c):
        if callable(top):
            edges = np.linspace(a, b, int(np.ceil((b - a) / STRIP_M)) + 1)
            tops = np.minimum(top(edges[:-1]), top(edges[1:]))
            s0.append(edges[:-1])
            s1.append(edges[1:])
            z0.append(np.full(len(tops), z_lo))
            z1.append(tops)
        else:
            s0.append([a])
            s1.append([b])
            z0.append([z_lo])
            z1.append([top])
    if not s0:
        return np.zeros((0, 3)), np.zeros((0, 3))
    sa, sb, za, zb = (np.concatenate(v) for v in (s0, s1, z0, z1))
    keep = (zb - za > _MIN_M) & (sb - sa > _MIN_M)
    sa, sb, za, zb = sa[keep], sb[keep], za[keep], zb[keep]
    w = c.line
    outward = w.side in ("front", "left")
    t_lo = w.t0 - SHEATHING_M if outward else w.t0 + D2X4
    lo, hi = np.empty((len(sa), 3)), np.empty((len(sa), 3))
    si, ti = (0, 1) if w.axis == "x" else (1, 0)
    lo[:, si], hi[:, si], lo[:, ti], hi[:, ti], lo[:, 2], hi[:, 2] = sa, sb, t_lo, t_lo + SHEATHING_M, za, zb
    return lo, hi


def build_skin(frame: FrameArrays, cladding: list[Cladding]) -> FrameArrays:
    """Sheathing panels for every clad wall and one roofing panel per rafter."""
    fb = FrameBuilder()
    for c in cladding:
        if c.line.mode == "seat":
            continue
        lo, hi = _wall_panels(c)
        fb.add_aabb(
            "Sheathing", f"s{c.line.story + 1}{c.line.side}", lo, hi,
            phase=WALLS, section=c.line.section, story=c.line.story,
        )  # fmt: skip
    rafter = np.flatnonzero(frame.named("Rafter"))
    if rafter.size:
        mats = frame.matrices[rafter]
        size = frame.sizes_m[rafter]
        normal = mats[:, :3, 2]
        centers = mats[:, :3, 3] + normal * (size[:, 2:3] / 2.0 + ROOFING_M / 2.0)
        # libm (the C library), not numpy's ufuncs, whose kernel depends on the CPU (model.libm).
        yaw = libm.arctan2(mats[:, 1, 0], mats[:, 0, 0])
        pitch = libm.arcsin(np.clip(mats[:, 2, 0], -1.0, 1.0))
        sizes = np.empty((rafter.size, 3))
        sizes[:, 0], sizes[:, 1], sizes[:, 2] = size[:, 0], OC24 + 0.02, ROOFING_M
        sections = np.array(frame.sections, dtype=object)[rafter]
        for sec in dict.fromkeys(sections.tolist()):
            m = sections == sec
            fb.add(
                "Roofing",
                "",
                centers[m],
                sizes[m],
                phase=ROOF,
                section=sec,
                story=int(frame.stories[rafter][m].max()),
                yaw=yaw[m],
                pitch=pitch[m],
            )
    return fb.finish()
