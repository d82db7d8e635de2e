"""What a description of an element is made of: the classes and nouns a phrase names, a
:class:`Description` (a phrase and the query behind it), and the :class:`DescriptionIndex` of
every element's relations, centre, box and plan axis that the queries run against.

Split from :mod:`.describe` (which makes and checks descriptions) and :mod:`.viewpoint`
(egocentric ones), which both build on it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import ifcopenshell
import ifcopenshell.util.element
import numpy as np

from buildbench.suites.bimedit.check.model import IfcModel
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.bounds import outer_box

#: Plan directions a query can name: axis index and sign.
AXES = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0)}
#: Classes a description names, most specific first: a description of an ``IfcWallStandardCase``
#: (IFC2X3 exports) must be unique among all walls, since the phrase says "the wall".
BASE_CLASSES: tuple[str, ...] = ("IfcDoor", "IfcWindow", "IfcWall", "IfcSlab", "IfcColumn", "IfcBeam", "IfcSpace",
                                 "IfcMember", "IfcPlate", "IfcRoof", "IfcStair", "IfcCovering", "IfcRailing")
NOUNS: dict[str, str] = {"IfcWall": "wall", "IfcDoor": "door", "IfcWindow": "window", "IfcSlab": "slab",
                         "IfcColumn": "column", "IfcSpace": "room", "IfcBeam": "beam", "IfcMember": "member",
                         "IfcPlate": "plate", "IfcRoof": "roof", "IfcStair": "stair", "IfcCovering": "covering",
                         "IfcRailing": "railing"}


def container_noun(container: ifcopenshell.entity_instance) -> str:
    """What to call the spatial element holding an element: "storey" (the usual case), or "building",
    "site" or "room" for exports that contain elements there directly."""
    for cls, word in (("IfcBuildingStorey", "storey"), ("IfcBuilding", "building"), ("IfcSite", "site"),
                      ("IfcSpace", "room")):
        if container.is_a(cls):
            return word
    return "spatial element"


def base_class(el: ifcopenshell.entity_instance) -> str:
    """The class a phrase names for ``el``: its first :data:`BASE_CLASSES` ancestor, else its own class."""
    return next((c for c in BASE_CLASSES if el.is_a(c)), el.is_a())


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
class ElementFacts:
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
        self._by_class: dict[str, list[ElementFacts]] = {}
        self._segments: dict[str, PlanSegment] = {}
        self._boxes: dict[str, np.ndarray | None] = {}
        self._outer: dict[str, np.ndarray | None] = {}

    @cached_property
    def unnamable_ids(self) -> frozenset[str]:
        """GlobalIds that cannot single out one entity: those several entities carry (some
        exporters repeat them) and those ``by_guid`` cannot find, which the oracle code and
        agents' tools look elements up by (IfcOpenShell indexes 22-character ids only, and some
        exporters write 36-character UUIDs), and missing ones."""
        f = self.model.file
        counts = Counter(e.GlobalId for e in f.by_type("IfcRoot"))
        return frozenset(g for g, n in counts.items() if n > 1 or not findable(f, g))

    def facts(self, ifc_class: str) -> list[ElementFacts]:
        """Facts of every element of ``ifc_class`` (subtypes included), by GlobalId; elements
        whose GlobalId cannot single them out (:attr:`unnamable_ids`) are left out."""
        found = self._by_class.get(ifc_class)
        if found is None:
            ents = sorted((e for e in self.model.file.by_type(ifc_class) if e.GlobalId not in self.unnamable_ids),
                          key=lambda e: e.GlobalId)
            found = self._by_class[ifc_class] = [self._facts(e) for e in ents]
        return found

    def guids(self, ifc_class: str) -> list[str]:
        """The GlobalIds :meth:`facts` covers, in its order, without computing any facts."""
        if ifc_class in self._by_class:
            return [e.guid for e in self._by_class[ifc_class]]
        return sorted(g for g in (e.GlobalId for e in self.model.file.by_type(ifc_class))
                      if g not in self.unnamable_ids)

    def outer_box(self, guid: str) -> np.ndarray | None:
        """A box sure to hold the element's mesh, from its shape parameters (:func:`.bounds.outer_box`),
        None where they cannot be read; memoised."""
        if guid not in self._outer:
            self._outer[guid] = outer_box(self.model, self.model.file.by_guid(guid))
        return self._outer[guid]

    def get(self, guid: str) -> ElementFacts:
        """Facts of one element by GlobalId.

        Raises:
            KeyError: no element has that GlobalId.
        """
        try:
            cls = base_class(self.model.file.by_guid(guid))
        except RuntimeError:
            raise KeyError(f"no element with GlobalId {guid!r} in the model") from None
        found = next((e for e in self.facts(cls) if e.guid == guid), None)
        if found is None:
            raise KeyError(f"GlobalId {guid!r} cannot single out one entity of the model")
        return found

    def aabb(self, guid: str) -> np.ndarray | None:
        """An element's axis-aligned box ``[min, max]`` (metres), None without a mesh; memoised, as
        adjacency phrases compare one element's box with every wall's (5,000 walls: minutes)."""
        if guid not in self._boxes:
            mesh = self.shapes.mesh(guid)
            self._boxes[guid] = None if mesh is None else np.stack([mesh.vertices.min(axis=0),
                                                                    mesh.vertices.max(axis=0)])
        return self._boxes[guid]

    def segment(self, guid: str) -> PlanSegment:
        """The plan axis of an element's mesh: the long axis of its footprint through its centre (metres)."""
        found = self._segments.get(guid)
        if found is None:
            found = self._segments[guid] = _plan_segment(self.shapes, guid)
        return found

    def _facts(self, el: ifcopenshell.entity_instance) -> ElementFacts:
        host = _host(el)
        openings = [r.RelatedOpeningElement for r in getattr(el, "HasOpenings", ()) or ()]
        hosted = sorted(rel.RelatedBuildingElement.GlobalId for o in openings for rel in o.HasFillings or ())
        container = ifcopenshell.util.element.get_container(el) or ifcopenshell.util.element.get_aggregate(el)
        return ElementFacts(guid=el.GlobalId, bounds=_bounded_spaces(el), bounded_by=_bounding_elements(el),
                      connected=_connected(el), hosted=tuple(hosted),
                      host_rooms=None if host is None else _bounded_spaces(host),
                      host=None if host is None else str(host.GlobalId),
                      storey=None if container is None else str(container.GlobalId),
                      centre=self.shapes.centre(el.GlobalId))


