"""Weld forces inside a rigid group: a linear-elastic frame analysis of its welds.

Blocks held together by intact welds move as one rigid body in MuJoCo (one
free joint per group, see ``build``), nested as a spanning tree of the
group's welds: each block is a child body of the block its tree weld joins
it to. MuJoCo's inverse dynamics then gives, per block, the wrench its
parent delivers to it and everything beyond it (``cfrc_int``: mass times
acceleration less gravity, contacts and applied forces, summed over the
subtree). Which weld carries how much follows from statics:

* a tree weld carries its child's subtree wrench, moved to the weld's
  anchor: welds that form a tree (vehicles, rockets, plain beams) are
  statically determinate, whatever their stiffness;
* a weld that closes a loop (a Brace, or a second attachment between
  blocks already joined) makes the group indeterminate: the loop welds'
  wrenches are the redundants of the force method, chosen so the welds'
  elastic energy is least (compatible deformations), and the tree welds
  on the loops' paths give up what the loops take.

Every weld is a 6-DOF spring at its anchor (translational stiffness ``k_t``,
rotational ``k_r``); only their ratios matter. Per group the small system of
the redundants is solved once per topology, so a tick costs a few small
matrix products.

Units: metres, newtons; wrenches are ``(force, torque about the anchor)`` in
the group's (root block's) frame, delivered to the weld's second block (the
first gets the opposite).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
class WeldNetwork:
    """One rigid group's welds, ready to turn subtree wrenches into weld wrenches.

    Attributes:
        parents: Kinematic parent node per node (-1 for node 0).
        child: Per tree weld (row of the tree part), its child node.
        tree_rows: Per node, its tree weld's row (-1 for node 0).
        tree_welds: Weld index per tree row.
        loop_welds: Indices of the welds that close loops.
        transfer: Per tree row: sign × subtree wrench → weld wrench, (m_t, 6, 6).
        centres_to_origin: Per node: ``(force, torque about its centre)`` →
            ``(torque about origin, force)``, (n, 6, 6).
        redundants: ``(Y, M)``: tree wrenches → loop-weld wrenches (r × 6m_t),
            and loop-weld wrenches → what the tree welds give up (6m_t × r);
            None without loops.
        n_welds: Welds in the group.
        paths: Tree rows from a node up to node 0, filled on demand.
    """

    parents: np.ndarray
    child: np.ndarray
    tree_rows: np.ndarray
    tree_welds: np.ndarray
    loop_welds: np.ndarray
    transfer: np.ndarray
    centres_to_origin: np.ndarray
    redundants: tuple[np.ndarray, np.ndarray] | None
    n_welds: int
    paths: dict[int, np.ndarray] = field(default_factory=dict)

    def path(self, node: int) -> np.ndarray:
        """Tree rows of the welds between ``node`` and node 0."""
        if node not in self.paths:
            rows, at = [], node
            while self.parents[at] >= 0:
                rows.append(int(self.tree_rows[at]))
                at = int(self.parents[at])
            self.paths[node] = np.array(rows, dtype=int)
        return self.paths[node]

    def wrenches(self, subtree: np.ndarray, extra: dict[int, np.ndarray] | None = None) -> np.ndarray:
        """Weld wrenches from the group's subtree wrenches.

        Args:
            subtree: Shape (n_nodes, 6) (or (2·n_nodes, 3)): per node, the
                wrench its parent delivers to the node and everything beyond
                it, as MuJoCo's ``cfrc_int``: torque about the group's centre
                of mass, then force, in the group's frame.
            extra: Node → ``(force, torque about its centre)`` of forces that
                ``subtree`` does not count as external (thrust, rope tension).

        Returns:
            Shape (n_welds, 6): per weld, the force (N) and torque about its
            anchor (N·m) it delivers to its second block, in weld order.
        """
        x = subtree.reshape(-1, 6)[self.child]
        tree = np.einsum("eij,ej->ei", self.transfer, x)
        for node, load in (extra or {}).items():
            rows = self.path(node)
            tree[rows] -= self.transfer[rows] @ (self.centres_to_origin[node] @ load)
        out = np.empty((self.n_welds, 6))
        out[self.tree_welds] = tree
        if self.redundants is not None:
            solve, give_up = self.redundants
            loops = solve @ tree.reshape(-1)
            out[self.tree_welds] -= (give_up @ loops).reshape(-1, 6)
            out[self.loop_welds] = loops.reshape(-1, 6)
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
        parents: Kinematic parent node per node (-1 for node 0), shape (n,).
        tree_welds: Per node, the weld joining it to its parent (-1 for node 0), shape (n,).
        origin: Point that subtree torques are taken about (the group's
            centre of mass), same frame (m).
        ends: Node indices ``(first, second)`` per weld, shape (m, 2).
        anchors: Weld anchor points, shape (m, 3), same frame (m).
        stiffness: ``(k_t, k_r)`` per weld, shape (m, 2): translational (N/m)
            and rotational (N·m/rad) stiffness.

    Raises:
        ValueError: When a node's tree weld does not join it to its parent.
    """
    n, m = centres.shape[0], ends.shape[0]
    child = np.flatnonzero(parents >= 0)
    edge = tree_welds[child]
    if np.any(edge < 0) or not np.all(
        np.sort(ends[edge], axis=1) == np.sort(np.column_stack([parents[child], child]), axis=1)
    ):
        raise ValueError("every block but the root needs the weld that joins it to its parent")
    tree_rows = np.full(n, -1, dtype=int)
    tree_rows[child] = np.arange(child.size)
    sign = np.where(ends[edge, 1] == child, 1.0, -1.0)
    transfer = sign[:, None, None] * _to_anchor(origin, anchors[edge])
    loop = np.setdiff1d(np.arange(m), edge)
    flex = 1.0 / np.repeat(stiffness, 3, axis=1)  # (m, 6) compliance per wrench component
    network = WeldNetwork(
        parents=parents.astype(int),
        child=child,
        tree_rows=tree_rows,
        tree_welds=edge,
        loop_welds=loop,
        transfer=transfer,
        centres_to_origin=_to_origin(origin, centres),
        redundants=None,
        n_welds=m,
    )
    if not loop.size:
        return network
    # What the tree welds give up per unit wrench in each loop weld: the loop weld delivers
    # it to its second block and takes it from its first, so the tree paths of both ends change.
    give_up = np.zeros((6 * child.size, 6 * loop.size))
    at_origin = _to_origin(origin, anchors[loop])
    for j, weld in enumerate(loop):
        for node, direction in ((ends[weld, 1], 1.0), (ends[weld, 0], -1.0)):
            for row in network.path(int(node)):
                give_up[6 * row : 6 * row + 6, 6 * j : 6 * j + 6] += direction * transfer[row] @ at_origin[j]
    tree_flex = flex[edge].reshape(-1)
    weighted = give_up.T * tree_flex  # Mᵀ·D⁻¹
    energy = weighted @ give_up + np.diag(flex[loop].reshape(-1))
    # Least elastic energy: (Mᵀ D⁻¹ M + D_loop⁻¹)·X = Mᵀ D⁻¹ · (tree wrenches).
    solve = np.linalg.solve(energy, weighted)
    return replace(network, redundants=(solve, give_up))
