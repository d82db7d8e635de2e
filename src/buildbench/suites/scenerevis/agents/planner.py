"""Room templates and free-spot placement for the scripted agents.

A template lists a room type's core furniture (the essentials the reward checks first, then
the usual companions of the spec's §2.2 table) with typical sizes, and extras that are only
added when the instruction names them. Sizes are our own typical values, inside the §4.3
size-table ranges where it has the category.

Placement works on floor footprints (rotated rectangles, shapely): an object goes against a
wall with its back to it and its front facing the room, or in front of / around an anchor
object; a spot is free when the footprint lies inside the floor polygon and keeps
``CLEARANCE_M`` from every other footprint. Everything is deterministic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from shapely.affinity import rotate, translate
from shapely.geometry import Polygon, box

#: Gap kept between footprints, metres, and between a back and its wall.
CLEARANCE_M = 0.05
WALL_GAP_M = 0.02
SCAN_STEP_M = 0.1


@dataclass(frozen=True)
class Item:
    """One piece of furniture a template places.

    Attributes:
        category: Noun used in the description (and by retrieval).
        size: Typical ``[w, h, d]`` metres (front along +z at yaw 0).
        place: ``wall``, ``center``, ``front:<category>`` (in front of an anchor, facing it)
            or ``around:<category>`` (one side of an anchor table, facing it).
        near: Prefer wall spots close to this category's object.
        far: Prefer wall spots far from this category's object (a TV stand faces the sofa).
    """

    category: str
    size: tuple[float, float, float]
    place: str = "wall"
    near: str = ""
    far: str = ""


_I = Item
TEMPLATES: dict[str, tuple[tuple[Item, ...], tuple[Item, ...]]] = {
    "bedroom": ((_I("bed", (1.6, 0.5, 2.05)), _I("nightstand", (0.5, 0.55, 0.42), near="bed"),
                 _I("nightstand", (0.5, 0.55, 0.42), near="bed"), _I("wardrobe", (1.2, 2.1, 0.6)),
                 _I("dresser", (1.0, 0.8, 0.48))),
                (_I("desk", (1.2, 0.75, 0.6)), _I("chair", (0.5, 0.9, 0.5), "front:desk"),
                 _I("armchair", (0.8, 0.85, 0.8)), _I("bookshelf", (0.9, 1.8, 0.35)),
                 _I("floor lamp", (0.4, 1.6, 0.4), near="armchair"), _I("mirror", (0.6, 1.6, 0.05)))),
    "living room": ((_I("sofa", (2.2, 0.85, 0.9)), _I("coffee table", (1.2, 0.45, 0.6), "front:sofa"),
                     _I("tv stand", (1.8, 0.5, 0.45), far="sofa"), _I("armchair", (0.8, 0.85, 0.8), near="coffee table"),
                     _I("side table", (0.5, 0.55, 0.5), near="sofa")),
                    (_I("bookshelf", (0.9, 1.8, 0.35)), _I("floor lamp", (0.4, 1.6, 0.4), near="sofa"),
                     _I("plant", (0.5, 1.2, 0.5)), _I("cabinet", (1.0, 0.9, 0.45)))),
    "dining room": ((_I("dining table", (1.6, 0.75, 0.9), "center"),
                     *(_I("dining chair", (0.48, 0.9, 0.5), "around:dining table") for _ in range(4)),
                     _I("sideboard", (1.6, 0.85, 0.45))),
                    (_I("cabinet", (0.9, 1.8, 0.45)), _I("plant", (0.5, 1.2, 0.5)),
                     _I("bar cart", (0.8, 0.9, 0.45)))),
    "study room": ((_I("desk", (1.4, 0.75, 0.7)), _I("office chair", (0.6, 1.0, 0.6), "front:desk"),
                    _I("bookshelf", (1.0, 2.0, 0.35)), _I("filing cabinet", (0.45, 0.7, 0.6), near="desk")),
                   (_I("armchair", (0.8, 0.85, 0.8)), _I("floor lamp", (0.4, 1.6, 0.4), near="armchair"),
                    _I("side table", (0.5, 0.55, 0.5), near="armchair"), _I("plant", (0.5, 1.2, 0.5)))),
    "office": ((_I("desk", (1.4, 0.75, 0.7)), _I("office chair", (0.6, 1.0, 0.6), "front:desk"),
                _I("filing cabinet", (0.45, 0.7, 0.6), near="desk"), _I("bookshelf", (1.0, 2.0, 0.35))),
               (_I("sofa", (1.8, 0.85, 0.85)), _I("plant", (0.5, 1.2, 0.5)))),
    "gym": ((_I("treadmill", (0.85, 1.4, 1.9)), _I("dumbbell rack", (1.2, 0.8, 0.5)),
             _I("exercise bike", (0.6, 1.2, 1.1)), _I("weight bench", (0.5, 0.5, 1.3))),
            (_I("mirror", (1.2, 1.8, 0.05)),)),
    "entertainment room": ((_I("sofa", (2.2, 0.85, 0.9)), _I("tv stand", (1.8, 0.5, 0.45), far="sofa"),
                            _I("coffee table", (1.2, 0.45, 0.6), "front:sofa"), _I("speaker", (0.3, 1.0, 0.3))),
                           (_I("pool table", (2.5, 0.8, 1.4), "center"), _I("bar counter", (1.8, 1.05, 0.6)))),
}
#: Words in an instruction → room type (checked in order; first hit wins).
ROOM_WORDS: tuple[tuple[str, str], ...] = (
    ("bedroom", "bedroom"), ("living room", "living room"), ("lounge", "living room"),
    ("dining", "dining room"), ("study", "study room"), ("office", "office"), ("gym", "gym"),
    ("home theater", "entertainment room"), ("game room", "entertainment room"),
    ("entertainment", "entertainment room"), ("living", "living room"),
)
#: Floor area drawn for a new room, m² (inside the §1.3 guidance ranges).
ROOM_AREA_M2: dict[str, tuple[float, float]] = {
    "bedroom": (13.0, 18.0), "living room": (20.0, 28.0), "dining room": (14.0, 20.0),
    "study room": (11.0, 17.0), "office": (12.0, 20.0), "gym": (16.0, 24.0), "entertainment room": (20.0, 28.0),
}
CEILING_M = 2.6
STYLES = ("mid-century modern", "scandinavian", "minimalist", "industrial", "rustic", "contemporary", "modern",
          "classic", "traditional", "bohemian", "art deco", "coastal", "farmhouse", "luxurious")


def room_type_of(text: str, fallback: str = "bedroom") -> str:
    low = text.lower()
    for word, room in ROOM_WORDS:
        if word in low:
            return room
    return fallback if fallback in TEMPLATES else "bedroom"


def style_of(text: str) -> str:
    low = text.lower()
    return next((s for s in STYLES if s in low), "modern")


def wanted_items(room_type: str, instruction: str, *, max_items: int = 10) -> list[Item]:
    """The template's core items plus the extras the instruction names, at most ``max_items``."""
    core, extras = TEMPLATES[room_type]
    low = instruction.lower()
    named = [it for it in extras if re.search(rf"\b{re.escape(it.category)}", low)]
    return [*core, *named][:max_items]


