"""Oracle code templates: IfcOpenShell Python run in the agent tool's namespace.

Each function returns source text with its parameters written in as literals (lengths in
metres; the code converts to the model's unit itself, as the paper's system prompt asks
agents to). The edits follow good IFC practice (paper section 2.1; spec section 9): a
door or window moves with its opening, a deleted element takes its openings, fillings
and space boundaries with it, and a new element is contained in (or aggregated under)
its storey, connected to its neighbours and bounds its spaces.
"""

from __future__ import annotations

from collections.abc import Sequence

_PRELUDE = """import numpy as np
import ifcopenshell.api.aggregate
import ifcopenshell.api.boundary
import ifcopenshell.api.feature
import ifcopenshell.api.geometry
import ifcopenshell.api.material
import ifcopenshell.api.owner
import ifcopenshell.api.pset
import ifcopenshell.api.root
import ifcopenshell.api.spatial
import ifcopenshell.util.placement
import ifcopenshell.util.representation
import ifcopenshell.util.unit
s = ifcopenshell.util.unit.calculate_unit_scale(ifc)  # metres per model unit
body_ctx = ifcopenshell.util.representation.get_context(ifc, "Model", "Body", "MODEL_VIEW")
if body_ctx is None:  # exporters that write no Body sub-context: add one under the 3-D context
    import ifcopenshell.api.context
    model_ctx = next(c for c in ifc.by_type("IfcGeometricRepresentationContext")
                     if c.ContextType == "Model" and not c.is_a("IfcGeometricRepresentationSubContext"))
    body_ctx = api.context.add_context(ifc, context_type="Model", context_identifier="Body",
                                       target_view="MODEL_VIEW", parent=model_ctx)
if ifc.schema == "IFC2X3" and not ifc.by_type("IfcPersonAndOrganization"):
    # IFC2X3 requires an owner history on every new element, and that names a user
    api.owner.add_person_and_organisation(ifc, person=api.owner.add_person(ifc),
                                          organisation=api.owner.add_organisation(ifc))
if ifc.schema == "IFC2X3" and not ifc.by_type("IfcApplication"):
    api.owner.add_application(ifc)


def frame(origin, x_axis):
    # world placement in metres: z up, local x along x_axis
    x = np.array([x_axis[0], x_axis[1], 0.0]) / np.hypot(x_axis[0], x_axis[1])
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 3] = x, np.cross([0.0, 0.0, 1.0], x), origin
    return m


def body_solid(element):
    rep = next(r for r in element.Representation.Representations if r.RepresentationIdentifier == "Body")
    return rep.Items[0]


def set_quantity(element, qto_name, values):
    qto = element_util.get_pset(element, qto_name)
    if qto:
        api.pset.edit_qto(ifc, qto=ifc.by_id(qto["id"]), properties=values)


def use_material(element, name):
    mat = next((m for m in ifc.by_type("IfcMaterial") if m.Name == name), None)
    if mat is None:
        mat = api.material.add_material(ifc, name=name)
    api.material.assign_material(ifc, products=[element], type="IfcMaterial", material=mat)
"""


def _f(x: float) -> str:
    return repr(round(float(x), 4))


def _vec(v: Sequence[float]) -> str:
    return "(" + ", ".join(_f(x) for x in v) + ")"


def move(guids: Sequence[str], offset_m: Sequence[float]) -> str:
    """Translate elements (a door or window with its opening) in world space, each exactly once."""
    return _PRELUDE + f"""
items = [ifc.by_guid(g) for g in {list(guids)!r}]
# World placements first: a filling is placed relative to its opening and must not move twice.
worlds = [np.array(ifcopenshell.util.placement.get_local_placement(e.ObjectPlacement)) for e in items]
for e, m in zip(items, worlds):
    m[:3, 3] = m[:3, 3] * s + np.array({_vec(offset_m)})
    api.geometry.edit_object_placement(ifc, product=e, matrix=m, is_si=True)
commit()
"""


def set_extrusion_depth(guid: str, depth_m: float, qto: str, quantity: str, keep_top: bool = False) -> str:
    """Change an extruded element's height/depth (and its base quantity); optionally keep its top face."""
    lower = ""
    if keep_top:
        lower = """loc = el.ObjectPlacement.RelativePlacement.Location
xyz = list(loc.Coordinates)
xyz[2] -= new - solid.Depth
loc.Coordinates = xyz
"""
    return _PRELUDE + f"""
el = ifc.by_guid({guid!r})
solid = body_solid(el)
new = {_f(depth_m)} / s
{lower}solid.Depth = new
set_quantity(el, {qto!r}, {{{quantity!r}: new}})
commit()
"""


def scale_profile(guid: str, axis: int, anchor_model: float, factor: float, qto: str,
                  quantities_m: dict[str, float], area_m2: dict[str, float]) -> str:
    """Scale an extrusion's profile along local ``axis`` about ``anchor_model`` (model units)."""
    return _PRELUDE + f"""
el = ifc.by_guid({guid!r})
points = body_solid(el).SweptArea.OuterCurve.Points
coords = [list(p) for p in points.CoordList]
for p in coords:
    p[{axis}] = {anchor_model!r} + (p[{axis}] - {anchor_model!r}) * {factor!r}
points.CoordList = [tuple(p) for p in coords]
values = {{k: v / s for k, v in {quantities_m!r}.items()}}
values.update({{k: v / s ** 2 for k, v in {area_m2!r}.items()}})
set_quantity(el, {qto!r}, values)
commit()
"""


