"""Weld forces inside a rigid group: a linear-elastic frame analysis of its welds.

Blocks held together by intact welds move as one rigid body in MuJoCo (one
free joint per group, see ``build``). MuJoCo's inverse dynamics gives, per
block, the wrench the rest of the group must deliver to it (mass times
acceleration less gravity, contacts and applied forces: ``cfrc_int`` of a
block body without children). Which weld carries how much follows from
statics, over a spanning tree of the group's welds:

* a tree weld carries the wrenches of every block beyond it (its child's
  subtree in the weld tree), moved to the weld's anchor: welds that form a
  tree (vehicles, rockets, plain beams) are statically determinate,
  whatever their stiffness;
* a weld that closes a loop (a Brace, or a second attachment between
  blocks already joined) makes the group indeterminate: the loop welds'
  wrenches are the redundants of the force method, chosen so the welds'
  elastic energy is least (compatible deformations), and the tree welds
  on the loops' paths give up what the loops take.

Every weld is a 6-DOF spring at its anchor (translational stiffness ``k_t``,
rotational ``k_r``); only their ratios matter. Per group the small system of
the redundants is solved once per topology, and the groups of a machine are
stacked into one network (``stack``), so a tick costs a few matrix products
for the whole machine: sparse where large (a node lies beyond only the welds
on its path to the root, a loop crosses only the welds between its ends), so
the cost grows with the paths' lengths, not with blocks times welds.
``WeldNetwork.bounds`` bounds every weld's load by two sums over the nodes,
which lets the simulation skip the analysis while no weld is near its limit.

Units: metres, newtons; wrenches are ``(force, torque about the anchor)`` in
the group's (root block's) frame, delivered to the weld's second block (the
first gets the opposite).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from scipy import sparse


def _skew(r: np.ndarray) -> np.ndarray:
    """Cross-product matrices of the rows of ``r``, shape (m, 3, 3)."""
    out = np.zeros((r.shape[0], 3, 3))
    out[:, 0, 1], out[:, 0, 2] = -r[:, 2], r[:, 1]
    out[:, 1, 0], out[:, 1, 2] = r[:, 2], -r[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -r[:, 1], r[:, 0]
    return out


def _to_anchor(origin: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """``(torque about origin, force)`` → ``(force, torque about anchor)``, shape (m, 6, 6)."""
    out = np.zeros((anchors.shape[0], 6, 6))
    out[:, :3, 3:] = np.eye(3)
    out[:, 3:, :3] = np.eye(3)
    out[:, 3:, 3:] = _skew(origin[None, :] - anchors)
    return out


def _to_origin(origin: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``(force, torque about point)`` → ``(torque about origin, force)``, shape (m, 6, 6)."""
    out = np.zeros((points.shape[0], 6, 6))
    out[:, :3, :3] = _skew(points - origin[None, :])
    out[:, :3, 3:] = np.eye(3)
    out[:, 3:, :3] = np.eye(3)
    return out


Matrix: TypeAlias = np.ndarray | sparse.csr_array
"""A mostly empty matrix: sparse when large, dense when small (one BLAS call beats sparse's overhead)."""

_DENSE_UP_TO = 1 << 15
"""Entries up to which a ``Matrix`` stays dense."""


def _matrix(dense: np.ndarray | sparse.sparray) -> Matrix:
    """``dense`` as a ``Matrix``."""
    size = dense.shape[0] * dense.shape[1]
    if size <= _DENSE_UP_TO:
        return dense if isinstance(dense, np.ndarray) else dense.toarray()
    return sparse.csr_array(dense)


@dataclass(frozen=True)
class Loops:
    """The redundants of one group: its loop welds' wrenches from its tree welds' wrenches.

    Attributes:
        tree: The group's tree rows (output rows of its tree welds).
        rows: Output rows of its loop welds.
        weighted: Tree wrenches (flat) → the right side of the least-energy system, ``Mᵀ·D⁻¹``, (6r, 6m_t);
            when small, already times ``inverse`` (straight to the loop wrenches).
        inverse: The inverse of that system's matrix, (6r, 6r); None when ``weighted`` holds it.
        give_up: Loop-weld wrenches → what the tree welds give up, ``M``, sparse (6m_t, 6r).
    """

    tree: slice
    rows: slice
    weighted: Matrix
    inverse: np.ndarray | None
    give_up: Matrix


