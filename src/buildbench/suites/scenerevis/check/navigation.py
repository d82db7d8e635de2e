"""Navigability of a SceneReVis room (:mod:`buildbench.scenes.navigability`) as metric fields.

A SceneReVis room has no doors or windows, so its free floor is judged from its largest free
area: ``free_connected_pct`` is the share of the free floor (where a walker of radius
:data:`~buildbench.scenes.reachability.CLEARANCE_M` can stand) in that area, × 100;
``reachable_pct`` the share of the floor furniture that should be reachable (standing on the
floor, taller than a rug, not on a receptacle, not hung) that can be reached from it, × 100
(absent when the room has none); ``unreachable`` lists those that cannot, by object index.
Large rooms are measured on cells coarser than 5 cm so a grid stays under
:data:`MAX_REACH_CELLS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from buildbench.scenes.model import Room, Scene, SceneObject
from buildbench.scenes.navigability import navigability
from buildbench.scenes.reachability import CELL_M, CLEARANCE_M

from .layout import RoomLayout

#: Most grid cells of one reachability check; larger rooms get coarser cells than 5 cm.
MAX_REACH_CELLS = 250_000


def cell_for(layout: RoomLayout) -> float:
    """Grid cell edge, metres, for ``layout``'s floor (see :data:`MAX_REACH_CELLS`)."""
    span = layout.floor_xz.max(axis=0) - layout.floor_xz.min(axis=0)
    return max(CELL_M, float(np.sqrt(span[0] * span[1] / MAX_REACH_CELLS)))


def navigation_fields(layout: RoomLayout, clearance_m: float = CLEARANCE_M) -> dict[str, Any]:
    """``free_connected_pct``, ``reachable_pct`` (when defined) and ``unreachable`` of a room."""
    found = navigability(scene_of_layout(layout), "room", clearance_m=clearance_m, cell_m=cell_for(layout))
    out: dict[str, Any] = {
        "free_connected_pct": 100.0 * found.connected_share,
        "unreachable": [int(o.removeprefix("object_")) for o in found.reach.unreachable_objects],
    }
    if found.reachable_share is not None:
        out["reachable_pct"] = 100.0 * found.reachable_share
    return out


def scene_of_layout(layout: RoomLayout) -> Scene:
    """The layout as a one-room :class:`Scene` (room ``room``, objects ``object_<index>``)."""
    room = Room(id="room", vertices=[(float(x), float(z)) for x, z in layout.floor_xz],
                room_type=layout.room_type, floor_y=layout.floor_y, ceiling_y=layout.ceiling_y)
    objects = []
    for i in range(len(layout)):
        cx, cy, cz = (float(v) for v in layout.centers[i])
        sx, sy, sz = (float(v) for v in layout.sizes[i])
        qx, qy, qz, qw = (float(v) for v in layout.quats_xyzw[i])
        objects.append(SceneObject(id=f"object_{i}", category="", asset_id=layout.ids[i], center=(cx, cy, cz),
                                   size=(sx, sy, sz), rotation_xyzw=(qx, qy, qz, qw), room_id="room",
                                   attributes={"description": layout.descs[i]}))
    return Scene(rooms=[room], objects=objects, source_format="scenerevis-flat")
