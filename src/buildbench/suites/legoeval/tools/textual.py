"""The ten textual-reasoning tools (§3.1): structured lookups in the scene.

Each takes the :class:`ToolContext` and its id list and returns the original's output dict.
An id the scene lacks gives a ``"<id>_error"`` entry naming it; the other ids are answered.
With ``ctx.wall_midpoint_positions`` (the original-compatible mode) the numbers are the
original's: see :class:`~.context.ToolContext`. Outside that mode ``get_wall_info`` adds
``"<id>_empty": true`` for an empty (invisible) wall, an open-plan boundary the original
describes like a solid one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from buildbench.scenes.model import Opening

from .context import (
    ToolContext,
    file_rotation,
    footprint_cm,
    is_number,
    original_footprint_cm,
    rounded,
    unknown,
    xyz,
    yaw_deg,
)


def _shown(ctx: ToolContext, values: tuple[float, ...] | list[float]) -> list[float]:
    """Values rounded to 2 decimals, or as they are in the compatible mode."""
    return [float(v) for v in values] if ctx.wall_midpoint_positions else rounded(values)


def _shown_one(ctx: ToolContext, value: float) -> float:
    return float(value) if ctx.wall_midpoint_positions else round(value, 2)


def get_room_list(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    return {"room_list": list(ctx.index.rooms)}


def get_room_info(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rid in ids:
        room = ctx.index.rooms.get(rid)
        if room is None:
            out[f"{rid}_error"] = unknown("room", rid, ctx.index.rooms)
            continue
        out[f"{rid}_coordinates"] = [_shown(ctx, v) for v in room.vertices]
        out[f"{rid}_floor_material"] = room.floor_material or "Unknown"
        out[f"{rid}_room_type"] = room.room_type or "Unknown"
        out[f"{rid}_area_m2"] = round(ctx.index.area_m2(rid), 2)
    return out


def get_wall_list(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rid in ids:
        if rid not in ctx.index.rooms:
            out[f"{rid}_error"] = unknown("room", rid, ctx.index.rooms)
            continue
        out[f"{rid}_wall_list"] = list(ctx.index.walls_by_room.get(rid, []))
    return out


def get_wall_info(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for wid in ids:
        wall = ctx.index.walls.get(wid)
        if wall is None:
            out[f"{wid}_error"] = unknown("wall", wid, ctx.index.walls)
            continue
        out[f"{wid}_id"] = wall.id
        out[f"{wid}_roomId"] = _file_room(ctx, wall.raw) or wall.room_id
        out[f"{wid}_coordinates"] = [_shown(ctx, wall.start), _shown(ctx, wall.end)]
        out[f"{wid}_material"] = wall.material or _absent_wall_material(ctx)
        out[f"{wid}_width"] = _shown_one(ctx, wall.width_m)
        out[f"{wid}_height"] = _shown_one(ctx, wall.height_m)
        out[f"{wid}_direction"] = ctx.index.direction(wall)
        out[f"{wid}_connected_rooms"] = ctx.index.connected_rooms(wall)
        if wall.empty and not ctx.wall_midpoint_positions:
            # The original lists an invisible wall like any other and has no key for it.
            out[f"{wid}_empty"] = True
    return out


def _absent_wall_material(ctx: ToolContext) -> str:
    """What a wall without a material is called: the original writes ``"None"`` for walls
    (ProcTHOR's first stage leaves them bare) though ``"Unknown"`` for rooms."""
    return "None" if ctx.wall_midpoint_positions else "Unknown"


def _file_room(ctx: ToolContext, raw: Any) -> str | None:
    """In the compatible mode, the ``roomId`` the file gives (ProcTHOR's outside walls say
    ``"exterior"`` where we name the room they bound)."""
    given = raw.get("roomId") if ctx.wall_midpoint_positions and isinstance(raw, dict) else None
    return given if isinstance(given, str) and given else None


def _listing(ctx: ToolContext, ids: list[str], by_room: dict[str, list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rid in ids:
        if rid not in ctx.index.rooms:
            out[f"{rid}_error"] = unknown("room", rid, ctx.index.rooms)
            continue
        out[rid] = list(by_room.get(rid, []))
    return out


def get_door_list(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    return _listing(ctx, ids, ctx.index.doors_by_room)


def get_window_list(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    return _listing(ctx, ids, ctx.index.windows_by_room)


def get_object_list(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    return _listing(ctx, ids, ctx.index.objects_by_room)


def opening_position(ctx: ToolContext, opening: Opening) -> dict[str, float]:
    """World centre of the hole, or with ``wall_midpoint_positions`` the original's value:
    x/z of ``wall0``'s midpoint, y the file's ``assetPosition`` height (the hole's centre
    height when the file has none) (§2.5)."""
    x, y, z = ctx.scene.opening_center(opening)
    if ctx.wall_midpoint_positions:
        wall = ctx.index.walls[opening.wall0]
        x = (wall.start[0] + wall.end[0]) / 2.0
        z = (wall.start[1] + wall.end[1]) / 2.0
        given = opening.raw.get("assetPosition") if isinstance(opening.raw, dict) else None
        if isinstance(given, dict) and is_number(given.get("y")):
            y = float(given["y"])
    return xyz((x, y, z))


def _opening_walls(ctx: ToolContext, opening: Opening) -> list[str | None]:
    """The two wall sides; in the compatible mode as the file names them, even a side the
    house lacks (a partial house)."""
    walls: list[str | None] = [opening.wall0, opening.wall1]
    if ctx.wall_midpoint_positions and isinstance(opening.raw, dict):
        named = [opening.raw.get(k) for k in ("wall0", "wall1")]
        walls = [n if isinstance(n, str) else w for n, w in zip(named, walls, strict=True)]
    return walls


def _opening_info(ctx: ToolContext, oid: str, opening: Opening, out: dict[str, Any]) -> None:
    out[f"{oid}_id"] = opening.id
    out[f"{oid}_assetId"] = opening.asset_id
    out[f"{oid}_rooms"] = [opening.room0, opening.room1]
    out[f"{oid}_walls"] = _opening_walls(ctx, opening)
    out[f"{oid}_position"] = opening_position(ctx, opening)
    out[f"{oid}_size"] = {"width": round(opening.width_m, 2), "height": round(opening.height_m, 2)}


def get_door_info(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for did in ids:
        door = ctx.index.doors.get(did)
        if door is None:
            out[f"{did}_error"] = unknown("door", did, ctx.index.doors)
            continue
        _opening_info(ctx, did, door, out)
        # the original's spelling of the key; it writes "None" where the file gives no openness
        given = door.raw.get("openness", "None") if ctx.wall_midpoint_positions and door.raw else door.openness
        out[f"{did}_openess"] = given
    return out


def get_window_info(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for wid in ids:
        window = ctx.index.windows.get(wid)
        if window is None:
            out[f"{wid}_error"] = unknown("window", wid, ctx.index.windows)
            continue
        _opening_info(ctx, wid, window, out)
    return out


def get_object_info(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for oid in ids:
        obj = ctx.index.objects.get(oid)
        if obj is None:
            out[f"{oid}_error"] = unknown("object", oid, ctx.index.objects)
            continue
        rotation = file_rotation(obj) if ctx.wall_midpoint_positions else None
        out[oid] = {
            "id": obj.id,
            "assetId": obj.asset_id,
            "roomId": obj.room_id,
            "position": xyz(obj.center),
            "rotation": rotation or {"x": 0.0, "y": round(yaw_deg(obj), 2) + 0.0, "z": 0.0},
            "coordinates": original_footprint_cm(obj, rotation["y"]) if rotation else footprint_cm(obj),
            "category": obj.category,
            "size_m": rounded(obj.size),
            "on": obj.parent_id,
        }
    return out


TEXTUAL: dict[str, Callable[..., Any]] = {
    "get_room_list": get_room_list,
    "get_room_info": get_room_info,
    "get_wall_list": get_wall_list,
    "get_wall_info": get_wall_info,
    "get_door_list": get_door_list,
    "get_door_info": get_door_info,
    "get_window_list": get_window_list,
    "get_window_info": get_window_info,
    "get_object_list": get_object_list,
    "get_object_info": get_object_info,
}
