"""Base edits: for one (element, operation, variant) on a scene, the oracle code and three instructions.

A recipe picks its target (or, for creates, its anchors) with a seeded generator, writes
the oracle code (:mod:`.code`) and phrases the edit three ways: *direct* (GlobalIds and
every parameter), *spatial* (position, distance, direction, viewpoint) and *topological*
(relations). Every indirect phrase carries a :class:`Check`: the query behind it, run by
the generator against M0 (for an existing element) or M* (for a created one), which must
return exactly one element (spec section 7.2, step 2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

import ifcopenshell
import ifcopenshell.util.element
import ifcopenshell.util.placement
import numpy as np

from buildbench.suites.bimedit.generate.describe import describe, frame_adjacency, resolve
from buildbench.suites.bimedit.generate.facts import NOUNS, Description, DescriptionIndex, base_class
from buildbench.suites.bimedit.generate.tasks import code


class NoCandidate(Exception):
    """The scene offers no element this recipe can use (the generator tries another variant)."""


@dataclass(frozen=True)
class Check:
    """A query that must resolve to exactly one element.

    Attributes:
        on: "input" (resolved on M0, expected ``guid``) or "truth" (on M*, expected: the created element).
        facts: the query (see ``describe.resolve``).
        guid: the expected element on M0 (None for "truth").
    """

    on: str
    facts: dict[str, Any]
    guid: str | None = None


@dataclass(frozen=True)
class Edit:
    """One base edit.

    Attributes:
        code: the oracle code (tool namespace).
        texts: instruction per category ("direct", "spatial", "topological").
        checks: per indirect category, the query that must pick out one element.
        target_guids: M0 GlobalIds the edit is about.
        prepare: oracle-style code that turns the scene into M0 (e.g. removes the room a create
            task asks for), or None to use the scene as it is.
        created_class: the IFC class a create adds (checks "on truth" look for it).
        origin: the scene element a create re-creates (removed by ``prepare``), if any.
    """

    code: str
    texts: dict[str, str]
    checks: dict[str, Check]
    target_guids: tuple[str, ...] = ()
    prepare: str | None = None
    created_class: str | None = None
    relevant_properties: tuple[str, ...] | None = field(default=None)
    origin: str | None = None


@dataclass
class Scene:
    """What recipes read from one scene (M0 before any preparation)."""

    model: ifcopenshell.file
    index: DescriptionIndex
    scale: float
    #: GlobalIds recipes must not pick (targets of earlier tasks of the same kind).
    avoid: set[str] = field(default_factory=set)

    def world(self, el: ifcopenshell.entity_instance) -> np.ndarray:
        """World placement, translation in metres."""
        m = np.array(ifcopenshell.util.placement.get_local_placement(el.ObjectPlacement), dtype=float)
        m[:3, 3] *= self.scale
        return m

    def qto(self, el: ifcopenshell.entity_instance, name: str, key: str, power: int = 1) -> float:
        """A base quantity in SI (metres, square metres)."""
        return float(ifcopenshell.util.element.get_pset(el, name)[key]) * self.scale ** power

    def storey(self, el: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance:
        """The storey containing (or aggregating) ``el``; NoCandidate when nothing does."""
        st = ifcopenshell.util.element.get_container(el) or ifcopenshell.util.element.get_aggregate(el)
        if st is None:
            raise NoCandidate(f"{el.GlobalId}: in no storey")
        return st

    def filled_opening(self, filling: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance:
        """The opening a door or window fills; NoCandidate for one that fills none."""
        opening = ifcopenshell.util.element.get_filled_void(filling)
        if opening is None:
            raise NoCandidate(f"{filling.GlobalId}: fills no opening")
        return opening

    def voided_host(self, opening: ifcopenshell.entity_instance) -> ifcopenshell.entity_instance:
        """The wall (or slab) an opening voids; NoCandidate for an opening that voids nothing."""
        host = ifcopenshell.util.element.get_voided_element(opening)
        if host is None:
            raise NoCandidate(f"{opening.GlobalId}: voids no element")
        return host

    def elements(self, cls: str) -> list[ifcopenshell.entity_instance]:
        """Elements of ``cls`` in GlobalId order (stable across runs), less those in :attr:`avoid`
        and those whose GlobalId cannot single them out (repeated, or not found by ``by_guid``)."""
        skip = self.avoid | self.index.unnamable_ids
        return sorted((e for e in self.model.by_type(cls) if e.GlobalId not in skip), key=lambda e: e.GlobalId)


def pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    """One phrasing, drawn with the recipe's generator."""
    return options[int(rng.integers(len(options)))]


