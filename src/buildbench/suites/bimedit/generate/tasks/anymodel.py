"""Base edits on any IFC model: a user's own building or a real one, of any schema and unit.

The recipes of :mod:`.recipes` and :mod:`.creates` read what our scene builder writes
(base quantities, indexed-polycurve profiles, walls placed at their start). Real exports
have none of that for sure, so these recipes read geometry from the tessellated meshes
(metres, whatever the unit) and relations from the model, and only offer an edit whose
parameters they could measure:

* updates move an element in plan (with its openings and their fillings), slide a door or
  window along its host wall (with its opening) or lift a window, and change the height of
  an element whose body is one unshared, unclipped extrusion along z;
* deletes reuse :func:`.recipes.delete_any` (openings, fillings and boundaries go with it);
  creates are in :mod:`.anycreates`.

Every spatial or topological phrase is checked by the generator to pick out one element.
"""

from __future__ import annotations

import ifcopenshell
import ifcopenshell.util.element
import numpy as np

from buildbench.suites.bimedit.generate.facts import NOUNS, PlanSegment, base_class
from buildbench.suites.bimedit.generate.tasks import code
from buildbench.suites.bimedit.generate.tasks.recipes import (
    Edit,
    NoCandidate,
    Scene,
    _edit,
    _first_described,
    pick,
)

#: Quantity set and key holding each class's height (the oracle updates it where the model has it).
HEIGHT_QTO: dict[str, tuple[str, str]] = {"IfcWall": ("Qto_WallBaseQuantities", "Height"),
                                          "IfcColumn": ("Qto_ColumnBaseQuantities", "Length"),
                                          "IfcSlab": ("Qto_SlabBaseQuantities", "Depth"),
                                          "IfcSpace": ("Qto_SpaceBaseQuantities", "Height")}


def aabb(scene: Scene, guid: str) -> np.ndarray:
    """World axis-aligned box of an element's mesh, rows min and max (metres); NoCandidate without one."""
    mesh = scene.index.shapes.mesh(guid)
    if mesh is None:
        raise NoCandidate(f"{guid}: no body geometry")
    return np.stack([mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)])


def dependants(el: ifcopenshell.entity_instance) -> list[str]:
    """Openings voiding ``el`` and their fillings, which move and go with it."""
    out = []
    for rel in getattr(el, "HasOpenings", None) or ():
        out.append(rel.RelatedOpeningElement.GlobalId)
        out.extend(f.RelatedBuildingElement.GlobalId for f in rel.RelatedOpeningElement.HasFillings or ())
    return out


def _placed(el: ifcopenshell.entity_instance) -> bool:
    """Whether the element has a whole chain of local placements to move: some exports leave
    the placement out, grid and linear placements (IFC4X3) have no matrix to edit, and
    malformed files leave a relative placement out (cycles are refused when the model is read)."""
    placement = getattr(el, "ObjectPlacement", None)
    while placement is not None:
        if not placement.is_a("IfcLocalPlacement") or placement.RelativePlacement is None:
            return False
        placement = placement.PlacementRelTo
    return getattr(el, "ObjectPlacement", None) is not None


# -- updates ---------------------------------------------------------------------------------------

def update_any(scene: Scene, cls: str, variant: int, rng: np.random.Generator) -> Edit:
    """One update of an element of ``cls``: slide/lift a filling, or change a height, or move in plan."""
    if cls in ("IfcDoor", "IfcWindow"):
        return _update_filling(scene, cls, variant, rng)
    if variant % 2 == 1 and cls in HEIGHT_QTO:
        try:
            return _change_height(scene, cls, rng)
        except NoCandidate:
            pass  # no plain extrusion of this class: move one instead
    return _move_in_plan(scene, cls, rng)


