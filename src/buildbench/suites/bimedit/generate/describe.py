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

Viewpoint queries are egocentric: an observer stands in a room (at its centre, facing an
axis or one of its doors; or in one of its doors, facing into the room) and the target is
the element of the room (or storey) straight ahead, on the left, on the right or behind.
Conventions, all in plan (x, y; z ignored): with facing direction f and the vector v from
the observer to the element, ``dot = f·v`` is positive ahead and ``cross = f_x v_y - f_y v_x``
is positive on the left (x to the right of y, as seen from above); the side is the one
whose sign dominates, i.e. the 90-degree sector around ahead/left/behind/right that holds
v. A wall's point is the point of its plan axis nearest the observer (the part of it you
see), any other element's point is its centre.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import ifcopenshell
import ifcopenshell.util.element
import numpy as np

from buildbench.suites.bimedit.check.model import IfcModel
from buildbench.suites.bimedit.check.shapes import ShapeCache

#: A nearest/extreme element must beat the runner-up by this much (metres) to be unambiguous.
MARGIN_M = 0.5
_AXES = {"+x": (0, 1.0), "-x": (0, -1.0), "+y": (1, 1.0), "-y": (1, -1.0)}
#: Viewpoint sides: the direction of each sector's centre, degrees anticlockwise from facing.
SIDES = {"ahead": 0.0, "left": 90.0, "behind": 180.0, "right": -90.0}
#: A viewpoint query counts elements up to this far (degrees) outside a side's 90-degree sector
#: as candidates, and a description is only offered for a target this far inside it, so an
#: element near the diagonal never decides uniqueness one way or the other.
SECTOR_SLACK_DEG = 15.0
#: Elements closer than this to the observer in plan (metres) have no side (the wall you stand in).
NEAR_M = 0.3
_SIDE_TEXT = {"ahead": "straight ahead", "left": "on your left", "right": "on your right", "behind": "behind you"}
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
        self._segments: dict[str, PlanSegment] = {}
        self._boxes: dict[str, np.ndarray | None] = {}

    @cached_property
    def unnamable_ids(self) -> frozenset[str]:
        """GlobalIds that cannot single out one entity: those several entities carry (some
        exporters repeat them) and those ``by_guid`` cannot find, which the oracle code and
        agents' tools look elements up by (IfcOpenShell indexes 22-character ids only, and some
        exporters write 36-character UUIDs), and missing ones."""
        f = self.model.file
        counts = Counter(e.GlobalId for e in f.by_type("IfcRoot"))
        return frozenset(g for g, n in counts.items() if n > 1 or not _findable(f, g))

    def facts(self, ifc_class: str) -> list[_Facts]:
        """Facts of every element of ``ifc_class`` (subtypes included), by GlobalId; elements
        whose GlobalId cannot single them out (:attr:`unnamable_ids`) are left out."""
        found = self._by_class.get(ifc_class)
        if found is None:
            ents = sorted((e for e in self.model.file.by_type(ifc_class) if e.GlobalId not in self.unnamable_ids),
                          key=lambda e: e.GlobalId)
            found = self._by_class[ifc_class] = [self._facts(e) for e in ents]
        return found

    def get(self, guid: str) -> _Facts:
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


class Observer(NamedTuple):
    """Where a viewer stands in plan and which way they face.

    Attributes:
        position_m: (x, y) in metres.
        facing: unit (x, y) direction.
    """

    position_m: np.ndarray
    facing: np.ndarray