class Indirect(TypedDict):
    """A spatial and a topological description of one M0 element, each with the check that must
    pick the element out again."""

    spatial: str
    spatial_check: Check
    topological: str
    topological_check: Check


def indirect(scene: Scene, guid: str, rng: np.random.Generator, exclude: Sequence[str] = ()) -> Indirect:
    """A spatial and a topological description of an M0 element (texts under "spatial"/"topological").

    Raises:
        NoCandidate: the element lacks one of the two kinds.
    """
    if not guid or guid in scene.index.unnamable_ids:
        raise NoCandidate(f"{guid or 'an element without GlobalId'}: no description can name it")
    chosen: dict[str, Description] = {}
    for kind in ("spatial", "topological"):
        found = [d for d in describe(scene.index, guid) if d.kind == kind
                 and not any(x in str(d.facts) for x in exclude)]
        if not found and kind == "topological":
            found = _host_description(scene, guid)
        if not found and kind == "topological":  # a frame with no walls or relations to name
            found = [d for d in frame_adjacency(scene.index, guid) if not any(x in str(d.facts) for x in exclude)]
        if kind == "spatial":
            found = _mix_viewpoints(found)
        if not found:
            raise NoCandidate(f"{guid}: no {kind} description")
        chosen[kind] = found[int(rng.integers(len(found)))]
    spatial, topological = chosen["spatial"], chosen["topological"]
    return Indirect(spatial=spatial.text, spatial_check=Check("input", dict(spatial.facts), guid),
                    topological=topological.text, topological_check=Check("input", dict(topological.facts), guid))