def delete(guids: Sequence[str]) -> str:
    """Delete elements with the openings voiding them, their fillings and every space boundary."""
    return _PRELUDE + f"""
victims = []
for g in {list(guids)!r}:
    el = ifc.by_guid(g)
    victims.append(el)
    for rel in getattr(el, "HasOpenings", None) or ():
        victims.append(rel.RelatedOpeningElement)
        victims.extend(f.RelatedBuildingElement for f in rel.RelatedOpeningElement.HasFillings or ())
for el in reversed(victims):
    # remove_product would leave boundaries pointing at nothing
    for b in list(getattr(el, "ProvidesBoundaries", None) or ()) + list(getattr(el, "BoundedBy", None) or ()):
        api.boundary.remove_boundary(ifc, boundary=b)
    api.root.remove_product(ifc, product=el)
commit()
"""


def _boundaries(var: str, partners: Sequence[str], as_space: bool) -> str:
    if not partners:
        return ""
    rel = ("b.RelatingSpace, b.RelatedBuildingElement = {v}, ifc.by_guid(g)" if as_space
           else "b.RelatingSpace, b.RelatedBuildingElement = ifc.by_guid(g), {v}").format(v=var)
    return f"""for g in {list(partners)!r}:
    b = api.root.create_entity(ifc, ifc_class="IfcRelSpaceBoundary")
    {rel}
    b.PhysicalOrVirtualBoundary, b.InternalOrExternalBoundary = "PHYSICAL", "INTERNAL"
"""


def create_wall(storey: str, p1: Sequence[float], p2: Sequence[float], z_m: float, thickness_m: float,
                height_m: float, connect: Sequence[tuple[str, str, str]], spaces: Sequence[str]) -> str:
    """A straight wall from ``p1`` to ``p2`` (plan, metres), contained, path-connected and bounding spaces.

    ``connect`` holds ``(other wall, its end, this wall's end)`` triples.
    """
    return _PRELUDE + f"""
p1, p2 = np.array({_vec(p1)}), np.array({_vec(p2)})
length = float(np.linalg.norm(p2 - p1))
wall = api.root.create_entity(ifc, ifc_class="IfcWall", name="New wall", predefined_type="SOLIDWALL")
api.geometry.edit_object_placement(ifc, product=wall, matrix=frame((p1[0], p1[1], {_f(z_m)}), p2 - p1))
axis_ctx = ifcopenshell.util.representation.get_context(ifc, "Plan", "Axis", "GRAPH_VIEW")
if axis_ctx is not None:
    axis = api.geometry.add_axis_representation(ifc, context=axis_ctx, axis=((0.0, 0.0), (length, 0.0)))
    api.geometry.assign_representation(ifc, product=wall, representation=axis)
rep = api.geometry.add_wall_representation(ifc, context=body_ctx, length=length, height={_f(height_m)},
                                           thickness={_f(thickness_m)}, offset={_f(-thickness_m / 2)})
api.geometry.assign_representation(ifc, product=wall, representation=rep)
api.spatial.assign_container(ifc, products=[wall], relating_structure=ifc.by_guid({storey!r}))
use_material(wall, "Plasterboard")
pset = api.pset.add_pset(ifc, product=wall, name="Pset_WallCommon")
api.pset.edit_pset(ifc, pset=pset, properties={{"IsExternal": False, "LoadBearing": False}})
for other, other_end, own_end in {list(connect)!r}:
    api.geometry.connect_path(ifc, relating_element=ifc.by_guid(other), related_element=wall,
                              relating_connection=other_end, related_connection=own_end)
{_boundaries("wall", spaces, as_space=False)}commit()
"""


def create_extrusion(ifc_class: str, predefined: str, name: str, storey: str, outline: Sequence[Sequence[float]],
                     base_z_m: float, depth_m: float, bounds: Sequence[str], aggregate: bool,
                     material: str | None, qto: str, quantities_m: dict[str, float],
                     areas_m2: dict[str, float]) -> str:
    """A slab or space extruded from a plan outline (metres), in its storey, with boundaries."""
    place = (f"api.aggregate.assign_object(ifc, products=[el], relating_object=ifc.by_guid({storey!r}))"
             if aggregate else
             f"api.spatial.assign_container(ifc, products=[el], relating_structure=ifc.by_guid({storey!r}))")
    mat = f"use_material(el, {material!r})\n" if material else ""
    as_space = ifc_class == "IfcSpace"
    return _PRELUDE + f"""
el = api.root.create_entity(ifc, ifc_class={ifc_class!r}, name={name!r}, predefined_type={predefined!r})
api.geometry.edit_object_placement(ifc, product=el, matrix=frame((0.0, 0.0, {_f(base_z_m)}), (1.0, 0.0)))
rep = api.geometry.add_slab_representation(ifc, context=body_ctx, depth={_f(depth_m)},
                                           polyline={[tuple(round(float(c), 4) for c in p) for p in outline]!r})
api.geometry.assign_representation(ifc, product=el, representation=rep)
{place}
{mat}qto = api.pset.add_qto(ifc, product=el, name={qto!r})
values = {{k: v / s for k, v in {quantities_m!r}.items()}}
values.update({{k: v / s ** 2 for k, v in {areas_m2!r}.items()}})
api.pset.edit_qto(ifc, qto=qto, properties=values)
{_boundaries("el", bounds, as_space=as_space)}commit()
"""