def observer(index: DescriptionIndex, view: dict[str, Any]) -> Observer:
    """The observer of a viewpoint: ``{"room": R}`` plus one of ``"facing"`` (an axis, at the
    room's centre), ``"facing_door"`` (a door, looked at from the room's centre) or
    ``"through_door"`` (standing in that door, facing into the room, square to its wall).

    Raises:
        ValueError: the viewpoint names no way to face, its door has no host wall, or the door
            it faces sits at the room's centre.
    """
    room = index.get(view["room"]).centre[:2]
    if "facing" in view:
        axis, sign = _AXES[view["facing"]]
        f = np.zeros(2)
        f[axis] = sign
        return Observer(room, f)
    if "facing_door" in view:
        f = index.get(view["facing_door"]).centre[:2] - room
        if np.linalg.norm(f) < NEAR_M:
            raise ValueError(f"door {view['facing_door']} is at the centre of room {view['room']}: no way to face it")
        return Observer(room, f / np.linalg.norm(f))
    if "through_door" in view:
        door = index.get(view["through_door"])
        at = door.centre[:2]
        seg = index.segment(door.host) if door.host is not None else None
        run = None if seg is None else seg.end_m - seg.start_m
        if run is None or not np.linalg.norm(run):
            raise ValueError(f"door {door.guid} has no host wall to walk through")
        normal = np.array([-run[1], run[0]]) / np.linalg.norm(run)
        return Observer(at, normal if normal @ (room - at) >= 0 else -normal)
    raise ValueError(f"viewpoint {view} names neither 'facing', 'facing_door' nor 'through_door'")


def bearing_deg(index: DescriptionIndex, obs: Observer, e: _Facts) -> float | None:
    """Angle of element ``e`` from the observer's facing direction, degrees anticlockwise (left
    positive), from the 2-D dot and cross products; None when it is within :data:`NEAR_M`."""
    wall = index.model.file.by_guid(e.guid).is_a("IfcWall")
    point = index.segment(e.guid).nearest(obs.position_m) if wall else e.centre[:2]
    v = point - obs.position_m
    if np.linalg.norm(v) < NEAR_M:
        return None
    dot = float(obs.facing @ v)
    cross = float(obs.facing[0] * v[1] - obs.facing[1] * v[0])
    return float(np.degrees(np.arctan2(cross, dot)))


def _off_side_deg(bearing: float, side: str) -> float:
    """How far (degrees, >= 0) ``bearing`` is from the centre of ``side``'s sector."""
    return abs((bearing - SIDES[side] + 180.0) % 360.0 - 180.0)


def _nearest_side(bearing: float) -> str:
    """The side whose sector centre is nearest ``bearing`` (degrees)."""
    return min(SIDES, key=lambda s: _off_side_deg(bearing, s))


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
    if "of_room" in facts:
        found = [e for e in found if facts["of_room"] in e.bounds
                 or (e.host_rooms is not None and facts["of_room"] in e.host_rooms)]
    if "touches" in facts:
        for other in facts["touches"]:
            found = [e for e, hit in zip(found, _touching(index, [e.guid for e in found], other), strict=True) if hit]
    if "nearest_to" in facts and found:
        d = np.linalg.norm(np.stack([e.centre for e in found]) - np.asarray(facts["nearest_to"], dtype=float), axis=1)
        near = d.min() + MARGIN_M  # once: in the comprehension it cost a pass over d per element
        found = [e for e, di in zip(found, d, strict=True) if di < near]
    if "extreme" in facts and found:
        axis, sign = _AXES[facts["extreme"]]
        v = np.array([sign * e.centre[axis] for e in found])
        far = v.max() - MARGIN_M
        found = [e for e, vi in zip(found, v, strict=True) if vi > far]
    if "viewpoint" in facts and found:
        view = facts["viewpoint"]
        obs = observer(index, view)
        half = 45.0 + SECTOR_SLACK_DEG
        found = [e for e in found if e.guid != view["room"]
                 and (b := bearing_deg(index, obs, e)) is not None and _off_side_deg(b, view["side"]) <= half]
    return [e.guid for e in found]


def _touching(index: DescriptionIndex, guids: list[str], other: str, tol_m: float = 0.01) -> list[bool]:
    """Per element of ``guids``: whether its axis-aligned box and ``other``'s meet or overlap (within
    ``tol_m``); an element never touches itself, one without a mesh nothing. One array test over all
    of them: adjacency phrases ask this of every wall of a model, thousands in large ones."""
    b = index.aabb(other)
    boxes = [index.aabb(g) for g in guids]
    if b is None or not guids:
        return [False] * len(guids)
    arr = np.stack([np.full((2, 3), np.nan) if x is None else x for x in boxes])  # NaN compares False
    hit = (arr[:, 0] <= b[1] + tol_m).all(axis=1) & (b[0] <= arr[:, 1] + tol_m).all(axis=1)
    return [bool(h) and g != other for g, h in zip(guids, hit, strict=True)]


