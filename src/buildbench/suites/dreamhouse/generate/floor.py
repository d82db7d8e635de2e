"""Foundation (sills, posts) and floor frames (rims, built-up centre beams, joists).

Each section's joists run along its ``joist_axis`` (``a``); centre beams and interior
bearing walls run across them (``p``). Joist positions lie on one house-wide 16 in layout
offset half a bay from the module lines, so joists of neighbouring sections at one
elevation stay on one grid (paper T3 groups joists by elevation and direction).
Floors longer than three modules (12 ft) along ``a`` are cut into bays by centre beams,
so no 2x10 joist exceeds the paper's T5 deflection limit (≈ 3.91 m, spec §3.2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .frame import D2X6, D2X10, FLOOR, FOUNDATION, MODULE, OC16, POST6, T2X, FrameBuilder, Num, rows
from .params import SectionSpec
from .runs import Run, split_run

#: Largest joist bay: three modules (12 ft), i.e. 3.58 m clear for 2x10 joists (T5 limit ≈ 3.91 m).
MAX_BAY_MODULES = 3
#: Largest distance between posts under an elevated sill (paper T8 needs ≤ 3.0 m).
POST_SPACING_M = 2 * MODULE
#: Plies of 2x10 in a built-up centre beam.
BEAM_PLIES = 2
BEAM_W = BEAM_PLIES * T2X


def a_range(sec: SectionSpec) -> tuple[float, float]:
    """Extent of the section along its joists."""
    return (sec.y0_m, sec.y1_m) if sec.joist_axis == "y" else (sec.x0_m, sec.x1_m)


def p_range(sec: SectionSpec) -> tuple[float, float]:
    """Extent of the section across its joists."""
    return (sec.x0_m, sec.x1_m) if sec.joist_axis == "y" else (sec.y0_m, sec.y1_m)


def beam_lines(sec: SectionSpec) -> np.ndarray:
    """Positions along the joists of the centre-beam lines that cut the floor into bays."""
    a0, a1 = a_range(sec)
    m = int(round((a1 - a0) / MODULE))
    n = -(-m // MAX_BAY_MODULES)
    return np.array([a0 + MODULE * round(j * m / n) for j in range(1, n)], dtype=np.float64)


def joist_bays(sec: SectionSpec) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each joist bay along the joists (rim and beam faces)."""
    a0, a1 = a_range(sec)
    lines = beam_lines(sec)
    return np.concatenate([[a0 + T2X], lines + BEAM_W / 2]), np.concatenate([lines - BEAM_W / 2, [a1 - T2X]])


def joist_p(sec: SectionSpec) -> np.ndarray:
    """Joist positions across the joists: the house-wide half-offset 16 in layout."""
    p0, p1 = p_range(sec)
    return p0 + OC16 / 2 + OC16 * np.arange(int(round((p1 - p0) / OC16)))


def cross_axis(sec: SectionSpec) -> str:
    """World axis of the beams and bearing walls (across the joists)."""
    return "x" if sec.joist_axis == "y" else "y"


@dataclass(frozen=True)
class FloorRefs:
    """What a floor (or foundation) offers to what is built on it.

    Attributes:
        sides: Perimeter runs per wall side (sills, rims or wall top plates).
        beams: One run per centre-beam line (girder sills, beam plies or bearing-wall plates).
        bay_starts: Start of each joist bay along the joists (floors only).
        joists: Joist member indices, shape ``(bays, positions)`` (floors only).
    """

    sides: dict[str, Run]
    beams: list[Run]
    bay_starts: np.ndarray = field(default_factory=lambda: np.zeros(0))
    joists: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))


def _side_boxes(sec: SectionSpec, width: float) -> dict[str, tuple[str, float, float, float]]:
    """Perimeter members of band ``width``: side → (axis, start, end, band start)."""
    x0, x1, y0, y1 = sec.x0_m, sec.x1_m, sec.y0_m, sec.y1_m
    return {
        "front": ("x", x0, x1, y0),
        "back": ("x", x0, x1, y1 - width),
        "left": ("y", y0 + width, y1 - width, x0),
        "right": ("y", y0 + width, y1 - width, x1 - width),
    }


def _world(axis: str, s: Num, t: Num, z: Num) -> np.ndarray:
    """Points from (along-axis, other-axis, z) coordinates (scalars broadcast)."""
    k = rows(s, t, z)
    out = np.empty((k, 3))
    si, ti = (0, 1) if axis == "x" else (1, 0)
    out[:, si], out[:, ti], out[:, 2] = s, t, z
    return out


