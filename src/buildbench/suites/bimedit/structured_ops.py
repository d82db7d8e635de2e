"""The structured tool set's operations, run inside the sandboxed worker on the bound ``ifc``.

Lengths in and out are metres, whatever the model's unit; every mutating operation
commits, so the structured agent never loses an edit to a forgotten ``commit()``. New
elements follow good IFC practice through :class:`~.generate.builder.IfcBuilder`
(containment in the storey, openings voiding their host, fillings filling them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ifcopenshell
import ifcopenshell.api.attribute
import ifcopenshell.api.pset
import ifcopenshell.util.element
import ifcopenshell.util.placement
import ifcopenshell.util.unit
import numpy as np

from buildbench.suites.bimedit.generate.builder import Point2
from buildbench.suites.bimedit.generate.edits import (
    builder_for,
    delete_element,
    move_elements,
    world_matrix_m,
)

#: Longest list ``query_elements`` returns.
MAX_LISTED = 300


def _scale(ifc: ifcopenshell.file) -> float:
    return float(ifcopenshell.util.unit.calculate_unit_scale(ifc))


def _element(ifc: ifcopenshell.file, guid: str) -> ifcopenshell.entity_instance:
    try:
        return ifc.by_guid(str(guid))
    except RuntimeError:
        raise ValueError(f"no element with GlobalId {guid!r} in the model") from None


def _position_m(ifc: ifcopenshell.file, el: ifcopenshell.entity_instance) -> list[float] | None:
    if getattr(el, "ObjectPlacement", None) is None:
        return None
    return [round(float(v), 4) for v in world_matrix_m(el, _scale(ifc))[:3, 3]]


def _storey_of(el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance | None:
    return ifcopenshell.util.element.get_container(el) or ifcopenshell.util.element.get_aggregate(el)


def query_elements(ifc: ifcopenshell.file, ifc_class: str = "IfcProduct", storey: str | None = None,
                   name_contains: str | None = None) -> dict[str, Any]:
    """GlobalId, class, name, storey and world position (m) of matching elements."""
    try:
        found = ifc.by_type(ifc_class)
    except RuntimeError:
        raise ValueError(f"{ifc_class!r} is not an entity of schema {ifc.schema}") from None
    rows = []
    for el in sorted(found, key=lambda e: e.id()):
        if not hasattr(el, "GlobalId"):
            continue
        parent = _storey_of(el)
        if storey is not None and (parent is None or parent.GlobalId != storey):
            continue
        if name_contains and name_contains.lower() not in str(el.Name or "").lower():
            continue
        rows.append({"guid": el.GlobalId, "class": el.is_a(), "name": el.Name,
                     "storey": None if parent is None else parent.GlobalId, "position_m": _position_m(ifc, el)})
    return {"count": len(rows), "elements": rows[:MAX_LISTED], "truncated": len(rows) > MAX_LISTED}


def get_properties(ifc: ifcopenshell.file, guid: str) -> dict[str, Any]:
    """Attributes, property sets, placement and relations of one element."""
    el = _element(ifc, guid)
    attrs = {k: v for k, v in el.get_info(recursive=False).items()
             if isinstance(v, (str, int, float, bool)) or v is None}
    rel: dict[str, Any] = {}
    container = _storey_of(el)
    rel["container"] = None if container is None else container.GlobalId
    rel["openings"] = [r.RelatedOpeningElement.GlobalId for r in getattr(el, "HasOpenings", ()) or ()]
    rel["fills_opening"] = [r.RelatingOpeningElement.GlobalId for r in getattr(el, "FillsVoids", ()) or ()]
    rel["voids"] = [r.RelatingBuildingElement.GlobalId for r in getattr(el, "VoidsElements", ()) or ()]
    rel["filled_by"] = [r.RelatedBuildingElement.GlobalId for r in getattr(el, "HasFillings", ()) or ()]
    rel["connected_to"] = [r.RelatedElement.GlobalId for r in getattr(el, "ConnectedTo", ()) or ()]
    rel["connected_from"] = [r.RelatingElement.GlobalId for r in getattr(el, "ConnectedFrom", ()) or ()]
    rel["bounds_spaces"] = [r.RelatingSpace.GlobalId for r in getattr(el, "ProvidesBoundaries", ()) or ()]
    rel["bounded_by"] = [r.RelatedBuildingElement.GlobalId for r in getattr(el, "BoundedBy", ()) or ()
                         if r.RelatedBuildingElement is not None]
    matrix = None
    if getattr(el, "ObjectPlacement", None) is not None:
        matrix = np.round(world_matrix_m(el, _scale(ifc)), 6).tolist()
    return {"guid": el.GlobalId, "class": el.is_a(), "attributes": attrs,
            "psets": ifcopenshell.util.element.get_psets(el), "world_matrix_m": matrix, "relations": rel,
            "unit_m": _scale(ifc)}


def _points(values: Sequence[Sequence[float]], what: str) -> list[Point2]:
    pts = [Point2(float(p[0]), float(p[1])) for p in values]
    if len(pts) < 3:
        raise ValueError(f"{what} needs at least 3 [x, y] points, got {len(pts)}")
    return pts


def create_element(ifc: ifcopenshell.file, commit: Callable[[], Any], kind: str, storey: str,
                   name: str = "", **p: Any) -> dict[str, Any]:
    """Create a wall, slab, column, space, door or window (see :data:`structured.CREATE_PARAMS`)."""
    st = _element(ifc, storey)
    z0 = float(p.get("elevation_m", float(ifcopenshell.util.placement.get_local_placement(
        st.ObjectPlacement)[2][3]) * _scale(ifc) if st.ObjectPlacement is not None else 0.0))
    b = builder_for(ifc)
    try:
        if kind == "wall":
            el = b.wall(st, z0, Point2(*map(float, p["start"])), Point2(*map(float, p["end"])),
                        thickness_m=float(p["thickness_m"]), height_m=float(p["height_m"]),
                        name=name or "Wall", external=bool(p.get("external", False)))
        elif kind == "slab":
            el = b.slab(st, z0 + float(p["thickness_m"]), _points(p["outline"], "a slab outline"),
                        depth_m=float(p["thickness_m"]), name=name or "Slab")
        elif kind == "column":
            el = b.column(st, z0, Point2(*map(float, p["at"])), size_m=float(p["width_m"]),
                          height_m=float(p["height_m"]), name=name or "Column")
        elif kind == "space":
            el = b.space(st, z0, _points(p["outline"], "a space outline"), height_m=float(p["height_m"]),
                         name=name or "Space", long_name=str(p.get("long_name", name or "Space")))
        elif kind in ("door", "window"):
            host = _element(ifc, p["host"])
            frame = world_matrix_m(host, _scale(ifc))
            thickness = float(p.get("host_thickness_m", 0.2))
            el, _ = b.filling(st, host, hostframe_matrix=frame, host_thickness_m=thickness, kind=kind,
                              along_m=float(p["along_m"]), sill_m=float(p.get("sill_m", 0.0)),
                              width_m=float(p["width_m"]), height_m=float(p["height_m"]),
                              name=name or kind.capitalize(), external=bool(p.get("external", False)))
        else:
            raise ValueError(f"kind must be wall, slab, column, space, door or window, got {kind!r}")
    except KeyError as exc:
        raise ValueError(f"create_element(kind={kind!r}) needs the parameter {exc.args[0]!r}") from None
    finally:
        b.release()
    commit()
    return {"created": el.GlobalId, "class": el.is_a(), "position_m": _position_m(ifc, el)}


def modify_element(ifc: ifcopenshell.file, commit: Callable[[], Any], guid: str,
                   move_by_m: Sequence[float] | None = None, attributes: dict[str, Any] | None = None,
                   properties: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Move an element (a door or window with its opening), edit attributes and property sets."""
    el = _element(ifc, guid)
    if move_by_m is not None:
        offset = np.asarray([float(v) for v in move_by_m], dtype=float)
        if offset.shape != (3,):
            raise ValueError(f"move_by_m must be [dx, dy, dz] in metres, got {list(move_by_m)}")
        moved = [el]
        opening = ifcopenshell.util.element.get_filled_void(el)
        if opening is not None:
            moved.append(opening)
        move_elements(ifc, moved, offset)
    if attributes:
        ifcopenshell.api.attribute.edit_attributes(ifc, product=el, attributes=dict(attributes))
    for pset_name, values in (properties or {}).items():
        pset = ifcopenshell.api.pset.add_pset(ifc, product=el, name=str(pset_name))
        ifcopenshell.api.pset.edit_pset(ifc, pset=pset, properties=dict(values))
    commit()
    return {"modified": el.GlobalId, "position_m": _position_m(ifc, el)}


def remove_element(ifc: ifcopenshell.file, commit: Callable[[], Any], guid: str) -> dict[str, Any]:
    """Delete an element with its openings, their fillings and its relations."""
    removed = delete_element(ifc, _element(ifc, guid))
    commit()
    return {"removed": removed}


__all__ = ["create_element", "get_properties", "modify_element", "query_elements",
           "remove_element"]