class PlanSegment(NamedTuple):
    """A straight segment in plan (metres)."""

    start_m: np.ndarray
    end_m: np.ndarray

    def nearest(self, point_m: np.ndarray) -> np.ndarray:
        """The point of the segment nearest ``point_m``."""
        d = self.end_m - self.start_m
        length2 = float(d @ d)
        t = 0.0 if length2 == 0.0 else float(np.clip((point_m - self.start_m) @ d / length2, 0.0, 1.0))
        return self.start_m + t * d


def _plan_segment(shapes: ShapeCache, guid: str) -> PlanSegment:
    mesh = shapes.mesh(guid)
    centre = shapes.centre(guid)[:2]
    if mesh is None:
        return PlanSegment(centre, centre)
    pts = mesh.vertices[:, :2] - centre
    # the footprint's principal direction is the wall's run; its extent along it, the ends
    _, vecs = np.linalg.eigh(pts.T @ pts)
    axis = vecs[:, -1]
    t = pts @ axis
    return PlanSegment(centre + t.min() * axis, centre + t.max() * axis)



def _bounded_spaces(el: ifcopenshell.entity_instance) -> frozenset[str]:
    return frozenset(b.RelatingSpace.GlobalId for b in getattr(el, "ProvidesBoundaries", ()) or ()
                     if b.RelatingSpace is not None)


def _bounding_elements(el: ifcopenshell.entity_instance) -> frozenset[str]:
    return frozenset(b.RelatedBuildingElement.GlobalId for b in getattr(el, "BoundedBy", ()) or ()
                     if b.RelatedBuildingElement is not None)


def _connected(el: ifcopenshell.entity_instance) -> frozenset[str]:
    # a connection whose other end a malformed file left out ($) connects to nothing
    to = {r.RelatedElement.GlobalId for r in getattr(el, "ConnectedTo", ()) or ()
          if r.is_a("IfcRelConnectsElements") and r.RelatedElement is not None}
    frm = {r.RelatingElement.GlobalId for r in getattr(el, "ConnectedFrom", ()) or ()
           if r.is_a("IfcRelConnectsElements") and r.RelatingElement is not None}
    return frozenset(to | frm)


def _host(el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance | None:
    opening = ifcopenshell.util.element.get_filled_void(el) if el.is_a("IfcElement") else None
    return ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None



def findable(f: ifcopenshell.file, guid: object) -> bool:
    if not guid or not isinstance(guid, str):  # left out ($), or not text, in a malformed export
        return False
    try:
        f.by_guid(guid)
    except RuntimeError:
        return False
    return True

