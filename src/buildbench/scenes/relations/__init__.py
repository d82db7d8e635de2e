"""Spatial relations over a :class:`~buildbench.scenes.model.Scene`, each with a written definition.

Every relation is a function ``(scene, *ids, **thresholds) -> Verdict``: whether it holds,
the number it was decided on, a sentence naming every element by its full id, and the
evidence. Thresholds are the module constants below (metres and degrees), each overridable
per call. Ids may name objects, rooms, walls, doors or windows where the relation makes
sense; an unknown id raises :class:`UnknownIdError` (a ``KeyError``) naming the scene's
kinds, and a relation asked of the wrong kind raises :class:`RelationError` (a
``ValueError``), both with one line that names the id and the relation.

Geometry is floor-plan geometry (x, z): an object's footprint is its box projected on the
floor, a wall or an opening is a segment, a room is its floor polygon. Derived arrays are
cached per scene state (:func:`index_of`), so a call costs well under a millisecond once
the scene has been indexed, and an edited scene is re-indexed automatically.

Modules:

* :mod:`.distance` — near, far, closer_than, between, aligned.
* :mod:`.direction` — left_of, right_of, in_front_of, behind (in the anchor's frame),
  facing, facing_each_other, same_direction.
* :mod:`.support` — on_top_of, under, overlaps.
* :mod:`.shape` — how two objects are measured: boxes (default) or the meshes of a
  geometry level, chosen with :func:`measured_with`.
* :mod:`.room` — against_wall, in_corner, in_middle, in_room, on_wall, connects,
  adjacent_rooms, larger_room, room_area, count.
* :mod:`.path` — reachable (walked to from a door), door_opens (a door's swing is free).
* :mod:`.index` — the cached :class:`SceneIndex`.
* :mod:`.open_plan` — which rooms empty (invisible) walls join into one open floor plan.
"""

from __future__ import annotations

from collections.abc import Callable

from buildbench.scenes.relations.direction import (
    FACING_CONE_DEG,
    SAME_DIRECTION_DEG,
    SIDE_HALF_ANGLE_DEG,
    SIDE_MAX_M,
    bearing_deg,
    behind,
    facing,
    facing_each_other,
    in_front_of,
    left_of,
    right_of,
    same_direction,
)
from buildbench.scenes.relations.distance import (
    ALIGNED_M,
    BETWEEN_OFFSET_M,
    CLOSER_MARGIN_M,
    FAR_M,
    NEAR_M,
    aligned,
    between,
    closer_than,
    far,
    footprint_distance,
    near,
)
from buildbench.scenes.relations.index import (
    Element,
    RelationError,
    SceneIndex,
    UnknownIdError,
    index_of,
    invalidate,
)
from buildbench.scenes.relations.path import door_opens, reachable
from buildbench.scenes.relations.room import (
    ADJACENT_MIN_SHARED_M,
    AGAINST_WALL_ANGLE_DEG,
    AGAINST_WALL_M,
    IN_CORNER_M,
    IN_MIDDLE_MAX_RADIAL,
    IN_ROOM_MIN_SHARE,
    ON_WALL_M,
    adjacent_rooms,
    against_wall,
    connects,
    count,
    in_corner,
    in_middle,
    in_room,
    larger_room,
    on_wall,
    room_area,
)
from buildbench.scenes.relations.shape import OVERLAP_DEPTH_M, MeshShapes, Shapes, measured_with, shapes_for
from buildbench.scenes.relations.support import (
    ON_TOP_GAP_M,
    ON_TOP_MIN_OVERLAP,
    UNDER_MIN_OVERLAP,
    on_top_of,
    overlaps,
    under,
)
from buildbench.scenes.relations.verdict import Verdict

#: Every relation by name. All take ``(scene, *ids, **thresholds)`` and return a
#: :class:`Verdict`; ``count`` takes a category (and optional room) instead of ids.
RELATIONS: dict[str, Callable[..., Verdict]] = {
    "near": near,
    "far": far,
    "left_of": left_of,
    "right_of": right_of,
    "in_front_of": in_front_of,
    "behind": behind,
    "facing": facing,
    "facing_each_other": facing_each_other,
    "on_top_of": on_top_of,
    "under": under,
    "overlaps": overlaps,
    "against_wall": against_wall,
    "in_corner": in_corner,
    "in_middle": in_middle,
    "between": between,
    "closer_than": closer_than,
    "aligned": aligned,
    "same_direction": same_direction,
    "adjacent_rooms": adjacent_rooms,
    "larger_room": larger_room,
    "in_room": in_room,
    "on_wall": on_wall,
    "connects": connects,
    "room_area": room_area,
    "count": count,
    "reachable": reachable,
    "door_opens": door_opens,
}

__all__ = [
    "ADJACENT_MIN_SHARED_M",
    "AGAINST_WALL_ANGLE_DEG",
    "AGAINST_WALL_M",
    "ALIGNED_M",
    "BETWEEN_OFFSET_M",
    "CLOSER_MARGIN_M",
    "Element",
    "FACING_CONE_DEG",
    "FAR_M",
    "IN_CORNER_M",
    "IN_MIDDLE_MAX_RADIAL",
    "IN_ROOM_MIN_SHARE",
    "NEAR_M",
    "ON_TOP_GAP_M",
    "ON_TOP_MIN_OVERLAP",
    "ON_WALL_M",
    "OVERLAP_DEPTH_M",
    "MeshShapes",
    "Shapes",
    "RELATIONS",
    "RelationError",
    "SAME_DIRECTION_DEG",
    "SIDE_HALF_ANGLE_DEG",
    "SIDE_MAX_M",
    "SceneIndex",
    "UNDER_MIN_OVERLAP",
    "UnknownIdError",
    "Verdict",
    "adjacent_rooms",
    "against_wall",
    "aligned",
    "bearing_deg",
    "behind",
    "between",
    "closer_than",
    "connects",
    "count",
    "door_opens",
    "facing",
    "facing_each_other",
    "far",
    "footprint_distance",
    "in_corner",
    "in_front_of",
    "in_middle",
    "in_room",
    "index_of",
    "invalidate",
    "larger_room",
    "left_of",
    "near",
    "on_top_of",
    "on_wall",
    "overlaps",
    "reachable",
    "measured_with",
    "shapes_for",
    "right_of",
    "room_area",
    "same_direction",
    "under",
]
