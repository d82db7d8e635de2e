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
stacked into one network (``stack``), so a tick costs a few sparse products
for the whole machine (a node lies beyond only the welds on its path to the
root, a loop crosses only the welds between its ends): the cost grows with
the paths' lengths, not with blocks times welds.

Every sum of a tick is taken in one fixed order (``RowSums``: numpy's
``add.reduceat`` and ``sum``, never BLAS, whose rounding depends on the
machine's kernel), so the C tick loop (``_tick.c``) computes the same loads
bit for bit, on any machine.
``WeldNetwork.bounds`` bounds every weld's load by two sums over the nodes,
which lets the simulation skip the analysis while no weld is near its limit.

Units: metres, newtons; wrenches are ``(force, torque about the anchor)`` in
the group's (root block's) frame, delivered to the weld's second block (the
first gets the opposite).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


def _skew(r: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Cross-product matrices of the rows of ``r``, shape (m, 3, 3) (into ``out`` if given: its
    diagonal must be zero)."""
    out = np.zeros((r.shape[0], 3, 3)) if out is None else out
    out[:, 0, 1], out[:, 0, 2] = -r[:, 2], r[:, 1]
    out[:, 1, 0], out[:, 1, 2] = r[:, 2], -r[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -r[:, 1], r[:, 0]
    return out


_SWAP = np.block([[np.zeros((3, 3)), np.eye(3)], [np.eye(3), np.zeros((3, 3))]])
"""``(a, b)`` → ``(b, a)`` for two 3-vectors: the part of :func:`_to_anchor` and :func:`_to_origin` that
moves no point (copied per weld: one copy costs less than building it)."""


def _to_anchor(origin: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """``(torque about origin, force)`` → ``(force, torque about anchor)``, shape (m, 6, 6)."""
    out = np.repeat(_SWAP[None], anchors.shape[0], axis=0)
    _skew(origin[None, :] - anchors, out[:, 3:, 3:])
    return out


def _to_origin(origin: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``(force, torque about point)`` → ``(torque about origin, force)``, shape (m, 6, 6)."""
    out = np.repeat(_SWAP[None], points.shape[0], axis=0)
    _skew(points - origin[None, :], out[:, :3, :3])
    return out


_NEXT, _LAST = np.array([1, 2, 0]), np.array([2, 0, 1])


def cross(arms: np.ndarray, forces: np.ndarray) -> np.ndarray:
    """Row-wise ``arms × forces``, shape (m, 3): ``a[next]·f[last] − a[last]·f[next]`` per component, in that
    order (the order of the C tick loop's)."""
    return _cross_twice(np.concatenate([arms, arms], axis=1), forces)


def _cross_twice(twice: np.ndarray, forces: np.ndarray) -> np.ndarray:
    """:func:`cross` of ``arms`` given as ``[arms, arms]`` (m, 6), whose column windows are the rotated rows."""
    doubled = np.concatenate([forces, forces], axis=1)
    return twice[:, 1:4] * doubled[:, 2:5] - twice[:, 2:5] * doubled[:, 1:4]


@dataclass(frozen=True)
class RowSums:
    """A sparse matrix that multiplies vectors in one fixed order.

    Output row ``rows[i]`` is the sum over its entries ``k`` (from ``starts[i]`` to the next
    start) of ``values[k]·x[columns[k]]``: the products first, then summed as numpy's
    ``add.reduceat`` sums a segment (its first product plus the others' pairwise sum), which
    the C tick loop repeats; rows without entries are zero. Entries are in row-major order.
    """

    size: int
    rows: np.ndarray
    starts: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, dense: np.ndarray) -> RowSums:
        """The nonzero entries of ``dense``."""
        rows, columns = np.nonzero(dense)
        return cls._entries(dense.shape[0], rows, columns, dense[rows, columns])

    @classmethod
    def among(cls, dense: np.ndarray, cells: np.ndarray) -> RowSums:
        """:meth:`of` where only the ``cells`` (flat indices into ``dense``, in increasing order) may be
        nonzero: the same entries, without scanning the zeros (a loop weld's matrices are mostly zero blocks)."""
        rows, columns = np.divmod(cells, dense.shape[1])
        values = dense[rows, columns]
        held = values != 0
        return cls._entries(dense.shape[0], rows[held], columns[held], values[held])

    @classmethod
    def _entries(cls, size: int, rows: np.ndarray, columns: np.ndarray, values: np.ndarray) -> RowSums:
        """The entries ``values`` at ``rows``, ``columns`` (row-major order) of a matrix of ``size`` rows."""
        starts = np.flatnonzero(np.diff(rows, prepend=-1))  # rows come sorted: where each begins
        return cls(size, rows[starts].astype(np.int64), starts.astype(np.int64), columns.astype(np.int64),
                   np.ascontiguousarray(values, dtype=float))

    def sums(self, x: np.ndarray) -> np.ndarray:
        """The rows with entries of ``self · x`` (``x`` one-dimensional), shape (len(rows),)."""
        if not self.rows.size:
            return np.zeros(0)
        return np.add.reduceat(self.values * x[self.columns], self.starts)

    @cached_property
    def full(self) -> bool:
        """Whether every row has entries (then :meth:`sums` gives the whole product)."""
        return self.rows.size == self.size

    def shifted(self, by: int) -> RowSums:
        """The same entries with every row index moved by ``by`` (for the C loop's stacked arrays)."""
        return RowSums(self.size, self.rows + by, self.starts, self.columns, self.values)


