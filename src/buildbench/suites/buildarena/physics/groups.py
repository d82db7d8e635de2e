"""Rigid groups: the connected sets of intact welds, each a spanning tree of blocks.

``spanning_trees`` finds the groups, ``network`` prepares each group's weld analysis
(``stress``) and ``thrusters`` lists its cannons; ``build`` nests the blocks
of each tree as MuJoCo bodies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .layout import Layout
from .stress import WeldNetwork, weld_network


@dataclass(frozen=True)
class Group:
    """Blocks held together by intact welds: one rigid body in the model.

    Attributes:
        root: Body id of the block with the free joint (node 0).
        bodies: Body ids of its blocks (hubs for wheels), root first.
        welds: Indices into ``Layout.welds`` of the intact welds inside it.
        network: Their analysis (None without welds).
        cannon_nodes: Node indices of its Water Cannons.
        cannon_acts: Their thrust actuator ids.
        cannon_axes: Their thrust directions (unit) in the root block's frame.
    """

    root: int
    bodies: np.ndarray
    welds: np.ndarray
    network: WeldNetwork | None
    cannon_nodes: np.ndarray
    cannon_acts: np.ndarray
    cannon_axes: np.ndarray


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


def thrusters(
    layout: Layout, tree: Tree, cannon_acts: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A group's cannons: node indices, actuator ids and thrust directions in the group's frame."""
    root_rot = layout.poses[tree.order[0]][1]
    rot = np.asarray(layout.scene.placement_rotation, dtype=float)
    bodies = {b.id: b for b in layout.graph.bodies}
    nodes = [k for k, block in enumerate(tree.order) if block in cannon_acts]
    axes = [root_rot.T @ (rot @ -np.asarray(bodies[tree.order[k]].pointer)) for k in nodes]
    return (
        np.array(nodes, dtype=int),
        np.array([cannon_acts[tree.order[k]] for k in nodes], dtype=int),
        np.array(axes).reshape(-1, 3),
    )
