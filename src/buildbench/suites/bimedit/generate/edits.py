"""Reference edits that follow good IFC practice; they turn M0 into a ground truth M*.

* moving a door or window moves the opening it fills with it (paper section 2.1);
* deleting an element removes the openings that void it and their fillings, and
  ``root.remove_product`` cleans every relation they took part in;
* a new wall is contained in its storey, path-connected to its neighbours and bounds
  its spaces (see :meth:`IfcBuilder.wall` and friends).

Each function edits the model in place; lengths are metres whatever the model's unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import ifcopenshell
import ifcopenshell.api.boundary
import ifcopenshell.api.geometry
import ifcopenshell.api.pset
import ifcopenshell.api.root
import ifcopenshell.util.element
import ifcopenshell.util.placement
import ifcopenshell.util.unit
import numpy as np

from buildbench.suites.bimedit.generate.builder import IfcBuilder

api = ifcopenshell.api


def world_matrix_m(element: ifcopenshell.entity_instance, unit_scale_m: float) -> np.ndarray:
    """The element's world placement with the translation in metres."""
    m = np.array(ifcopenshell.util.placement.get_local_placement(element.ObjectPlacement), dtype=float)
    m[:3, 3] *= unit_scale_m
    return m


def move_elements(model: ifcopenshell.file, elements: Sequence[ifcopenshell.entity_instance],
                  offset_m: Sequence[float] | np.ndarray) -> None:
    """Translate every element by ``offset_m`` in world space, each exactly once.

    All target world matrices are computed before any placement is edited, so an element
    whose placement is relative to another moved element (a door placed relative to its
    opening) is not moved twice.
    """
    scale = float(ifcopenshell.util.unit.calculate_unit_scale(model))
    targets = [(e, world_matrix_m(e, scale)) for e in elements]
    for element, matrix in targets:
        matrix[:3, 3] += np.asarray(offset_m, dtype=float)
        api.geometry.edit_object_placement(model, product=element, matrix=matrix, is_si=True,
                                           should_transform_children=False)


def move_filling(model: ifcopenshell.file, filling: ifcopenshell.entity_instance,
                 offset_m: Sequence[float] | np.ndarray) -> None:
    """Move a door or window together with the opening it fills."""
    opening = ifcopenshell.util.element.get_filled_void(filling)
    move_elements(model, [filling] + ([opening] if opening is not None else []), offset_m)


def dependents(element: ifcopenshell.entity_instance) -> list[ifcopenshell.entity_instance]:
    """The openings voiding ``element`` and the doors/windows filling them."""
    out = []
    for rel in getattr(element, "HasOpenings", ()) or ():
        opening = rel.RelatedOpeningElement
        out.append(opening)
        out.extend(rel.RelatedBuildingElement for rel in opening.HasFillings or ())
    return out


def delete_element(model: ifcopenshell.file, element: ifcopenshell.entity_instance) -> list[str]:
    """Remove ``element``, its openings and their fillings; returns the removed GlobalIds."""
    victims = [element] + dependents(element)
    removed = [v.GlobalId for v in victims]
    for victim in reversed(victims):
        # remove_product leaves space boundaries pointing at nothing, which the schema forbids.
        for boundary in list(getattr(victim, "ProvidesBoundaries", ()) or ()):
            api.boundary.remove_boundary(model, boundary=boundary)
        api.root.remove_product(model, product=victim)
    return removed


def builder_for(model: ifcopenshell.file) -> IfcBuilder:
    """An :class:`IfcBuilder` adding to ``model``; call ``release()`` when done."""
    return IfcBuilder.attach(model)


def host_direction(filling: ifcopenshell.entity_instance) -> np.ndarray:
    """Unit world direction (plan) of the wall hosting a door or window, along the wall's axis."""
    opening = ifcopenshell.util.element.get_filled_void(filling)
    host = ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None
    if host is None:
        raise ValueError(f"{filling.is_a()} {filling.GlobalId} fills no opening in a host element")
    m = np.array(ifcopenshell.util.placement.get_local_placement(host.ObjectPlacement), dtype=float)
    x = m[:3, 0].copy()
    x[2] = 0.0
    return x / np.linalg.norm(x)


