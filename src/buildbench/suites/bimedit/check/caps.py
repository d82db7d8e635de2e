"""Caps on an IFC model an agent wrote, checked before it is scored.

Scoring reads the whole model with IfcOpenShell and tessellates the edited elements: a model made
big on purpose (a million extra points on one element: 43 MB, minutes and gigabytes of scoring)
or deep on purpose (one body clipped 3,000 times: the geometry kernel ran over 5 minutes, in C,
where Python cannot interrupt it) would cost far more than any real edit. Three caps, each a
`buildbench.limits` limit that ``BUILDBENCH_LIMIT_<NAME>`` can change:

- ``ifc_entities``: entity instances in the file (default 5,000,000, beyond the largest real
  building models of the benchmark by two orders of magnitude);
- ``ifc_element_points``: coordinate points and indexed faces reachable from one element's shape,
  i.e. from the ``IfcProductDefinitionShape`` it references through representations, items,
  curves, faces, point lists and face sets (default 100,000: a real building element rarely has
  more than 10^5; the real models of ../shared/data/ifc have at most 9,536). An indexed face
  costs the kernel like a point: 200,000 triangles over 4 points, a 1.6 MB file, ran it over
  200 s;
- ``ifc_element_booleans``: boolean operations the kernel performs for one element: the
  ``IfcBooleanResult``/``IfcBooleanClippingResult`` reachable from its shape plus one subtraction
  per opening voiding it (``IfcRelVoidsElement``) and the booleans of that opening's shape. The
  deepest chain is never longer than this count, so the cap bounds depth too. Default 60: the
  real models of ../shared/data/ifc need at most 6 for one element (in Roof-01_BCAD); the
  kernel's time grows faster than linearly with a chain's length (a wall clipped 60 times took
  10 s on the loaded development machine, 100 times 30 s, 3,000 times over 5 minutes).

Shared parts are counted once per path that reaches them (an upper bound of what the kernel
does, since it re-evaluates a shared operand on every use).

`over_caps` reads the STEP text itself (no IfcOpenShell), one pass and a walk of the reference
graph, so refusing an oversized model takes seconds, not minutes. A model past a cap is the agent's
output over a limit: the scorer raises `AgentFailure` with the reason (a scored failure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from buildbench.limits import limit

from .step_text import step_bytes

_ENTITY = re.compile(rb"#(\d+)\s*=\s*([A-Za-z0-9_]+)\s*\(")
_REF = re.compile(rb"#(\d+)")
_SHAPE = b"IFCPRODUCTDEFINITIONSHAPE"
_POINT = b"IFCCARTESIANPOINT"
_POINT_LISTS = (b"IFCCARTESIANPOINTLIST2D", b"IFCCARTESIANPOINTLIST3D")
#: face sets and faces that list their vertices by index: one parenthesis per face (or loop)
_INDEXED = (b"IFCTRIANGULATEDFACESET", b"IFCTRIANGULATEDIRREGULARNETWORK", b"IFCPOLYGONALFACESET",
            b"IFCINDEXEDPOLYGONALFACE", b"IFCINDEXEDPOLYGONALFACEWITHVOIDS")
_BOOLEANS = (b"IFCBOOLEANRESULT", b"IFCBOOLEANCLIPPINGRESULT")
_VOIDS = b"IFCRELVOIDSELEMENT"


@dataclass
class _Graph:
    """The reference graph of a model's shapes with what each entity itself costs."""

    kinds: dict[int, bytes] = field(default_factory=dict)
    refs: dict[int, list[int]] = field(default_factory=dict)
    points: dict[int, int] = field(default_factory=dict)
    booleans: dict[int, int] = field(default_factory=dict)
    #: host element -> its openings, from IfcRelVoidsElement
    openings: dict[int, list[int]] = field(default_factory=dict)


def over_caps(path: str | Path) -> str | None:
    """One line naming the cap ``path`` goes past (and by how much), or None within the caps."""
    data = step_bytes(path)
    starts = list(_ENTITY.finditer(data))
    name = Path(path).name
    max_entities = limit("ifc_entities")
    if len(starts) > max_entities:
        return (f"{name}: {len(starts):,} IFC entities, over the cap of {max_entities:,} "
                "(BUILDBENCH_LIMIT_IFC_ENTITIES)")
    point_cap, boolean_cap = limit("ifc_element_points"), limit("ifc_element_booleans")
    upper = data.upper()
    # every point opens a parenthesis, every boolean or void names its kind: below both caps no
    # element can pass either, and the walk is skipped
    if (data.count(b"(") <= point_cap
            and sum(upper.count(kind) for kind in (*_BOOLEANS, _VOIDS)) <= boolean_cap):
        return None
    graph = _parse(data, starts)
    points: dict[int, int] = {}
    booleans: dict[int, int] = {}
    for owner, shape in _element_shapes(graph):
        if _below(shape, graph.refs, graph.points, points, point_cap) > point_cap:
            return (f"{name}: element #{owner} ({graph.kinds[owner].decode()}) has more than "
                    f"{point_cap:,} points and indexed faces in its shape, over the cap (BUILDBENCH_LIMIT_IFC_ELEMENT_POINTS)")
        if _booleans_of(owner, shape, graph, booleans, boolean_cap) > boolean_cap:
            return (f"{name}: element #{owner} ({graph.kinds[owner].decode()}) needs more than "
                    f"{boolean_cap:,} boolean operations (clippings, differences, openings) to tessellate, "
                    "over the cap (BUILDBENCH_LIMIT_IFC_ELEMENT_BOOLEANS)")
    return None


