"""Candidate constraints about a scene, by type; the caller keeps the ones that hold.

Each generator proposes programs read off the scene (room names, materials, asset
attributes, object pairs with a relation drawn at random) in a seeded random order. They
are proposals, not facts: :func:`true_facts` checks each with the deterministic checker
and keeps those that hold, so an aligned scene satisfies its instruction by construction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from buildbench.scenes.catalogue import material_info
from buildbench.scenes.model import Scene, SceneObject, wall_direction

from ..check.evaluate import check
from ..check.select import Candidate, candidates, visible_walls
from ..constraints import (
    BINARY_RELATIONS,
    OBJECT_RELATIONS,
    TERNARY_RELATIONS,
    Attribute,
    Count,
    Layout,
    Material,
    Program,
    Quant,
    Relation,
    RoomRelation,
    Selector,
    render,
)
from .house import FURNITURE

Proposer = Callable[[Scene, np.random.Generator], Iterator[Program]]


def _pick(rng: np.random.Generator, items: list) -> object:
    return items[int(rng.integers(len(items)))]


def _floor_objects(scene: Scene, room_id: str) -> list[SceneObject]:
    return [o for o in scene.objects_in(room_id) if o.parent_id is None and o.category != "rug"]


def _same_category(scene: Scene, o: SceneObject) -> int:
    return sum(1 for x in scene.objects_in(o.room_id) if x.category == o.category)


def _selector(scene: Scene, o: SceneObject) -> tuple[Selector, Quant]:
    unique = _same_category(scene, o) == 1
    return Selector(o.category, room=o.room_id), Quant("all" if unique else "exists")


def propose_layout(scene: Scene, rng: np.random.Generator) -> Iterator[Program]:
    """FL: doors, windows, room count and areas, adjacency, size order, room existence."""
    rooms = scene.rooms
    while True:
        kind = int(rng.integers(8))
        room = rooms[int(rng.integers(len(rooms)))]
        if kind in (0, 1) and scene.doors:
            d = scene.doors[int(rng.integers(len(scene.doors)))]
            yield Layout("door_between", rooms=(d.room0, d.room1) if rng.integers(2) else (d.room1, d.room0))
        elif kind == 2:
            windows = [w for w in scene.windows if w.room0 == room.id]
            if windows and rng.integers(2):
                w = windows[int(rng.integers(len(windows)))]
                wall = scene.wall(w.wall0)
                yield Layout("window_count", room=room.id, direction=wall_direction(wall.start, wall.end, room.vertices),
                             cmp="ge", n=1)
            else:
                n = len(windows)
                yield Layout("window_count", room=room.id, cmp="eq" if rng.integers(2) or n == 0 else "ge", n=n)
        elif kind == 3:
            a = room.area_m2
            if rng.integers(2):
                yield Layout("room_area", room=room.id, min_m2=float(max(0, math.floor(a) - int(rng.integers(0, 4)))),
                             max_m2=float(math.ceil(a) + int(rng.integers(0, 4))))
            else:
                yield Layout("room_area", room=room.id, min_m2=float(max(0, math.floor(a) - int(rng.integers(0, 4)))))
        elif kind == 4:
            other = rooms[int(rng.integers(len(rooms)))]
            yield RoomRelation("adjacent_rooms", room.id, other.id)
        elif kind == 5:
            other = rooms[int(rng.integers(len(rooms)))]
            yield RoomRelation("larger_room", room.id, other.id)
        elif kind == 6:
            yield Layout("room_count", cmp="eq", n=len(rooms))
        else:
            yield Layout("room_exists", room=room.id)


def _material_word(name: str | None, rng: np.random.Generator) -> str | None:
    info = material_info(name or "")
    if info is None:
        return None
    # "paint" says nothing about how a wall looks; its colour does.
    return info[1] if rng.integers(2) and info[1] != "paint" else info[2]


def propose_material(scene: Scene, rng: np.random.Generator) -> Iterator[Program]:
    """MS: floor and wall materials by family or colour word, whole room or one side, read
    off a visible wall (an open plan's empty walls are no surface)."""
    rooms = scene.rooms
    while True:
        room = rooms[int(rng.integers(len(rooms)))]
        kind = int(rng.integers(3))
        if kind == 0:
            word = _material_word(room.floor_material, rng)
            if word:
                yield Material(room.id, "floor", word)
            continue
        # Never a fact about an empty wall: its material is invisible, so a proposal drawn
        # from it would ask about a surface that is not there.
        walls = visible_walls(scene, room)
        if not walls:
            continue
        wall = walls[int(rng.integers(len(walls)))]
        word = _material_word(wall.material, rng)
        if not word:
            continue
        if kind == 1:
            yield Material(room.id, "wall", word)
        else:
            yield Material(room.id, "wall", word, wall_direction(wall.start, wall.end, room.vertices))


def propose_attribute(scene: Scene, rng: np.random.Generator) -> Iterator[Program]:
    """OS: colour, material and shape of the objects of one category in one room."""
    pool = candidates(scene)
    objects = [c for c in pool if c.category not in ("door", "window")]
    if not objects:
        return
    while True:
        c: Candidate = objects[int(rng.integers(len(objects)))]
        keys = [k for k in ("color", "material", "shape") if k in c.attributes]
        if not keys:
            continue
        chosen = [keys[i] for i in sorted(rng.permutation(len(keys))[: int(rng.integers(1, 3))])]
        room = c.rooms[0] if c.rooms else None
        same = sum(1 for x in objects if x.category == c.category and room in x.rooms)
        attrs = {k: _attr_text(c.attributes[k]) for k in chosen}
        yield Attribute(Selector(c.category, room=room), attrs, Quant("all" if same == 1 or rng.integers(2) else "exists"))


def _attr_text(value: str) -> str:
    # The checker normalises "l-shaped" to "l shaped"; the sentence keeps the hyphen.
    return value.replace(" ", "-")


def propose_placement(scene: Scene, rng: np.random.Generator) -> Iterator[Program]:
    """OP: existence and counts of objects, absences, and object relations."""
    rooms = [r for r in scene.rooms if scene.objects_in(r.id)]
    if not rooms:
        return
    while True:
        room = rooms[int(rng.integers(len(rooms)))]
        objs = scene.objects_in(room.id)
        o = objs[int(rng.integers(len(objs)))]
        kind = int(rng.integers(10))
        if kind == 0:
            colour = o.attributes.get("color") if rng.integers(2) else None
            yield Count(Selector(o.category, room=room.id, color=colour), "ge", 1)
        elif kind == 1:
            yield Count(Selector(o.category, room=room.id), "eq", _same_category(scene, o))
        elif kind == 2:
            present = {x.category for x in objs}
            absent = [c for c, _ in FURNITURE.get(room.room_type or room.id, ()) if c not in present]
            if absent:
                yield Count(Selector(str(_pick(rng, absent)), room=room.id), "eq", 0)
        else:
            yield from _relation(scene, rng, room.id, o)


def _relation(scene: Scene, rng: np.random.Generator, room_id: str, o: SceneObject) -> Iterator[Program]:
    """A relation from ``o`` to objects of its room; those are named without the room
    ("the sofa in the living room is near the tv"), any tv then serving as anchor."""
    a, quant = _selector(scene, o)
    # A receptacle and what stands on it relate by on_top_of/under only; "the table is left
    # of the bowl on it" would be true by the geometry but no one would say it.
    kin = {o.parent_id, *(x.id for x in scene.children_of(o.id))}
    others = [x for x in scene.objects_in(room_id) if x.category != o.category and x.id not in kin]
    if o.parent_id is not None and rng.integers(2):
        parent = scene.object(o.parent_id)
        yield Relation("on_top_of", a, Selector(parent.category), quant=quant)
        return
    rel = OBJECT_RELATIONS[int(rng.integers(len(OBJECT_RELATIONS)))]
    if rel in BINARY_RELATIONS:
        if others:
            b = others[int(rng.integers(len(others)))]
            yield Relation(rel, a, Selector(b.category), quant=quant)
    elif rel in TERNARY_RELATIONS:
        if len(others) >= 2:
            i, j = rng.permutation(len(others))[:2]
            b, c = others[int(i)], others[int(j)]
            if b.category != c.category:
                yield Relation(rel, a, Selector(b.category), Selector(c.category), quant=quant)
    elif o.parent_id is None:
        yield Relation(rel, a, quant=quant)


PROPOSERS: dict[str, Proposer] = {
    "FL": propose_layout, "MS": propose_material, "OS": propose_attribute, "OP": propose_placement,
}


def true_facts(scene: Scene, ctype: str, n: int, rng: np.random.Generator, *, seen: set[str],
               max_tries: int = 400) -> list[Program]:
    """Up to ``n`` distinct programs of one type that hold on ``scene`` (``seen``: sentences
    already used, updated in place)."""
    out: list[Program] = []
    pool = candidates(scene)
    proposals = PROPOSERS[ctype](scene, rng)
    for _ in range(max_tries):
        if len(out) >= n:
            break
        program = next(proposals, None)
        if program is None:
            break
        text = render(program)
        if text in seen:
            continue
        try:
            ok = check(scene, program, pool).holds
        except (KeyError, ValueError):
            continue  # a relation refused this pair (e.g. a wall object for in_corner)
        if ok:
            seen.add(text)
            out.append(program)
    return out