def describe(item: Item, style: str) -> str:
    return f"{style.capitalize()} {item.category}"


def make_room(room_type: str, rng: np.random.Generator) -> dict[str, Any]:
    """A rectangular room of the type's usual area, centred on the origin (4 vertices)."""
    lo, hi = ROOM_AREA_M2[room_type]
    area = float(rng.uniform(lo, hi))
    aspect = float(rng.uniform(1.0, 1.4))
    w = round(math.sqrt(area * aspect) / 0.05) * 0.05
    d = round(area / w / 0.05) * 0.05
    hx, hz = round(w / 2, 3), round(d / 2, 3)
    xz = [(-hx, hz), (hx, hz), (hx, -hz), (-hx, -hz)]
    name = "".join(p.capitalize() for p in room_type.split())
    return {"room_type": room_type, "room_id": f"{name}-{int(rng.integers(1000, 10000))}",
            "bounds_top": [[x, CEILING_M, z] for x, z in xz], "bounds_bottom": [[x, 0.0, z] for x, z in xz],
            "objects": []}


# --- geometry ---------------------------------------------------------------------------
def yaw_of(rot: list[float]) -> float:
    x, y, z, w = rot
    return math.degrees(math.atan2(2.0 * (x * z + w * y), 1.0 - 2.0 * (x * x + y * y)))


