"""Rigid groups: the connected sets of intact welds, each a spanning tree of blocks.

``spanning_trees`` finds the groups; ``build`` nests the blocks of each tree
as MuJoCo bodies; ``weld_analysis`` stacks the groups' weld analyses
(``stress``) with the body ids and cannons that the simulation reads them with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .layout import Layout
from .stress import WeldNetwork, stack, weld_network


@dataclass(frozen=True)
class Group:
    """Blocks held together by intact welds: one rigid body in the model.

    Attributes:
        root: Body id of the block with the free joint (node 0).
        bodies: Body ids of its blocks (hubs for wheels), root first.
        welds: Indices into ``Layout.welds`` of the intact welds inside it.
    """

    root: int
    bodies: np.ndarray
    welds: np.ndarray


@dataclass(frozen=True)
class WeldAnalysis:
    """Every group with welds, stacked: what turns MuJoCo's per-block wrenches into weld loads.

    Attributes:
        network: The groups' stacked weld networks.
        bodies: Body id per node.
        spans: Per group: its root's body id (whose frame its nodes' wrenches
            are taken in) and the slice of its nodes.
        welds: Index into ``Layout.welds`` per output row of ``network``.
        cannon_nodes: Nodes of the Water Cannons.
        cannon_acts: Their thrust actuator ids.
        cannon_axes: Their thrust directions (unit) in their group's frame, (k, 3).
    """

    network: WeldNetwork
    bodies: np.ndarray
    spans: tuple[tuple[int, slice], ...]
    welds: np.ndarray
    cannon_nodes: np.ndarray
    cannon_acts: np.ndarray
    cannon_axes: np.ndarray

    def node(self, body: int) -> int:
        """The node of body id ``body`` (-1 when it is in no group with welds)."""
        hits = np.flatnonzero(self.bodies == body)
        return int(hits[0]) if hits.size else -1

    def frame(self, node: int) -> int:
        """Body id of the root of ``node``'s group."""
        return next(root for root, nodes in self.spans if nodes.start <= node < nodes.stop)


@dataclass(frozen=True)
class Tree:
    """One group as a spanning tree: blocks in breadth-first order, each one's parent and
    the weld joining them (machine weld index), and all the group's welds."""

    order: list[str]
    parent: dict[str, str]
    edge: dict[str, int]
    welds: list[int]


def spanning_trees(layout: Layout, intact: np.ndarray) -> list[Tree]:
    """The rigid groups: connected components of the intact welds, roots first in machine order."""
    adjacent: dict[str, list[tuple[int, str]]] = {b.id: [] for b in layout.graph.bodies}
    for k, weld in enumerate(layout.welds):
        if intact[k] and weld.first in adjacent and weld.second in adjacent:
            adjacent[weld.first].append((k, weld.second))
            adjacent[weld.second].append((k, weld.first))
    seen: set[str] = set()
    trees = []
    for root in adjacent:
        if root in seen:
            continue
        seen.add(root)
        order, parent, edge, welds = [root], {}, {}, set()
        for node in order:  # grows while iterating: breadth-first
            for k, other in adjacent[node]:
                welds.add(k)
                if other not in seen:
                    seen.add(other)
                    parent[other], edge[other] = node, k
                    order.append(other)
        trees.append(Tree(order, parent, edge, sorted(welds)))
    return trees


def same_bodies(a: list[Tree], b: list[Tree]) -> bool:
    """Whether two sets of groups hold the same blocks under the same roots.

    Then they compile to the same model; only the welds' analysis differs.
    """
    return len(a) == len(b) and all(
        x.order[0] == y.order[0] and set(x.order) == set(y.order) for x, y in zip(a, b, strict=True)
    )


def network(layout: Layout, tree: Tree) -> WeldNetwork | None:
    """The weld analysis of a group in its root block's frame (as built), cached in ``layout``."""
    key = (tuple(tree.order), tuple(tree.welds))
    if key not in layout.networks:
        layout.networks[key] = _analysis(layout, tree) if tree.welds else None
    return layout.networks[key]


def _analysis(layout: Layout, tree: Tree) -> WeldNetwork:
    cfg = layout.config
    root_centre, root_rot = layout.poses[tree.order[0]]
    index = {block: i for i, block in enumerate(tree.order)}
    centres = (np.array([layout.poses[b][0] for b in tree.order]) - root_centre) @ root_rot
    weights = np.array([layout.masses[b] for b in tree.order])
    welds = [layout.welds[k] for k in tree.welds]
    anchors = (np.array([w.anchor for w in welds]) - root_centre) @ root_rot
    ends = np.array([(index[w.first], index[w.second]) for w in welds])
    scale = np.array([cfg.brace_stiffness_fraction if w.brace else 1.0 for w in welds])
    local = {k: i for i, k in enumerate(tree.welds)}
    return weld_network(
        centres,
        np.array([index.get(tree.parent.get(b, ""), -1) for b in tree.order]),
        np.array([local.get(tree.edge.get(b, -1), -1) for b in tree.order]),
        weights @ centres / weights.sum(),
        ends,
        anchors,
        scale[:, None] * np.array([1.0, cfg.weld_rotational_stiffness_m2]),
    )


def weld_analysis(
    layout: Layout, trees: list[Tree], body_ids: dict[str, int], cannon_acts: dict[str, int]
) -> WeldAnalysis | None:
    """Stack the analyses of the groups that have welds (None when no weld holds).

    Args:
        layout: The placed machine.
        trees: The groups.
        body_ids: Block id → its body id in the compiled model.
        cannon_acts: Water Cannon block id → its thrust actuator id.
    """
    welded = [(tree, net) for tree in trees if (net := network(layout, tree)) is not None]
    if not welded:
        return None
    rot = np.asarray(layout.scene.placement_rotation, dtype=float)
    # Only the cannons' pointers are read (not an array per block at every break).
    pointers = {b.id: np.asarray(b.pointer, dtype=float) for b in layout.graph.bodies if b.id in cannon_acts}
    order = [block for tree, _ in welded for block in tree.order]
    starts = np.cumsum([0] + [len(tree.order) for tree, _ in welded]).tolist()
    spans = tuple(
        (body_ids[tree.order[0]], slice(starts[k], starts[k + 1])) for k, (tree, _) in enumerate(welded)
    )
    roots = [tree.order[0] for tree, _ in welded for _ in tree.order]
    nodes = [k for k, block in enumerate(order) if block in cannon_acts]
    axes = [layout.poses[roots[k]][1].T @ (rot @ -pointers[order[k]]) for k in nodes]
    stacked = stack([net for _, net in welded])
    return WeldAnalysis(
        network=stacked,
        bodies=np.array([body_ids[b] for b in order], dtype=int),
        spans=spans,
        welds=np.array([k for tree, _ in welded for k in tree.welds], dtype=int)[stacked.welds],
        cannon_nodes=np.array(nodes, dtype=int),
        cannon_acts=np.array([cannon_acts[order[k]] for k in nodes], dtype=int),
        cannon_axes=np.array(axes).reshape(-1, 3),
    )
