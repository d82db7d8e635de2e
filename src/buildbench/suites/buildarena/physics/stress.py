"""Weld forces inside a rigid group: a linear-elastic frame analysis of its welds.

Blocks held together by intact welds move as one rigid body in MuJoCo (one
free joint per group, see ``build``). What MuJoCo then tells us per block is
the wrench the block's welds must deliver to it for the motion it has: its
mass times acceleration, less gravity, contacts and applied forces. Which
weld delivers how much is a statics problem over the group's welds:

* a tree of welds (vehicles, rockets, plain beams) is statically
  determinate: each weld carries the load of everything beyond it, whatever
  the welds' stiffness;
* a group with loops (braces) is indeterminate: the welds share the load in
  proportion to their stiffness, as in the direct stiffness method of
  structural analysis.

Both cases are one computation: every weld is a 6-DOF spring at its anchor
(translational stiffness ``k_t``, rotational ``k_r``), the group's stiffness
matrix ``K = Bᵀ·D·B`` is factored once per topology with one node held
fixed (the loads are self-equilibrated, so which node does not matter), and
each control tick solves ``K·u = w`` for the node loads ``w`` and reads the
weld wrenches ``D·B·u``.

Units: metres, newtons; a node's load is ``(force, torque about its centre)``,
a weld's wrench ``(force, torque about its anchor)``, both in the group's
(root block's) frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor, cho_solve
from scipy.sparse.linalg import splu


def _skew(r: np.ndarray) -> np.ndarray:
    """Cross-product matrices of the rows of ``r``, shape (m, 3, 3)."""
    out = np.zeros((r.shape[0], 3, 3))
    out[:, 0, 1], out[:, 0, 2] = -r[:, 2], r[:, 1]
    out[:, 1, 0], out[:, 1, 2] = r[:, 2], -r[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -r[:, 1], r[:, 0]
    return out


def _transfer(r: np.ndarray) -> np.ndarray:
    """Per row of ``r`` (anchor minus node centre): the 6×6 map from a node's
    small motion ``(translation, rotation)`` to the motion of the anchor point."""
    out = np.zeros((r.shape[0], 6, 6))
    eye = np.eye(3)
    out[:, :3, :3] = eye
    out[:, 3:, 3:] = eye
    out[:, :3, 3:] = -_skew(r)
    return out


DENSE_NODES = 40
"""Groups up to this many blocks keep their load-to-wrench maps as dense matrices
(at most ~12 MB each): one matrix product per tick instead of a sparse solve."""


@dataclass(frozen=True)
class WeldNetwork:
    """The factored stiffness of one rigid group's welds.

    Small groups hold the whole map from loads to weld wrenches as dense
    matrices (``dense``); large ones the sparse pieces (``sparse``).

    Attributes:
        n_nodes: Blocks in the group; node 0 is held fixed.
        n_welds: Welds in the group.
        dense: ``(subtree map, extra map)``: subtree wrenches → weld wrenches,
            and extra node loads of nodes 1.. → weld wrenches (subtracted).
        sparse: ``(loads, factor, recover)``: subtree wrenches → node loads,
            the factored stiffness with node 0's rows removed, and node
            motions → weld wrenches.
    """

    n_nodes: int
    n_welds: int
    dense: tuple[np.ndarray, np.ndarray] | None
    sparse: tuple[sp.csr_matrix, object, sp.csr_matrix] | None

    def wrenches(self, subtree: np.ndarray, extra: np.ndarray | None = None) -> np.ndarray:
        """Weld wrenches from the group's subtree wrenches.

        Args:
            subtree: Shape (n_nodes, 6) (or (2·n_nodes, 3)): per node, the
                wrench its kinematic parent delivers to the node and everything
                attached beyond it, as MuJoCo's ``cfrc_int``: torque about the
                group's centre of mass, then force, in the group's frame.
            extra: Shape (n_nodes, 6): forces acting on nodes that ``subtree``
                does not count as external (thrust, rope tension), as
                ``(force, torque about the node's centre)``.

        Returns:
            Shape (n_welds, 6): per weld, the force (N) and torque about its
            anchor (N·m) it delivers to its second node (the first gets the
            opposite).
        """
        if self.dense is not None:
            from_subtree, from_extra = self.dense
            out = from_subtree @ subtree.reshape(-1)
            if extra is not None:
                out -= from_extra @ extra[1:].reshape(-1)
            return out.reshape(self.n_welds, 6)
        loads, factor, recover = self.sparse  # type: ignore[misc]
        own = loads @ subtree.reshape(-1)
        if extra is not None:
            own -= extra.reshape(-1)
        return (recover @ factor.solve(own[6:])).reshape(self.n_welds, 6)  # type: ignore[attr-defined]


def _load_map(centres: np.ndarray, parents: np.ndarray, origin: np.ndarray) -> sp.csr_matrix:
    """Subtree wrenches (torque about ``origin``, force) → each node's own load (force, torque about its centre).

    A node's own load is its subtree wrench less its children's; moving the
    torque from ``origin`` to the node's centre adds ``(origin − c) × F``.
    """
    n = centres.shape[0]
    children = np.flatnonzero(parents >= 0)
    rows = np.concatenate([np.arange(6 * n), (6 * parents[children, None] + np.arange(6)).ravel()])
    cols = np.concatenate([np.arange(6 * n), (6 * children[:, None] + np.arange(6)).ravel()])
    vals = np.concatenate([np.ones(6 * n), -np.ones(6 * children.size)])
    own = sp.csr_matrix((vals, (rows, cols)), shape=(6 * n, 6 * n))
    shift = np.zeros((n, 6, 6))
    shift[:, :3, 3:] = np.eye(3)  # force rows
    shift[:, 3:, :3] = np.eye(3)  # torque rows
    shift[:, 3:, 3:] = _skew(origin[None, :] - centres)
    return (sp.block_diag(list(shift), format="csr") @ own).tocsr()


def weld_network(
    centres: np.ndarray,
    parents: np.ndarray,
    origin: np.ndarray,
    ends: np.ndarray,
    anchors: np.ndarray,
    stiffness: np.ndarray,
) -> WeldNetwork:
    """Assemble and factor the stiffness of a connected group of welded blocks.

    Args:
        centres: Node (block) centres, shape (n, 3), in the group's frame (m).
        parents: Kinematic parent node per node (-1 for node 0), shape (n,).
        origin: Point that subtree torques are taken about (the group's
            centre of mass), same frame (m).
        ends: Node indices ``(first, second)`` per weld, shape (m, 2).
        anchors: Weld anchor points, shape (m, 3), same frame (m).
        stiffness: ``(k_t, k_r)`` per weld, shape (m, 2): translational (N/m)
            and rotational (N·m/rad) stiffness.

    Raises:
        ValueError: When the welds do not connect every node to node 0.
    """
    n, m = centres.shape[0], ends.shape[0]
    first = -_transfer(anchors - centres[ends[:, 0]])
    second = _transfer(anchors - centres[ends[:, 1]])
    rows = np.broadcast_to(np.arange(6 * m).reshape(m, 6, 1), (m, 6, 6))
    cols = [np.broadcast_to(6 * ends[:, k, None, None] + np.arange(6), (m, 6, 6)) for k in (0, 1)]
    b = sp.csr_matrix(
        (
            np.concatenate([first.ravel(), second.ravel()]),
            (np.concatenate([rows.ravel(), rows.ravel()]), np.concatenate([c.ravel() for c in cols])),
        ),
        shape=(6 * m, 6 * n),
    )
    d = sp.diags(np.repeat(stiffness, 3, axis=1).ravel())
    free = (d @ b).tocsr()[:, 6:]
    k = (b[:, 6:].T @ free).tocsc()
    loads = _load_map(centres, parents, origin)
    if n > DENSE_NODES:
        try:
            factor = splu(k)
        except RuntimeError as exc:  # singular: some node is not welded to node 0
            raise ValueError(f"the welds do not connect all {n} blocks of the group") from exc
        return WeldNetwork(n, m, None, (loads, factor, free))
    try:
        flexibility = cho_solve(cho_factor(k.toarray()), np.eye(6 * (n - 1)))
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"the welds do not connect all {n} blocks of the group") from exc
    from_extra = free @ flexibility
    return WeldNetwork(n, m, (from_extra @ loads[6:].toarray(), from_extra), None)
