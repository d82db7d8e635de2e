"""Seeded multi-room houses built with :class:`~buildbench.scenes.build.HouseBuilder`.

A house is one or two rows of rectangular rooms (3–6 m sides, Holodeck's guideline),
each of a distinct type, joined by doors along a spanning tree of the rooms sharing a
wall at least :data:`_MIN_DOOR_WALL_M` long, with one door to the outside and a few
windows in outside walls. Rooms are furnished from per-type lists: wall pieces stand
with their backs against a wall facing in, centre pieces near the middle, corner pieces
in corners, chairs facing their table, small objects on receptacles; floor objects do not
overlap (rugs excepted). Assets are the catalogue's generic variants, so two scenes can
differ in exactly one attribute of one object.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from shapely.geometry import Polygon

from buildbench.scenes.build import BuildError, HouseBuilder
from buildbench.scenes.catalogue import MATERIALS, AssetInfo, default_catalogue
from buildbench.scenes.model import Scene

ROOM_TYPES: tuple[str, ...] = ("living room", "kitchen", "bedroom", "bathroom", "dining room", "office")
#: Floor furniture per room type: (category, placement rule); the first two always appear.
FURNITURE: dict[str, tuple[tuple[str, str], ...]] = {
    "living room": (("sofa", "wall"), ("coffee table", "centre"), ("tv stand", "wall"), ("armchair", "free"),
                    ("rug", "rug"), ("floor lamp", "corner"), ("plant", "corner"), ("bookshelf", "wall"),
                    ("side table", "free")),
    "kitchen": (("fridge", "wall"), ("kitchen counter", "wall"), ("oven", "wall"), ("garbage can", "corner"),
                ("table", "centre"), ("stool", "free"), ("cabinet", "wall")),
    "bedroom": (("bed", "wall"), ("nightstand", "wall"), ("wardrobe", "wall"), ("dresser", "wall"),
                ("desk", "wall"), ("rug", "rug"), ("plant", "corner"), ("armchair", "free")),
    "bathroom": (("toilet", "wall"), ("sink", "wall"), ("bathtub", "wall"), ("garbage can", "corner"),
                 ("washing machine", "wall"), ("cabinet", "wall")),
    "dining room": (("dining table", "centre"), ("chair", "chairs"), ("cabinet", "wall"), ("plant", "corner"),
                    ("rug", "rug"), ("shelf", "wall")),
    "office": (("desk", "wall"), ("office chair", "desk chair"), ("bookshelf", "wall"), ("shelf", "wall"),
               ("floor lamp", "corner"), ("plant", "corner"), ("armchair", "free")),
}
#: Small objects a receptacle may carry.
SMALL_ON: dict[str, tuple[str, ...]] = {
    "tv stand": ("tv",), "coffee table": ("vase", "book", "candle"), "nightstand": ("table lamp", "alarm clock"),
    "desk": ("laptop", "table lamp", "mug"), "dining table": ("plate", "bowl", "vase"),
    "kitchen counter": ("microwave", "bowl", "cup"), "table": ("bowl", "mug", "plate"),
    "side table": ("table lamp", "vase"), "dresser": ("statue", "vase"), "bookshelf": ("book", "box"),
    "shelf": ("book", "statue"), "cabinet": ("vase", "box"),
}
FLOOR_FAMILIES: tuple[str, ...] = ("wood", "stone", "ceramic", "fabric", "concrete")
WALL_FAMILIES: tuple[str, ...] = ("paint", "brick", "wood", "stone", "ceramic")
_MIN_DOOR_WALL_M = 1.3
_GAP_M = 0.03
_CLEARANCE_M = 0.05
#: Yaw (degrees) that turns an object's front away from a wall on each side of the room.
_FACING_IN = {"south": 0.0, "north": 180.0, "west": 90.0, "east": 270.0}


@dataclass(frozen=True)
class RoomPlan:
    id: str
    rect: tuple[float, float, float, float]  # x0, z0, x1, z1 metres


def generic_assets(category: str) -> list[AssetInfo]:
    """The catalogue's own variants of a category (distinct colour/material/shape)."""
    return [a for a in default_catalogue().by_category(category) if a.source == "buildbench"]


def surface_materials(families: tuple[str, ...]) -> list[str]:
    """Material names of the given families, in catalogue order."""
    return [name for name, (_, family, _) in MATERIALS.items() if family in families]


def _steps(rng: np.random.Generator, lo: float, hi: float, step: float = 0.5) -> float:
    return float(lo + step * rng.integers(0, int(round((hi - lo) / step)) + 1))


