"""Creates on any IFC model (see :mod:`.anymodel` for the approach).

A create removes an element from the scene (that is M0) and asks for it back as a box
measured from its mesh, with its storey and the relations the instruction names (path
connections, space boundaries, host wall); a column is added at the centre of a room, or in
front of a wall when the model has no rooms. A phrase built from a relation is only used
when the oracle restores that relation, and the generator checks on M* that it picks out
the new element alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ifcopenshell
import ifcopenshell.util.element
import numpy as np
import shapely

from buildbench.suites.bimedit.generate.describe import describe, frame_adjacency, resolve
from buildbench.suites.bimedit.generate.facts import NOUNS, Description, container_noun
from buildbench.suites.bimedit.generate.tasks import code
from buildbench.suites.bimedit.generate.tasks.anymodel import aabb, dependants, run_direction
from buildbench.suites.bimedit.generate.tasks.recipes import (
    Check,
    Edit,
    Indirect,
    NoCandidate,
    Scene,
    indirect,
    pick,
)

#: Query keys a re-created element satisfies again (relations the oracle restores; "touches": its box is
#: measured from the original's mesh), so a query on them finds it in M* (the generator checks that).
_RESTORED_KEYS = frozenset({"class", "bounds", "bounded_by", "connected_to", "storey", "host", "between_rooms",
                            "touches"})
#: Plan footprints with more corners than this are replaced by their convex hull (an instruction lists them).
MAX_OUTLINE_POINTS = 12


def _restorable(scene: Scene, el: ifcopenshell.entity_instance, exclude: Sequence[str]) -> Description:
    """A topological description of ``el`` built only from relations its re-creation gets back
    (path connections are restored to walls only)."""
    def kept(d: Description) -> bool:
        walls = all(scene.model.by_guid(g).is_a("IfcWall") for g in d.facts.get("connected_to", ()))
        return (d.kind == "topological" and set(d.facts) <= _RESTORED_KEYS and walls
                and not any(x in str(d.facts) for x in exclude))

    found = [d for d in describe(scene.index, el.GlobalId) if kept(d)]
    if not found:  # a frame with no walls or relations to name
        found = [d for d in frame_adjacency(scene.index, el.GlobalId) if kept(d)]
    if not found:
        raise NoCandidate(f"{el.GlobalId}: no topological description its re-creation keeps")
    return found[0]


def as_new(text: str, noun: str) -> str:
    """A description of an existing element turned into one of the element to create."""
    if text.startswith(f"the only {noun}"):
        return f"a {noun} that will be the only {noun}{text[len(f'the only {noun}'):]}"
    return text.replace(f"the {noun}", f"a {noun}", 1)


def _spatial(container: ifcopenshell.entity_instance) -> str:
    """"building storey", or what else holds the element (see :func:`container_noun`)."""
    word = container_noun(container)
    return "building storey" if word == "storey" else word


def _storey_of(scene: Scene, el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance:
    """The spatial element a new element goes into (NoCandidate when ``el`` hangs under an element)."""
    st = scene.storey(el)
    if not st.is_a("IfcSpatialStructureElement") and not st.is_a("IfcSpatialElement"):
        raise NoCandidate(f"{el.GlobalId}: not in a spatial structure")
    return st


def _segments_of(scene: Scene, el: ifcopenshell.entity_instance) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Wall start and end (plan, metres), thickness (m) and z interval (m), from its mesh."""
    seg = scene.index.segment(el.GlobalId)
    start, d, _ = run_direction(seg)
    length = float(np.linalg.norm(seg.end_m - seg.start_m))
    mesh = scene.index.shapes.mesh(el.GlobalId)
    assert mesh is not None  # a segment of a wall without a mesh has zero length (refused above)
    normal = np.array([-d[1], d[0]])
    across = (mesh.vertices[:, :2] - start) @ normal
    thickness = float(across.max() - across.min())
    z = np.array([mesh.vertices[:, 2].min(), mesh.vertices[:, 2].max()])
    return start, start + d * length, thickness, z


