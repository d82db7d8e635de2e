"""The order in which blocks become MuJoCo bodies: fewer fill-ins in the solver's sparse Cholesky.

Most of a step's time goes into the Newton solver factoring its Hessian
``M + Jᵀ·D·J`` (measured with ``perf`` on the Support bridges: the sparse
Cholesky routines took about half of MuJoCo's time). Every weld couples
the degrees of freedom of its two bodies, and MuJoCo eliminates the
degrees of freedom from the last to the first without reordering them,
so the order of the bodies decides how much fill-in the factor gets. A
tree of welds (vehicles, rockets) built outward from its root needs none;
a braced or multi-row bridge in machine order does (support-3: 319 filled
entries in machine order, 173 in minimum-degree order, ~1.5× faster).

The order changes only the rounding of the solver's sums (trajectories
moved by ~1e-13 m on the bridges), never the model.
"""

from __future__ import annotations

from buildbench.suites.buildarena.library.bodies import BodyGraph


def _adjacency(graph: BodyGraph) -> list[set[int]]:
    """Body indices coupled by a weld, a brace or a rope, per body index."""
    index = {body.id: i for i, body in enumerate(graph.bodies)}
    adjacent: list[set[int]] = [set() for _ in graph.bodies]
    pairs = [(j.child, j.base) for j in graph.joints] + [(k.a.block, k.b.block) for k in graph.links]
    for a, b in pairs:
        adjacent[index[a]].add(index[b])
        adjacent[index[b]].add(index[a])
    return adjacent


def reverse_fill(graph: BodyGraph, order: list[int]) -> int:
    """Off-diagonal body blocks of the Cholesky factor when bodies take positions ``order``.

    Elimination runs from the last position to the first, as in MuJoCo's
    reverse Cholesky; a tree added root first gives ``bodies - 1``.
    """
    position = {body: p for p, body in enumerate(order)}
    by_body = _adjacency(graph)
    adjacent = [{position[u] for u in by_body[order[p]]} for p in range(len(order))]
    entries = 0
    for v in range(len(order) - 1, -1, -1):
        lower = {u for u in adjacent[v] if u < v}
        entries += len(lower)
        for u in lower:
            adjacent[u] |= lower - {u}
    return entries


def minimum_degree_order(graph: BodyGraph) -> list[int]:
    """Body indices by positions for MuJoCo: the greedy minimum-degree elimination, reversed.

    Ties go to the lower machine index, so the order is deterministic.
    """
    adjacent = _adjacency(graph)
    alive = set(range(len(graph.bodies)))
    eliminated: list[int] = []
    while alive:
        v = min(alive, key=lambda k: (len(adjacent[k]), k))
        for u in adjacent[v]:
            adjacent[u] |= adjacent[v] - {u}
            adjacent[u].discard(v)
        alive.remove(v)
        eliminated.append(v)
    # MuJoCo eliminates the last position first.
    return eliminated[::-1]


def body_order(graph: BodyGraph) -> list[int]:
    """Body indices in the order to add them: machine order unless minimum degree fills less.

    Keeping machine order where it is already as good leaves those
    machines' trajectories bit-identical to a plain build.
    """
    machine = list(range(len(graph.bodies)))
    reordered = minimum_degree_order(graph)
    return reordered if reverse_fill(graph, reordered) < reverse_fill(graph, machine) else machine
