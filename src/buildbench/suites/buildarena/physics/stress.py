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

from .weld_geometry import ANCHOR_MOVES, ORIGIN_MOVES, moves, skew, tree_paths

_NEXT, _LAST = np.array([1, 2, 0]), np.array([2, 0, 1])


def cross(arms: np.ndarray, forces: np.ndarray) -> np.ndarray:
    """Row-wise ``arms × forces``, shape (m, 3): ``a[next]·f[last] − a[last]·f[next]`` per component, in that
    order (the order of the C tick loop's)."""
    return _cross_twice(np.concatenate([arms, arms], axis=1), forces)


def _cross_twice(twice: np.ndarray, forces: np.ndarray) -> np.ndarray:
    """:func:`cross` of ``arms`` given as ``[arms, arms]`` (m, 6), whose column windows are the rotated rows."""
    doubled = np.concatenate([forces, forces], axis=1)
    return twice[:, 1:4] * doubled[:, 2:5] - twice[:, 2:5] * doubled[:, 1:4]


_SIX = np.arange(6)


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
    def of_blocks(cls, size: int, width: int, major: np.ndarray, minor: np.ndarray, blocks: np.ndarray) -> RowSums:
        """:meth:`of` a matrix (``size`` rows, ``width`` columns) that is zero but for the 6×6 ``blocks`` (k, 6, 6),
        block ``k`` at block row ``major[k]`` and block column ``minor[k]`` (distinct): the same entries,
        from the blocks themselves (no dense matrix read, no cell list built
        for the zeros between them: the loop parts' matrices are mostly such zeros)."""
        held = (blocks != 0).reshape(-1).nonzero()[0]  # flat (k, i, j) of the nonzero entries
        block, cell = np.divmod(held, 36)
        # Each entry's cell: its block's top-left cell, plus its place in the block.
        cells = (6 * (major * width + minor))[block] + ((_SIX * width)[:, None] + _SIX).reshape(-1)[cell]
        order = cells.argsort(kind="stable")  # distinct cells: every sort gives this order (row-major)
        rows, columns = np.divmod(cells[order], width)
        return cls._entries(size, rows, columns, blocks.reshape(-1)[held][order])

    @classmethod
    def _entries(cls, size: int, rows: np.ndarray, columns: np.ndarray, values: np.ndarray) -> RowSums:
        """The entries ``values`` at ``rows``, ``columns`` (row-major order) of a matrix of ``size`` rows."""
        begins = np.empty(rows.size, dtype=bool)  # rows come sorted: where each begins (np.diff costs more)
        begins[:1] = True
        np.not_equal(rows[1:], rows[:-1], out=begins[1:])
        starts = begins.nonzero()[0]
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
        return np.linalg.norm(skew(self.arms), axis=(1, 2))

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
    child = (parents >= 0).nonzero()[0]
    edge = tree_welds[child]
    if (edge < 0).any():
        raise ValueError("every block but the root needs the weld that joins it to its parent")
    joined, up = ends[edge], parents[child]
    first, second = joined[:, 0], joined[:, 1]
    if not (((first == up) & (second == child)) | ((first == child) & (second == up))).all():
        raise ValueError("every block but the root needs the weld that joins it to its parent")
    if (up >= child).any() or parents[0] >= 0:
        raise ValueError("node 0 must be the root and every parent must come before its children")
    size = child.size
    # paths[k, row]: tree row `row` lies on the path from node k to the root.
    paths = tree_paths(parents, child, n)
    sign = np.where(second == child, 1.0, -1.0)
    lever = origin[None, :] - anchors[edge]
    transfer = sign[:, None, None] * moves(lever, ANCHOR_MOVES)  # (force, torque about the anchor)
    # A tree row carries at most the norms of every node's force, and the torques plus the lever of the force
    # (the lever's norm as np.linalg.norm takes it, without its argument checks).
    bounds = np.zeros((m, 2, 2))
    bounds[:size, 0, 0] = bounds[:size, 1, 1] = 1.0
    bounds[:size, 1, 0] = np.sqrt(np.add.reduce(lever * lever, axis=1))
    in_tree = np.zeros(m, dtype=bool)
    in_tree[edge] = True
    loop = (~in_tree).nonzero()[0]
    loops: tuple[Loops, ...] = ()
    if loop.size:
        # A unit wrench in a loop weld is delivered to its second block and taken from its first:
        # the tree welds on the path of either end (not on both) give it up.
        crossing = np.subtract(paths[ends[loop, 1]], paths[ends[loop, 0]], dtype=float)  # (r, m_t)
        # Each loop crosses only the tree welds between its two ends: M's nonzero 6×6 blocks.
        loop_of, row_of = crossing.nonzero()
        at_origin = moves(anchors[loop] - origin[None, :], ORIGIN_MOVES)
        pairs = crossing[loop_of, row_of, None, None] * (transfer[row_of] @ at_origin[loop_of])  # M's blocks
        give_up_blocks = np.zeros((size, 6, loop.size, 6))
        give_up_blocks[row_of, :, loop_of, :] = pairs
        give_up = give_up_blocks.reshape(6 * size, 6 * loop.size)
        flex = 1.0 / stiffness.repeat(3, axis=1)  # (m, 6) compliance per wrench component
        tree_flex = flex[edge]
        weighted = give_up.T * tree_flex.reshape(-1)  # Mᵀ·D⁻¹
        energy = weighted @ give_up + np.diag(flex[loop].reshape(-1))
        # Least elastic energy: (Mᵀ D⁻¹ M + D_loop⁻¹)·X = Mᵀ D⁻¹ · (tree wrenches); the energy
        # matrix is small (6r square) and well conditioned (compliances within a factor of 48).
        inverse = np.linalg.inv(energy)
        # Only the cells of M's nonzero blocks (of Mᵀ's in Mᵀ·D⁻¹) may be nonzero: Mᵀ·D⁻¹'s block
        # (loop, row) is M's transposed times that row's compliances (the products ``weighted`` holds).
        weighted_pairs = np.multiply(pairs.transpose(0, 2, 1), tree_flex[row_of][:, None, :], out=np.empty(pairs.shape))
        loops = (Loops(slice(0, size), slice(size, m),
                       RowSums.of_blocks(6 * loop.size, 6 * size, loop_of, row_of, weighted_pairs),
                       np.ascontiguousarray(inverse), RowSums.of_blocks(6 * size, 6 * loop.size, row_of, loop_of, pairs)),)
        bounds[size:] = _loop_bounds(bounds[:size], inverse, weighted, give_up,
                                     _GiveUp(crossing, transfer, at_origin))
    # Per tree row, the nodes beyond it in increasing order (the rows of pathsᵀ).
    rows, nodes = paths.T.nonzero()
    return WeldNetwork(
        welds=np.concatenate([edge, loop]).astype(int),
        subtree_nodes=nodes.astype(np.int64),
        subtree_starts=np.searchsorted(rows, np.arange(size)).astype(np.int64),
        signs=sign,
        levers=np.ascontiguousarray(lever),
        arms=centres - origin[None, :],
        loops=loops,
        bounds=bounds,
    )


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
    components = tree.repeat(3, axis=1).reshape(-1, 2)  # (6m_t, [F, T]) per tree wrench component
    loose = np.abs(inverse) @ (np.abs(weighted) @ components)
    crossed = np.flatnonzero(blocks.crossing.any(axis=0))
    if weighted.size < _TIGHT_FROM:  # on the factors: a vector product each
        widened = (components + np.abs(give_up) @ loose).reshape(-1, 2, 3, 2)
        tree[crossed] = _norms(widened[crossed])
        return _norms(loose.reshape(-1, 2, 3, 2))
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
    tree[crossed] = _norms(widened.reshape(-1, 2, 3, 2)[crossed])
    return _norms(loops.reshape(-1, 2, 3, 2))


def _norms(bounds: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(bounds, axis=2)`` (the same products and sums), without its argument checks."""
    return np.sqrt(np.add.reduce(bounds * bounds, axis=2))


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
