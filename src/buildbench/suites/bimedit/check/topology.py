"""Topology score (paper Eq. 4, App. E.3).

The reference topology edit is what changed from graph(M0) to graph(M*); the
predicted one what changed from graph(M0) to graph(M'), after renaming the
prediction's new nodes onto the reference's (greedy class + proximity alignment,
see :func:`~buildbench.suites.bimedit.check.diff.align_nodes`). Node edits are
``(key, "added" | "removed" | "modified")``; edge edits are ``("+" | "-", edge)``.

``S_topo = 0.3 · F1(node edits) + 0.7 · F1(edge edits)``. Special case (paper App.
E.3): when the reference changes no relation, ``S_topo`` is 1 if the prediction
changes none either and 0 otherwise (triggered by the edge delta, as the spec
recommends from Example 3). F1 of two empty sets is 1.

Strict mode replaces that special case by ``F1(node edits)`` (still 0 if the
prediction changed a relation), closing the paper's blind spot that a do-nothing
agent scores topology 1 on updates.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from buildbench.suites.bimedit.check.diff import NodeChanges
from buildbench.suites.bimedit.check.model import Edge, IfcModel

#: Weight of the node F1 (paper Eq. 4, λ = 0.3).
LAMBDA = 0.3

NodeEdit = tuple[str, str]
EdgeEdit = tuple[str, Edge]


@dataclass(frozen=True)
class F1:
    """Precision, recall and F1 of a predicted set against a reference set."""

    precision: float
    recall: float
    f1: float


def f1_score(predicted: set[Hashable] | frozenset[Hashable], reference: set[Hashable] | frozenset[Hashable]) -> F1:
    """Set F1; two empty sets agree perfectly (1), one empty set scores 0."""
    if not predicted and not reference:
        return F1(1.0, 1.0, 1.0)
    tp = len(predicted & reference)
    p = tp / len(predicted) if predicted else 0.0
    r = tp / len(reference) if reference else 0.0
    return F1(p, r, 0.0 if p + r == 0 else 2 * p * r / (p + r))


def combine(node_f1: float, edge_f1: float) -> float:
    """``λ · node F1 + (1 − λ) · edge F1`` (paper Eq. 4)."""
    return LAMBDA * node_f1 + (1 - LAMBDA) * edge_f1


@dataclass(frozen=True)
class TopologyResult:
    """The topology score and the edit sets it compared.

    Attributes:
        score: ``S_topo`` in [0, 1].
        nodes: F1 of node edits.
        edges: F1 of edge edits.
        special_case: True when the reference changed no relation.
        reference_nodes: reference node edits.
        predicted_nodes: predicted node edits (canonical keys).
        reference_edges: reference edge edits.
        predicted_edges: predicted edge edits (canonical keys).
    """

    score: float
    nodes: F1
    edges: F1
    special_case: bool
    reference_nodes: frozenset[NodeEdit]
    predicted_nodes: frozenset[NodeEdit]
    reference_edges: frozenset[EdgeEdit]
    predicted_edges: frozenset[EdgeEdit]


def node_edits(changes: NodeChanges) -> frozenset[NodeEdit]:
    """Node edits of a :class:`NodeChanges`."""
    return frozenset({(k, "added") for k in changes.added} | {(k, "removed") for k in changes.removed}
                     | {(k, "modified") for k in changes.modified})


def edge_edits(base: set[Edge], other: set[Edge]) -> frozenset[EdgeEdit]:
    """Added (``+``) and removed (``-``) relation edges from ``base`` to ``other``."""
    return frozenset({("+", e) for e in other - base} | {("-", e) for e in base - other})


def rename_edges(edges: set[Edge], names: Mapping[str, str]) -> set[Edge]:
    """Edges with endpoints renamed through ``names`` (unlisted keys unchanged)."""
    return {(c, names.get(a, a), names.get(b, b), q) for c, a, b, q in edges}


def predicted_node_edits(m0: IfcModel, pred: IfcModel, changes: NodeChanges, names: Mapping[str, str]) -> frozenset[NodeEdit]:
    """Node edits of the prediction after renaming its new nodes through ``names``.

    A new node renamed onto an M0 node (a re-created element) counts as that node
    "modified" if its signature differs from the original, and as no edit otherwise.
    """
    out: set[NodeEdit] = {(k, "modified") for k in changes.modified}
    revived = set()
    for k in changes.added:
        c = names.get(k, k)
        if c in m0.nodes:
            revived.add(c)
            if m0.signature(c) != pred.signature(k):
                out.add((c, "modified"))
        else:
            out.add((c, "added"))
    out |= {(k, "removed") for k in changes.removed - revived}
    return frozenset(out)


def topology_score(reference_nodes: frozenset[NodeEdit], predicted_nodes: frozenset[NodeEdit],
                   reference_edges: frozenset[EdgeEdit], predicted_edges: frozenset[EdgeEdit], *,
                   strict: bool = False) -> TopologyResult:
    """``S_topo`` from node and edge edit sets (see module docstring)."""
    nodes = f1_score(predicted_nodes, reference_nodes)
    edges = f1_score(predicted_edges, reference_edges)
    special = not reference_edges
    if special:
        score = (nodes.f1 if strict else 1.0) if not predicted_edges else 0.0
    else:
        score = combine(nodes.f1, edges.f1)
    return TopologyResult(score, nodes, edges, special, reference_nodes, predicted_nodes, reference_edges,
                          predicted_edges)