def create_column(storey: str, at_m: Sequence[float], size_m: float, height_m: float) -> str:
    """A square column centred on ``at_m`` (x, y, z of its base), contained in its storey."""
    return _PRELUDE + f"""
col = api.root.create_entity(ifc, ifc_class="IfcColumn", name="New column", predefined_type="COLUMN")
api.geometry.edit_object_placement(ifc, product=col, matrix=frame({_vec(at_m)}, (1.0, 0.0)))
centre = ifc.createIfcAxis2Placement2D(ifc.createIfcCartesianPoint((0.0, 0.0)))
profile = ifc.create_entity("IfcRectangleProfileDef", ProfileType="AREA", Position=centre,
                            XDim={_f(size_m)} / s, YDim={_f(size_m)} / s)
rep = api.geometry.add_profile_representation(ifc, context=body_ctx, profile=profile, depth={_f(height_m)})
api.geometry.assign_representation(ifc, product=col, representation=rep)
api.spatial.assign_container(ifc, products=[col], relating_structure=ifc.by_guid({storey!r}))
use_material(col, "Concrete")
commit()
"""


def create_filling(kind: str, host: str, storey: str, along_m: float, sill_m: float, width_m: float,
                   height_m: float, host_thickness_m: float) -> str:
    """An opening voiding ``host`` at ``along_m`` from its start, filled by a new door or window."""
    return _PRELUDE + f"""
host = ifc.by_guid({host!r})
hm = np.array(ifcopenshell.util.placement.get_local_placement(host.ObjectPlacement))
hm[:3, 3] *= s
local = np.eye(4)
local[:3, 3] = ({_f(along_m)}, 0.0, {_f(sill_m)})
at = hm @ local
""" + _filling_body(kind, host, storey, width_m, height_m, host_thickness_m)


def create_filling_at(kind: str, host: str, storey: str, corner_m: Sequence[float], run: Sequence[float],
                      width_m: float, height_m: float, host_thickness_m: float) -> str:
    """An opening voiding ``host`` whose lower edge starts at ``corner_m`` (world, metres, on the wall's
    mid-plane) and runs along the plan direction ``run``, filled by a new door or window.

    For walls of any exporter: the frame comes from the wall's measured axis, not its placement.
    """
    return _PRELUDE + f"""
host = ifc.by_guid({host!r})
at = frame({_vec(corner_m)}, {_vec(run)})
""" + _filling_body(kind, host, storey, width_m, height_m, host_thickness_m)


def _filling_body(kind: str, host: str, storey: str, width_m: float, height_m: float,
                  host_thickness_m: float) -> str:
    cls, rep_fn = ("IfcDoor", "add_door_representation") if kind == "door" else (
        "IfcWindow", "add_window_representation")
    return f"""opening = api.root.create_entity(ifc, ifc_class="IfcOpeningElement", name="New opening")
api.geometry.edit_object_placement(ifc, product=opening, matrix=at)
rep = api.geometry.add_wall_representation(ifc, context=body_ctx, length={_f(width_m)}, height={_f(height_m)},
                                           thickness={_f(host_thickness_m + 0.1)},
                                           offset={_f(-(host_thickness_m / 2 + 0.05))})
api.geometry.assign_representation(ifc, product=opening, representation=rep)
api.feature.add_feature(ifc, feature=opening, element=host)
fill = api.root.create_entity(ifc, ifc_class={cls!r}, name="New {kind}", predefined_type={kind.upper()!r})
fill.OverallWidth, fill.OverallHeight = {_f(width_m)} / s, {_f(height_m)} / s
# the body spans local y in [0, lining depth]: put it on the wall's -y face
face = np.eye(4)
face[:3, 3] = (0.0, {_f(-host_thickness_m / 2)}, 0.0)
api.geometry.edit_object_placement(ifc, product=fill, matrix=at @ face)
body = api.geometry.{rep_fn}(ifc, context=body_ctx, overall_height={_f(height_m)} / s,
                             overall_width={_f(width_m)} / s, unit_scale=s)
api.geometry.assign_representation(ifc, product=fill, representation=body)
api.feature.add_filling(ifc, opening=opening, element=fill)
api.spatial.assign_container(ifc, products=[fill], relating_structure=ifc.by_guid({storey!r}))
use_material(fill, {"Timber" if kind == "door" else "Glass"!r})
commit()
"""

