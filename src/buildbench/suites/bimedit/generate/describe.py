"""Indirect ways to name one element, each checked to pick out exactly that element.

The paper's spatial and topological instructions identify the target "by geometric
context" or "by BIM relations", and its authors checked by hand that each is
unambiguous (paper section 3, "Instruction category"; spec section 2.4). Here every
description is a query (``facts``) plus an English phrase; :func:`resolve` runs the
query against a model, and a description is only offered when it returns the target
alone (spec section 7.2, step 2).

Topological queries use the relations of the topology metric: which spaces a wall
bounds, which walls it is path-connected to, which wall hosts a door or window and
which rooms that wall separates, which storey contains an element. Spatial queries
use element centres (metres): the element of a class nearest to a point, or the one
furthest along an axis on a storey, each with a clear margin over the runner-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import ifcopenshell
import ifcopenshell.util.element
import numpy as np

from buildbench.suites.bimedit.check.model import IfcModel
from buildbench.suites.bimedit.check.shapes import ShapeCache

#: A nearest/extreme element must beat the runner-up by this much (metres) to be unambiguous.
MARGIN_M = 0.5
_AXES = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0)}


@dataclass(frozen=True)
class Description:
    """One way to name an element.

    Attributes:
        kind: "topological" or "spatial".
        text: the phrase, e.g. "the wall that bounds only the rooms 1AbC… and 2DeF…".
        facts: the query behind the phrase; ``resolve(model, facts)`` returns the element.
    """

    kind: str
    text: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Facts:
    """What the queries need to know about one element (computed once per model)."""

    guid: str
    bounds: frozenset[str]
    bounded_by: frozenset[str]
    connected: frozenset[str]
    hosted: tuple[str, ...]
    host_rooms: frozenset[str] | None
    host: str | None
    storey: str | None
    centre: np.ndarray


class DescriptionIndex:
    """Relations and centres of a model's elements, per class, for fast repeated queries."""

    def __init__(self, model: IfcModel, shapes: ShapeCache) -> None:
        self.model = model
        self.shapes = shapes
        self._by_class: dict[str, list[_Facts]] = {}

    def facts(self, ifc_class: str) -> list[_Facts]:
        """Facts of every element of ``ifc_class`` (subtypes included), by GlobalId."""
        found = self._by_class.get(ifc_class)
        if found is None:
            ents = sorted(self.model.file.by_type(ifc_class), key=lambda e: e.GlobalId)
            found = self._by_class[ifc_class] = [self._facts(e) for e in ents]
        return found

    def _facts(self, el: ifcopenshell.entity_instance) -> _Facts:
        host = _host(el)
        openings = [r.RelatedOpeningElement for r in getattr(el, "HasOpenings", ()) or ()]
        hosted = sorted(rel.RelatedBuildingElement.GlobalId for o in openings for rel in o.HasFillings or ())
        container = ifcopenshell.util.element.get_container(el) or ifcopenshell.util.element.get_aggregate(el)
        return _Facts(guid=el.GlobalId, bounds=_bounded_spaces(el), bounded_by=_bounding_elements(el),
                      connected=_connected(el), hosted=tuple(hosted),
                      host_rooms=None if host is None else _bounded_spaces(host),
                      host=None if host is None else str(host.GlobalId),
                      storey=None if container is None else str(container.GlobalId),
                      centre=self.shapes.centre(el.GlobalId))


def _bounded_spaces(el: ifcopenshell.entity_instance) -> frozenset[str]:
    return frozenset(b.RelatingSpace.GlobalId for b in getattr(el, "ProvidesBoundaries", ()) or ()
                     if b.RelatingSpace is not None)


def _bounding_elements(el: ifcopenshell.entity_instance) -> frozenset[str]:
    return frozenset(b.RelatedBuildingElement.GlobalId for b in getattr(el, "BoundedBy", ()) or ()
                     if b.RelatedBuildingElement is not None)


def _connected(el: ifcopenshell.entity_instance) -> frozenset[str]:
    to = {r.RelatedElement.GlobalId for r in getattr(el, "ConnectedTo", ()) or () if r.is_a("IfcRelConnectsElements")}
    frm = {r.RelatingElement.GlobalId for r in getattr(el, "ConnectedFrom", ()) or ()
           if r.is_a("IfcRelConnectsElements")}
    return frozenset(to | frm)


