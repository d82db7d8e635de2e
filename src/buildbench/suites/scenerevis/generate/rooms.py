"""A seeded generator of plausible furnished rooms, the source rooms when 3D-FRONT is absent
(spec §7.2 item 7): bedroom, living room, dining room, study room, office, gym and
entertainment room.

A room is a rectangle (three in four) or an L (a corner cut away), centred on the origin,
with an area drawn from its type's range (:data:`.assets.ROOM_AREA_M2`) and a 2.6–2.9 m
ceiling. Furniture comes from the type's template: every core piece, then 2 to all of the
optional ones, each with a size drawn from its category's prior and placed by kind:

* ``wall``: back against a wall, 2 cm off it, front facing into the room;
* ``beside``: next to its anchor (nightstand by the bed…), backs aligned, same facing;
* ``front``: in front of its anchor and facing it (chair at the desk; dining chairs go
  round the table, side after side);
* ``surface``: standing on its anchor's top (lamp on a nightstand);
* ``center``: the middle of the room, square to the walls; ``floor``: anywhere free.

A placement is accepted only when the footprint lies inside the floor polygon and touches
no placed box (flat rugs and mats excepted); 30 tries, then the piece is left out. The room
is kept only if it passes the §3.1 source filter; otherwise the next draw is made.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .assets import CATEGORIES, ROOM_AREA_M2, ROOM_TEMPLATES, STYLES, CategorySpec, describe
from .diagnose import overlap_depth_xz, point_in_polygon
from .flat import Obj, Scene, footprint_xz, yaw_quat

ROOM_TYPES = tuple(ROOM_TEMPLATES)
WALL_GAP_M = 0.02
TRIES = 30
_FLAT = ("rug", "yoga mat")


def _outline(rng: np.random.Generator, area_m2: float) -> list[tuple[float, float]]:
    aspect = float(rng.uniform(1.0, 1.6))
    w = round(math.sqrt(area_m2 * aspect) * 20) / 20
    d = round(area_m2 / w * 20) / 20
    x0, x1, z0, z1 = -w / 2, w / 2, -d / 2, d / 2
    if rng.random() < 0.75:
        return [(x0, z1), (x1, z1), (x1, z0), (x0, z0)]
    cx = round(float(rng.uniform(0.25, 0.4)) * w * 20) / 20
    cz = round(float(rng.uniform(0.25, 0.4)) * d * 20) / 20
    return [(x0, z1), (x1 - cx, z1), (x1 - cx, z1 - cz), (x1, z1 - cz), (x1, z0), (x0, z0)]


def _obj(spec: CategorySpec, size: list[float], x: float, y: float, z: float, yaw: float, desc: str) -> Obj:
    return {"desc": desc, "size": size, "pos": [round(x, 3), round(y, 3), round(z, 3)],
            "rot": yaw_quat(yaw % 360.0), "jid": f"gen-{spec.name.replace(' ', '-')}", "_yaw": yaw % 360.0}


def _fits(o: Obj, placed: list[Obj], poly: list[tuple[float, float]]) -> bool:
    fp = footprint_xz(o)
    if not all(point_in_polygon(poly, x, z) for x, z in fp):
        return False
    if any(c in o["desc"].lower() for c in _FLAT):
        return True
    y0, y1 = o["pos"][1], o["pos"][1] + o["size"][1]
    for p in placed:
        if any(c in p["desc"].lower() for c in _FLAT):
            continue
        if min(y1, p["pos"][1] + p["size"][1]) - max(y0, p["pos"][1]) <= 0.0:
            continue
        if overlap_depth_xz(fp, footprint_xz(p)) > 0.0:
            return False
    return True


def _front(yaw: float) -> tuple[float, float]:
    r = math.radians(yaw)
    return math.sin(r), math.cos(r)


class _Placer:
    def __init__(self, rng: np.random.Generator, poly: list[tuple[float, float]], style: str) -> None:
        self.rng, self.poly, self.style = rng, poly, style
        self.placed: list[Obj] = []
        self.around: dict[str, int] = {}

    def _size(self, spec: CategorySpec) -> list[float]:
        return [round(float(self.rng.uniform(lo, hi)), 2) for lo, hi in spec.size_m]

    def _candidates(self, spec: CategorySpec, size: list[float]) -> Iterator[tuple[float, float, float, float, str]]:
        """``(x, y, z, yaw, anchor desc or "")`` proposals for one piece, TRIES of them."""
        rng, poly = self.rng, self.poly
        anchors = [p for p in self.placed if p["desc"].lower().find(spec.anchor) >= 0] if spec.anchor else []
        for _ in range(TRIES):
            if spec.placement in ("beside", "front", "surface") and anchors:
                a = anchors[int(rng.integers(len(anchors)))]
                fx, fz = _front(a["_yaw"])
                rx, rz = fz, -fx  # the anchor's local +x on the floor
                ax, az = a["pos"][0], a["pos"][2]
                if spec.placement == "beside":
                    side = 1 if rng.random() < 0.5 else -1
                    lat = side * (a["size"][0] / 2 + size[0] / 2 + 0.05)
                    back = -a["size"][2] / 2 + size[2] / 2
                    yield ax + rx * lat + fx * back, 0.0, az + rz * lat + fz * back, a["_yaw"], ""
                elif spec.placement == "surface":
                    yield (ax + float(rng.uniform(-0.05, 0.05)), a["pos"][1] + a["size"][1],
                           az + float(rng.uniform(-0.05, 0.05)), a["_yaw"], "")
                else:
                    k = self.around.get(a["desc"], 0)
                    turn = 90.0 * (k % 4) if spec.name == "dining chair" else 0.0
                    yaw = a["_yaw"] + turn
                    gx, gz = _front(yaw)
                    reach = (a["size"][2] if turn % 180 == 0 else a["size"][0]) / 2 + size[2] / 2 + 0.12
                    lat = float(rng.uniform(-0.25, 0.25)) * (a["size"][0] if turn % 180 == 0 else a["size"][2])
                    yield (ax + gx * reach + gz * lat, 0.0, az + gz * reach - gx * lat, yaw + 180.0, a["desc"])
                continue
            if spec.placement == "wall":
                k = int(rng.integers(len(poly)))
                (x0, z0), (x1, z1) = poly[k], poly[(k + 1) % len(poly)]
                length = math.hypot(x1 - x0, z1 - z0)
                if length < size[0] + 0.1:
                    continue
                t = float(rng.uniform(size[0] / 2 + 0.05, length - size[0] / 2 - 0.05)) / length
                dx, dz = (x1 - x0) / length, (z1 - z0) / length
                mx, mz = x0 + t * (x1 - x0), z0 + t * (z1 - z0)
                for nx, nz in ((-dz, dx), (dz, -dx)):  # the inward normal is the one whose point is inside
                    off = size[2] / 2 + WALL_GAP_M
                    if point_in_polygon(poly, mx + nx * 0.05, mz + nz * 0.05):
                        yield mx + nx * off, 0.0, mz + nz * off, math.degrees(math.atan2(nx, nz)), ""
                        break
                continue
            xs, zs = [p[0] for p in poly], [p[1] for p in poly]
            if spec.placement == "center":
                yaw = 0.0 if (max(zs) - min(zs)) >= (max(xs) - min(xs)) else 90.0
                yield float(rng.uniform(-0.3, 0.3)), 0.0, float(rng.uniform(-0.3, 0.3)), yaw, ""
            else:
                yield (float(rng.uniform(min(xs), max(xs))), 0.0, float(rng.uniform(min(zs), max(zs))),
                       90.0 * int(rng.integers(4)), "")

    def place(self, name: str) -> None:
        spec = CATEGORIES[name]
        size = self._size(spec)
        desc = describe(name, self.rng, self.style)
        for x, y, z, yaw, anchor in self._candidates(spec, size):
            o = _obj(spec, size, x, y, z, yaw, desc)
            if _fits(o, self.placed, self.poly):
                self.placed.append(o)
                if anchor:
                    self.around[anchor] = self.around.get(anchor, 0) + 1
                return


def furnished_room(room_type: str, rng: np.random.Generator, room_id: str) -> Scene:
    """One room of ``room_type`` (not yet filtered)."""
    lo, hi = ROOM_AREA_M2[room_type]
    poly = _outline(rng, float(rng.uniform(lo, hi)))
    ceiling = round(float(rng.uniform(2.6, 2.9)), 2)
    placer = _Placer(rng, poly, STYLES[int(rng.integers(len(STYLES)))])
    core, optional = ROOM_TEMPLATES[room_type]
    n_opt = int(rng.integers(2, len(optional) + 1))
    picks = [optional[i] for i in sorted(rng.choice(len(optional), size=n_opt, replace=False))]
    for name in (*core, *picks):
        placer.place(name)
    objects = [{"id": f"obj_{k + 1}", **{key: v for key, v in o.items() if key != "_yaw"}}
               for k, o in enumerate(placer.placed)]
    return {"room_type": room_type, "room_id": room_id,
            "bounds_top": [[x, ceiling, z] for x, z in poly],
            "bounds_bottom": [[x, 0.0, z] for x, z in poly], "objects": objects}


def generate_rooms(n: int, seed: int, room_types: tuple[str, ...] = ROOM_TYPES) -> list[Scene]:
    """``n`` rooms that pass the §3.1 filter, types in turn; room i draws from
    ``default_rng([seed, i])`` until one passes (at most 50 draws)."""
    from .diagnose import passes_source_filter

    unknown = [t for t in room_types if t not in ROOM_TEMPLATES]
    if unknown:
        raise ValueError(f"room type {unknown[0]!r} is not one of {', '.join(ROOM_TYPES)}")
    rooms = []
    for i in range(n):
        rtype = room_types[i % len(room_types)]
        rng = np.random.default_rng([seed, i])
        for attempt in range(50):
            room = furnished_room(rtype, rng, f"Gen-{rtype.title().replace(' ', '')}-{seed}-{i}-{attempt}")
            if passes_source_filter(room):
                rooms.append(room)
                break
        else:
            raise RuntimeError(f"room {i} ({rtype}): no draw passed the source filter in 50 tries")
    return rooms
