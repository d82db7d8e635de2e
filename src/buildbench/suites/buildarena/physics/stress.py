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
for the whole machine.

Units: metres, newtons; wrenches are ``(force, torque about the anchor)`` in
the group's (root block's) frame, delivered to the weld's second block (the
first gets the opposite).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


@dataclass(frozen=True)
class Loops:
    """The redundants of one group: its loop welds' wrenches from its tree welds' wrenches.

    Attributes:
        tree: The group's tree rows (output rows of its tree welds).
        rows: Output rows of its loop welds.
        solve: Tree wrenches (flat) → loop-weld wrenches (flat), (6r, 6m_t).
        give_up: Loop-weld wrenches → what the tree welds give up, (6m_t, 6r).
    """

    tree: slice
    rows: slice
    solve: np.ndarray
    give_up: np.ndarray


@dataclass(frozen=True)
class WeldNetwork:
    """Welds of one rigid group (or a stack of groups), ready to turn block wrenches into weld wrenches.

    Output rows are the tree welds first (the tree rows), then the loop welds.

    Attributes:
        welds: Weld index per output row.
        beyond: ``beyond[row, k]`` is 1 where node ``k`` lies beyond tree
            row ``row`` (in its child's subtree), (m_t, n).
        transfer: Per tree row: sign × subtree wrench → weld wrench, (m_t, 6, 6).
        centres_to_origin: Per node: ``(force, torque about its centre)`` →
            ``(torque about origin, force)``, (n, 6, 6).
        loops: The redundants, one entry per group with loops.
    """

    welds: np.ndarray
    beyond: np.ndarray
    transfer: np.ndarray
    centres_to_origin: np.ndarray
    loops: tuple[Loops, ...]

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
                external (thrust, rope tension), shape (k,).
            loads: Those forces, ``(force, torque about the node's centre)``
                in the group's frame, shape (k, 6).

        Returns:
            Shape (len(welds), 6): per output row (weld ``welds[row]``), the
            force (N) and torque about its anchor (N·m) the weld delivers to
            its second block.
        """
        own = blocks.reshape(-1, 6)
        if nodes is not None and loads is not None and len(nodes):
            # A block pushed by its own thrust needs that much less from its welds.
            own = own.copy()
            np.subtract.at(own, nodes, (self.centres_to_origin[nodes] @ loads[:, :, None])[:, :, 0])
        out = np.empty((self.welds.size, 6))
        tree = out[: self.transfer.shape[0]]
        np.einsum("eij,ej->ei", self.transfer, self.beyond @ own, out=tree)
        for part in self.loops:
            loops = part.solve @ tree[part.tree].reshape(-1)
            tree[part.tree] -= (part.give_up @ loops).reshape(-1, 6)
            out[part.rows] = loops.reshape(-1, 6)
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
    transfer = sign[:, None, None] * _to_anchor(origin, anchors[edge])
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
        solve = np.linalg.inv(energy) @ weighted
        loops = (Loops(slice(0, child.size), slice(child.size, m), solve, give_up),)
    return WeldNetwork(
        welds=np.concatenate([edge, loop]).astype(int),
        beyond=np.ascontiguousarray(ancestors.T),
        transfer=transfer,
        centres_to_origin=_to_origin(origin, centres),
        loops=loops,
    )


def stack(networks: list[WeldNetwork]) -> WeldNetwork:
    """Several groups' networks as one: every tree row in order, then every loop weld.

    Output row welds index the concatenation of the groups' welds (group
    ``k``'s weld ``w`` is ``w`` plus the welds of the groups before it). Each
    group keeps its own frame: the caller gives every node's wrench in its
    own group's frame.
    """
    nodes = np.cumsum([0] + [net.beyond.shape[1] for net in networks])
    rows = np.cumsum([0] + [net.beyond.shape[0] for net in networks])
    welds = np.cumsum([0] + [net.welds.size for net in networks])
    loop_rows = rows[-1] + np.cumsum([0] + [net.welds.size - net.beyond.shape[0] for net in networks])
    beyond = np.zeros((rows[-1], nodes[-1]))
    loops = []
    for k, net in enumerate(networks):
        beyond[rows[k] : rows[k + 1], nodes[k] : nodes[k + 1]] = net.beyond
        loops += [
            Loops(
                slice(rows[k], rows[k + 1]), slice(loop_rows[k], loop_rows[k + 1]), part.solve, part.give_up
            )
            for part in net.loops
        ]
    return WeldNetwork(
        welds=np.concatenate(
            [net.welds[: net.beyond.shape[0]] + welds[k] for k, net in enumerate(networks)]
            + [net.welds[net.beyond.shape[0] :] + welds[k] for k, net in enumerate(networks)]
        ).astype(int),
        beyond=beyond,
        transfer=np.concatenate([net.transfer for net in networks]).reshape(-1, 6, 6),
        centres_to_origin=np.concatenate([net.centres_to_origin for net in networks]).reshape(-1, 6, 6),
        loops=tuple(loops),
    )
