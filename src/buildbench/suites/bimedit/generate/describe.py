"""Indirect ways to name one element, each checked to pick out exactly that element.

The paper's spatial and topological instructions identify the target "by geometric
context" or "by BIM relations", and its authors checked by hand that each is
unambiguous (paper section 3, "Instruction category"; spec section 2.4). Here every
description is a query (``facts``) plus an English phrase; :func:`resolve` runs the
query against a model, and a description is only offered when it returns the target
alone (spec section 7.2, step 2).

Topological queries use the relations of the topology metric: which spaces a wall
bounds, which walls it is path-connected to, which wall hosts a door or window and
which rooms that wall separates, which storey contains an element; where a model has
none of these, the elements whose boxes meet the target's (adjacency). Spatial queries
use element centres (metres): the element of a class nearest to a point, or the one
furthest along an axis on a storey, each with a clear margin over the runner-up.
Viewpoint queries (egocentric: the element on one side of an observer standing in a
room) are made in :mod:`.viewpoint`; the index the queries run against is in :mod:`.facts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from buildbench.suites.bimedit.generate.facts import (
    AXES,
    NOUNS,
    Description,
    DescriptionIndex,
    base_class,
    container_noun,
)
from buildbench.suites.bimedit.generate.viewpoint import in_sector, observer, viewpoints

__all__ = ["FRAME_ANCHORS", "MARGIN_M", "Description", "DescriptionIndex", "describe", "frame_adjacency",
           "observer", "resolve"]

#: Adjacency phrases name at most this many of the elements touching the target (the first, by GlobalId).
ADJOINING_MOST = 6
#: A nearest/extreme element must beat the runner-up by this much (metres) to be unambiguous.
MARGIN_M = 0.5


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
        axis, sign = AXES[facts["extreme"]]
        v = np.array([sign * e.centre[axis] for e in found])
        far = v.max() - MARGIN_M
        found = [e for e, vi in zip(found, v, strict=True) if vi > far]
    if "viewpoint" in facts and found:
        found = in_sector(index, facts["viewpoint"], found)
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


def _may_touch(outer: np.ndarray | None, box: np.ndarray, tol_m: float = 0.01) -> bool:
    """Whether an element with outer box ``outer`` (None: unknown) may touch ``box`` (as :func:`_touching` asks)."""
    return outer is None or bool((outer[0] <= box[1] + tol_m).all() and (box[0] <= outer[1] + tol_m).all())


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
        for direction in AXES:
            options.append(Description("spatial", f"the {noun} furthest in the {direction} direction on "
                                                  f"{where} ({me.storey})",
                                       {"class": cls, "storey": me.storey, "extreme": direction}))
    options.extend(viewpoints(index, me, cls, noun))
    c = np.round(me.centre, 2)
    options.append(Description("spatial", f"the {noun} closest to the point ({c[0]:.2f}, {c[1]:.2f}, {c[2]:.2f})",
                               {"class": cls, "nearest_to": c.tolist()}))
    return [d for d in options if resolve(index, d.facts) == [guid] and not _mentions(d.facts) & index.unnamable_ids]



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


def _adjacency(index: DescriptionIndex, guid: str, cls: str, noun: str, most: int = ADJOINING_MOST,
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
    target = index.aabb(guid)
    for anchor in FRAME_ANCHORS:
        # only elements whose outer box (read from their shape parameters) meets the target's can
        # touch it: the others (most of a frame's 2,000 beams) are never tessellated
        maybe = [] if target is None else [g for g in index.guids(anchor) if _may_touch(index.outer_box(g), target)]
        # the phrases name the first ADJOINING_MOST touching anchors only: meshes past them are not needed
        near: list[str] = []
        for g in maybe:
            if len(near) == ADJOINING_MOST:
                break
            if _touching(index, [g], guid)[0]:
                near.append(g)
        found = [d for d in _adjacency(index, guid, cls, NOUNS.get(cls, cls), near=near, by=NOUNS[anchor])
                 if resolve(index, d.facts) == [guid] and not _mentions(d.facts) & index.unnamable_ids]
        if found:
            return found
    return []