def plan_rooms(rng: np.random.Generator, n_rooms: int) -> list[RoomPlan]:
    """Rectangles for ``n_rooms`` rooms in one row (≤ 3) or two rows sharing the width."""
    types = [ROOM_TYPES[i] for i in rng.permutation(len(ROOM_TYPES))[:n_rooms]]
    if "living room" not in types:
        types[0] = "living room"
    rows = [n_rooms] if n_rooms <= 3 else [n_rooms - n_rooms // 2, n_rooms // 2]
    widths0 = [_steps(rng, 3.0, 6.0) for _ in range(rows[0])]
    total = sum(widths0)
    rects: list[tuple[float, float, float, float]] = []
    depth0 = _steps(rng, 3.0, 5.5)
    x = 0.0
    for w in widths0:
        rects.append((x, 0.0, x + w, depth0))
        x += w
    if len(rows) == 2:
        depth1 = _steps(rng, 3.0, 5.0)
        k = rows[1]
        cuts = _split(rng, total, k)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            rects.append((a, depth0, b, depth0 + depth1))
    return [RoomPlan(t, r) for t, r in zip(types, rects, strict=True)]


def _split(rng: np.random.Generator, total: float, k: int) -> list[float]:
    """``k`` spans of at least 3 m covering ``[0, total]`` (0.5 m grid)."""
    spare = total - 3.0 * k
    extra = rng.dirichlet(np.ones(k)) * spare
    widths = [3.0 + math.floor(e * 2) / 2 for e in extra]
    widths[-1] += total - sum(widths)
    cuts = [0.0]
    for w in widths:
        cuts.append(cuts[-1] + w)
    return cuts


def _shared_length(a: RoomPlan, b: RoomPlan) -> float:
    return float(Polygon(_corners(a.rect)).buffer(1e-6).intersection(Polygon(_corners(b.rect)).buffer(1e-6)).length / 2)


def _corners(r: tuple[float, float, float, float]) -> list[tuple[float, float]]:
    x0, z0, x1, z1 = r
    return [(x0, z0), (x0, z1), (x1, z1), (x1, z0)]


def door_tree(rng: np.random.Generator, rooms: list[RoomPlan]) -> list[tuple[str, str]]:
    """Pairs of rooms to join with a door: a random spanning tree over wide shared walls."""
    edges = [(a.id, b.id) for i, a in enumerate(rooms) for b in rooms[i + 1:]
             if _shared_length(a, b) >= _MIN_DOOR_WALL_M]
    order = [edges[i] for i in rng.permutation(len(edges))]
    parent = {r.id: r.id for r in rooms}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    chosen = []
    for a, b in order:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            chosen.append((a, b))
    return chosen


def _outside_directions(rect: tuple[float, float, float, float], bounds: tuple[float, float, float, float]) -> list[str]:
    x0, z0, x1, z1 = rect
    bx0, bz0, bx1, bz1 = bounds
    out = []
    for name, edge, limit in (("south", z0, bz0), ("north", z1, bz1), ("west", x0, bx0), ("east", x1, bx1)):
        if abs(edge - limit) < 1e-6:
            out.append(name)
    return out


def build_house(rng: np.random.Generator, n_rooms: int) -> Scene:
    """A furnished house of ``n_rooms`` rooms (2–6)."""
    plans = plan_rooms(rng, n_rooms)
    floors, walls = surface_materials(FLOOR_FAMILIES), surface_materials(WALL_FAMILIES)
    b = HouseBuilder()
    for p in plans:
        b.room(p.id, p.rect, room_type=p.id, floor_material=floors[int(rng.integers(len(floors)))],
               wall_material=walls[int(rng.integers(len(walls)))])
    # Rooms are joined by doors only, never by an open (empty) wall: the furnishing rules
    # stand wall pieces against any side of a room, which an open boundary could not hold.
    for a, c in door_tree(rng, plans):
        _door(b, a, c, float(rng.uniform(0.2, 0.8)))
    bounds = (min(p.rect[0] for p in plans), min(p.rect[1] for p in plans),
              max(p.rect[2] for p in plans), max(p.rect[3] for p in plans))
    living = next(p for p in plans if p.id == "living room")
    outside = _outside_directions(living.rect, bounds)
    b.door(living.id, "exterior", direction=outside[int(rng.integers(len(outside)))], along=0.5)
    for p in plans:
        dirs = _outside_directions(p.rect, bounds)
        for d in [dirs[i] for i in rng.permutation(len(dirs))[: int(rng.integers(0, 3))]]:
            try:
                b.window(p.id, d, along=float(rng.uniform(0.2, 0.8)))
            except BuildError:
                continue  # the wall is taken by the outside door there; another wall will do
    for p in plans:
        Furnisher(b, rng, p).furnish()
    return b.build()


def _door(b: HouseBuilder, a: str, c: str, along: float) -> None:
    """A door between ``a`` and ``c``; where another door already takes that spot of the
    wall, the ends of the wall are tried."""
    for i, pos in enumerate((along, 0.0, 1.0)):
        try:
            b.door(a, c, along=pos)
            return
        except BuildError:
            if i == 2:
                raise


class Furnisher:
    """Places one room's furniture without floor overlaps."""

    def __init__(self, builder: HouseBuilder, rng: np.random.Generator, plan: RoomPlan) -> None:
        self.b, self.rng, self.plan = builder, rng, plan
        self.taken: list[Polygon] = []
        self.placed: dict[str, list[str]] = {}
        self.poses: dict[str, tuple[AssetInfo, tuple[float, float, float]]] = {}

    def furnish(self) -> None:
        items = FURNITURE[self.plan.id]
        extra = [items[i] for i in 2 + self.rng.permutation(len(items) - 2)[: int(self.rng.integers(1, 5))]]
        for category, rule in [*items[:2], *extra]:
            self._place(category, rule)
        for parent_cat, ids in list(self.placed.items()):
            for pid in ids:
                self._decorate(parent_cat, pid)

    def _asset(self, category: str) -> AssetInfo:
        pool = generic_assets(category)
        return pool[int(self.rng.integers(len(pool)))]

    def _place(self, category: str, rule: str) -> None:
        if rule == "chairs":
            self._chairs("dining table", category, int(self.rng.integers(2, 5)))
            return
        if rule == "desk chair":
            self._chairs("desk", category, 1)
            return
        asset = self._asset(category)
        for _ in range(40):
            pose = self._pose(asset, rule)
            if pose is not None and self._free(asset, pose, flat=rule == "rug"):
                self._commit(asset, pose, flat=rule == "rug")
                return

    def _pose(self, asset: AssetInfo, rule: str) -> tuple[float, float, float] | None:
        x0, z0, x1, z1 = self.plan.rect
        rng = self.rng
        if rule == "wall":
            side = ("south", "north", "west", "east")[int(rng.integers(4))]
            yaw = _FACING_IN[side]
            hx, hz = _half_extents(asset, yaw)
            if side in ("south", "north"):
                if x1 - x0 < 2 * hx:
                    return None
                z = z0 + hz + _GAP_M if side == "south" else z1 - hz - _GAP_M
                return float(rng.uniform(x0 + hx, x1 - hx)), z, yaw
            if z1 - z0 < 2 * hz:
                return None
            x = x0 + hx + _GAP_M if side == "west" else x1 - hx - _GAP_M
            return x, float(rng.uniform(z0 + hz, z1 - hz)), yaw
        yaw = float(90 * rng.integers(4))
        hx, hz = _half_extents(asset, yaw)
        if rule == "corner":
            cx = x0 + hx + _GAP_M if rng.integers(2) else x1 - hx - _GAP_M
            cz = z0 + hz + _GAP_M if rng.integers(2) else z1 - hz - _GAP_M
            return cx, cz, yaw
        if rule in ("centre", "rug"):
            mx, mz = (x0 + x1) / 2, (z0 + z1) / 2
            return mx + float(rng.uniform(-0.3, 0.3)), mz + float(rng.uniform(-0.3, 0.3)), yaw
        if x1 - x0 < 2 * hx + 0.2 or z1 - z0 < 2 * hz + 0.2:
            return None
        return float(rng.uniform(x0 + hx + 0.1, x1 - hx - 0.1)), float(rng.uniform(z0 + hz + 0.1, z1 - hz - 0.1)), yaw

    def _footprint(self, asset: AssetInfo, pose: tuple[float, float, float]) -> Polygon:
        hx, hz = _half_extents(asset, pose[2])
        x, z = pose[0], pose[1]
        return Polygon([(x - hx, z - hz), (x - hx, z + hz), (x + hx, z + hz), (x + hx, z - hz)])

    def _free(self, asset: AssetInfo, pose: tuple[float, float, float], *, flat: bool = False) -> bool:
        fp = self._footprint(asset, pose)
        room = Polygon(_corners(self.plan.rect))
        if not room.buffer(1e-6).contains(fp):
            return False
        return flat or all(fp.distance(t) > _CLEARANCE_M for t in self.taken)

    def _commit(self, asset: AssetInfo, pose: tuple[float, float, float], *, flat: bool = False) -> str:
        oid = self.b.place(asset.asset_id, self.plan.id, center_xz=(pose[0], pose[1]), yaw_deg=pose[2])
        if not flat:
            self.taken.append(self._footprint(asset, pose))
        self.placed.setdefault(asset.category, []).append(oid)
        self.poses[oid] = (asset, pose)
        return oid

    def _chairs(self, table_cat: str, category: str, n: int) -> None:
        tables = self.placed.get(table_cat, [])
        if not tables:
            return
        table, (tx, tz, yaw) = self.poses[tables[0]]
        asset = self._asset(category)
        hx, hz = _half_extents(table, yaw)
        spots = [(tx, tz - hz - 0.35, 0.0), (tx, tz + hz + 0.35, 180.0),
                 (tx - hx - 0.35, tz, 90.0), (tx + hx + 0.35, tz, 270.0)]
        for i in self.rng.permutation(len(spots)):
            if n == 0:
                break
            pose = spots[int(i)]
            if self._free(asset, pose):
                self._commit(asset, pose)
                n -= 1

    def _decorate(self, parent_cat: str, parent_id: str) -> None:
        options = SMALL_ON.get(parent_cat, ())
        if not options or self.rng.random() < 0.3:
            return
        category = options[int(self.rng.integers(len(options)))]
        self.b.place(self._asset(category).asset_id, self.plan.id, on=parent_id)


def _half_extents(asset: AssetInfo, yaw_deg: float) -> tuple[float, float]:
    sx, _, sz = asset.size_m
    if round(yaw_deg) % 180 == 90:
        sx, sz = sz, sx
    return sx / 2, sz / 2
