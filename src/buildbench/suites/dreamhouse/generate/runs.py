"""Splitting long runs into stock-length pieces and finding which piece covers a point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .frame import MODULE

#: Longest single piece of plate, rim, sill, beam or ridge stock: 16 ft (four modules).
STOCK_M = 4 * MODULE


@dataclass(frozen=True)
class Run:
    """Pieces of one straight run along a line coordinate.

    Attributes:
        starts: Piece start coordinates (ascending), metres.
        ends: Piece end coordinates, metres.
        index: Member index of each piece (filled in once the pieces are added), one per start.
    """

    starts: np.ndarray
    ends: np.ndarray
    index: np.ndarray

    def covering(self, pos: np.ndarray | float) -> np.ndarray:
        """Member index of the piece covering each position (nearest piece at the ends)."""
        # The last piece starting at or before each position, the first one before the run:
        # with ascending starts (one index per start) that is the count of starts after the
        # first at or before it, one search and one gather (this runs once per batch).
        return self.index[self.starts[1:].searchsorted(pos, "right")]


def split_run(
    a: float, b: float, stock: float = STOCK_M, offset: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Cut ``[a, b]`` into pieces no longer than ``stock``, joints on ``offset + k·stock`` from ``a``.

    Args:
        a: Run start (metres).
        b: Run end (metres), ``b > a``.
        stock: Longest piece.
        offset: Shift of the joint pattern (laps the joints of stacked plates).

    Returns:
        Piece starts and ends.
    """
    cuts = [a]
    c = a + offset + stock
    while c < b - 0.3:
        if c > a + 0.3:
            cuts.append(c)
        c += stock
    return np.array(cuts), np.array([*cuts[1:], b])