@dataclass(frozen=True)
class Loops:
    """The redundants of one group: its loop welds' wrenches from its tree welds' wrenches.

    Attributes:
        tree: The group's tree rows (output rows of its tree welds).
        rows: Output rows of its loop welds.
        weighted: Tree wrenches (flat, 6m_t) → the right side of the least-energy system, ``Mᵀ·D⁻¹``.
        inverse: The inverse of that system's matrix, (6r, 6r), C-ordered; each row times the
            right side is summed as numpy's ``sum`` (pairwise).
        give_up: Loop-weld wrenches → what the tree welds give up, ``M`` (6m_t rows).
    """

    tree: slice
    rows: slice
    weighted: RowSums
    inverse: np.ndarray
    give_up: RowSums


@dataclass(frozen=True)
class WeldNetwork:
    """Welds of one rigid group (or a stack of groups), ready to turn block wrenches into weld wrenches.

    Output rows are the tree welds first (the tree rows), then the loop welds.

    Attributes:
        welds: Weld index per output row.
        subtree_nodes: Per tree row in order, the nodes beyond it (in its child's subtree), in
            increasing order: a node lies beyond only the welds on its path to the root.
        subtree_starts: Where each tree row's nodes begin in ``subtree_nodes`` (each has one at least).
        signs: Per tree row, +1 where its child is the weld's second block, else -1.
        levers: Per tree row, its group's origin less the weld's anchor (m), (m_t, 3).
        arms: Per node, its centre less its group's origin (m), (n, 3).
        loops: The redundants, one entry per group with loops.
        bounds: Per output row, ``[[a_F, b_F], [a_T, b_T]]``, (rows, 2, 2): the
            weld's force is at most ``a_F·F + b_F·T`` and its torque at most
            ``a_T·F + b_T·T``, where ``F`` and ``T`` sum the norms of the
            nodes' forces and torques (about the origin) in its group.
    """

    welds: np.ndarray
    subtree_nodes: np.ndarray
    subtree_starts: np.ndarray
    signs: np.ndarray
    levers: np.ndarray
    arms: np.ndarray
    loops: tuple[Loops, ...]
    bounds: np.ndarray

    @property
    def nodes(self) -> int:
        return int(self.arms.shape[0])

    @property
    def tree_rows(self) -> int:
        return int(self.signs.size)

    @cached_property
    def _levers_twice(self) -> np.ndarray:
        return np.concatenate([self.levers, self.levers], axis=1)

    def reach(self) -> np.ndarray:
        """Per node, a bound on the torque about the origin of a unit force on it: the Frobenius norm of its
        arm's cross-product matrix, shape (n,)."""
        return np.linalg.norm(_skew(self.arms), axis=(1, 2))

    def own(self, blocks: np.ndarray, nodes: np.ndarray | None = None, loads: np.ndarray | None = None) -> np.ndarray:
        """Per node, the wrench its welds deliver to it, shape (n_nodes, 6) (arguments as :meth:`wrenches`)."""
        own = blocks.reshape(-1, 6)
        if nodes is not None and loads is not None and len(nodes):
            # A block pushed by its own thrust needs that much less from its welds (``nodes`` holds each once):
            # the load's force, and its torque about the origin (its arm × force, then its own torque).
            own = own.copy()
            own[nodes, :3] -= cross(self.arms[nodes], loads[:, :3]) + loads[:, 3:]
            own[nodes, 3:] -= loads[:, :3]
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

    def weld_wrenches(self, own: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """:meth:`wrenches` from the nodes' wrenches as :meth:`own` gives them, into ``out`` (rows, 6) if given.

        The order of every operation is the C tick loop's (``_tick.c``, ``weld_loads``).
        """
        out = np.empty((self.welds.size, 6)) if out is None else out
        tree = out[: self.tree_rows]
        if self.tree_rows:
            # A subtree's wrench (torque about the origin, force), moved to its weld's anchor.
            subtrees = np.add.reduceat(own[self.subtree_nodes], self.subtree_starts, axis=0)
            forces = subtrees[:, 3:]
            np.multiply(forces, self.signs[:, None], out=tree[:, :3])
            torques = subtrees[:, :3] + _cross_twice(self._levers_twice, forces)
            np.multiply(torques, self.signs[:, None], out=tree[:, 3:])
        for part in self.loops:
            flat = tree[part.tree].reshape(-1)
            weighted, give_up = part.weighted, part.give_up
            if weighted.full:
                right = weighted.sums(flat)
            else:
                right = np.zeros(weighted.size)
                right[weighted.rows] = weighted.sums(flat)
            # The loop rows follow the tree rows: their wrenches go straight into ``out``.
            loops = out[part.rows].reshape(-1)
            np.sum(part.inverse * right, axis=1, out=loops)
            if give_up.full:
                flat -= give_up.sums(loops)
            else:
                flat[give_up.rows] -= give_up.sums(loops)
        return out


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
    if np.any(edge < 0):
        raise ValueError("every block but the root needs the weld that joins it to its parent")
    joined, up = ends[edge], parents[child]
    if not np.all(((joined[:, 0] == up) & (joined[:, 1] == child)) | ((joined[:, 0] == child) & (joined[:, 1] == up))):
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
    transfer = sign[:, None, None] * _to_anchor(origin, anchors[edge])  # (force, torque about the anchor)
    # A tree row carries at most the norms of every node's force, and the torques plus the lever of the force.
    reach = np.linalg.norm(lever, axis=1)
    bounds = np.zeros((m, 2, 2))
    bounds[: child.size, 0, 0] = 1.0
    bounds[: child.size, 1] = np.column_stack([reach, np.ones(child.size)])
    in_tree = np.zeros(m, dtype=bool)
    in_tree[edge] = True
    loop = np.flatnonzero(~in_tree)
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
        # Only the cells of M's nonzero blocks (of Mᵀ's in Mᵀ·D⁻¹) may be nonzero.
        blocks = crossing != 0
        loops = (Loops(slice(0, child.size), slice(child.size, m), RowSums.among(weighted, _block_cells(blocks)),
                       np.ascontiguousarray(inverse), RowSums.among(give_up, _block_cells(blocks.T))),)
        bounds[child.size :] = _loop_bounds(bounds[: child.size], inverse, weighted, give_up,
                                            _GiveUp(crossing, transfer, at_origin))
    # Per tree row, the nodes beyond it in increasing order (the rows of ancestorsᵀ).
    rows, nodes = np.nonzero(ancestors.T)
    return WeldNetwork(
        welds=np.concatenate([edge, loop]).astype(int),
        subtree_nodes=nodes.astype(np.int64),
        subtree_starts=np.searchsorted(rows, np.arange(child.size)).astype(np.int64),
        signs=sign,
        levers=np.ascontiguousarray(lever),
        arms=centres - origin[None, :],
        loops=loops,
        bounds=bounds,
    )


def _block_cells(blocks: np.ndarray) -> np.ndarray:
    """The flat indices, in increasing order, of the cells of a matrix of 6×6 blocks that lie in the blocks
    set in ``blocks`` (a boolean matrix, one entry per block)."""
    return np.flatnonzero(np.repeat(np.repeat(blocks, 6, axis=0), 6, axis=1))


_SPARSE_ABOVE = 1 << 24
"""Multiply-adds of a dense product above which the mostly-zero factor goes through scipy's sparse product
(its set-up costs more than a small dense product)."""


def _product(a: np.ndarray, b: np.ndarray, dense_first: bool = True) -> np.ndarray:
    """``a @ b`` where the second factor (the first with ``dense_first=False``) is mostly zeros."""
    if a.shape[0] * a.shape[1] * b.shape[1] <= _SPARSE_ABOVE:
        return a @ b
    from scipy.sparse import csr_array  # only for large loops of welds: not on the start-up path

    return csr_array(a) @ b if not dense_first else (csr_array(b.T) @ a.T).T


@dataclass(frozen=True)
class _GiveUp:
    """The loops' ``M`` by its 6×6 blocks: block (tree row ``t``, loop ``l``) is
    ``crossing[l, t]·transfer[t] @ at_origin[l]``."""

    crossing: np.ndarray
    transfer: np.ndarray
    at_origin: np.ndarray


_SLACK = 1e-9
"""Share of the loops' absolute-value bound added to the exact bound: far above the rounding of the
analysis (a few hundred products per sum, each off by 1e-16), far below any load that matters."""

_TIGHT_FROM = 1 << 17
"""Entries of a group's ``Mᵀ·D⁻¹`` from which its bounds are taken on the products (``_loop_bounds``): below,
a tick's exact analysis costs so little that the products would cost more than the ticks they let skip."""

_CHUNK_FLOATS = 1 << 20
"""Floats of the tree rows' exact loop matrix held at once (8 MB)."""


def _loop_bounds(tree: np.ndarray, inverse: np.ndarray, weighted: np.ndarray, give_up: np.ndarray,
                 blocks: _GiveUp) -> np.ndarray:
    """The loop rows' ``WeldNetwork.bounds``; also widens ``tree``'s rows that a loop crosses, in place.

    Per component, a tree wrench is bounded as its weld's norm is. The loops' wrenches are
    ``S·x`` (``S = inverse·weighted``, ``x`` the tree wrenches) and the tree welds then carry
    ``(I − M·S)·x``: the absolute values of those two matrices carry the component bounds
    through, and a weld's norm is at most the norm of its components' bounds (each a sum
    ``a·F + b·T``, so at most ``|a|·F + |b|·T``). Taken on the products themselves rather than
    on their factors (``|M|·|inverse|·|weighted|``), the bounds keep the loops' cancellations:
    on a 509-block braced deck ten thousand times closer. ``_SLACK`` of the factors' bound
    covers the rounding of both the products here and the analysis.
    """
    components = np.repeat(tree, 3, axis=1).reshape(-1, 2)  # (6m_t, [F, T]) per tree wrench component
    loose = np.abs(inverse) @ (np.abs(weighted) @ components)
    crossed = np.flatnonzero(blocks.crossing.any(axis=0))
    if weighted.size < _TIGHT_FROM:  # on the factors: a vector product each
        widened = (components + np.abs(give_up) @ loose).reshape(-1, 2, 3, 2)
        tree[crossed] = np.linalg.norm(widened[crossed], axis=2)
        return np.linalg.norm(loose.reshape(-1, 2, 3, 2), axis=2)
    solve = _product(inverse, weighted)  # (6r, 6m_t)
    loops = np.abs(solve) @ components + _SLACK * loose
    widened = components.reshape(-1, 6, 2).copy()
    # Row block t of M·S is transfer[t] · Σ_l crossing[l, t]·(at_origin[l] · S's row block l).
    size = tree.shape[0]
    moved = np.matmul(blocks.at_origin, solve.reshape(-1, 6, 6 * size)).reshape(blocks.crossing.shape[0], -1)
    crossing = blocks.crossing.T
    step = max(1, _CHUNK_FLOATS // (36 * size))
    for start in range(0, crossed.size, step):
        rows = crossed[start : start + step]
        summed = _product(crossing[rows], moved, dense_first=False).reshape(-1, 6, 6 * size)
        part = np.matmul(blocks.transfer[rows], summed)
        np.negative(part, out=part)
        part.reshape(rows.size, 6, size, 6)[np.arange(rows.size), :, rows, :] += np.eye(6)
        widened[rows] = np.abs(part) @ components
    widened = widened.reshape(-1, 2) + _SLACK * (np.abs(give_up) @ loose)
    tree[crossed] = np.linalg.norm(widened.reshape(-1, 2, 3, 2)[crossed], axis=2)
    return np.linalg.norm(loops.reshape(-1, 2, 3, 2), axis=2)


def stack(networks: list[WeldNetwork]) -> WeldNetwork:
    """Several groups' networks as one: every tree row in order, then every loop weld.

    Output row welds index the concatenation of the groups' welds (group
    ``k``'s weld ``w`` is ``w`` plus the welds of the groups before it). Each
    group keeps its own frame: the caller gives every node's wrench in its
    own group's frame.
    """
    if len(networks) == 1:
        return networks[0]
    rows = np.cumsum([0] + [net.tree_rows for net in networks])
    welds = np.cumsum([0] + [net.welds.size for net in networks])
    nodes = np.cumsum([0] + [net.nodes for net in networks])
    entries = np.cumsum([0] + [net.subtree_nodes.size for net in networks])
    loop_rows = rows[-1] + np.cumsum([0] + [net.welds.size - net.tree_rows for net in networks])
    loops = [
        Loops(slice(rows[k], rows[k + 1]), slice(loop_rows[k], loop_rows[k + 1]), part.weighted, part.inverse,
              part.give_up)
        for k, net in enumerate(networks)
        for part in net.loops
    ]
    tree_rows = [net.tree_rows for net in networks]
    return WeldNetwork(
        welds=np.concatenate(
            [net.welds[:t] + welds[k] for k, (net, t) in enumerate(zip(networks, tree_rows, strict=True))]
            + [net.welds[t:] + welds[k] for k, (net, t) in enumerate(zip(networks, tree_rows, strict=True))]
        ).astype(int),
        subtree_nodes=np.concatenate([net.subtree_nodes + nodes[k] for k, net in enumerate(networks)]),
        subtree_starts=np.concatenate([net.subtree_starts + entries[k] for k, net in enumerate(networks)]),
        signs=np.concatenate([net.signs for net in networks]),
        levers=np.concatenate([net.levers for net in networks]).reshape(-1, 3),
        arms=np.concatenate([net.arms for net in networks]).reshape(-1, 3),
        loops=tuple(loops),
        bounds=np.concatenate(
            [net.bounds[:t] for net, t in zip(networks, tree_rows, strict=True)]
            + [net.bounds[t:] for net, t in zip(networks, tree_rows, strict=True)]
        ).reshape(-1, 2, 2),
    )