def _move_in_plan(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    el, ref = _first_described(scene, cls, rng, keep=_placed)
    deps = dependants(el)
    guids = [el.GlobalId, *deps]
    dx, dy = (float(rng.choice([-0.4, -0.3, -0.2, 0.2, 0.3, 0.4])) for _ in range(2))
    noun = NOUNS[base_class(el)]
    text = f"by {dx:+.2f} m in x and {dy:+.2f} m in y"
    extra = f", together with the openings in it and what fills them ({', '.join(deps)})" if deps else ""
    with_deps = ", together with its openings and what fills them" if deps else ""
    direct = f"Move the {noun} with ID {el.GlobalId} {text}{extra}, keeping its size, storey and relationships."
    verb = pick(rng, ["Move", "Shift", "Translate"])
    return _edit(code.move(guids, (dx, dy, 0.0)), direct, ref, f"{verb} {ref['spatial']} {text}{with_deps}.",
                 f"{verb} {ref['topological']} {text}{with_deps}.", guids)


def plain_extrusion(scene: Scene, el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance | None:
    """The body's extruded solid when the body is that one solid, extruded along world +z, used by no
    other element and not clipped (its mesh is as tall as the extrusion); else None."""
    reps = [r for r in getattr(el.Representation, "Representations", None) or () if r.RepresentationIdentifier == "Body"]
    if len(reps) != 1 or len(reps[0].Items) != 1 or not reps[0].Items[0].is_a("IfcExtrudedAreaSolid"):
        return None
    solid = reps[0].Items[0]
    model = scene.model
    if not _placed(el) or len(model.get_inverse(solid)) != 1 or len(model.get_inverse(reps[0])) != 1 or len(
            model.get_inverse(el.Representation)) != 1:
        return None
    along = np.asarray(solid.ExtrudedDirection.DirectionRatios, dtype=float)
    axis = getattr(solid.Position, "Axis", None) if solid.Position is not None else None
    local_z = np.asarray(axis.DirectionRatios, dtype=float) if axis is not None else np.array([0.0, 0.0, 1.0])
    world = scene.world(el)
    up = world[:3, :3] @ (local_z / np.linalg.norm(local_z))
    if not np.allclose(along / np.linalg.norm(along), (0, 0, 1), atol=1e-6) or up[2] < 0.999999:
        return None
    box = aabb(scene, el.GlobalId)
    if abs((box[1, 2] - box[0, 2]) - float(solid.Depth) * scene.scale) > 0.005:
        return None
    return solid


def _change_height(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    el, ref = _first_described(scene, cls, rng, keep=lambda e: plain_extrusion(scene, e) is not None)
    solid = plain_extrusion(scene, el)
    assert solid is not None  # the filter above kept only such elements
    depth = float(solid.Depth) * scene.scale
    slab = cls == "IfcSlab"
    step = float(rng.choice([0.05, 0.1])) if slab else float(rng.choice([-0.3, -0.2, 0.2, 0.3]))
    new = round(depth + step, 3)
    if new <= 0.05:
        raise NoCandidate(f"{el.GlobalId}: too thin to change")
    qto, key = HEIGHT_QTO[cls]
    c = code.set_extrusion_depth(el.GlobalId, new, qto, key, keep_top=slab)
    noun = NOUNS[cls]
    what = "the thickness of" if slab else "the height of"
    how = f"to {new:.3f} m, keeping its top face in place" if slab else f"to {new:.3f} m, keeping its base fixed"
    verb = pick(rng, ["Change", "Set", "Adjust"])
    return _edit(c, f"{verb} {what} the {noun} with ID {el.GlobalId} {how}.", ref,
                 f"{verb} {what} {ref['spatial']} {how}.", f"{verb} {what} {ref['topological']} {how}.",
                 [el.GlobalId])


def run_direction(seg: PlanSegment) -> tuple[np.ndarray, np.ndarray, str]:
    """A wall axis as (start, unit direction, axis name), started at its end with the lower x (or y for
    a wall that runs more along y than x)."""
    d = seg.end_m - seg.start_m
    n = float(np.linalg.norm(d))
    if n == 0.0:
        raise NoCandidate("a wall without length")
    axis = 0 if abs(d[0]) >= abs(d[1]) else 1
    start, end = (seg.start_m, seg.end_m) if seg.start_m[axis] <= seg.end_m[axis] else (seg.end_m, seg.start_m)
    return start, (end - start) / n, "xy"[axis]


def _update_filling(scene: Scene, cls: str, variant: int, rng: np.random.Generator) -> Edit:
    el, ref = _first_described(scene, cls, rng, keep=_placed)
    opening = ifcopenshell.util.element.get_filled_void(el)
    guids = [el.GlobalId] + ([opening.GlobalId] if opening is not None else [])
    noun = NOUNS[cls]
    host = ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None
    if host is None and cls == "IfcDoor":
        raise NoCandidate(f"{el.GlobalId}: a door in no wall (only windows are lifted)")
    with_opening = f", together with its opening {opening.GlobalId}" if opening is not None else ""
    tail_opening = ", moving its opening with it" if opening is not None else ""
    if (cls == "IfcWindow" and variant % 3 == 1) or host is None:
        dz = float(rng.choice([-0.2, -0.1, 0.1, 0.2]))
        word = "up" if dz > 0 else "down"
        offset = np.array([0.0, 0.0, dz])
        direct = f"Move the {noun} with ID {el.GlobalId} {abs(dz):.2f} m {word}{with_opening}, keeping all relationships."
        tail = f"{abs(dz):.2f} m {word}{tail_opening}"
    else:
        seg = scene.index.segment(host.GlobalId)
        start, d, axis = run_direction(seg)
        box = aabb(scene, el.GlobalId)
        centre = (box[0, :2] + box[1, :2]) / 2
        half = float(np.abs(box[1, :2] - box[0, :2]) @ np.abs(d)) / 2
        along = float((centre - start) @ d)
        length = float(np.linalg.norm(seg.end_m - seg.start_m))
        dist = float(rng.choice([0.2, 0.3, 0.4]))
        room_plus, room_minus = length - along - half - 0.1, along - half - 0.1
        sign = 1.0 if room_plus >= dist and (room_minus < dist or rng.random() < 0.5) else -1.0
        if (room_plus if sign > 0 else room_minus) < dist:
            raise NoCandidate(f"{el.GlobalId}: no room to slide along its wall")
        offset = np.array([d[0], d[1], 0.0]) * dist * sign
        direction = f"{'+' if sign > 0 else '-'}{axis}"
        direct = (f"Move the {noun} with ID {el.GlobalId} by {dist:.2f} m along its wall {host.GlobalId}, towards "
                  f"{direction}{with_opening}, keeping all relationships.")
        tail = f"{dist:.2f} m along its wall towards {direction}{tail_opening}"
    verb = pick(rng, ["Move", "Shift", "Relocate"])
    return _edit(code.move(guids, [round(float(v), 4) for v in offset]), direct, ref,
                 f"{verb} {ref['spatial']} {tail}.", f"{verb} {ref['topological']} {tail}.", guids)