@dataclass(frozen=True)
class WeldNetwork:
    """Welds of one rigid group (or a stack of groups), ready to turn block wrenches into weld wrenches.

    Output rows are the tree welds first (the tree rows), then the loop welds.

    Attributes:
        welds: Weld index per output row.
        beyond: ``beyond[row, k]`` is 1 where node ``k`` lies beyond tree
            row ``row`` (in its child's subtree), sparse (m_t, n): a node
            lies beyond only the welds on its path to the root.
        transfer: Per tree row: sign × subtree wrench → weld wrench, (m_t, 6, 6).
        centres_to_origin: Per node: ``(force, torque about its centre)`` →
            ``(torque about origin, force)``, (n, 6, 6).
        loops: The redundants, one entry per group with loops.
        bounds: Per output row, ``[[a_F, b_F], [a_T, b_T]]``, (rows, 2, 2): the
            weld's force is at most ``a_F·F + b_F·T`` and its torque at most
            ``a_T·F + b_T·T``, where ``F`` and ``T`` sum the norms of the
            nodes' forces and torques (about the origin) in its group.
    """

    welds: np.ndarray
    beyond: Matrix
    transfer: np.ndarray
    centres_to_origin: np.ndarray
    loops: tuple[Loops, ...]
    bounds: np.ndarray

    def own(self, blocks: np.ndarray, nodes: np.ndarray | None = None, loads: np.ndarray | None = None) -> np.ndarray:
        """Per node, the wrench its welds deliver to it, shape (n_nodes, 6) (arguments as :meth:`wrenches`)."""
        own = blocks.reshape(-1, 6)
        if nodes is not None and loads is not None and len(nodes):
            # A block pushed by its own thrust needs that much less from its welds (``nodes`` holds each once).
            own = own.copy()
            own[nodes] -= (self.centres_to_origin[nodes] @ loads[:, :, None])[:, :, 0]
        return own

    def wrenches(
        self, blocks: np.ndarray, nodes: np.ndarray | None = None, loads: np.ndarray | None = None
    ) -> np.ndarray:
        """Weld wrenches from the wrenches that the blocks receive from their group.

        Args:
            blocks: Shape (n_nodes, 6) (or (2·n_nodes, 3)): per node, the
                wrench the rest of its group delivers to it (torque about
                the group's centre of mass, then force, in the group's frame,
                as MuJoCo's ``cfrc_int``).
            nodes: Nodes that feel forces ``blocks`` does not count as
                external (thrust, rope tension), shape (k,), each at most once.
            loads: Those forces, ``(force, torque about the node's centre)``
                in the group's frame, shape (k, 6).

        Returns:
            Shape (len(welds), 6): per output row (weld ``welds[row]``), the
            force (N) and torque about its anchor (N·m) the weld delivers to
            its second block.
        """
        return self.weld_wrenches(self.own(blocks, nodes, loads))

    def buffers(self) -> Buffers:
        """Buffers for :meth:`weld_wrenches`, for a caller that analyses every tick."""
        out = np.empty((self.welds.size, 6))
        tree = out[: self.transfer.shape[0]]
        parts = []
        for part in self.loops:
            give = np.empty(part.give_up.shape[0]) if isinstance(part.give_up, np.ndarray) else None
            parts.append((tree[part.tree].reshape(-1), tree[part.tree], out[part.rows].reshape(-1), give))
        return Buffers(out, tree, np.empty((self.transfer.shape[0], 6)), tuple(parts))

    def weld_wrenches(self, own: np.ndarray, buffers: Buffers | None = None) -> np.ndarray:
        """:meth:`wrenches` from the nodes' wrenches as :meth:`own` gives them: a new array, or ``buffers``'
        ``out`` (:meth:`buffers`; the same products, the same BLAS calls on the same operands, written in place)."""
        work = self.buffers() if buffers is None else buffers
        beyond = self.beyond
        subtrees = np.matmul(beyond, own, out=work.subtrees) if isinstance(beyond, np.ndarray) else beyond @ own
        # A subtree's wrench, (torque about the origin, force), moved to its weld's anchor: O(rows).
        np.einsum("eij,ej->ei", self.transfer, subtrees, out=work.tree)
        for part, (flat, tree, into, give) in zip(self.loops, work.parts, strict=True):
            # The loop rows follow the tree rows: their wrenches go straight into ``out``.
            if part.inverse is None and isinstance(part.weighted, np.ndarray):
                loops = np.matmul(part.weighted, flat, out=into)
            else:
                loops = part.weighted @ flat
                if part.inverse is not None:
                    loops = np.matmul(part.inverse, loops, out=into)
            gave = np.matmul(part.give_up, loops, out=give) if give is not None else part.give_up @ loops
            tree -= gave.reshape(-1, 6)
            if loops is not into:
                into[...] = loops
        return work.out


