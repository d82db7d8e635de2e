"""Building blocks of a group's weld analysis (``stress.weld_network``): wrench moves and weld-tree paths.

A wrench moves between two points by a 6×6 matrix: its force and torque swap places (``SWAP``) and the
torque gains the lever's cross product (``skew``). ``moves`` builds one such matrix per lever in two
index operations, with exactly the values (and negations) that filling ``skew`` into copies of ``SWAP``
gives. ``tree_paths`` gives, per block, the tree welds on its path to the group's root.

These run once per group and weld break, on groups of a few to a few hundred blocks, so they are
written for few numpy calls rather than for large arrays.
"""

from __future__ import annotations

import numpy as np


def skew(r: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Cross-product matrices of the rows of ``r``, shape (m, 3, 3) (into ``out`` if given: its
    diagonal must be zero)."""
    out = np.zeros((r.shape[0], 3, 3)) if out is None else out
    out[:, 0, 1], out[:, 0, 2] = -r[:, 2], r[:, 1]
    out[:, 1, 0], out[:, 1, 2] = r[:, 2], -r[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -r[:, 1], r[:, 0]
    return out


SWAP = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
"""``(a, b)`` → ``(b, a)`` for two 3-vectors: the part of a wrench's move that moves no point."""


def _move_table(corner: int) -> np.ndarray:
    """Per cell of a flat 6×6 move, the column of ``[r, −r, 0, 1]`` (see :func:`moves`) it holds: ``SWAP``'s
    zeros and ones, and in the 3×3 corner whose top-left flat cell is ``corner`` the cross-product matrix
    of ``r`` (:func:`skew`'s entries: ``−r₂, r₁; r₂, −r₀; −r₁, r₀`` off its diagonal)."""
    table = np.where(SWAP.reshape(36) == 1.0, 7, 6)
    table[np.array([1, 2, 6, 8, 12, 13]) + corner] = [5, 1, 2, 3, 4, 0]
    return table


ANCHOR_MOVES = _move_table(21)
"""``(torque about a point, force)`` → ``(force, torque about a point r further)``: ``r``'s matrix bottom right."""
ORIGIN_MOVES = _move_table(0)
"""``(force, torque about a point)`` → ``(torque about a point r back, force)``: ``r``'s matrix top left."""
_ZERO_ONE = np.array([[0.0, 1.0]])


def moves(r: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The 6×6 moves of ``table`` (``ANCHOR_MOVES`` or ``ORIGIN_MOVES``) for each row of ``r``, shape (m, 6, 6).

    One gather from the columns ``[r, −r, 0, 1]``: the same values as a copy of ``SWAP`` per row with
    :func:`skew` of that row written into its corner (the same negations), with four numpy calls instead
    of fourteen.
    """
    columns = np.empty((r.shape[0], 8))
    columns[:, :3] = r
    np.negative(r, out=columns[:, 3:6])
    columns[:, 6:] = _ZERO_ONE
    return columns.take(table, axis=1).reshape(-1, 6, 6)


def tree_paths(parents: np.ndarray, child: np.ndarray, n: int) -> np.ndarray:
    """Per node, whether each tree row lies on its path to the root, shape (n, len(child)), 0 or 1 (uint8).

    Tree row ``k`` is the weld between node ``child[k]`` and its parent (``parents``: -1 for a root,
    every parent before its children). Built as one Python integer per node, one bit per row (its
    parent's bits and its own row's), then unpacked at once: a numpy row copy per node costs more.
    """
    size = child.size
    up = parents.tolist()
    masks = [0] * n
    for row, node in enumerate(child.tolist()):
        masks[node] = masks[up[node]] | (1 << row)
    width = (size + 7) // 8
    if not width:
        return np.zeros((n, 0), dtype=np.uint8)
    packed = np.frombuffer(b"".join([mask.to_bytes(width, "little") for mask in masks]), dtype=np.uint8)
    return np.unpackbits(packed.reshape(n, width), axis=1, count=size, bitorder="little")
