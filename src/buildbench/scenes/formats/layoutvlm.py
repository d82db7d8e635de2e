"""LayoutVLM's output (sunfanyunn/LayoutVLM ``main.py``): ``layout.json``, ``{"<uid>-<k>":
{"position": [x, y, z], "rotation": [rx, ry, rz]}}`` in degrees, z up, next to the task it
solved (``--scene_json_file``: ``task_description``, ``boundary.floor_vertices``,
``boundary.wall_height``, ``assets``). Read as one document ``{"task": <task>, "layout":
<layout.json>}``; sizes come from each asset's ``assetMetadata.boundingBox`` ``{x, y, z}``
(objathor, y up) in the task, else ``ReadOptions.asset_sizes`` by uid. ``position`` is taken
as the bottom centre and ``rz`` as the turn about +z (LayoutVLM's scenes in SceneEval's
examples stand at z = 0). Read only: the repository publishes no outputs and the format
needs the task beside it.
"""

from __future__ import annotations

from typing import Any

from shapely.geometry import Point, Polygon

from buildbench.scenes.model import Origin, Room, Scene, SceneFormatError, check_floor

from . import Format, Item, ReadOptions, as_records
from .common import box_object, field_of, num
from .zup import floor_to_ours, to_ours


def _asset(task: dict[str, Any], uid: str, n: int) -> dict[str, Any]:
    """The task's record of asset ``uid`` ({} when it has none)."""
    assets = task.get("assets") or {}
    if not isinstance(assets, dict):
        raise SceneFormatError(f"[{n}].task.assets: expected an object uid -> asset, got {type(assets).__name__}")
    asset = assets.get(uid) or {}
    if not isinstance(asset, dict) or not isinstance(asset.get("assetMetadata") or {}, dict):
        raise SceneFormatError(f"[{n}].task.assets[{uid!r}]: expected an object with an assetMetadata object")
    return asset


def _size(asset: dict[str, Any], uid: str, options: ReadOptions, where: str,
          n: int) -> tuple[tuple[float, float, float], str | tuple[str, ...]]:
    """The asset's box and where it was given (the task's bounding box, or --asset-sizes)."""
    base = uid.rsplit("-", 1)[0]
    box = (asset.get("assetMetadata") or {}).get("boundingBox")
    if isinstance(box, dict):
        at = f"[{n}].task.assets[{uid!r}].assetMetadata.boundingBox"
        size = tuple(num(field_of(box, k, f"{where}.boundingBox"), f"{where}.boundingBox.{k}") for k in ("x", "y", "z"))
        return size, tuple(f"{at}.{k}" for k in ("x", "y", "z"))  # type: ignore[return-value]
    for key in (uid, base):
        if key in options.asset_sizes:
            return options.asset_sizes[key], f"--asset-sizes {key!r}"
    raise SceneFormatError(f"{where}: size of asset {uid!r} unknown (no assetMetadata.boundingBox in the task; "
                           "give --asset-sizes FILE, uid -> [sx, sy, sz])")


def read(data: Any, options: ReadOptions) -> list[Item]:
    items = []
    for n, doc in enumerate(as_records(data, "LayoutVLM task+layout")):
        task, layout = field_of(doc, "task", f"[{n}]"), field_of(doc, "layout", f"[{n}]")
        if not isinstance(task, dict) or not isinstance(layout, dict):
            raise SceneFormatError(f"[{n}]: 'task' and 'layout' must be objects")
        boundary = field_of(task, "boundary", f"[{n}].task")
        verts = field_of(boundary, "floor_vertices", f"[{n}].task.boundary")
        if not isinstance(verts, list) or len(verts) < 3:
            raise SceneFormatError(f"[{n}].task.boundary.floor_vertices: expected at least 3 points")
        for j, v in enumerate(verts):
            if not (isinstance(v, list) and len(v) >= 2):
                raise SceneFormatError(f"[{n}].task.boundary.floor_vertices[{j}]: expected [x, y, z], got {v!r}")
        floor = [floor_to_ours(num(v[0], f"[{n}].floor_vertices"), num(v[1], f"[{n}].floor_vertices"))
                 for v in verts]
        check_floor(floor, f"[{n}].task.boundary.floor_vertices")
        height = num(boundary.get("wall_height", 2.8), f"[{n}].task.boundary.wall_height")
        room = Room(id="room", vertices=floor, ceiling_y=height, origin={
            "vertices": tuple(f"[{n}].task.boundary.floor_vertices[{j}]" for j in range(len(floor))),
            "ceiling_y": f"[{n}].task.boundary.wall_height"})
        poly = Polygon(floor)
        objects = []
        for uid, placed in layout.items():
            where = f"[{n}].layout[{uid!r}]"
            pos = field_of(placed, "position", where)
            rot = field_of(placed, "rotation", where)
            if not (isinstance(pos, list) and len(pos) in (2, 3)) or not (isinstance(rot, list) and rot):
                raise SceneFormatError(f"{where}: expected position [x, y, z] and rotation [rx, ry, rz]")
            p = [num(v, f"{where}.position") for v in pos] + [0.0] * (3 - len(pos))
            asset = _asset(task, uid, n)
            size, size_at = _size(asset, uid, options, where, n)
            bx, by, bz = to_ours(p)
            name = str(asset.get("category", uid.rsplit("-", 1)[0]))
            # ours = (x, z, -y) of theirs; a 2-number position stands on the floor
            at: Origin = {"center": tuple(f"{where}.position[{k}]" for k in (0, 2, 1)), "size": size_at,
                          "rotation": f"{where}.rotation"}
            obj = box_object(uid, name, (bx, by + size[1] / 2.0, bz), size, num(rot[-1], f"{where}.rotation"),
                             room.id if poly.buffer(1e-6).contains(Point(bx, bz)) else "", where, dict(placed), at)
            obj.asset_id = uid.rsplit("-", 1)[0]
            objects.append(obj)
        scene = Scene(rooms=[room], objects=objects, source_format="layoutvlm")
        items.append(Item(scene, name=str(doc.get("id", n)), instruction=str(task.get("task_description", "")),
                          room=str(doc.get("room", ""))))
    return items


FORMAT = Format("layoutvlm", "LayoutVLM layout.json with its task: {\"task\": ..., \"layout\": ...}",
                read, None, "read only (needs the task file beside layout.json); boxes from the task's bounding "
                "boxes; no doors or windows")
