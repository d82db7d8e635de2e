"""The tight weld bound's fixed parts (``welds._WeldResponse``): per output row of a weld network, how its load
change follows from its group's largest tree row change, and the tree rows' order for the subtrees' sums."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .stress import WeldNetwork

DENSE_UP_TO = 1 << 15
"""Entries up to which a matrix of the bound stays dense (one BLAS call beats sparse's overhead)."""


def peak_bounds(network: WeldNetwork) -> np.ndarray:
    """Per output row, ``[[a, b], [c, d]]``, (rows, 2, 2): the change of its force is at most ``a·X_F + b·X_T``
    and of its torque ``c·X_F + d·X_T``, where ``X_F`` and ``X_T`` are the largest force and torque changes of
    its group's tree rows before the loops take their share (``transfer`` times the subtree sums).

    A tree row no loop crosses carries just that; the loops' solve and give-up are linear, so the absolute
    values of their matrices carry per-component bounds (each component at most its part's norm) through,
    and a part's norm is at most the norm of its components' bounds (as ``stress._loop_bounds``).
    """
    tree_rows = network.transfer.shape[0]
    out = np.zeros((network.welds.size, 2, 2))
    out[:tree_rows, 0, 0] = out[:tree_rows, 1, 1] = 1.0
    for part in network.loops:
        weighted = np.abs(_dense(part.weighted))
        solve = weighted if part.inverse is None else np.abs(part.inverse) @ weighted
        give_up = np.abs(_dense(part.give_up))
        components = np.repeat(out[part.tree], 3, axis=1).reshape(-1, 2)
        loops = solve @ components
        widened = (components + give_up @ loops).reshape(-1, 2, 3, 2)
        crossed = give_up.reshape(-1, 6 * give_up.shape[1]).any(axis=1)
        rows = out[part.tree]
        rows[crossed] = np.linalg.norm(widened[crossed], axis=2)
        out[part.tree] = rows
        out[part.rows] = np.linalg.norm(loops.reshape(-1, 2, 3, 2), axis=2)
    return out


def small_dense(matrix: sparse.csr_array) -> np.ndarray | sparse.csr_array:
    """``matrix`` dense where small (``DENSE_UP_TO``)."""
    return matrix.toarray() if matrix.shape[0] * matrix.shape[1] <= DENSE_UP_TO else matrix


def _dense(matrix: np.ndarray | sparse.csr_array) -> np.ndarray:
    return matrix if isinstance(matrix, np.ndarray) else matrix.toarray()


def tree_order(network: WeldNetwork) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per tree row its child node (the node beyond it nearest the root), the tree row above it (-1: none),
    and the tree rows deepest first (a subtree's sum then adds up from its rows' before theirs reach above)."""
    beyond = sparse.csr_array(network.beyond)
    depth = np.asarray(beyond.sum(axis=0)).reshape(-1)  # per node, the tree rows above it
    child = np.array([beyond.indices[a:b][np.argmin(depth[beyond.indices[a:b]])]
                      for a, b in zip(beyond.indptr[:-1], beyond.indptr[1:], strict=True)], dtype=int)
    columns = sparse.csc_array(beyond)
    parent = np.full(child.size, -1)
    for row, node in enumerate(child.tolist()):
        above = columns.indices[columns.indptr[node]: columns.indptr[node + 1]]
        up = above[depth[child[above]] == depth[node] - 1]
        parent[row] = up[0] if up.size else -1
    return child, parent, np.argsort(-depth[child], kind="stable")
