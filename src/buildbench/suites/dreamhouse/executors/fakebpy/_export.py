"""Export the fake scene's mesh objects as the released harness's ``helpers/blender_export.py`` does."""

from __future__ import annotations

from array import array
from typing import Any

from buildbench.suites.dreamhouse.executors.fakebpy._collections import Collection
from buildbench.suites.dreamhouse.executors.fakebpy._state import State
from buildbench.suites.dreamhouse.executors.fakebpy._types import BOUND_BOX_ORDER, Object, dimensions_of


def pick_objects(state: State, collection: str | None) -> list[Object]:
    """The objects to export.

    With a collection name, the released rule: that collection's direct objects in link
    order, or, when it does not exist, those of the ``bpy.data.collections`` entry with
    the most meshes (first in list order on a tie). Without one: every object in the
    scene, in ``bpy.data.objects`` order. Only meshes are kept.
    """
    if collection is None:
        chosen = state.scene_objects()
    else:
        coll: Collection | None = state.collections.by_name.get(collection)
        if coll is None:
            best, best_count = None, 0
            for c in state.collections:
                n = sum(1 for o in c.objects._list if o.type == "MESH")
                if n > best_count:
                    best, best_count = c, n
            coll = best
        chosen = [] if coll is None else list(coll.objects._list)
    return [o for o in chosen if o.type == "MESH"]


def member_record(obj: Object) -> dict[str, Any]:
    """One member: name, location, dimensions, world bounding-box corners, row-major matrix (6 decimals).

    Works on the evaluated float32 matrix directly (the same numbers ``obj.matrix_world``
    gives); each corner is ``matrix_world @ Vector(corner)`` stored as float32, as in mathutils.
    """
    e = obj._eval
    (a, b, c, d, f, g, h, i, j, k, m, n) = e[0:12]
    lo, hi = obj._mesh.bounds() if obj._mesh is not None else ([0.0] * 3, [0.0] * 3)
    pick = (lo, hi)
    flat = array(
        "f",
        [
            v
            for ix, iy, iz in BOUND_BOX_ORDER
            for x, y, z in ((pick[ix][0], pick[iy][1], pick[iz][2]),)
            for v in (a * x + b * y + c * z + d, f * x + g * y + h * z + i, j * x + k * y + m * z + n)
        ],
    )
    rounded = [round(v, 6) for v in flat]
    dims = array("f", dimensions_of(obj))
    return {
        "name": obj._name,
        "location": [round(v, 6) for v in obj._loc._d],
        "dimensions": [round(v, 6) for v in dims],
        "bbox_world_corners": [rounded[p : p + 3] for p in range(0, 24, 3)],
        "matrix_world": [[round(v, 6) for v in e[r : r + 4]] for r in range(0, 16, 4)],
    }


def export_members(state: State, collection: str | None = None, most: int | None = None) -> dict[str, Any]:
    """Evaluate the scene (as reopening the saved file would) and export its members: ``{"members":
    [...]}``, or ``{"members": [], "over_limit": count}`` when there are more than ``most`` (the harness
    refuses them by their count alone, so their records, most of the cost, are never built)."""
    state.evaluate()
    objects = pick_objects(state, collection)
    if most is not None and len(objects) > most:
        return {"members": [], "over_limit": len(objects)}
    return {"members": [member_record(o) for o in objects]}