def yaw_quat(yaw_deg: float) -> list[float]:
    half = math.radians(yaw_deg) / 2.0
    return [0.0, round(math.sin(half), 5), 0.0, round(math.cos(half), 5)]


def footprint(pos: tuple[float, float], size: tuple[float, float, float] | list[float], yaw_deg: float) -> Polygon:
    """The rotated floor rectangle of a box at ``pos`` (x, z) with ``yaw_deg`` (front +z → (sin, cos))."""
    rect = box(-size[0] / 2, -size[2] / 2, size[0] / 2, size[2] / 2)
    # A yaw θ maps local (x, z) to (x cos θ + z sin θ, −x sin θ + z cos θ): clockwise in (x, z).
    return translate(rotate(rect, -yaw_deg, origin=(0, 0)), pos[0], pos[1])


def object_footprint(obj: dict[str, Any]) -> Polygon:
    return footprint((float(obj["pos"][0]), float(obj["pos"][2])), obj["size"], yaw_of(obj["rot"]))


class Floor:
    """The room's floor and the footprints already taken."""

    def __init__(self, scene: dict[str, Any], exclude: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.polygon = Polygon([(p[0], p[2]) for p in scene["bounds_bottom"]])
        self.inner = self.polygon.buffer(-0.01)
        self.taken: list[tuple[str, Polygon]] = [
            (str(o.get("id") or o.get("jid")), object_footprint(o)) for o in scene["objects"]
            if str(o.get("id") or o.get("jid")) not in exclude]
        self.floor_y = min(p[1] for p in scene["bounds_bottom"])

    def free(self, shape: Polygon) -> bool:
        if not self.inner.contains(shape):
            return False
        grown = shape.buffer(CLEARANCE_M - 1e-6)
        return not any(grown.intersects(other) for _, other in self.taken)

    def take(self, oid: str, shape: Polygon) -> None:
        self.taken.append((oid, shape))

    def walls(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
        """``(start, direction, inward normal, length)`` per floor edge, longest first."""
        pts = np.asarray(self.polygon.exterior.coords)[:-1]
        ccw = self.polygon.exterior.is_ccw
        out = []
        for i in range(len(pts)):
            a, b = pts[i], pts[(i + 1) % len(pts)]
            length = float(np.linalg.norm(b - a))
            if length < 1e-6:
                continue
            d = (b - a) / length
            normal = np.array([-d[1], d[0]]) if ccw else np.array([d[1], -d[0]])
            out.append((a, d, normal, length))
        return sorted(out, key=lambda w: (-round(w[3], 6), tuple(np.round(w[0], 6))))


@dataclass(frozen=True)
class Spot:
    """A placement: bottom-centre (x, z) and yaw in degrees."""

    x: float
    z: float
    yaw_deg: float

    def shape(self, size: tuple[float, float, float] | list[float]) -> Polygon:
        return footprint((self.x, self.z), size, self.yaw_deg)


def wall_spots(floor: Floor, size: tuple[float, float, float] | list[float]) -> list[Spot]:
    """Candidate spots with the back against a wall, facing the room, scanned along each wall."""
    spots = []
    for start, d, normal, length in floor.walls():
        yaw = math.degrees(math.atan2(normal[0], normal[1]))
        half_w = size[0] / 2
        for along in np.arange(half_w + 0.02, length - half_w - 0.02 + 1e-9, SCAN_STEP_M):
            c = start + d * along + normal * (size[2] / 2 + WALL_GAP_M)
            spots.append(Spot(round(float(c[0]), 3), round(float(c[1]), 3), round(yaw, 3)))
    return spots


def anchor_spots(item: Item, anchor: dict[str, Any]) -> list[Spot]:
    """Spots in front of an anchor (facing it) or around an anchor table (facing its centre)."""
    ax, az = float(anchor["pos"][0]), float(anchor["pos"][2])
    yaw = yaw_of(anchor["rot"])
    fx, fz = math.sin(math.radians(yaw)), math.cos(math.radians(yaw))
    rx, rz = fz, -fx  # the anchor's local +x on the floor
    aw, ad = float(anchor["size"][0]), float(anchor["size"][2])
    if item.place.startswith("front:"):
        gap = 0.35 if item.size[1] < 0.6 else 0.1  # low tables leave legroom in front of a sofa
        dist = ad / 2 + gap + item.size[2] / 2
        facing = yaw if item.size[1] < 0.6 else yaw + 180.0
        return [Spot(round(ax + fx * dist, 3), round(az + fz * dist, 3), round(facing % 360, 3))]
    out = []
    for sx, sz, reach in ((0, 1, ad / 2), (0, -1, ad / 2), (1, 0, aw / 2), (-1, 0, aw / 2)):
        ox, oz = sx * rx + sz * fx, sx * rz + sz * fz
        dist = reach + 0.05 + item.size[2] / 2
        x, z = ax + ox * dist, az + oz * dist
        out.append(Spot(round(x, 3), round(z, 3), round(math.degrees(math.atan2(-ox, -oz)) % 360, 3)))
    return out


def find_spot(item: Item, floor: Floor, scene: dict[str, Any]) -> Spot | None:
    """The first free spot for ``item`` by its placement rule, falling back to the walls."""
    by_cat = {_category(o): o for o in scene["objects"]}
    candidates: list[Spot] = []
    kind, _, anchor_cat = item.place.partition(":")
    if kind in ("front", "around") and anchor_cat in by_cat:
        candidates += anchor_spots(item, by_cat[anchor_cat])
    elif kind == "center":
        c = floor.polygon.centroid
        candidates.append(Spot(round(c.x, 3), round(c.y, 3), 0.0))
    walls = wall_spots(floor, item.size)
    if item.near in by_cat:
        tx, tz = float(by_cat[item.near]["pos"][0]), float(by_cat[item.near]["pos"][2])
        walls.sort(key=lambda s: (round(math.hypot(s.x - tx, s.z - tz), 6), s.x, s.z))
    elif item.far in by_cat:
        walls.sort(key=lambda s: _across(s, by_cat[item.far]))
    elif walls:
        # Largest pieces centre on their wall; scanning from the middle out keeps them there.
        mid = len(walls) // 2
        first_wall = [s for s in walls if s.yaw_deg == walls[0].yaw_deg]
        centre = first_wall[len(first_wall) // 2] if first_wall else walls[mid]
        walls.sort(key=lambda s: (s.yaw_deg != centre.yaw_deg, round(math.hypot(s.x - centre.x, s.z - centre.z), 6)))
    for spot in [*candidates, *walls]:
        if floor.free(spot.shape(item.size)):
            return spot
    return None


_CATEGORIES = sorted({it.category for core, extra in TEMPLATES.values() for it in (*core, *extra)},
                     key=lambda c: (-len(c), c))


def _across(spot: Spot, anchor: dict[str, Any]) -> tuple[float, float]:
    """Sort key facing ``anchor`` from afar: the farthest wall first (distance along the
    spot's facing direction), then the spot most squarely across from it."""
    fx, fz = math.sin(math.radians(spot.yaw_deg)), math.cos(math.radians(spot.yaw_deg))
    dx, dz = float(anchor["pos"][0]) - spot.x, float(anchor["pos"][2]) - spot.z
    return (-round(abs(dx * fx + dz * fz), 2), round(abs(dx * fz - dz * fx), 3))


def _category(obj: dict[str, Any]) -> str:
    """The template category a description ends with (longest first: "armchair" before "chair")."""
    desc = str(obj.get("desc", "")).lower().strip()
    hit = next((c for c in _CATEGORIES if desc == c or desc.endswith(" " + c)), None)
    return hit or (desc.split()[-1] if desc else "")


def present_categories(scene: dict[str, Any]) -> list[str]:
    return [_category(o) for o in scene["objects"]]


def missing_items(items: list[Item], scene: dict[str, Any]) -> list[Item]:
    """Items not yet in the scene (counting repeats: two nightstands need two)."""
    have: dict[str, int] = {}
    for cat in present_categories(scene):
        have[cat] = have.get(cat, 0) + 1
    out = []
    for it in items:
        if have.get(it.category, 0) > 0:
            have[it.category] -= 1
        else:
            out.append(it)
    return out