def recreate_wall(scene: Scene, rng: np.random.Generator) -> Edit:
    """Remove a wall (with whatever fills it) from the scene and ask for a straight wall in its place."""
    walls = scene.elements("IfcWall")
    # walls that host nothing first (a re-created wall does not bring its doors back); stable sort
    order = sorted(rng.permutation(len(walls)).tolist(), key=lambda i: len(dependants(walls[i])) > 0)
    edit = _first_edit([walls[i] for i in order[:12]], lambda el: _recreate_wall(scene, el, rng))
    if edit is None:
        raise NoCandidate("no wall that can be re-created with a checked description")
    return edit


def _recreate_wall(scene: Scene, el: ifcopenshell.entity_instance, rng: np.random.Generator) -> Edit:
    victims = [el.GlobalId, *dependants(el)]
    topo = _restorable(scene, el, victims[1:])
    storey = _storey_of(scene, el)
    p1, p2, t, z = _segments_of(scene, el)
    if t < 0.02 or float(np.linalg.norm(p2 - p1)) < 0.3:
        raise NoCandidate(f"{el.GlobalId}: too thin or short to re-create")
    height = round(float(z[1] - z[0]), 3)
    t = round(t, 3)
    me = scene.index.get(el.GlobalId)
    # NOTDEFINED ends: connect_path drops a wall's earlier connection at the same named end
    connect = [(g, "NOTDEFINED", "NOTDEFINED") for g in sorted(me.connected)
               if scene.model.by_guid(g).is_a("IfcWall")]
    spaces = sorted(me.bounds)
    p1r, p2r = np.round(p1, 3), np.round(p2, 3)
    zr = round(float(z[0]), 3)
    c = code.create_wall(storey.GlobalId, p1r.tolist(), p2r.tolist(), zr, t, height, connect, spaces)
    dims = f"{t:.3f} m thick and {height:.3f} m high"
    rels = []
    if connect:
        rels.append(f"connect it to the walls {', '.join(g for g, _, _ in connect)}")
    if spaces:
        rels.append(f"make it bound the spaces {', '.join(spaces)}")
    direct = (f"Create a wall from (x1, y1, z1) = ({p1r[0]:.3f}, {p1r[1]:.3f}, {zr:.3f}) to (x2, y2, z2) = "
              f"({p2r[0]:.3f}, {p2r[1]:.3f}, {zr:.3f}), {dims}, centred on that line, and contain it in the "
              f"{_spatial(storey)} with ID {storey.GlobalId}" + "".join(f"; {r}" for r in rels) + ".")
    verb = pick(rng, ["Create", "Add", "Build"])
    mid = (p1r + p2r) / 2
    length = float(np.linalg.norm(p2r - p1r))
    axis = "x" if abs(p2r[0] - p1r[0]) >= abs(p2r[1] - p1r[1]) else "y"
    spatial = (f"{verb} a straight wall, {dims} and {length:.2f} m long, running mainly in {axis} direction with its "
               f"midpoint at ({mid[0]:.2f}, {mid[1]:.2f}) and its base at z = {zr:.2f} m; keep the model's "
               "relationships consistent.")
    in_storey = "" if storey.GlobalId in topo.text else f", in the {container_noun(storey)} ({storey.GlobalId})"
    topo_text = (f"{verb} {as_new(topo.text, 'wall')}, {dims}, from ({p1r[0]:.2f}, {p1r[1]:.2f}) to "
                 f"({p2r[0]:.2f}, {p2r[1]:.2f}){in_storey}.")
    centre = [round(float(v), 3) for v in (mid[0], mid[1], zr + height / 2)]
    checks = {"spatial": Check("truth", {"class": "IfcWall", "nearest_to": centre}),
              "topological": Check("truth", dict(topo.facts))}
    return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo_text}, checks,
                prepare=code.delete([el.GlobalId]), created_class="IfcWall", origin=el.GlobalId)