@dataclass(frozen=True)
class Buffers:
    """Where :meth:`WeldNetwork.weld_wrenches` writes: ``out`` (rows, 6), its tree rows ``tree``, the subtrees'
    wrenches, and per loop part its tree rows flat and as rows, its rows of ``out`` flat, and what its tree
    rows give up (None where ``give_up`` is sparse)."""

    out: np.ndarray
    tree: np.ndarray
    subtrees: np.ndarray
    parts: tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], ...]


def weld_network(
    centres: np.ndarray,
    parents: np.ndarray,
    tree_welds: np.ndarray,
    origin: np.ndarray,
    ends: np.ndarray,
    anchors: np.ndarray,
    stiffness: np.ndarray,
) -> WeldNetwork:
    """Prepare the weld analysis of a connected group of welded blocks.

    Args:
        centres: Node (block) centres, shape (n, 3), in the group's frame (m).
        parents: Kinematic parent node per node (-1 for node 0), shape (n,);
            every parent comes before its children.
        tree_welds: Per node, the weld joining it to its parent (-1 for node 0), shape (n,).
        origin: Point that torques are taken about (the group's centre of
            mass), same frame (m).
        ends: Node indices ``(first, second)`` per weld, shape (m, 2).
        anchors: Weld anchor points, shape (m, 3), same frame (m).
        stiffness: ``(k_t, k_r)`` per weld, shape (m, 2): translational (N/m)
            and rotational (N·m/rad) stiffness.

    Raises:
        ValueError: When a node's tree weld does not join it to its parent,
            or a parent comes after its child.
    """
    n, m = centres.shape[0], ends.shape[0]
    child = np.flatnonzero(parents >= 0)
    edge = tree_welds[child]
    if np.any(edge < 0) or not np.all(
        np.sort(ends[edge], axis=1) == np.sort(np.column_stack([parents[child], child]), axis=1)
    ):
        raise ValueError("every block but the root needs the weld that joins it to its parent")
    if np.any(parents[child] >= child) or parents[0] >= 0:
        raise ValueError("node 0 must be the root and every parent must come before its children")
    # ancestors[k, row]: tree row `row` lies on the path from node k to the root.
    ancestors = np.zeros((n, child.size))
    for row, node in enumerate(child.tolist()):
        ancestors[node] = ancestors[parents[node]]
        ancestors[node, row] = 1.0
    sign = np.where(ends[edge, 1] == child, 1.0, -1.0)
    lever = origin[None, :] - anchors[edge]
    transfer = sign[:, None, None] * _to_anchor(origin, anchors[edge])
    # A tree row carries at most the norms of every node's force, and the torques plus the lever of the force.
    reach = np.linalg.norm(lever, axis=1)
    bounds = np.zeros((m, 2, 2))
    bounds[: child.size, 0, 0] = 1.0
    bounds[: child.size, 1] = np.column_stack([reach, np.ones(child.size)])
    loop = np.setdiff1d(np.arange(m), edge)
    loops: tuple[Loops, ...] = ()
    if loop.size:
        # A unit wrench in a loop weld is delivered to its second block and taken from its first:
        # the tree welds on the path of either end (not on both) give it up.
        crossing = ancestors[ends[loop, 1]] - ancestors[ends[loop, 0]]  # (r, m_t)
        # Each loop crosses only the tree welds between its two ends: M's nonzero 6×6 blocks.
        loop_of, row_of = np.nonzero(crossing)
        at_origin = _to_origin(origin, anchors[loop])
        give_up_blocks = np.zeros((child.size, 6, loop.size, 6))
        give_up_blocks[row_of, :, loop_of, :] = crossing[loop_of, row_of, None, None] * (
            transfer[row_of] @ at_origin[loop_of]
        )
        give_up = give_up_blocks.reshape(6 * child.size, 6 * loop.size)
        flex = 1.0 / np.repeat(stiffness, 3, axis=1)  # (m, 6) compliance per wrench component
        weighted = give_up.T * flex[edge].reshape(-1)  # Mᵀ·D⁻¹
        energy = weighted @ give_up + np.diag(flex[loop].reshape(-1))
        # Least elastic energy: (Mᵀ D⁻¹ M + D_loop⁻¹)·X = Mᵀ D⁻¹ · (tree wrenches); the energy
        # matrix is small (6r square) and well conditioned (compliances within a factor of 48).
        inverse = np.linalg.inv(energy)
        # Small: one dense product; large: the sparse right side, then the small dense inverse.
        solve: Matrix = _matrix(weighted)
        kept: np.ndarray | None = inverse
        if isinstance(solve, np.ndarray):
            solve, kept = inverse @ weighted, None
        loops = (Loops(slice(0, child.size), slice(child.size, m), solve, kept, _matrix(give_up)),)
        bounds[child.size :] = _loop_bounds(bounds[: child.size], np.abs(inverse) @ np.abs(weighted),
                                            np.abs(give_up), np.flatnonzero(crossing.any(axis=0)))
    return WeldNetwork(
        welds=np.concatenate([edge, loop]).astype(int),
        beyond=_matrix(np.ascontiguousarray(ancestors.T)),
        transfer=transfer,
        centres_to_origin=_to_origin(origin, centres),
        loops=loops,
        bounds=bounds,
    )