def element_costs(path: str | Path) -> dict[int, tuple[int, int]]:
    """Every element with a shape: ``#id -> (points, boolean operations)`` as the caps count them
    (uncapped); for sizing the caps from real models."""
    data = step_bytes(path)
    graph = _parse(data, list(_ENTITY.finditer(data)))
    big = 1 << 62
    points: dict[int, int] = {}
    booleans: dict[int, int] = {}
    out: dict[int, tuple[int, int]] = {}
    for owner, shape in _element_shapes(graph):
        count = _booleans_of(owner, shape, graph, booleans, big)
        p = _below(shape, graph.refs, graph.points, points, big)
        old = out.get(owner, (0, 0))
        out[owner] = (max(old[0], p), max(old[1], count))
    return out


def _parse(data: bytes, starts: list[re.Match[bytes]]) -> _Graph:
    graph = _Graph()
    for i, match in enumerate(starts):
        raw_number, raw_kind = match.groups()
        number, kind = int(raw_number), raw_kind.upper()
        graph.kinds[number] = kind
        if kind == _POINT:  # most entities of a big model: no body to read
            graph.points[number] = 1
            continue
        end = starts[i + 1].start() if i + 1 < len(starts) else len(data)
        body = data[match.end():end]
        if kind in _POINT_LISTS:
            graph.points[number] = max(0, body.count(b"(") - 1)  # one parenthesis per point, one around them
        else:
            refs = [int(r) for r in _REF.findall(body)]
            graph.refs[number] = refs
            if kind in _INDEXED:
                graph.points[number] = body.count(b"(")  # one per index tuple (and a few lists: an upper bound)
            if kind in _BOOLEANS:
                graph.booleans[number] = 1
            elif kind == _VOIDS and len(refs) >= 2:
                # the last two references are the host and the opening (the owner history comes first)
                graph.openings.setdefault(refs[-2], []).append(refs[-1])
    return graph


def _element_shapes(graph: _Graph) -> list[tuple[int, int]]:
    """(element, its IfcProductDefinitionShape) for every entity that references a shape."""
    return [(owner, shape) for owner, targets in graph.refs.items() if graph.kinds[owner] != _SHAPE
            for shape in targets if graph.kinds.get(shape) == _SHAPE]


def _booleans_of(owner: int, shape: int, graph: _Graph, reach: dict[int, int], cap: int) -> int:
    """Boolean operations of ``owner``'s ``shape`` plus one per opening voiding it and that
    opening's own, stopping once past ``cap``."""
    count = _below(shape, graph.refs, graph.booleans, reach, cap)
    for opening in graph.openings.get(owner, ()):
        if count > cap:
            break
        count += 1 + sum(_below(s, graph.refs, graph.booleans, reach, cap)
                         for s in graph.refs.get(opening, ()) if graph.kinds.get(s) == _SHAPE)
    return count


def _below(root: int, refs: dict[int, list[int]], own: dict[int, int], reach: dict[int, int], cap: int) -> int:
    """The sum of ``own`` over everything reachable from ``root`` (shared parts counted once per
    path: an upper bound), memoised in ``reach`` and cut off just past ``cap``."""
    if root in reach:
        return reach[root]
    # depth first, each node summing its children one at a time: a node whose sum passes ``cap``
    # is done without visiting the rest (a polyline of a million points stops after cap + 1)
    stack: list[tuple[int, list[int], int, int]] = [(root, refs.get(root, []), 0, own.get(root, 0))]
    on_path = {root}
    while stack:
        node, children, i, total = stack[-1]
        while i < len(children) and total <= cap:
            child = children[i]
            i += 1
            if child in reach:
                total += reach[child]
            elif child in on_path:
                continue
            elif child not in refs:
                reach[child] = min(own.get(child, 0), cap + 1)
                total += reach[child]
            else:
                stack[-1] = (node, children, i, total)
                stack.append((child, refs[child], 0, own.get(child, 0)))
                on_path.add(child)
                break
        else:
            stack.pop()
            on_path.discard(node)
            reach[node] = min(total, cap + 1)
            if stack:
                parent, siblings, j, subtotal = stack[-1]
                stack[-1] = (parent, siblings, j, subtotal + reach[node])
    return reach[root]