def slide_filling(model: ifcopenshell.file, filling: ifcopenshell.entity_instance, distance_m: float) -> None:
    """Slide a door or window (and its opening) ``distance_m`` along its host wall."""
    move_filling(model, filling, host_direction(filling) * distance_m)


def _profile_span_y(solid: ifcopenshell.entity_instance) -> tuple[float, float]:
    """Lowest and highest local y of an extrusion's profile points (model units)."""
    curve = solid.SweptArea.OuterCurve
    if curve.is_a("IfcIndexedPolyCurve"):
        ys = [p[1] for p in curve.Points.CoordList]
    else:
        ys = [p.Coordinates[1] for p in curve.Points]
    return min(ys), max(ys)


def resize_wall(model: ifcopenshell.file, wall: ifcopenshell.entity_instance, length_m: float) -> None:
    """Give a straight extruded wall a new length, keeping its start, thickness and height.

    Body and axis representations are rebuilt (as ``add_wall_representation`` makes them)
    and the base quantity ``Length`` follows; connections are left alone: whether they
    still hold is the caller's decision.

    Raises:
        ValueError: the wall's body is not a single extruded profile.
    """
    scale = float(ifcopenshell.util.unit.calculate_unit_scale(model))
    reps = {r.RepresentationIdentifier: r for r in wall.Representation.Representations}
    body = reps.get("Body")
    solid = body.Items[0] if body is not None and len(body.Items) == 1 else None
    if body is None or solid is None or not solid.is_a("IfcExtrudedAreaSolid"):
        raise ValueError(f"wall {wall.GlobalId}: body is not a single extruded solid; cannot resize it")
    y0, y1 = _profile_span_y(solid)
    height = solid.Depth * scale
    body_context = body.ContextOfItems
    axis_context = reps["Axis"].ContextOfItems if "Axis" in reps else None
    for rep in reps.values():
        api.geometry.unassign_representation(model, product=wall, representation=rep)
        api.geometry.remove_representation(model, representation=rep)
    new_body = api.geometry.add_wall_representation(model, context=body_context, length=length_m,
                                                    height=height, thickness=(y1 - y0) * scale, offset=y0 * scale)
    if axis_context is not None:
        axis = api.geometry.add_axis_representation(model, context=axis_context,
                                                    axis=((0.0, 0.0), (length_m, 0.0)))
        api.geometry.assign_representation(model, product=wall, representation=axis)
    api.geometry.assign_representation(model, product=wall, representation=new_body)
    qto = ifcopenshell.util.element.get_pset(wall, "Qto_WallBaseQuantities")
    if qto:
        api.pset.edit_qto(model, qto=model.by_id(qto["id"]), properties={"Length": length_m / scale})


def disconnect_end(model: ifcopenshell.file, wall: ifcopenshell.entity_instance, end: str) -> list[str]:
    """Remove the path connections of ``wall`` at ``end`` ("ATSTART" / "ATEND"); returns the partners' GlobalIds."""
    partners = []
    for rel in list(wall.ConnectedTo or ()):
        if rel.is_a("IfcRelConnectsPathElements") and rel.RelatingConnectionType == end:
            partners.append(rel.RelatedElement.GlobalId)
            api.geometry.disconnect_path(model, relating_element=wall, related_element=rel.RelatedElement)
    for rel in list(wall.ConnectedFrom or ()):
        if rel.is_a("IfcRelConnectsPathElements") and rel.RelatedConnectionType == end:
            partners.append(rel.RelatingElement.GlobalId)
            api.geometry.disconnect_path(model, relating_element=rel.RelatingElement, related_element=wall)
    return partners
