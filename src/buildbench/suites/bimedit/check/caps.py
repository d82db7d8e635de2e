"""Caps on an IFC model an agent wrote, checked before it is scored.

Scoring reads the whole model with IfcOpenShell and tessellates the edited elements: a model made
big on purpose (a million extra points on one element: 43 MB, minutes and gigabytes of scoring)
would cost far more than any real edit. Two caps, each a `buildbench.limits` limit that
``BUILDBENCH_LIMIT_<NAME>`` can change:

- ``ifc_entities``: entity instances in the file (default 5,000,000, beyond the largest real
  building models of the benchmark by two orders of magnitude);
- ``ifc_element_points``: coordinate points reachable from one element's shape, i.e. from the
  ``IfcProductDefinitionShape`` it references through representations, items, curves, faces and
  point lists (default 100,000: a real building element rarely has more than 10^5).

`over_caps` reads the STEP text itself (no IfcOpenShell), one pass and a walk of the reference
graph, so refusing an oversized model takes seconds, not minutes. A model past a cap is the agent's
output over a limit: the scorer raises `AgentFailure` with the reason (a scored failure).
"""

from __future__ import annotations

import re
from pathlib import Path

from buildbench.inputs import read_bytes
from buildbench.limits import limit

_ENTITY = re.compile(rb"#(\d+)\s*=\s*([A-Za-z0-9_]+)\s*\(")
_REF = re.compile(rb"#(\d+)")
_SHAPE = b"IFCPRODUCTDEFINITIONSHAPE"
_POINT = b"IFCCARTESIANPOINT"
_POINT_LISTS = (b"IFCCARTESIANPOINTLIST2D", b"IFCCARTESIANPOINTLIST3D")


def over_caps(path: str | Path) -> str | None:
    """One line naming the cap ``path`` goes past (and by how much), or None within the caps."""
    data = read_bytes(path)
    starts = list(_ENTITY.finditer(data))
    max_entities = limit("ifc_entities")
    if len(starts) > max_entities:
        return (f"{Path(path).name}: {len(starts):,} IFC entities, over the cap of {max_entities:,} "
                "(BUILDBENCH_LIMIT_IFC_ENTITIES)")
    cap = limit("ifc_element_points")
    if data.count(b"(") <= cap:
        return None  # every point opens a parenthesis: no element can have more than the file has
    kinds: dict[int, bytes] = {}
    refs: dict[int, list[int]] = {}
    points: dict[int, int] = {}
    for i, match in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(data)
        body = data[match.end():end]
        number, kind = int(match.group(1)), match.group(2).upper()
        kinds[number] = kind
        if kind == _POINT:
            points[number] = 1
        elif kind in _POINT_LISTS:
            points[number] = max(0, body.count(b"(") - 1)  # one parenthesis per point, one around them
        else:
            refs[number] = [int(r) for r in _REF.findall(body)]
    reach: dict[int, int] = {}
    for owner, targets in refs.items():
        if kinds[owner] == _SHAPE:
            continue
        for shape in targets:
            if kinds.get(shape) == _SHAPE:
                count = _points_below(shape, refs, points, reach, cap)
                if count > cap:
                    return (f"{Path(path).name}: element #{owner} ({kinds[owner].decode()}) has more than "
                            f"{cap:,} points in its shape, over the cap (BUILDBENCH_LIMIT_IFC_ELEMENT_POINTS)")
    return None


def _points_below(root: int, refs: dict[int, list[int]], points: dict[int, int], reach: dict[int, int],
                  cap: int) -> int:
    """Points reachable from ``root`` (shared parts counted once per path: an upper bound), memoised in
    ``reach`` and cut off just past ``cap``."""
    stack: list[tuple[int, int]] = [(root, 0)]
    on_path: set[int] = set()
    while stack:
        node, state = stack.pop()
        if node in reach:
            continue
        if state == 0:
            on_path.add(node)
            stack.append((node, 1))
            stack.extend((child, 0) for child in refs.get(node, ()) if child not in reach and child not in on_path)
            continue
        on_path.discard(node)
        total = points.get(node, 0) + sum(reach.get(child, 0) for child in refs.get(node, ()))
        reach[node] = min(total, cap + 1)
    return reach[root]