def _mix_viewpoints(found: list[Description]) -> list[Description]:
    """Spatial options with the egocentric (viewpoint) ones thinned to about a third of them.

    A room offers a viewpoint per axis and per door, so they far outnumber the position and
    distance phrases; keeping an evenly spaced share of them mixes all flavours in a split.
    """
    views = [d for d in found if "viewpoint" in d.facts]
    others = [d for d in found if "viewpoint" not in d.facts]
    if not others or not views:
        return found
    keep = max(1, len(others) // 2)
    step = len(views) / keep
    return others + [views[int((i + 0.5) * step)] for i in range(min(keep, len(views)))]


def _host_description(scene: Scene, guid: str) -> list[Description]:
    """"The door/window in wall X", offered when that wall hosts no other filling of its class."""
    el = scene.model.by_guid(guid)
    cls = base_class(el)
    opening = ifcopenshell.util.element.get_filled_void(el) if cls in ("IfcDoor", "IfcWindow") else None
    host = ifcopenshell.util.element.get_voided_element(opening) if opening is not None else None
    if host is None:
        return []
    facts = {"class": cls, "host": host.GlobalId}
    if resolve(scene.index, facts) != [guid]:
        return []
    return [Description("topological", f"the {NOUNS[cls]} in the wall ({host.GlobalId})", facts)]


def _candidates(scene: Scene, cls: str, rng: np.random.Generator,
                keep: Callable[[ifcopenshell.entity_instance], bool] = lambda e: True
                ) -> list[ifcopenshell.entity_instance]:
    els = [e for e in scene.elements(cls) if keep(e)]
    rng.shuffle(els)
    if not els:
        raise NoCandidate(f"no {cls} fits")
    return els


def _first_described(scene: Scene, cls: str, rng: np.random.Generator,
                     keep: Callable[[ifcopenshell.entity_instance], bool] = lambda e: True,
                     exclude: Sequence[str] = ()) -> tuple[ifcopenshell.entity_instance, Indirect]:
    for el in _candidates(scene, cls, rng, keep)[:12]:
        try:
            return el, indirect(scene, el.GlobalId, rng, exclude)
        except NoCandidate:
            continue
    raise NoCandidate(f"no {cls} with both a spatial and a topological description")


def _edit(code_text: str, direct: str, ref: Indirect, spatial: str, topo: str,
          targets: Sequence[str], **kw: Any) -> Edit:
    return Edit(code_text, {"direct": direct, "spatial": spatial, "topological": topo},
                {"spatial": ref["spatial_check"], "topological": ref["topological_check"]}, tuple(targets), **kw)


# -- updates ---------------------------------------------------------------------------------------

def _host_axis(scene: Scene, filling: ifcopenshell.entity_instance) -> tuple[np.ndarray, float, float]:
    """Host wall direction, the opening's distance along it from the wall start, and the wall length (m)."""
    opening = scene.filled_opening(filling)
    host = scene.voided_host(opening)
    hm, om = scene.world(host), scene.world(opening)
    d = hm[:3, 0] / np.linalg.norm(hm[:3, 0])
    along = float(np.dot(om[:3, 3] - hm[:3, 3], d))
    return d, along, scene.qto(host, "Qto_WallBaseQuantities", "Length")


def update_filling(scene: Scene, kind: str, variant: int, rng: np.random.Generator) -> Edit:
    """Move a door or window (with its opening) along its wall, or a window up or down."""
    cls = "IfcDoor" if kind == "door" else "IfcWindow"
    el, ref = _first_described(scene, cls, rng)
    opening = scene.filled_opening(el)
    guids = [el.GlobalId, opening.GlobalId]
    noun = NOUNS[cls]
    if kind == "window" and variant % 3 == 1:
        dz = float(rng.choice([-0.2, -0.1, 0.1, 0.2]))
        word = "up" if dz > 0 else "down"
        offset: np.ndarray = np.array([0.0, 0.0, dz])
        direct = (f"Move the {noun} with ID {el.GlobalId} {abs(dz):.2f} m {word} (in {'+' if dz > 0 else '-'}z "
                  f"direction), together with its opening {opening.GlobalId}, keeping all relationships.")
        tail = f"{abs(dz):.2f} m {word}, together with the opening it fills"
    else:
        d, along, length = _host_axis(scene, el)
        width = float(el.OverallWidth) * scene.scale
        room_plus, room_minus = length - along - width - 0.2, along - 0.2
        dist = float(rng.choice([0.3, 0.4, 0.5]))
        sign = 1.0 if room_plus >= dist and (room_minus < dist or rng.random() < 0.5) else -1.0
        if (room_plus if sign > 0 else room_minus) < dist:
            raise NoCandidate(f"{el.GlobalId}: no room to slide")
        offset = d * dist * sign
        axis = "x" if abs(d[0]) > 0.5 else "y"
        direction = f"{'+' if sign * d[0 if axis == 'x' else 1] > 0 else '-'}{axis}"
        direct = (f"Move the {noun} with ID {el.GlobalId} by {dist:.2f} m in {direction} direction along its wall. "
                  f"Move the placement of its opening {opening.GlobalId} the same way and keep all relationships.")
        tail = f"{dist:.2f} m in {direction} direction along its wall, moving its opening with it"
    verb = pick(rng, ["Move", "Shift", "Relocate"])
    return _edit(code.move(guids, offset.tolist()), direct, ref, f"{verb} {ref['spatial']} {tail}.",
                 f"{verb} {ref['topological']} {tail}.", guids)


def update_column(scene: Scene, variant: int, rng: np.random.Generator) -> Edit:
    """Move a column in plan, or change its height."""
    el, ref = _first_described(scene, "IfcColumn", rng)
    if variant % 2 == 0:
        dx, dy = (float(rng.choice([-0.4, -0.3, 0.3, 0.4])) for _ in range(2))
        text = f"by {dx:+.2f} m in x and {dy:+.2f} m in y"
        c = code.move([el.GlobalId], (dx, dy, 0.0))
        direct = f"Move the column with ID {el.GlobalId} {text}, keeping its size and storey."
        tail = f"{text}"
        verb = pick(rng, ["Move", "Shift"])
        return _edit(c, direct, ref, f"{verb} {ref['spatial']} {tail}.", f"{verb} {ref['topological']} {tail}.",
                     [el.GlobalId])
    h = scene.qto(el, "Qto_ColumnBaseQuantities", "Length")
    new = round(h + float(rng.choice([-0.4, -0.2, 0.3])), 2)
    c = code.set_extrusion_depth(el.GlobalId, new, "Qto_ColumnBaseQuantities", "Length")
    verb = pick(rng, ["Change the height of", "Set the height of"])
    return _edit(c, f"{verb} the column with ID {el.GlobalId} to {new:.2f} m, keeping its base fixed.", ref,
                 f"{verb} {ref['spatial']} to {new:.2f} m, keeping its base where it is.",
                 f"{verb} {ref['topological']} to {new:.2f} m, keeping its base where it is.", [el.GlobalId])


def update_wall(scene: Scene, variant: int, rng: np.random.Generator) -> Edit:
    """Change a wall's height (even variants) or thickness about its axis (odd variants)."""
    el, ref = _first_described(scene, "IfcWall", rng)
    if variant % 2 == 0:
        h = scene.qto(el, "Qto_WallBaseQuantities", "Height")
        new = round(h + float(rng.choice([-0.2, 0.2, 0.3, 0.4])), 2)
        c = code.set_extrusion_depth(el.GlobalId, new, "Qto_WallBaseQuantities", "Height")
        what, how = "the height of", f"to {new:.2f} m, keeping its base fixed"
    else:
        t = scene.qto(el, "Qto_WallBaseQuantities", "Width")
        new = round(t + float(rng.choice([-0.02, 0.02, 0.04])), 3)
        c = code.scale_profile(el.GlobalId, 1, 0.0, new / t, "Qto_WallBaseQuantities", {"Width": new}, {})
        what, how = "the thickness of", f"to {new:.3f} m, symmetric about its axis"
    verb = pick(rng, ["Change", "Set", "Adjust"])
    return _edit(c, f"{verb} {what} the wall with ID {el.GlobalId} {how}.", ref,
                 f"{verb} {what} {ref['spatial']} {how}.", f"{verb} {what} {ref['topological']} {how}.",
                 [el.GlobalId])


def _outline_extent(el: ifcopenshell.entity_instance, axis: int) -> tuple[float, float]:
    """Min and max profile coordinate along ``axis`` (model units)."""
    solid = next(r for r in el.Representation.Representations if r.RepresentationIdentifier == "Body").Items[0]
    vals = [p[axis] for p in solid.SweptArea.OuterCurve.Points.CoordList]
    return min(vals), max(vals)


def update_slab_or_space(scene: Scene, cls: str, variant: int, rng: np.random.Generator) -> Edit:
    """Change a slab's thickness (top kept) or a room's height; or shorten either in one plan direction."""
    el, ref = _first_described(scene, cls, rng)
    noun = NOUNS[cls]
    qto, depth_key, area_key = (("Qto_SlabBaseQuantities", "Depth", "GrossArea") if cls == "IfcSlab"
                                else ("Qto_SpaceBaseQuantities", "Height", "NetFloorArea"))
    if variant % 2 == 0:
        d = scene.qto(el, qto, depth_key)
        new = round(d + float(rng.choice([0.05, 0.1])) if cls == "IfcSlab" else d + float(rng.choice([-0.2, 0.2])), 3)
        c = code.set_extrusion_depth(el.GlobalId, new, qto, depth_key, keep_top=cls == "IfcSlab")
        what = "the thickness of" if cls == "IfcSlab" else "the height of"
        how = f"to {new:.3f} m, keeping its top face in place" if cls == "IfcSlab" else (
            f"to {new:.2f} m, keeping its floor level")
    else:
        axis = int(rng.integers(2))
        lo, hi = _outline_extent(el, axis)
        length = (hi - lo) * scene.scale
        cut = round(float(rng.choice([0.5, 1.0, 1.5])) if length > 3.0 else 0.3, 2)
        factor = (length - cut) / length
        area = scene.qto(el, qto, area_key, 2) * factor
        c = code.scale_profile(el.GlobalId, axis, lo, factor, qto, {}, {area_key: area})
        name = "xy"[axis]
        what, how = "the length in " + name + " direction of", (
            f"by {cut:.2f} m, keeping the side with the lower {name} value fixed")
    verb = pick(rng, ["Decrease", "Reduce"] if variant % 2 else ["Change", "Set"])
    return _edit(c, f"{verb} {what} the {noun} with ID {el.GlobalId} {how}.", ref,
                 f"{verb} {what} {ref['spatial']} {how}.", f"{verb} {what} {ref['topological']} {how}.",
                 [el.GlobalId])


# -- deletes ---------------------------------------------------------------------------------------

def delete_any(scene: Scene, cls: str, rng: np.random.Generator) -> Edit:
    """Delete an element with its openings, fillings and boundaries (a door or window with its opening)."""
    el, ref = _first_described(scene, cls, rng)
    victims = [el.GlobalId]
    deps: list[str] = []
    for rel in getattr(el, "HasOpenings", None) or ():
        deps.append(rel.RelatedOpeningElement.GlobalId)
        deps.extend(f.RelatedBuildingElement.GlobalId for f in rel.RelatedOpeningElement.HasFillings or ())
    opening = ifcopenshell.util.element.get_filled_void(el) if cls in ("IfcDoor", "IfcWindow") else None
    if opening is not None:
        victims.append(opening.GlobalId)
    noun = NOUNS[cls]
    extra = ""
    if deps:
        extra = f" together with its openings and the doors and windows in them ({', '.join(deps)})"
    elif opening is not None:
        extra = f" and the opening {opening.GlobalId} it fills"
    direct = (f"Delete the {noun} with ID {el.GlobalId}{extra}. Make sure to remove it from all its relationships"
              " (containment, connections, space boundaries).")
    verb = pick(rng, ["Delete", "Remove"])
    clean = pick(rng, [" and clean up its relationships", ", leaving no dangling relationships", ""])
    what = "its opening" if opening is not None else ("its openings and fillings" if deps else "")
    also = f" together with {what}" if what else ""
    return _edit(code.delete(victims), direct, ref, f"{verb} {ref['spatial']}{also}{clean}.",
                 f"{verb} {ref['topological']}{also}{clean}.", victims + deps)