def _line(
    fb: FrameBuilder,
    prefix: str,
    tag: str,
    axis: str,
    span: tuple[float, float],
    t0: float,
    tw: float,
    z: tuple[float, float],
    phase: int,
    sec: SectionSpec,
    story: int,
    parent_at: Callable[[np.ndarray], np.ndarray],
) -> Run:
    """A straight run of stock-length pieces along ``axis``."""
    starts, ends = split_run(*span)
    lo = _world(axis, starts, t0, z[0])
    hi = _world(axis, ends, t0 + tw, z[1])
    idx = fb.add_aabb(
        prefix,
        tag,
        lo,
        hi,
        phase=phase,
        section=sec.name,
        story=story,
        parents=parent_at((starts + ends) / 2.0),
    )
    return Run(starts, ends, idx)


def _ground(pos: np.ndarray) -> np.ndarray:
    return np.full(len(pos), -1)


def build_foundation(fb: FrameBuilder, sec: SectionSpec) -> FloorRefs:
    """Perimeter and girder sills (2x6 flat) on the ground, or on 6x6 posts when the section is raised."""
    z0 = sec.z_base_m
    lines = dict(_side_boxes(sec, D2X6))
    p0, p1 = p_range(sec)
    for j, ab in enumerate(beam_lines(sec)):
        lines[f"beam{j + 1}"] = (cross_axis(sec), p0 + D2X6, p1 - D2X6, ab - D2X6 / 2)
    runs: dict[str, Run] = {}
    for side, (axis, a, b, t0) in lines.items():
        parent_at: Callable[[np.ndarray], np.ndarray] = _ground
        if z0 > 0.0:
            n = int(np.ceil((b - a - POST6) / POST_SPACING_M)) + 1
            pos = np.linspace(a + POST6 / 2, b - POST6 / 2, n)
            t = np.full(n, t0 + D2X6 / 2)
            lo = _world(axis, pos - POST6 / 2, t - POST6 / 2, np.zeros(n))
            hi = _world(axis, pos + POST6 / 2, t + POST6 / 2, np.full(n, z0))
            posts = fb.add_aabb("BeamPost", side, lo, hi, phase=FOUNDATION, section=sec.name, story=0)

            def parent_at(q: np.ndarray, pos: np.ndarray = pos, posts: np.ndarray = posts) -> np.ndarray:
                return posts[np.abs(q[:, None] - pos[None, :]).argmin(1)]

        runs[side] = _line(
            fb, "Sill", side, axis, (a, b), t0, D2X6, (z0, z0 + T2X), FOUNDATION, sec, 0, parent_at
        )
    beams = [runs.pop(f"beam{j + 1}") for j in range(len(beam_lines(sec)))]
    return FloorRefs(runs, beams)


def build_floor(fb: FrameBuilder, sec: SectionSpec, story: int, zb: float, below: FloorRefs) -> FloorRefs:
    """Rim boards, centre beams and joists of one floor whose bottom is at ``zb``.

    Args:
        fb: Member collector.
        sec: The section.
        story: Story the floor belongs to (0 = ground floor).
        zb: Bottom of the rims and joists.
        below: Sills (ground floor) or wall top plates (upper floors) it bears on.
    """
    z = (zb, zb + D2X10)
    tag = f"f{story + 1}"
    rims = {
        side: _line(
            fb, "Rim", f"{tag}{side}", axis, (a, b), t0, T2X, z, FLOOR, sec, story, below.sides[side].covering
        )
        for side, (axis, a, b, t0) in _side_boxes(sec, T2X).items()
    }
    p0, p1 = p_range(sec)
    cross = cross_axis(sec)
    beams: list[Run] = []
    for j, ab in enumerate(beam_lines(sec)):
        plies = [
            _line(fb, "CenterBeam", f"{tag}b{j + 1}{'abcd'[k]}", cross, (p0 + T2X, p1 - T2X), ab - BEAM_W / 2 + k * T2X,
                  T2X, z, FLOOR, sec, story, below.beams[j].covering)
            for k in range(BEAM_PLIES)
        ]  # fmt: skip
        beams.append(plies[0])
    # Joists, bay by bay from the low end: first bay bears on the end rim, the others on beams.
    ps = joist_p(sec)
    a_lo, a_hi = joist_bays(sec)
    bays, n = len(a_lo), len(ps)
    p = np.tile(ps, bays)
    axis = sec.joist_axis
    lo = _world(axis, np.repeat(a_lo, n), p - T2X / 2, np.full(bays * n, z[0]))
    hi = _world(axis, np.repeat(a_hi, n), p + T2X / 2, np.full(bays * n, z[1]))
    first = rims["front" if axis == "y" else "left"]
    parents = np.concatenate([run.covering(ps) for run in [first, *beams]])
    joists = fb.add_aabb("Joist", tag, lo, hi, phase=FLOOR, section=sec.name, story=story, parents=parents)
    return FloorRefs(rims, beams, a_lo, joists.reshape(bays, n))
