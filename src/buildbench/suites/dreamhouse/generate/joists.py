"""Choose each section's joist direction so every floor level keeps a clean 16 in layout.

The validator's T3 (paper appendix §6.3) groups joists by elevation and direction, splits
a group into runs of joists whose extents along that direction overlap, and checks the
gaps between side-by-side neighbours. Two sections whose joist bays overlap in that sense
but stand apart across the joists (the two legs of a U, the ends of a Z) would show one
false wide gap. Sections start with joists spanning their short side; a section caught
in such a run is turned 90° until no run has a hole.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .floor import joist_bays, p_range
from .frame import OC16, STORY_H
from .params import SectionSpec


def _holes(secs: tuple[SectionSpec, ...]) -> list[int]:
    """Sections (indices) in a joist run whose layout positions leave a hole; empty when clean."""
    groups: dict[tuple[float, str], list[tuple[float, float, int]]] = {}
    for i, s in enumerate(secs):
        a_lo, a_hi = joist_bays(s)
        for k in range(s.stories):
            key = (round(s.z_base_m + k * STORY_H, 3), s.joist_axis)
            groups.setdefault(key, []).extend(
                (float(lo), float(hi), i) for lo, hi in zip(a_lo, a_hi, strict=True)
            )
    for items in groups.values():
        items.sort()
        run: list[int] = []
        reach = -np.inf
        for lo, hi, i in [*items, (np.inf, np.inf, -1)]:
            if lo >= reach and run:
                bad = _hole_in(secs, sorted(set(run)))
                if bad:
                    return bad
                run = []
            if i >= 0:
                run.append(i)
                reach = max(reach, hi) if run[1:] else hi
    return []


def _hole_in(secs: tuple[SectionSpec, ...], members: list[int]) -> list[int]:
    """The members when their layout index ranges across the joists do not form one interval."""
    spans = sorted(
        (int(round(p_range(secs[i])[0] / OC16)), int(round(p_range(secs[i])[1] / OC16)) - 1) for i in members
    )
    end = spans[0][1]
    for lo, hi in spans[1:]:
        if lo > end + 1:
            return members
        end = max(end, hi)
    return []


def resolve_joist_axes(secs: tuple[SectionSpec, ...]) -> tuple[SectionSpec, ...] | None:
    """Sections with joist axes that give every floor level a hole-free layout, or None.

    Starts from joists along each section's shorter side and turns the smallest offending
    section (never the same one twice) until clean.
    """
    cur = tuple(replace(s, joist_axis="y" if s.width_m >= s.depth_m else "x") for s in secs)
    turned: set[int] = set()
    for _ in range(2 * len(secs) + 1):
        bad = _holes(cur)
        if not bad:
            return cur
        options = [i for i in bad if i not in turned] or bad
        i = min(options, key=lambda k: (cur[k].width_m * cur[k].depth_m, k))
        turned.add(i)
        flip = "x" if cur[i].joist_axis == "y" else "y"
        cur = cur[:i] + (replace(cur[i], joist_axis=flip),) + cur[i + 1 :]
    return None
