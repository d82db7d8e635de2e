"""Open floor plans: rooms joined by empty (invisible) walls instead of walls or doors.

ProcTHOR writes ``"empty": true`` on the wall sides between rooms it joins without a wall
(:attr:`buildbench.scenes.model.Wall.empty`). These helpers find which rooms such walls
join, for the relations and checks that treat an open boundary as an opening.
"""

from __future__ import annotations

from shapely.geometry import Point

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import SceneIndex

#: An empty wall joins the rooms whose outline its midpoint lies within this many metres
#: of (files round coordinates).
SHARED_TOL_M = 0.05


def open_plan_joins(scene: Scene, index: SceneIndex) -> dict[str, tuple[str, ...]]:
    """For each room, the other rooms its empty (invisible) walls open onto directly: an
    empty wall of one room lying on another room's outline (midpoint within 5 cm)."""

    def make() -> dict[str, tuple[str, ...]]:
        joins: dict[str, set[str]] = {rid: set() for rid in index.rooms}
        for w in scene.walls:
            if not w.empty or w.exterior or w.room_id not in index.rooms:
                continue
            mid = Point((w.start[0] + w.end[0]) / 2, (w.start[1] + w.end[1]) / 2)
            for rid, g in index.rooms.items():
                if rid != w.room_id and g.polygon.exterior.distance(mid) <= SHARED_TOL_M:
                    joins[w.room_id].add(rid)
                    joins[rid].add(w.room_id)
        return {rid: tuple(sorted(others)) for rid, others in joins.items()}

    result: dict[str, tuple[str, ...]] = index.memo("open_plan_joins", make)
    return result


def open_space(scene: Scene, index: SceneIndex, room_id: str) -> tuple[str, ...]:
    """``room_id`` and every room reached from it through empty walls (one open floor
    plan), in sorted order after ``room_id`` itself."""
    joins = open_plan_joins(scene, index)
    seen, todo = {room_id}, [room_id]
    while todo:
        for other in joins.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return (room_id, *sorted(seen - {room_id}))


def open_walls_between(scene: Scene, index: SceneIndex, room_a: str, room_b: str) -> list[str]:
    """Empty walls of either room lying on the other room's outline (within 5 cm)."""
    found = []
    for room, other in ((room_a, room_b), (room_b, room_a)):
        outline = index.rooms[other].polygon.exterior
        for w in scene.walls_of(room):
            mid = Point((w.start[0] + w.end[0]) / 2, (w.start[1] + w.end[1]) / 2)
            if w.empty and outline.distance(mid) <= SHARED_TOL_M:
                found.append(w.id)
    return found
