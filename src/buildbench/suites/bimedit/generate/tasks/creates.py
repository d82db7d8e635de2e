"""Create recipes: a new column, a partition wall, and re-creating a removed slab, room, door or window.

For slabs, rooms, doors and windows the task's input M0 is the scene with one such element
removed (``Edit.prepare``), as in the paper's ROM-CRE tasks where the room to create is
missing from the model; the create then asks for it back with all its relations.
"""

from __future__ import annotations

import ifcopenshell.util.element
import numpy as np

from buildbench.suites.bimedit.generate.tasks import code
from buildbench.suites.bimedit.generate.tasks.recipes import Check, Edit, NoCandidate, Scene, indirect, pick


def _room_walls(scene: Scene, space: ifcopenshell.entity_instance) -> list[ifcopenshell.entity_instance]:
    return sorted({b.RelatedBuildingElement for b in space.BoundedBy or ()
                   if b.RelatedBuildingElement is not None and b.RelatedBuildingElement.is_a("IfcWall")},
                  key=lambda w: w.GlobalId)


def create_column(scene: Scene, rng: np.random.Generator) -> Edit:
    """A column at the centre of a room, placed relative to an existing column."""
    spaces = scene.elements("IfcSpace")
    rng.shuffle(spaces)
    cols = scene.elements("IfcColumn")
    for sp in spaces[:8]:
        try:
            ref = indirect(scene, sp.GlobalId, rng)
        except NoCandidate:
            continue
        centre = scene.index.shapes.centre(sp.GlobalId)
        storey = scene.storey(sp)
        z = float(storey.Elevation or 0.0) * scene.scale
        at = (round(float(centre[0]), 2), round(float(centre[1]), 2), round(z, 3))
        size = float(rng.choice([0.25, 0.3, 0.35]))
        height = round(scene.qto(sp, "Qto_SpaceBaseQuantities", "Height"), 2)
        anchor = min(cols, key=lambda c: float(np.linalg.norm(scene.world(c)[:2, 3] - np.array(at[:2]))))
        a = scene.world(anchor)[:3, 3]
        dx, dy = at[0] - a[0], at[1] - a[1]
        dims = f"a {size:.2f} × {size:.2f} m column, {height:.2f} m high,"
        direct = (f"Create {dims} centred at (x, y, z) = ({at[0]:.2f}, {at[1]:.2f}, {at[2]:.2f}) and contain it in "
                  f"the building storey with ID {storey.GlobalId}.")
        verb = pick(rng, ["Create", "Add", "Place"])
        spatial = (f"{verb} {dims} standing on the same floor {dx:+.2f} m in x and {dy:+.2f} m in y from the "
                   f"centre of the column ({anchor.GlobalId}).")
        topo = f"{verb} {dims} in the centre of {ref['topological']}, on the floor of that room's storey."
        checks = {"spatial": Check("truth", {"class": "IfcColumn", "nearest_to": list(at[:2]) + [at[2] + height / 2]}),
                  "topological": ref["topological_check"]}
        return Edit(code.create_column(storey.GlobalId, at, size, height),
                    {"direct": direct, "spatial": spatial, "topological": topo}, checks,
                    created_class="IfcColumn")
    raise NoCandidate("no room for a column")