def _host(el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance | None:
    opening = ifcopenshell.util.element.get_filled_void(el) if el.is_a("IfcElement") else None
    return ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None


def resolve(index: DescriptionIndex, facts: dict[str, Any]) -> list[str]:
    """GlobalIds of the elements matching ``facts`` (see :func:`describe` for the keys)."""
    found = index.facts(facts["class"])
    if "bounds" in facts:
        found = [e for e in found if e.bounds == frozenset(facts["bounds"])]
    if "bounded_by" in facts:
        found = [e for e in found if frozenset(facts["bounded_by"]) <= e.bounded_by]
    if "connected_to" in facts:
        found = [e for e in found if frozenset(facts["connected_to"]) <= e.connected]
    if "hosts" in facts:
        found = [e for e in found if set(facts["hosts"]) <= set(e.hosted)]
    if "between_rooms" in facts:
        found = [e for e in found if e.host_rooms == frozenset(facts["between_rooms"])]
    if "host" in facts:
        found = [e for e in found if e.host == facts["host"]]
    if "storey" in facts:
        found = [e for e in found if e.storey == facts["storey"]]
    if "touches" in facts:
        found = [e for e in found if all(_touching(index, e.guid, g) for g in facts["touches"])]
    if "nearest_to" in facts and found:
        d = np.array([np.linalg.norm(e.centre - np.asarray(facts["nearest_to"], dtype=float)) for e in found])
        found = [e for e, di in zip(found, d, strict=True) if di < d.min() + MARGIN_M]
    if "extreme" in facts and found:
        axis, sign = _AXES[facts["extreme"]]
        v = np.array([sign * e.centre[axis] for e in found])
        found = [e for e, vi in zip(found, v, strict=True) if vi > v.max() - MARGIN_M]
    return [e.guid for e in found]


def _aabb(index: DescriptionIndex, guid: str) -> np.ndarray | None:
    mesh = index.shapes.mesh(guid)
    return None if mesh is None else np.stack([mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)])


def _touching(index: DescriptionIndex, a: str, b: str, tol_m: float = 0.01) -> bool:
    """Whether the axis-aligned boxes of ``a`` and ``b`` meet or overlap (within ``tol_m``)."""
    if a == b:
        return False
    ba, bb = _aabb(index, a), _aabb(index, b)
    if ba is None or bb is None:
        return False
    return bool(np.all(ba[0] <= bb[1] + tol_m) and np.all(bb[0] <= ba[1] + tol_m))


def _names(guids: Iterable[str]) -> str:
    items = [f"({g})" for g in sorted(guids)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe(index: DescriptionIndex, guid: str) -> list[Description]:
    """Every description of element ``guid`` that picks out that element alone.

    ``facts`` keys: ``class`` (always), ``bounds`` (exact set of spaces it bounds),
    ``bounded_by`` (elements that bound a space), ``connected_to`` (walls it is
    path-connected to), ``hosts`` (a filling in its openings), ``between_rooms`` (the
    rooms the host wall of a door/window bounds), ``host`` (the wall a door/window is in), ``touches`` (elements whose boxes it meets),
    ``storey``, ``nearest_to`` (a point,
    metres) and ``extreme`` ("+x", "-x", "+y", "-y"). A nearest or extreme element
    must beat the runner-up by :data:`MARGIN_M`.
    """
    el = index.model.file.by_guid(guid)
    cls = el.is_a()
    me = next(e for e in index.facts(cls) if e.guid == guid)
    noun = {"IfcWall": "wall", "IfcDoor": "door", "IfcWindow": "window", "IfcSlab": "slab",
            "IfcColumn": "column", "IfcSpace": "room"}.get(cls, cls)
    options: list[Description] = []
    if me.bounds:
        options.append(Description("topological", f"the {noun} that bounds only the rooms {_names(me.bounds)}",
                                   {"class": cls, "bounds": sorted(me.bounds)}))
    walls = sorted(g for g in me.bounded_by if index.model.file.by_guid(g).is_a("IfcWall"))
    if len(walls) >= 2:
        pick = [walls[0], walls[-1]]
        options.append(Description("topological", f"the {noun} bounded by the walls {_names(pick)}",
                                   {"class": cls, "bounded_by": pick}))
    if len(me.connected) >= 2:
        pick = sorted(me.connected)[:2]
        options.append(Description("topological", f"the {noun} touching the walls {_names(pick)}",
                                   {"class": cls, "connected_to": pick}))
    if me.hosted:
        options.append(Description("topological", f"the {noun} hosting ({me.hosted[0]})",
                                   {"class": cls, "hosts": [me.hosted[0]]}))
    if me.host_rooms:
        rooms = sorted(me.host_rooms)
        where = "the outside" if len(rooms) == 1 else _names(rooms[1:])
        options.append(Description("topological", f"the {noun} between room ({rooms[0]}) and {where}",
                                   {"class": cls, "between_rooms": rooms}))
    if cls == "IfcColumn":
        walls_near = [w.guid for w in index.facts("IfcWall") if _touching(index, guid, w.guid)]
        for i, a in enumerate(walls_near):
            for b in walls_near[i + 1:]:
                options.append(Description("topological", f"the {noun} adjoining the walls {_names([a, b])}",
                                           {"class": cls, "touches": sorted([a, b])}))
    if me.storey is not None:
        options.append(Description("topological", f"the only {noun} on the storey ({me.storey})",
                                   {"class": cls, "storey": me.storey}))
        for direction in _AXES:
            options.append(Description("spatial", f"the {noun} furthest in the {direction} direction on "
                                                  f"storey ({me.storey})",
                                       {"class": cls, "storey": me.storey, "extreme": direction}))
    c = np.round(me.centre, 2)
    options.append(Description("spatial", f"the {noun} closest to the point ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f})",
                               {"class": cls, "nearest_to": c.tolist()}))
    return [d for d in options if resolve(index, d.facts) == [guid]]
