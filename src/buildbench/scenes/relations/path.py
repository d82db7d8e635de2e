"""Relations about walking, from :mod:`buildbench.scenes.navigability`.

* ``reachable(a)``: a person can walk from a door (or open wall) of a's room to a's side,
  with a walker of radius ``clearance_m``; an object on a receptacle is reached through the
  piece standing on the floor beneath it. The statement "there is a clear path from the door to
  the bed". Wall-hung and ceiling objects and floor coverings are not walked to: a
  :class:`RelationError`.
* ``door_opens(opening)``: the door's leaf can swing freely on both its rooms' sides
  (nothing taller than a rug in the quarter circle it sweeps; the navigability docstring says
  how the unknown swing side and hinge are treated).

The grids are built once per room and walker size (memoised on the scene's index).
"""

from __future__ import annotations

from buildbench.scenes.model import Scene
from buildbench.scenes.relations.index import RelationError
from buildbench.scenes.relations.verdict import Verdict, resolve, threshold


def reachable(scene: Scene, a: str, *, clearance_m: float | None = None) -> Verdict:
    """a can be reached on foot from its room's doors (see the module docstring); the walker's
    radius ``clearance_m`` defaults to :data:`buildbench.scenes.reachability.CLEARANCE_M`.

    Value: 1.0 when reachable, else 0.0.
    """
    # Imported here: the reachability grid builds on this package's index.
    from buildbench.scenes.reachability import CLEARANCE_M
    from buildbench.scenes.reachability import reachable as reach_room

    clearance = threshold("reachable", "clearance_m", CLEARANCE_M if clearance_m is None else clearance_m)
    index, (ea,) = resolve(scene, "reachable", {"a": a}, {"a": ("object",)})
    root = a
    while (parent := index.parents[index.object_pos[root]]) is not None and parent in index.object_pos:
        root = parent
    room = index.object_rooms[index.object_pos[root]]
    if room not in index.rooms:
        raise RelationError(f"reachable: {a} stands in no room of the scene")
    found = index.memo(("reachable", room, clearance), lambda: reach_room(scene, room, clearance_m=clearance))
    via = "" if root == a else f" (through {root}, which it stands on)"
    if root in found.reachable_objects:
        sides = ", ".join(found.sides.get(root, ()))
        return Verdict(True, 1.0, f"{a}{via} can be reached from the doors of {room} at its {sides} side(s)",
                       {"room": room, "object": root, "sides": list(found.sides.get(root, ()))})
    if root in found.unreachable_objects:
        return Verdict(False, 0.0, f"{a}{via} cannot be reached from the doors of {room} with "
                       f"{clearance:.2f} m clearance: {found.explanation}", {"room": room, "object": root})
    raise RelationError(f"reachable: {root} does not stand on the floor (a wall or ceiling object, or a floor "
                        f"covering): nobody walks to it")


def door_opens(scene: Scene, opening: str) -> Verdict:
    """The door's leaf swings freely into each of its rooms (see the module docstring).

    Value: the number of objects in its swing (0 when it opens freely).
    """
    from buildbench.scenes.navigability import door_swing_blockers

    index, (door,) = resolve(scene, "door_opens", {"opening": opening}, {"opening": ("door",)})
    d = scene.door(opening)
    blockers: dict[str, tuple[str, ...]] = {}
    for room in dict.fromkeys((d.room0, d.room1)):
        if room in index.rooms:
            found = door_swing_blockers(scene, index, opening, room, index.rooms[room].floor_y)
            if found:
                blockers[room] = found
    n = sum(len(v) for v in blockers.values())
    if not n:
        return Verdict(True, 0.0, f"{opening} can open freely: nothing stands in its swing", {"blockers": {}})
    named = "; ".join(f"{', '.join(v)} in {room}" for room, v in blockers.items())
    return Verdict(False, float(n), f"{opening} cannot open freely: {named} in its swing",
                   {"blockers": {k: list(v) for k, v in blockers.items()}})