def create_wall(scene: Scene, rng: np.random.Generator) -> Edit:
    """A partition splitting a room in y direction, connected to the walls at both ends and bounding the room."""
    spaces = scene.elements("IfcSpace")
    rng.shuffle(spaces)
    for sp in spaces[:10]:
        walls = _room_walls(scene, sp)
        frames = {w.GlobalId: scene.world(w) for w in walls}
        along_x = [w for w in walls if abs(frames[w.GlobalId][0, 0]) > 0.9]
        along_y = [w for w in walls if abs(frames[w.GlobalId][0, 0]) < 0.1]
        if len(along_x) != 2 or len(along_y) != 2:
            continue
        south, north = sorted(along_x, key=lambda w: frames[w.GlobalId][1, 3])
        x0, x1 = sorted(frames[w.GlobalId][0, 3] for w in along_y)
        spans = []
        for w in (south, north):
            for rel in w.HasOpenings or ():
                ox = scene.world(rel.RelatedOpeningElement)[0, 3]
                width = max((float(f.RelatedBuildingElement.OverallWidth) * scene.scale
                             for f in rel.RelatedOpeningElement.HasFillings or ()), default=1.5)
                spans.append((ox - 0.2, ox + width + 0.2))
        options = [round(x0 + f * (x1 - x0), 2) for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.25, 0.75)]
        free = [x for x in options if not any(lo <= x <= hi for lo, hi in spans)]
        if not free:
            continue
        x = free[0]
        y0, y1 = frames[south.GlobalId][1, 3], frames[north.GlobalId][1, 3]
        storey = scene.storey(sp)
        z = float(storey.Elevation or 0.0) * scene.scale
        height = round(scene.qto(south, "Qto_WallBaseQuantities", "Height"), 2)
        t = float(rng.choice([0.1, 0.115]))
        c = code.create_wall(storey.GlobalId, (x, y0), (x, y1), z, t, height,
                             [(south.GlobalId, "ATPATH", "ATSTART"), (north.GlobalId, "ATPATH", "ATEND")],
                             [sp.GlobalId])
        # The new wall's relations alone do not single it out (an end wall of the room is also
        # connected to both and bounds only this room); the x position does, and the room the
        # phrase names must be the only one between the two walls.
        room_facts = {"class": "IfcSpace", "bounded_by": sorted([south.GlobalId, north.GlobalId])}
        dims = f"{t:.3f} m thick and {height:.2f} m high"
        direct = (f"Create a wall from (x1, y1, z1) = ({x:.2f}, {y0:.2f}, {z:.2f}) to (x2, y2, z2) = ({x:.2f}, "
                  f"{y1:.2f}, {z:.2f}), {dims}, centred on that line. Add it to the building storey with ID "
                  f"{storey.GlobalId}, connect it to the walls {south.GlobalId} (at its start) and {north.GlobalId} "
                  f"(at its end), and make it bound the space {sp.GlobalId}.")
        verb = pick(rng, ["Create", "Add", "Build"])
        spatial = (f"{verb} a wall, {dims}, running in y direction through the point ({x:.2f}, "
                   f"{(y0 + y1) / 2:.2f}, {z:.2f}) from the axis of the wall on its -y side to the axis of the wall on "
                   "its +y side; keep the model's relationships consistent.")
        topo = (f"{verb} a wall, {dims}, that connects the walls ({south.GlobalId}) and ({north.GlobalId}) inside the "
                f"room ({sp.GlobalId}) at x = {x:.2f} m, and bounds that room.")
        checks = {"spatial": Check("truth", {"class": "IfcWall", "nearest_to": [x, (y0 + y1) / 2, z + height / 2]}),
                  "topological": Check("input", room_facts, sp.GlobalId)}
        return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo}, checks, created_class="IfcWall")
    raise NoCandidate("no room to split")


def recreate_extrusion(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    """Remove a floor slab or a room from the scene (M0) and ask for it with its relations."""
    if cls == "IfcSlab":
        els = [e for e in scene.elements(cls) if e.PredefinedType == "FLOOR"]
    else:
        els = scene.elements(cls)
    rng.shuffle(els)
    el = els[0]
    storey = scene.storey(el)
    solid = next(r for r in el.Representation.Representations if r.RepresentationIdentifier == "Body").Items[0]
    outline = [(p[0] * scene.scale, p[1] * scene.scale) for p in solid.SweptArea.OuterCurve.Points.CoordList]
    if len(outline) > 1 and np.allclose(outline[0], outline[-1]):
        outline = outline[:-1]
    base = scene.world(el)[2, 3]
    depth = float(solid.Depth) * scene.scale
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    partners = sorted(b.RelatingSpace.GlobalId if cls == "IfcSlab" else b.RelatedBuildingElement.GlobalId
                      for b in (el.ProvidesBoundaries if cls == "IfcSlab" else el.BoundedBy) or ())
    area = float(abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1))) / 2)
    verb = pick(rng, ["Create", "Add"])
    origin = f"({min(xs):.3f}, {min(ys):.3f}, {base:.3f})"
    size = f"{max(xs) - min(xs):.3f} m in x direction, {max(ys) - min(ys):.3f} m in y direction"
    centre = [round((min(xs) + max(xs)) / 2, 3), round((min(ys) + max(ys)) / 2, 3), round(base + depth / 2, 3)]
    if cls == "IfcSlab":
        c = code.create_extrusion("IfcSlab", "FLOOR", "Floor", storey.GlobalId, outline, base, depth, partners,
                                  False, "Concrete", "Qto_SlabBaseQuantities", {"Depth": depth}, {"GrossArea": area})
        direct = (f"{verb} a floor slab starting at {origin} with a thickness of {depth:.2f} m in +z direction, "
                  f"{size}. Assign it to the storey with ID {storey.GlobalId} and make it bound the spaces "
                  f"{', '.join(partners)}.")
        spatial = (f"{verb} the missing {depth:.2f} m thick floor slab whose top face is at z = {base + depth:.3f} m, "
                   f"covering the building's footprint from ({min(xs):.2f}, {min(ys):.2f}) to ({max(xs):.2f}, "
                   f"{max(ys):.2f}); relate it to the storey and rooms it belongs to.")
        topo = (f"{verb} the floor slab of the building storey ({storey.GlobalId}), {depth:.2f} m thick, under all "
                "of its rooms and bounding each of them.")
        topo_facts = {"class": "IfcSlab", "bounds": partners}
    else:
        c = code.create_extrusion("IfcSpace", "INTERNAL", "New room", storey.GlobalId, outline, base, depth,
                                  partners, True, None, "Qto_SpaceBaseQuantities", {"Height": depth},
                                  {"NetFloorArea": area})
        walls = [g for g in partners if scene.model.by_guid(g).is_a("IfcWall")]
        direct = (f"{verb} a room at {origin}, with extents of {size} and {depth:.3f} m in z direction. It is "
                  f"bounded by {', '.join(partners)}; add those space boundaries and aggregate it under the building "
                  f"storey {storey.GlobalId}.")
        spatial = (f"{verb} a room {depth:.2f} m high filling the enclosed area around the point ({centre[0]:.2f}, "
                   f"{centre[1]:.2f}, {base:.2f}), with the space boundaries and storey it needs.")
        topo = (f"{verb} a room in the area enclosed by the walls {', '.join(f'({w})' for w in walls)} with a height "
                f"of {depth:.2f} m, bounded by them and by the floor below it.")
        topo_facts = {"class": "IfcSpace", "bounded_by": walls}
    checks = {"spatial": Check("truth", {"class": cls, "nearest_to": centre}), "topological": Check("truth", topo_facts)}
    return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo}, checks,
                prepare=code.delete([el.GlobalId]), created_class=cls)