def footprint(scene: Scene, guid: str) -> list[tuple[float, float]]:
    """Plan outline of an element's mesh (metres, anticlockwise, not closed): the union of its
    triangles, simplified; the convex hull when that has more than :data:`MAX_OUTLINE_POINTS` corners."""
    mesh = scene.index.shapes.mesh(guid)
    if mesh is None:
        raise NoCandidate(f"{guid}: no body geometry")
    tris = mesh.vertices[mesh.faces][:, :, :2]
    polys = [shapely.Polygon(t) for t in tris]
    shape = shapely.unary_union([p.buffer(0.001) for p in polys if p.area > 1e-9]).buffer(-0.001)
    if shape.geom_type == "MultiPolygon":
        shape = max(shape.geoms, key=lambda g: g.area)
    if shape.is_empty or shape.geom_type != "Polygon":
        raise NoCandidate(f"{guid}: no plan footprint")
    outline = shapely.Polygon(shape.exterior).simplify(0.01)
    if len(outline.exterior.coords) - 1 > MAX_OUTLINE_POINTS:
        outline = outline.convex_hull.simplify(0.01)
    outline = shapely.geometry.polygon.orient(outline, 1.0)
    return [(round(float(x), 3), round(float(y), 3)) for x, y in list(outline.exterior.coords)[:-1]]


def recreate_extrusion(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    """Remove a slab or a room from the scene and ask for it back as an extrusion of its footprint."""
    els = scene.elements(cls)
    rng.shuffle(els)
    edit = _first_edit(els[:12], lambda el: _recreate_extrusion(scene, cls, el, rng))
    if edit is None:
        raise NoCandidate(f"no {cls} that can be re-created with a checked description")
    return edit


def _recreate_extrusion(scene: Scene, cls: str, el: ifcopenshell.entity_instance, rng: np.random.Generator) -> Edit:
    victims = [el.GlobalId, *dependants(el)]
    topo = _restorable(scene, el, victims[1:])
    storey = _storey_of(scene, el)
    outline = footprint(scene, el.GlobalId)
    box = aabb(scene, el.GlobalId)
    base, depth = round(float(box[0, 2]), 3), round(float(box[1, 2] - box[0, 2]), 3)
    if depth < 0.02 or len(outline) < 3:
        raise NoCandidate(f"{el.GlobalId}: too flat to re-create")
    area = float(shapely.Polygon(outline).area)
    slab = cls == "IfcSlab"
    me = scene.index.get(el.GlobalId)
    partners = sorted(me.bounds) if slab else sorted(me.bounded_by)
    pts = ", ".join(f"({x:.3f}, {y:.3f})" for x, y in outline)
    noun = NOUNS[cls]
    if slab:
        predefined = str(getattr(el, "PredefinedType", None) or "FLOOR")
        if predefined in ("NOTDEFINED", "USERDEFINED"):
            predefined = "FLOOR"
        c = code.create_extrusion("IfcSlab", predefined, "Slab", storey.GlobalId, outline, base, depth, partners,
                                  False, "Concrete", "Qto_SlabBaseQuantities", {"Depth": depth}, {"GrossArea": area})
    else:
        # IFC2X3 spaces have no predefined type; an empty one sets nothing
        space_type = "INTERNAL" if scene.model.schema != "IFC2X3" else ""
        c = code.create_extrusion("IfcSpace", space_type, "Room", storey.GlobalId, outline, base, depth,
                                  partners, True, None, "Qto_SpaceBaseQuantities", {"Height": depth},
                                  {"NetFloorArea": area})
    verb = pick(rng, ["Create", "Add"])
    rel = ""
    if partners:
        rel = (f"; make it bound the spaces {', '.join(partners)}" if slab else
               f"; add its space boundaries with {', '.join(partners)}")
    place = "contain it in" if slab else "aggregate it under"
    direct = (f"{verb} a {noun} {depth:.3f} m thick in +z direction from z = {base:.3f} m, with the plan outline "
              f"{pts} (x, y in metres); {place} the {_spatial(storey)} with ID {storey.GlobalId}{rel}.")
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    spatial = (f"{verb} the missing {noun}, {depth:.3f} m thick with its base at z = {base:.3f} m, covering the plan "
               f"outline {pts}; relate it to the {container_noun(storey)} and elements it belongs to.")
    topo_text = (f"{verb} {as_new(topo.text, noun)}, {depth:.3f} m thick from z = "
                 f"{base:.3f} m, with the plan outline {pts}.")
    centre = [round((min(xs) + max(xs)) / 2, 3), round((min(ys) + max(ys)) / 2, 3), round(base + depth / 2, 3)]
    checks = {"spatial": Check("truth", {"class": cls, "nearest_to": centre}),
              "topological": Check("truth", dict(topo.facts))}
    return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo_text}, checks,
                prepare=code.delete([el.GlobalId]), created_class=cls, origin=el.GlobalId)


