"""Edits that make a scene break one chosen constraint: the misaligned twins.

:func:`perturb` returns an edited copy of a scene meant to falsify a program (recolour a
floor or wall, swap an object's asset for a variant with another colour, material or
shape, move or turn an object, delete objects, a door or a window), or None when the
program has no such edit here (room counts, areas, adjacency and absences are kept as
context constraints). Whether the edit broke exactly the intended constraints is decided
by the caller, who re-checks every constraint.
"""

from __future__ import annotations

import copy

import numpy as np

from buildbench.scenes.model import Scene, SceneObject, wall_direction, yaw_quat_xyzw

from ..check.select import material_matches, rooms_matching, select, visible_walls
from ..constraints import Attribute, Count, Layout, Material, Program, Relation
from .house import FLOOR_FAMILIES, WALL_FAMILIES, generic_assets, surface_materials


def _descendants(scene: Scene, object_id: str) -> list[str]:
    out, frontier = [], [object_id]
    while frontier:
        kids = [o.id for o in scene.objects if o.parent_id in frontier]
        out += kids
        frontier = kids
    return out


def delete_objects(scene: Scene, ids: list[str]) -> None:
    doomed = set(ids)
    for i in ids:
        doomed.update(_descendants(scene, i))
    scene.objects = [o for o in scene.objects if o.id not in doomed]


def swap_asset(scene: Scene, o: SceneObject, asset_id: str) -> None:
    """Give ``o`` another catalogue asset (new size and attributes; floor objects stay on
    the floor)."""
    from buildbench.scenes.catalogue import default_catalogue

    asset = default_catalogue().get(asset_id)
    assert asset is not None
    dy = asset.size_m[1] / 2 - o.size[1] / 2  # the bottom stays where it was
    o.asset_id, o.size = asset.asset_id, asset.size_m
    o.center = (o.center[0], o.center[1] + dy, o.center[2])
    o.attributes = {**o.attributes, "color": asset.color, "material": asset.material, "shape": asset.shape,
                    "description": asset.description}


def move_object(scene: Scene, o: SceneObject, rng: np.random.Generator) -> None:
    """Put ``o`` somewhere else in its room (a small object goes to the floor), turned to a
    random side; what stands on it moves along."""
    room = scene.room(o.room_id)
    xs, zs = [v[0] for v in room.vertices], [v[1] for v in room.vertices]
    half = max(o.size[0], o.size[2]) / 2
    lo_x, hi_x = min(xs) + half, max(xs) - half
    lo_z, hi_z = min(zs) + half, max(zs) - half
    x = float(rng.uniform(lo_x, hi_x)) if hi_x > lo_x else (lo_x + hi_x) / 2
    z = float(rng.uniform(lo_z, hi_z)) if hi_z > lo_z else (lo_z + hi_z) / 2
    y = o.size[1] / 2 if o.parent_id is not None else o.center[1]
    dx, dy, dz = x - o.center[0], y - o.center[1], z - o.center[2]
    for kid in _descendants(scene, o.id):
        k = scene.object(kid)
        k.center = (k.center[0] + dx, k.center[1] + dy, k.center[2] + dz)
    o.center, o.parent_id = (x, y, z), None
    turn_object(o, float(90 * rng.integers(4)))


def turn_object(o: SceneObject, yaw_deg: float) -> None:
    o.rotation_xyzw = yaw_quat_xyzw((o.yaw_deg + yaw_deg) % 360.0)


def _other_material(rng: np.random.Generator, families: tuple[str, ...], value: str) -> str:
    options = [m for m in surface_materials(families) if not material_matches(m, value)]
    return options[int(rng.integers(len(options)))]


def _perturb_material(scene: Scene, p: Material, rng: np.random.Generator) -> bool:
    rooms = rooms_matching(scene, p.room)
    if not rooms:
        return False
    for room in rooms:
        if p.surface == "floor":
            room.floor_material = _other_material(rng, FLOOR_FAMILIES, p.value)
            continue
        # Repaint visible walls only: the checker ignores an empty wall's material, so
        # recolouring one would break nothing (and no one could see it).
        walls = visible_walls(scene, room, p.direction)
        if p.quant == "all" and walls:
            walls = [walls[int(rng.integers(len(walls)))]]
        new = _other_material(rng, WALL_FAMILIES, p.value)
        for w in walls:
            w.material = new
    return True


