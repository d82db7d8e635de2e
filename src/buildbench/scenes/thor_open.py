"""Holodeck's ``open_walls``: the walls it removed between rooms joined without a wall.

Holodeck's wall generator, for each pair of rooms its door plan connects by an "open"
doorway, deletes every wall side whose first ``connected_rooms`` entry is the other room of
the pair, and records under the house's top-level ``open_walls`` each deleted wall's
``segment`` (its room's consecutive ``full_vertices`` ``[x, z]``, metres) once, a segment
and its reverse counting as one, plus two 0.5 m wide ``openWallBoxes`` per segment (the
strips either side, which its floor-object placer keeps clear). So in Holodeck's own
houses the walls named there are absent from ``walls``.

:func:`apply_open_walls` makes such a boundary an empty wall (:attr:`Wall.empty`), which
reachability, relations, out-of-bounds and the views treat as an opening:

* a wall side in ``walls`` (not an exterior twin) whose endpoints equal a segment's, in
  either order, to the millimetre (:func:`thor_parse.segment_key`), is read as empty;
* each edge of a room's ``full_vertices`` (its floor polygon where absent) equal to a
  segment and without such a wall side gets one rebuilt, empty, under the id Holodeck gave
  the deleted wall, ``wall|{room}|{direction}|{j}`` (``j`` the edge's index), as high as
  the room's other walls.

Matching is by the whole segment, as Holodeck deletes whole walls; ids are not recorded
there, so none are matched. Writing leaves the rebuilt walls out, writes no ``empty`` key
for an open wall, and copies ``open_walls`` as read, less the segments (and their two
boxes) whose walls were all made solid since.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from buildbench.scenes import thor_parse as tp
from buildbench.scenes.model import Point2, Room, Scene, Wall, wall_direction

SegmentKey = frozenset[Point2]


def apply_open_walls(house: dict[str, Any], rooms: list[Room], walls: list[Wall]) -> list[Wall]:
    """``walls`` with the sides ``open_walls`` lists made empty and the removed ones rebuilt."""
    keys = set(tp.open_wall_keys(house))
    if not keys:
        return walls
    for wall in walls:
        if not wall.exterior and tp.segment_key(wall.start, wall.end) in keys:
            wall.empty = True
    present = {(w.room_id, tp.segment_key(w.start, w.end)) for w in walls if not w.exterior}
    ids = {w.id for w in walls}
    rebuilt = []
    for i, room in enumerate(rooms):
        outline = _full_vertices(room, f"rooms[{i}]")
        for j, (start, end) in enumerate(zip(outline, outline[1:] + outline[:1], strict=True)):
            key = tp.segment_key(start, end)
            if key in keys and (room.id, key) not in present:
                wall = _rebuilt_wall(room, j, start, end, walls, ids)
                ids.add(wall.id)
                rebuilt.append(wall)
    return walls + rebuilt


def is_rebuilt(wall: Wall, keys: set[SegmentKey]) -> bool:
    """A wall :func:`apply_open_walls` rebuilt (no file record, still open, on a listed
    segment): it stays out of the written ``walls``, as in Holodeck's file."""
    return not wall.raw and wall.empty and not wall.exterior and tp.segment_key(wall.start, wall.end) in keys


def file_walls_only(scene: Scene) -> Scene:
    """``scene`` with only the walls its file lists (the rebuilt open walls left out), for
    readers that must answer as a tool reading the file does."""
    keys = scene_keys(scene)
    if not keys:
        return scene
    return dataclasses.replace(scene, walls=[w for w in scene.walls if not is_rebuilt(w, keys)])


def scene_keys(scene: Scene) -> set[SegmentKey]:
    """The open segments of the house ``scene`` was read from (none for a scene made in code)."""
    return set(tp.open_wall_keys(scene.raw)) if scene.raw else set()


def open_walls_record(scene: Scene, written: list[Wall]) -> Any:
    """``open_walls`` to write: as read, less each segment whose wall sides in ``written``
    exist and are all solid now (a segment with no wall left is kept, as Holodeck has it)."""
    value = copy.deepcopy(scene.raw["open_walls"])
    if not isinstance(value, dict) or not isinstance(value.get("segments"), list):
        return value
    keys = tp.open_wall_keys(scene.raw)
    sides: dict[SegmentKey, list[bool]] = {}
    for wall in written:
        if not wall.exterior:
            sides.setdefault(tp.segment_key(wall.start, wall.end), []).append(wall.empty)
    closed = [k for k, key in enumerate(keys) if sides.get(key) and not any(sides[key])]
    if not closed:
        return value
    boxes = value.get("openWallBoxes")
    value["segments"] = [s for k, s in enumerate(value["segments"]) if k not in closed]
    if isinstance(boxes, list) and len(boxes) == 2 * len(keys):  # Holodeck's two per segment
        value["openWallBoxes"] = [b for n, b in enumerate(boxes) if n // 2 not in closed]
    return value


def _full_vertices(room: Room, where: str) -> list[Point2]:
    points = room.raw.get("full_vertices")
    if not isinstance(points, list):
        return list(room.vertices)
    return [tp.xz_pair(p, f"{where}.full_vertices[{j}]") for j, p in enumerate(points)]


def _rebuilt_wall(room: Room, j: int, start: Point2, end: Point2, walls: list[Wall], ids: set[str]) -> Wall:
    own = [w for w in walls if w.room_id == room.id and not w.exterior] or walls
    top = max((w.bottom_y + w.height_m for w in own), default=room.floor_y)
    wall_id = f"wall|{room.id}|{wall_direction(start, end, room.vertices)}|{j}"
    if wall_id in ids:  # a file of another generator may use the id for a wall still there
        wall_id += "|open"
    return Wall(wall_id, room.id, start, end, top - room.floor_y, room.wall_material,
                bottom_y=room.floor_y, empty=True)
