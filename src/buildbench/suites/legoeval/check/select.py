"""Resolving room references and object selectors against a scene.

Room references compare *normalised* names: lower case, camel case split, ``_``/``-``
as spaces, so ``LivingRoom``, ``living_room`` and ``living room`` are one name. A
reference matches a room whose id or type has that name; a room type also matches with a
trailing copy number dropped (``bedroom-1``, ``bedroom 2`` are bedrooms).

Object attributes (colour, material, shape) come from the catalogue entry of the asset
the scene actually uses, falling back to the attributes the scene file carried, so
swapping an asset changes what a selector sees. Doors and windows answer the ``door`` and
``window`` categories with their assets' attributes.

Wall surfaces are the room's *visible* walls (:func:`visible_walls`): an empty wall
(:attr:`~buildbench.scenes.model.Wall.empty`, an open floor plan's invisible boundary) is
an opening, not a surface, so what it records as its material is nobody's wall colour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from buildbench.scenes.catalogue import default_catalogue, material_info
from buildbench.scenes.model import EXTERIOR, Room, Scene, Wall, wall_direction

from ..constraints import Selector

_SYNONYMS = {"grey": "gray", "colour": "color", "wooden": "wood"}


# Pure, over a few hundred distinct names, called for every selector and room; bounded, as the names
# come from scenes and constraints a process may read without end (training).
@lru_cache(maxsize=4096)
def norm(name: str) -> str:
    """Comparable form of a room or category name."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    words = re.split(r"[\s_\-]+", spaced.strip().lower())
    return " ".join(_SYNONYMS.get(w, w) for w in words if w)


def _base(name: str) -> str:
    return re.sub(r"\s\d+$", "", norm(name))


def room_matches(room: Room, ref: str) -> bool:
    r = norm(ref)
    return r in (norm(room.id), norm(room.room_type or room.id), _base(room.id))


def rooms_matching(scene: Scene, ref: str) -> list[Room]:
    return [room for room in scene.rooms if room_matches(room, ref)]


def room_of_type(room: Room, room_type: str) -> bool:
    t = norm(room_type)
    return t in (_base(room.room_type or room.id), _base(room.id))


@dataclass(frozen=True)
class Candidate:
    """An object, door or window a selector can match, with what we know of it."""

    id: str
    category: str
    rooms: tuple[str, ...]
    attributes: dict[str, str]


def _attributes(asset_id: str, fallback: dict[str, Any]) -> dict[str, str]:
    asset = default_catalogue().get(asset_id) if asset_id else None
    if asset is not None:
        out = {"color": asset.color, "material": asset.material, "shape": asset.shape}
    else:
        out = {k: str(fallback[k]) for k in ("color", "material", "shape") if fallback.get(k)}
    return {k: norm(v) for k, v in out.items()}


def candidates(scene: Scene) -> list[Candidate]:
    """Every object, door and window of the scene as a selector candidate."""
    out = [Candidate(o.id, norm(o.category), (o.room_id,), _attributes(o.asset_id, o.attributes))
           for o in scene.objects]
    for kind, openings in (("door", scene.doors), ("window", scene.windows)):
        for op in openings:
            rooms = tuple(r for r in dict.fromkeys(op.rooms) if r != EXTERIOR)
            out.append(Candidate(op.id, kind, rooms, _attributes(op.asset_id, op.raw)))
    return out


def attribute_matches(have: dict[str, str], key: str, value: str) -> bool:
    """Does an object's attribute equal ``value``? Materials also match their family."""
    want = norm(value)
    got = have.get(key)
    if got is None:
        return False
    if got == want:
        return True
    if key == "material":
        info = material_info(got)
        return info is not None and norm(info[1]) == want
    return False


def select(scene: Scene, sel: Selector, pool: list[Candidate] | None = None) -> list[Candidate]:
    """The candidates a selector matches, in scene order."""
    pool = candidates(scene) if pool is None else pool
    room_ids: set[str] | None = None
    if sel.room is not None:
        room_ids = {r.id for r in rooms_matching(scene, sel.room)}
    category = None if sel.category is None else norm(sel.category)
    out = []
    for c in pool:
        if sel.id is not None and c.id != sel.id:
            continue
        if category is not None and c.category != category:
            continue
        if room_ids is not None and not room_ids.intersection(c.rooms):
            continue
        if all(attribute_matches(c.attributes, k, v) for k, v in sel.attributes().items()):
            out.append(c)
    return out


def describe(sel: Selector) -> str:
    """A short phrase naming what a selector asks for (for explanations)."""
    words = [sel.shape, sel.color, sel.material, sel.category or "object"]
    text = " ".join(w for w in words if w)
    if sel.id:
        text += f" {sel.id!r}"
    if sel.room:
        text += f" in {sel.room!r}"
    return text


def room_walls(scene: Scene, room: Room, direction: str | None = None) -> list[Wall]:
    """The room's inside wall sides, empty ones included; only those on the ``direction``
    side (Holodeck's cardinal names) when one is given."""
    return [w for w in scene.walls_of(room.id)
            if direction is None or wall_direction(w.start, w.end, room.vertices) == direction]


def visible_walls(scene: Scene, room: Room, direction: str | None = None) -> list[Wall]:
    """:func:`room_walls` less the empty (invisible) walls: the surfaces a person sees and a
    painter paints. AI2-THOR neither renders nor collides with an empty wall, so "the walls
    of the kitchen are blue" is about the others, and a side that is wholly open has no wall
    at all; the material an empty wall records (THOR files fill it in anyway) is never read.
    """
    return [w for w in room_walls(scene, room, direction) if not w.empty]


def material_matches(material_name: str | None, value: str) -> bool:
    """A room surface's material matches a value by name, family or colour word."""
    if not material_name:
        return False
    want = norm(value)
    if norm(material_name) == want or material_name.lower() == value.lower():
        return True
    info = material_info(material_name)
    return info is not None and want in (norm(info[1]), norm(info[2]))
