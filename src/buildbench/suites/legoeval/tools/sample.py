"""A seeded sample house built straight from the scene model, for tool timing and examples.

A row of rectangular rooms along +x (Holodeck-style ids, walls with both sides and exterior
twins, a door between neighbours and one to the outside, a window per room), furnished with
floor objects on a grid and small objects on some of them. Any size: the tool benchmark's
5-room, 150-object house is ``sample_house(5, 150)``.
"""

from __future__ import annotations

import numpy as np

from buildbench.scenes.catalogue import AssetInfo, default_catalogue
from buildbench.scenes.model import EXTERIOR, Opening, Room, Scene, SceneObject, Wall, yaw_quat_xyzw

ROOM_TYPES = ("living room", "bedroom", "kitchen", "bathroom", "office", "dining room")
#: Material names of the catalogue's table (so renderers and checkers know their colours).
FLOOR_MATERIALS = ("DarkWoodFloors", "WhiteMarble", "CarpetWhite", "BedroomCarpet", "CeramicTiles1")
WALL_MATERIALS = ("BeigePaint", "YellowDrywall", "RedBrick", "BrownDrywall", "Walldrywall4Tiled")
FURNITURE = ("bed", "sofa", "table", "chair", "desk", "bookshelf", "armchair", "floor lamp", "plant", "tv stand")
SMALL = ("book", "vase")
ROOM_W_M, ROOM_D_M, WALL_H_M = 5.0, 4.0, 2.7


def _walls(room: Room, index: int, n_rooms: int) -> list[Wall]:
    (x0, z0), (x1, z1) = room.vertices[0], room.vertices[2]
    sides = {"south": ((x0, z0), (x1, z0)), "east": ((x1, z0), (x1, z1)),
             "north": ((x1, z1), (x0, z1)), "west": ((x0, z1), (x0, z0))}
    walls = []
    for direction, (a, b) in sides.items():
        wid = f"wall|{room.id}|{direction}|0"
        raw = {"direction": direction}
        walls.append(Wall(wid, room.id, a, b, WALL_H_M, room.wall_material, raw=raw))
        shared = (direction == "east" and index < n_rooms - 1) or (direction == "west" and index > 0)
        if not shared:
            walls.append(Wall(f"{wid}|exterior", room.id, b, a, WALL_H_M, "Walldrywall4Tiled", exterior=True,
                              raw=raw))
    return walls


def _asset(category: str, rng: np.random.Generator) -> AssetInfo:
    assets = default_catalogue().by_category(category)
    return assets[int(rng.integers(len(assets)))]


def sample_house(n_rooms: int = 5, n_objects: int = 150, seed: int = 0) -> Scene:
    """A house of ``n_rooms`` 5 x 4 m rooms and ``n_objects`` objects (about one in five small)."""
    if n_rooms < 1 or n_objects < 0:
        raise ValueError(f"sample_house: need n_rooms >= 1 and n_objects >= 0, got {n_rooms}, {n_objects}")
    rng = np.random.default_rng([seed, n_rooms, n_objects])
    scene = Scene(source_format="")
    for i in range(n_rooms):
        x0 = i * ROOM_W_M
        rtype = ROOM_TYPES[i % len(ROOM_TYPES)]
        rid = rtype if i < len(ROOM_TYPES) else f"{rtype}-{i}"
        room = Room(rid, [(x0, 0.0), (x0 + ROOM_W_M, 0.0), (x0 + ROOM_W_M, ROOM_D_M), (x0, ROOM_D_M)],
                    room_type=rtype, floor_material=FLOOR_MATERIALS[i % 5], wall_material=WALL_MATERIALS[i % 5],
                    ceiling_y=WALL_H_M)
        scene.rooms.append(room)
        scene.walls.extend(_walls(room, i, n_rooms))
    for i, room in enumerate(scene.rooms):
        if i + 1 < n_rooms:
            other = scene.rooms[i + 1]
            scene.doors.append(Opening(f"door|{i}|{room.id}|{other.id}", "door", "Doorframe_1", room.id, other.id,
                                       f"wall|{room.id}|east|0", f"wall|{other.id}|west|0",
                                       (1.5, 0.0), (2.5, 2.1), openable=True, openness=1.0))
        scene.windows.append(Opening(f"window|wall|{room.id}|north|0|0", "window", "Window_Fixed_36x48",
                                     room.id, room.id, f"wall|{room.id}|north|0",
                                     f"wall|{room.id}|north|0|exterior", (1.0, 0.9), (2.5, 2.1)))
    first = scene.rooms[0]
    scene.doors.append(Opening(f"door|{n_rooms}|{EXTERIOR}|{first.id}", "door", "Doorframe_1", EXTERIOR, first.id,
                               f"wall|{first.id}|south|0", f"wall|{first.id}|south|0|exterior",
                               (2.0, 0.0), (3.0, 2.1)))
    _furnish(scene, rng, n_objects)
    return scene


def _furnish(scene: Scene, rng: np.random.Generator, n_objects: int) -> None:
    n_small = n_objects // 5
    n_floor = n_objects - n_small
    counts: dict[str, int] = {}
    floor_objects: list[SceneObject] = []
    for k in range(n_floor):
        room = scene.rooms[k % len(scene.rooms)]
        slot = k // len(scene.rooms)
        asset = _asset(FURNITURE[int(rng.integers(len(FURNITURE)))], rng)
        category, size = asset.category, asset.size_m
        (x0, z0) = room.vertices[0]
        # Centres on a 6 x 5 grid of cells; big pieces may overlap (a timing fixture, not a tidy room).
        cx = x0 + 0.5 + 0.8 * (slot % 6) + 0.02 * (slot // 30)
        cz = z0 + 0.5 + 0.75 * ((slot // 6) % 5)
        yaw = float(rng.choice([0.0, 90.0, 180.0, 270.0]))
        n = counts.get(category, 0)
        counts[category] = n + 1
        obj = SceneObject(f"{category}-{n} ({room.id})", category, asset.asset_id,
                          (round(cx, 3), size[1] / 2, round(cz, 3)), size, yaw_quat_xyzw(yaw), room.id,
                          attributes={"color": asset.color, "material": asset.material})
        floor_objects.append(obj)
    scene.objects.extend(floor_objects)
    for k in range(n_small):
        parent = floor_objects[k % len(floor_objects)] if floor_objects else None
        if parent is None:
            break
        asset = _asset(SMALL[k % len(SMALL)], rng)
        category, size = asset.category, asset.size_m
        n = counts.get(category, 0)
        counts[category] = n + 1
        top = parent.center[1] + parent.size[1] / 2
        scene.objects.append(SceneObject(
            f"{category}-{n}|{parent.id}", category, asset.asset_id,
            (parent.center[0], top + size[1] / 2, parent.center[2]), size, (0.0, 0.0, 0.0, 1.0), parent.room_id,
            parent_id=parent.id, attributes={"color": asset.color, "material": asset.material}))
