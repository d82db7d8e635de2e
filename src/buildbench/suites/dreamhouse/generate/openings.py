"""Door and window placement along a wall (rough-opening sizes in metres)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Rough-opening widths/heights (standard US unit sizes, converted to metres) [S].
WINDOW_WIDTHS = (0.610, 0.914, 1.219, 1.524)
WINDOW_HEIGHTS = (0.914, 1.219, 1.372)
DOOR_W, DOOR_H = 0.914, 2.032
INTERIOR_DOOR_W = 0.813
GARAGE_W, GARAGE_H = 2.438, 1.981
#: Clear wall kept beside each opening for its king and trimmer studs and a common stud.
SIDE_CLEAR_M = 0.35
#: No opening within this distance of a wall end (corner framing).
END_CLEAR_M = 0.6


@dataclass(frozen=True)
class Opening:
    """One rough opening.

    Attributes:
        center: Position along the wall line, metres.
        width: Rough-opening width.
        height: Rough-opening height.
        door: Doors reach the sole plate; windows sit on a rough sill.
    """

    center: float
    width: float
    height: float
    door: bool

    @property
    def lo(self) -> float:
        """Start of the rough opening."""
        return self.center - self.width / 2.0

    @property
    def hi(self) -> float:
        """End of the rough opening."""
        return self.center + self.width / 2.0


def free_intervals(a: float, b: float, blocked: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Parts of ``[a + END_CLEAR, b - END_CLEAR]`` outside the ``blocked`` intervals."""
    out = [(a + END_CLEAR_M, b - END_CLEAR_M)]
    for lo, hi in sorted(blocked):
        nxt: list[tuple[float, float]] = []
        for s, e in out:
            if hi <= s or lo >= e:
                nxt.append((s, e))
                continue
            if lo > s:
                nxt.append((s, lo - END_CLEAR_M))
            if hi < e:
                nxt.append((hi + END_CLEAR_M, e))
        out = nxt
    return [(s, e) for s, e in out if e > s]


def _place(
    rng: np.random.Generator, free: list[tuple[float, float]], width: float, centered: bool
) -> float | None:
    """Pick a centre for an opening of ``width`` in ``free`` (mutated to remove the used span)."""
    need = width + 2 * SIDE_CLEAR_M
    fits = [i for i, (s, e) in enumerate(free) if e - s >= need]
    if not fits:
        return None
    i = (
        max(fits, key=lambda k: free[k][1] - free[k][0])
        if centered
        else fits[int(rng.integers(0, len(fits)))]
    )
    s, e = free[i]
    lo, hi = s + need / 2.0, e - need / 2.0
    c = (lo + hi) / 2.0 if centered else float(lo + (hi - lo) * rng.random())
    c = round(c, 4)
    free[i : i + 1] = [(s, c - need / 2.0), (c + need / 2.0, e)]
    return c


def sample_openings(
    rng: np.random.Generator,
    free: list[tuple[float, float]],
    mean_count: float,
    *,
    entry: bool = False,
    garages: int = 0,
    interior: bool = False,
) -> list[Opening]:
    """Openings for one wall: the entry door (centred), garage doors, then windows.

    Args:
        rng: Generator for counts, sizes and positions.
        free: Wall intervals open for openings (consumed).
        mean_count: Mean number of windows per 5 m of free wall.
        entry: Put the entry door in this wall.
        garages: Number of garage doors to place first.
        interior: An interior wall: one passage door, no windows.
    """
    out: list[Opening] = []
    free = list(free)
    if interior:
        c = _place(rng, free, INTERIOR_DOOR_W, centered=False)
        return [] if c is None else [Opening(c, INTERIOR_DOOR_W, DOOR_H, True)]
    for _ in range(garages):
        c = _place(rng, free, GARAGE_W, centered=False)
        if c is not None:
            out.append(Opening(c, GARAGE_W, GARAGE_H, True))
    if entry:
        c = _place(rng, free, DOOR_W, centered=True)
        if c is not None:
            out.append(Opening(c, DOOR_W, DOOR_H, True))
    length = sum(e - s for s, e in free)
    for _ in range(min(int(rng.poisson(mean_count * length / 5.0)), 8)):
        w = float(WINDOW_WIDTHS[int(rng.integers(0, len(WINDOW_WIDTHS)))])
        h = float(WINDOW_HEIGHTS[int(rng.integers(0, len(WINDOW_HEIGHTS)))])
        c = _place(rng, free, w, centered=False)
        if c is not None:
            out.append(Opening(c, w, h, False))
    return sorted(out, key=lambda o: o.center)