def _names(guids: Iterable[str]) -> str:
    items = [f"({g})" for g in sorted(guids)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def describe(index: DescriptionIndex, guid: str) -> list[Description]:
    """Every description of element ``guid`` that picks out that element alone.

    ``facts`` keys: ``class`` (always), ``bounds`` (exact set of spaces it bounds),
    ``bounded_by`` (elements that bound a space), ``connected_to`` (walls it is
    path-connected to), ``hosts`` (a filling in its openings), ``between_rooms`` (the
    rooms the host wall of a door/window bounds), ``host`` (the wall a door/window is in), ``touches`` (elements whose boxes it meets),
    ``storey``, ``of_room`` (a room its wall, or its host wall, bounds), ``nearest_to`` (a point,
    metres), ``extreme`` ("+x", "-x", "+y", "-y") and ``viewpoint`` (an :func:`observer`
    plus ``side``: "ahead", "left", "right" or "behind"). A nearest or extreme element
    must beat the runner-up by :data:`MARGIN_M`; a viewpoint target must lie
    :data:`SECTOR_SLACK_DEG` inside its side's sector and be the only candidate within that
    much outside it.
    """
    el = index.model.file.by_guid(guid)
    cls = base_class(el)
    me = next(e for e in index.facts(cls) if e.guid == guid)
    noun = NOUNS.get(cls, cls)
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
        walls_near = _touching_walls(index, guid)
        for i, a in enumerate(walls_near):
            for b in walls_near[i + 1:]:
                options.append(Description("topological", f"the {noun} adjoining the walls {_names([a, b])}",
                                           {"class": cls, "touches": sorted([a, b])}))
    elif cls != "IfcSpace" and not any(resolve(index, d.facts) == [guid] for d in options):
        options.extend(_adjacency(index, guid, cls, noun))
    if me.storey is not None:
        where = container_noun(index.model.file.by_guid(me.storey))
        options.append(Description("topological", f"the only {noun} on the {where} ({me.storey})",
                                   {"class": cls, "storey": me.storey}))
        for direction in _AXES:
            options.append(Description("spatial", f"the {noun} furthest in the {direction} direction on "
                                                  f"{where} ({me.storey})",
                                       {"class": cls, "storey": me.storey, "extreme": direction}))
    options.extend(_viewpoints(index, me, cls, noun))
    c = np.round(me.centre, 2)
    options.append(Description("spatial", f"the {noun} closest to the point ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f})",
                               {"class": cls, "nearest_to": c.tolist()}))
    return [d for d in options if resolve(index, d.facts) == [guid] and not _mentions(d.facts) & index.unnamable_ids]


def _findable(f: ifcopenshell.file, guid: object) -> bool:
    if not guid or not isinstance(guid, str):  # left out ($), or not text, in a malformed export
        return False
    try:
        f.by_guid(guid)
    except RuntimeError:
        return False
    return True


def _mentions(facts: dict[str, Any]) -> set[str]:
    """The strings a description's facts name (GlobalIds of anchors, storeys, rooms, hosts)."""
    out: set[str] = set()
    for value in facts.values():
        out.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
    return out


def _touching_walls(index: DescriptionIndex, guid: str) -> list[str]:
    """The walls whose boxes meet element ``guid``'s, in GlobalId order."""
    walls = [w.guid for w in index.facts("IfcWall")]
    return [w for w, hit in zip(walls, _touching(index, walls, guid), strict=True) if hit]


def _adjacency(index: DescriptionIndex, guid: str, cls: str, noun: str, most: int = 6,
               near: list[str] | None = None, by: str = "wall") -> list[Description]:
    """"The X adjoining the wall(s) …": for elements of models without the relations above (many
    exports write no space boundaries or path connections), the walls (or ``near``, elements
    called ``by``) whose boxes meet its box."""
    near = (_touching_walls(index, guid) if near is None else near)[:most]
    out = [Description("topological", f"the {noun} adjoining the {by} {_names([a])}", {"class": cls, "touches": [a]})
           for a in near]
    for i, a in enumerate(near):
        out.extend(Description("topological", f"the {noun} adjoining the {by}s {_names([a, b])}",
                               {"class": cls, "touches": sorted([a, b])}) for b in near[i + 1:])
    return out


#: What "adjoining" phrases name where no wall meets an element and no relation describes it:
#: the frame of structural models (Tekla, Revit Structure export no walls, rooms or connections),
#: tried in this order; a class is tessellated only when the ones before it single out nothing.
FRAME_ANCHORS = ("IfcSlab", "IfcColumn", "IfcBeam", "IfcMember")


def frame_adjacency(index: DescriptionIndex, guid: str) -> list[Description]:
    """"The column adjoining the beam(s) …": the checked topological descriptions of ``guid`` by
    the first class of :data:`FRAME_ANCHORS` whose elements touching it single it out."""
    cls = base_class(index.model.file.by_guid(guid))
    for anchor in FRAME_ANCHORS:
        ids = [e.guid for e in index.facts(anchor)]
        near = [g for g, hit in zip(ids, _touching(index, ids, guid), strict=True) if hit]
        found = [d for d in _adjacency(index, guid, cls, NOUNS.get(cls, cls), near=near, by=NOUNS[anchor])
                 if resolve(index, d.facts) == [guid] and not _mentions(d.facts) & index.unnamable_ids]
        if found:
            return found
    return []


def _viewpoints(index: DescriptionIndex, me: _Facts, cls: str, noun: str) -> list[Description]:
    """Egocentric descriptions of ``me`` from the rooms it belongs to (or, for columns and
    rooms, the rooms near or next to it); see the module docstring for the conventions."""
    rooms = index.facts("IfcSpace")
    if cls in ("IfcWall", "IfcWallStandardCase", "IfcDoor", "IfcWindow"):
        own = sorted(me.host_rooms or () if cls in ("IfcDoor", "IfcWindow") else me.bounds)
        scope: dict[str, Any] = {}
    elif cls == "IfcSpace":
        own = [r.guid for r in rooms if r.guid != me.guid and r.bounded_by & me.bounded_by]
        scope = {"storey": me.storey}
    elif cls == "IfcColumn":
        near = sorted((float(np.linalg.norm(r.centre[:2] - me.centre[:2])), r.guid) for r in rooms
                      if r.storey == me.storey)
        own = [g for _, g in near[:2]]
        scope = {"storey": me.storey}
    else:
        return []
    out = []
    for room in own:
        doors = [d.guid for d in index.facts("IfcDoor") if d.host_rooms is not None and room in d.host_rooms]
        views: list[dict[str, Any]] = [{"room": room, "facing": a} for a in _AXES]
        views += [{"room": room, "facing_door": d} for d in doors]
        views += [{"room": room, "through_door": d} for d in doors]
        facts = {"class": cls, **scope} if scope else {"class": cls, "of_room": room}
        for view in views:
            if me.guid in view.values():
                continue
            try:
                bearing = bearing_deg(index, observer(index, view), me)
            except ValueError:  # a door this viewpoint cannot face or walk through
                continue
            if bearing is None:
                continue
            side = _nearest_side(bearing)
            if _off_side_deg(bearing, side) > 45.0 - SECTOR_SLACK_DEG:
                continue
            out.append(Description("spatial", _viewpoint_text(noun, view, side, own_room=not scope),
                                   {**facts, "viewpoint": {**view, "side": side}}))
    return out


def _viewpoint_text(noun: str, view: dict[str, Any], side: str, own_room: bool) -> str:
    room = f"room ({view['room']})"
    subject, ref = (f"the {noun} of {room}", "it") if own_room else (f"the {noun}", room)
    if "through_door" in view:
        how = f"when you walk into {ref} through the door ({view['through_door']})"
    elif "facing_door" in view:
        how = f"when you stand in the middle of {ref} looking towards the door ({view['facing_door']})"
    else:
        how = f"when you stand in the middle of {ref} facing the {view['facing']} direction"
    return f"{subject} {_SIDE_TEXT[side]} {how}"