def _perturb_attribute(scene: Scene, p: Attribute, rng: np.random.Generator) -> bool:
    matches = [scene.object(c.id) for c in select(scene, p.of) if scene.kind_of(c.id) == "object"]
    if not matches:
        return False
    if p.quant.kind == "all":
        matches = [matches[int(rng.integers(len(matches)))]]
    for o in matches:
        key = list(p.attrs)[int(rng.integers(len(p.attrs)))]
        want = p.attrs[key].replace("-", " ")
        options = [a for a in generic_assets(o.category) if getattr(a, key).replace("-", " ") != want]
        if not options:
            return False
        swap_asset(scene, o, options[int(rng.integers(len(options)))].asset_id)
    return True


def _perturb_count(scene: Scene, p: Count, rng: np.random.Generator) -> bool:
    found = [c.id for c in select(scene, p.of) if scene.kind_of(c.id) == "object"]
    if p.cmp not in ("ge", "eq", "gt") or not found or (p.cmp == "eq" and p.n == 0):
        return False
    drop = len(found) - p.n + 1 if p.cmp in ("ge", "gt") else 1
    order = [found[i] for i in rng.permutation(len(found))]
    delete_objects(scene, order[: max(1, drop)])
    return True


def _perturb_relation(scene: Scene, p: Relation, rng: np.random.Generator) -> bool:
    subjects = [scene.object(c.id) for c in select(scene, p.a) if scene.kind_of(c.id) == "object"]
    if not subjects:
        return False
    if p.quant.kind == "all":
        subjects = [subjects[int(rng.integers(len(subjects)))]]
    for o in subjects:
        if rng.random() < 0.3 and p.rel in ("facing", "same_direction", "left_of", "right_of", "in_front_of",
                                            "behind", "against_wall"):
            turn_object(o, float(90 * rng.integers(1, 4)))
        else:
            move_object(scene, o, rng)
    return True


def _perturb_layout(scene: Scene, p: Layout, rng: np.random.Generator) -> bool:
    if p.kind == "door_between":
        r0 = {"exterior"} if p.rooms[0] == "exterior" else {r.id for r in rooms_matching(scene, p.rooms[0])}
        r1 = {"exterior"} if p.rooms[1] == "exterior" else {r.id for r in rooms_matching(scene, p.rooms[1])}
        keep = [d for d in scene.doors if not ({d.room0, d.room1} & r0 and {d.room0, d.room1} & r1)]
        if len(keep) == len(scene.doors):
            return False
        scene.doors = keep
        return True
    if p.kind == "window_count" and p.cmp in ("ge", "eq", "gt") and p.n:
        room = rooms_matching(scene, p.room or "")
        ids = []
        for r in room:
            for w in scene.windows:
                if w.room0 != r.id:
                    continue
                wall = scene.wall(w.wall0)
                if p.direction is None or wall_direction(wall.start, wall.end, r.vertices) == p.direction:
                    ids.append(w.id)
        if not ids:
            return False
        drop = ids if p.cmp in ("ge", "gt") else [ids[int(rng.integers(len(ids)))]]
        scene.windows = [w for w in scene.windows if w.id not in drop]
        return True
    return False


def perturbable(program: Program) -> bool:
    """Whether :func:`perturb` has an edit for this kind of program at all."""
    if isinstance(program, Layout):
        return program.kind == "door_between" or (program.kind == "window_count" and bool(program.n)
                                                  and program.cmp in ("ge", "eq", "gt"))
    if isinstance(program, Count):
        return program.cmp in ("ge", "eq", "gt") and program.n > 0
    return isinstance(program, Material | Attribute | Relation)


def perturb(scene: Scene, program: Program, rng: np.random.Generator) -> Scene | None:
    """An edited copy of ``scene`` meant to falsify ``program``, or None (no edit applies)."""
    twin = copy.deepcopy(scene)
    if isinstance(program, Material):
        done = _perturb_material(twin, program, rng)
    elif isinstance(program, Attribute):
        done = _perturb_attribute(twin, program, rng)
    elif isinstance(program, Count):
        done = _perturb_count(twin, program, rng)
    elif isinstance(program, Relation):
        done = _perturb_relation(twin, program, rng)
    elif isinstance(program, Layout):
        done = _perturb_layout(twin, program, rng)
    else:
        done = False
    return twin if done else None