def recreate_filling(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    """Remove a door or window with its opening and ask for it back in its host wall."""
    fills = scene.elements(cls)
    rng.shuffle(fills)
    edit = _first_edit(fills[:12], lambda el: _recreate_filling(scene, cls, el, rng))
    if edit is None:
        raise NoCandidate(f"no {NOUNS[cls]} in an opening of a wall with a checked description")
    return edit


def _recreate_filling(scene: Scene, cls: str, el: ifcopenshell.entity_instance, rng: np.random.Generator) -> Edit:
    opening = ifcopenshell.util.element.get_filled_void(el)
    host = ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None
    if opening is None or host is None or not host.is_a("IfcWall"):
        raise NoCandidate(f"{el.GlobalId}: not in an opening of a wall")
    ref: Indirect = indirect(scene, host.GlobalId, rng, exclude=(el.GlobalId, opening.GlobalId))
    start, d, axis = run_direction(scene.index.segment(host.GlobalId))
    _, _, t, hz = _segments_of(scene, host)
    box = aabb(scene, el.GlobalId)
    width = round(float(np.abs(box[1, :2] - box[0, :2]) @ np.abs(d)), 3)
    height = round(float(box[1, 2] - box[0, 2]), 3)
    centre = (box[0] + box[1]) / 2
    edge = round(float((centre[:2] - start) @ d) - width / 2, 3)
    sill = round(float(box[0, 2] - hz[0]), 3)
    if width < 0.2 or height < 0.2 or edge < 0:
        raise NoCandidate(f"{el.GlobalId}: cannot measure its opening")
    corner = start + d * edge
    storey = _storey_of(scene, el if ifcopenshell.util.element.get_container(el) else host)
    kind = NOUNS[cls]
    c = code.create_filling_at(kind, host.GlobalId, storey.GlobalId, (round(float(corner[0]), 4),
                               round(float(corner[1]), 4), round(float(box[0, 2]), 4)),
                               (round(float(d[0]), 6), round(float(d[1]), 6)), width, height, round(t, 3))
    dims = f"{width:.2f} m wide and {height:.2f} m high"
    where = f"{edge:.3f} m from the wall's end with the lower {axis} value, its bottom {sill:.2f} m above the wall's base"
    verb = pick(rng, ["Add", "Insert", "Create"])
    direct = (f"{verb} a {kind} {dims} in the wall with ID {host.GlobalId}: an opening through the wall with its "
              f"edge {where}, filled by the {kind}; contain the {kind} in the {_spatial(storey)} {storey.GlobalId}.")
    spatial = f"{verb} a {kind}, {dims}, to {ref['spatial']}, its opening's edge {where}."
    topo = f"{verb} a {kind}, {dims}, to {ref['topological']}, its opening's edge {where}."
    mid = [round(float(v), 3) for v in (*(corner + d * width / 2), box[0, 2] + height / 2)]
    others = [f for f in resolve(scene.index, {"class": cls, "host": host.GlobalId}) if f != el.GlobalId]
    topo_facts = {"class": cls, "host": host.GlobalId, **({"nearest_to": mid} if others else {})}
    checks = {"spatial": Check("truth", {"class": cls, "nearest_to": mid}), "topological": Check("truth", topo_facts)}
    return Edit(c, {"direct": direct, "spatial": spatial, "topological": topo}, checks,
                prepare=code.delete([el.GlobalId, opening.GlobalId]), created_class=cls, origin=el.GlobalId)


def create_column(scene: Scene, rng: np.random.Generator) -> Edit:
    """A square column at the centre of a room, or 1 m in front of the middle of a wall without rooms."""
    rooms = [r for r in scene.elements("IfcSpace") if scene.index.shapes.mesh(r.GlobalId) is not None]
    rng.shuffle(rooms)
    edit = _first_edit(rooms[:8], lambda sp: _column_in_room(scene, sp, rng))
    if edit is not None:
        return edit
    walls = [w for w in scene.elements("IfcWall") if scene.index.shapes.mesh(w.GlobalId) is not None]
    rng.shuffle(walls)
    edit = _first_edit(walls[:8], lambda w: _column_by_wall(scene, w, rng))
    if edit is None:
        raise NoCandidate("no room or wall to place a column by")
    return edit


def _column_edit(scene: Scene, storey: ifcopenshell.entity_instance, at: tuple[float, float, float], height: float,
                 place_spatial: str, place_topo: str, topo_check: Check, rng: np.random.Generator) -> Edit:
    size = float(rng.choice([0.25, 0.3, 0.35]))
    dims = f"a {size:.2f} × {size:.2f} m column, {height:.2f} m high,"
    direct = (f"Create {dims} centred at (x, y, z) = ({at[0]:.2f}, {at[1]:.2f}, {at[2]:.2f}) (the centre of its base) "
              f"and contain it in the {_spatial(storey)} with ID {storey.GlobalId}.")
    verb = pick(rng, ["Create", "Add", "Place"])
    checks = {"spatial": Check("truth", {"class": "IfcColumn", "nearest_to": [at[0], at[1], at[2] + height / 2]}),
              "topological": topo_check}
    return Edit(code.create_column(storey.GlobalId, at, size, height),
                {"direct": direct, "spatial": f"{verb} {dims} {place_spatial}.",
                 "topological": f"{verb} {dims} {place_topo}."}, checks, created_class="IfcColumn")


def _column_in_room(scene: Scene, sp: ifcopenshell.entity_instance, rng: np.random.Generator) -> Edit:
    ref = indirect(scene, sp.GlobalId, rng)
    box = aabb(scene, sp.GlobalId)
    centre = scene.index.shapes.centre(sp.GlobalId)
    at = (round(float(centre[0]), 2), round(float(centre[1]), 2), round(float(box[0, 2]), 3))
    height = round(float(box[1, 2] - box[0, 2]), 2)
    if height < 1.0 or not shapely.Polygon(footprint(scene, sp.GlobalId)).contains(shapely.Point(at[:2])):
        raise NoCandidate(f"{sp.GlobalId}: its centre is not inside it")
    storey = _storey_of(scene, sp)
    return _column_edit(scene, storey, at, height,
                        f"standing on the floor at the plan centre of {ref['spatial']}, as high as that room",
                        f"in the centre of {ref['topological']}, on its floor and as high as the room",
                        ref["topological_check"], rng)


def _column_by_wall(scene: Scene, wall: ifcopenshell.entity_instance, rng: np.random.Generator) -> Edit:
    ref = indirect(scene, wall.GlobalId, rng)
    p1, p2, t, z = _segments_of(scene, wall)
    d = (p2 - p1) / np.linalg.norm(p2 - p1)
    normal = np.array([-d[1], d[0]])
    side = float(rng.choice([-1.0, 1.0]))
    mid = (p1 + p2) / 2 + normal * side * (t / 2 + 1.0)
    at = (round(float(mid[0]), 2), round(float(mid[1]), 2), round(float(z[0]), 3))
    height = round(float(z[1] - z[0]), 2)
    storey = _storey_of(scene, wall)
    axis, sign = (0, normal[0] * side) if abs(normal[0]) >= abs(normal[1]) else (1, normal[1] * side)
    towards = f"{'+' if sign > 0 else '-'}{'xy'[axis]}"
    return _column_edit(scene, storey, at, height,
                        f"1.00 m from the face of {ref['spatial']} at its midpoint, on its {towards} side, "
                        "standing at the wall's base and as high as the wall",
                        f"1.00 m from the face of {ref['topological']} at its midpoint, on its {towards} side, "
                        "standing at the wall's base and as high as the wall", ref["topological_check"], rng)


def _first_edit(candidates: list[ifcopenshell.entity_instance],
                make: Callable[[ifcopenshell.entity_instance], Edit]) -> Edit | None:
    """The edit of the first candidate ``make`` accepts (it raises NoCandidate for the others), in order."""
    for candidate in candidates:
        try:
            return make(candidate)
        except NoCandidate:
            continue
    return None