def _loop_bounds(tree: np.ndarray, solve: np.ndarray, give_up: np.ndarray, crossed: np.ndarray) -> np.ndarray:
    """The loop rows' ``WeldNetwork.bounds``; also widens ``tree``'s rows that a loop crosses, in place.

    Per component, a tree wrench is bounded as its weld's norm is; the loops' solve and give-up
    are linear, so the absolute values of their matrices carry those component bounds
    through, and a weld's norm is at most the norm of its components' bounds (each a sum
    ``a·F + b·T``, so at most ``|a|·F + |b|·T``).
    """
    components = np.repeat(tree, 3, axis=1).reshape(-1, 2)  # (6m_t, [F, T]) per tree wrench component
    loops = solve @ components
    widened = (components + give_up @ loops).reshape(-1, 2, 3, 2)
    tree[crossed] = np.linalg.norm(widened[crossed], axis=2)
    return np.linalg.norm(loops.reshape(-1, 2, 3, 2), axis=2)


def _block_diagonal(blocks: list[Matrix]) -> Matrix:
    """``blocks`` along the diagonal as one ``Matrix``.

    A small result is filled in directly: scipy's ``block_diag`` costs more than the rest of a
    stack (a fifth of a rebuild after a break). The blocks' entries are 0 or 1 (``beyond``), so
    this is the matrix ``block_diag`` gives, entry for entry.
    """
    rows, cols = sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)
    if rows * cols > _DENSE_UP_TO:
        return _matrix(sparse.block_diag([sparse.csr_array(b) for b in blocks], format="csr"))
    out = np.zeros((rows, cols), dtype=np.result_type(*(b.dtype for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b if isinstance(b, np.ndarray) else b.toarray()
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def stack(networks: list[WeldNetwork]) -> WeldNetwork:
    """Several groups' networks as one: every tree row in order, then every loop weld.

    Output row welds index the concatenation of the groups' welds (group
    ``k``'s weld ``w`` is ``w`` plus the welds of the groups before it). Each
    group keeps its own frame: the caller gives every node's wrench in its
    own group's frame.
    """
    rows = np.cumsum([0] + [net.transfer.shape[0] for net in networks])
    welds = np.cumsum([0] + [net.welds.size for net in networks])
    loop_rows = rows[-1] + np.cumsum([0] + [net.welds.size - net.transfer.shape[0] for net in networks])
    loops = [
        Loops(slice(rows[k], rows[k + 1]), slice(loop_rows[k], loop_rows[k + 1]), part.weighted, part.inverse,
              part.give_up)
        for k, net in enumerate(networks)
        for part in net.loops
    ]
    tree_rows = [net.transfer.shape[0] for net in networks]
    return WeldNetwork(
        welds=np.concatenate(
            [net.welds[:t] + welds[k] for k, (net, t) in enumerate(zip(networks, tree_rows, strict=True))]
            + [net.welds[t:] + welds[k] for k, (net, t) in enumerate(zip(networks, tree_rows, strict=True))]
        ).astype(int),
        beyond=_block_diagonal([net.beyond for net in networks]),
        transfer=np.concatenate([net.transfer for net in networks]).reshape(-1, 6, 6),
        centres_to_origin=np.concatenate([net.centres_to_origin for net in networks]).reshape(-1, 6, 6),
        loops=tuple(loops),
        bounds=np.concatenate(
            [net.bounds[:t] for net, t in zip(networks, tree_rows, strict=True)]
            + [net.bounds[t:] for net, t in zip(networks, tree_rows, strict=True)]
        ).reshape(-1, 2, 2),
    )