def recreate_filling(scene: Scene, kind: str, rng: np.random.Generator) -> Edit:
    """Remove a door or window (and its opening) that is alone in its wall, and ask for it back."""
    cls = "IfcDoor" if kind == "door" else "IfcWindow"
    fills = scene.elements(cls)
    rng.shuffle(fills)
    for el in fills[:12]:
        opening = ifcopenshell.util.element.get_filled_void(el)
        host = ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None
        if opening is None or host is None or len(host.HasOpenings or ()) != 1:
            continue
        try:
            ref = indirect(scene, host.GlobalId, rng, exclude=(el.GlobalId, opening.GlobalId))
        except NoCandidate:
            continue
        hm, om = scene.world(host), scene.world(opening)
        d = hm[:3, 0] / np.linalg.norm(hm[:3, 0])
        along = round(float(np.dot(om[:3, 3] - hm[:3, 3], d)), 3)
        sill = round(float(om[2, 3] - hm[2, 3]), 3)
        width, height = float(el.OverallWidth) * scene.scale, float(el.OverallHeight) * scene.scale
        t = scene.qto(host, "Qto_WallBaseQuantities", "Width")
        storey = scene.storey(host)
        c = code.create_filling(kind, host.GlobalId, storey.GlobalId, along, sill, width, height, t)
        axis = "x" if abs(d[0]) > 0.5 else "y"
        dims = f"{width:.2f} m wide and {height:.2f} m high"
        where = f"{along:.3f} m from the wall's end with the lower {axis} value" + (
            f", its sill {sill:.2f} m above the floor" if kind == "window" else "")
        verb = pick(rng, ["Add", "Insert", "Create"])
        direct = (f"{verb} a {kind} {dims} in the wall with ID {host.GlobalId}: an opening voiding the wall with its "
                  f"edge {where}, filled by the {kind}; contain the {kind} in the storey {storey.GlobalId}.")
        spatial = f"{verb} a {kind}, {dims}, to {ref['spatial']}, its opening's edge {where}."
        topo = f"{verb} a {kind}, {dims}, to {ref['topological']}, its opening's edge {where}."
        centre = om[:3, 3] + d * width / 2 + np.array([0.0, 0.0, height / 2])
        checks = {"spatial": Check("truth", {"class": cls, "nearest_to": [round(float(v), 3) for v in centre]}),
                  "topological": Check("truth", {"class": cls, "host": host.GlobalId})}
        return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo}, checks,
                    prepare=code.delete([el.GlobalId, opening.GlobalId]), created_class=cls)
    raise NoCandidate(f"no {kind} alone in its wall")
