"""Pieces the box-list formats (LayoutGPT, I-Design, LayoutVLM) share: a rectangular room
and objects given as centre, size and yaw."""

from __future__ import annotations

import math
from typing import Any

from buildbench.scenes.catalogue import default_catalogue
from buildbench.scenes.model import (
    Origin,
    Point2,
    Room,
    Scene,
    SceneFormatError,
    SceneObject,
    check_floor,
    yaw_quat_xyzw,
)


def num(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SceneFormatError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def field_of(rec: Any, key: str, where: str) -> Any:
    if not isinstance(rec, dict) or key not in rec:
        raise SceneFormatError(f"{where}.{key}: missing")
    return rec[key]


def rect_room(room_id: str, x0: float, z0: float, x1: float, z1: float, room_type: str,
              height: float | None, origin: Origin | None = None) -> Room:
    """``origin``: where the file gives the room (its size, its height), for errors."""
    vertices = [(x0, z0), (x1, z0), (x1, z1), (x0, z1)]
    where = origin.get("vertices") if origin else None
    check_floor(vertices, f"{where if isinstance(where, str) else f'room {room_id!r}'} "
                f"({x1 - x0:g} x {z1 - z0:g} m)")
    return Room(id=room_id, vertices=vertices, room_type=room_type, ceiling_y=height, origin=dict(origin or {}))


def floor_box(scene: Scene, fmt: str) -> tuple[Point2, Point2]:
    """The scene's floor extent for a one-rectangle format; a scene without a floor has none
    (written, it would be a 0 x 0 room with every object outside it)."""
    (x0, z0), (x1, z1) = scene.bounds_xz()
    if not x1 > x0 or not z1 > z0:
        raise SceneFormatError(f"{fmt} needs the room's floor; the scene has {len(scene.rooms)} room(s) "
                               "and no floor area")
    return (x0, z0), (x1, z1)


def category_of(name: str) -> str:
    """Our category for a generator's object name (``double_bed`` -> ``bed``; the name's own
    words when the catalogue knows none)."""
    words = name.replace("_", " ").strip().lower()
    return default_catalogue().category_of(words) or words or "object"


def box_object(oid: str, name: str, center: tuple[float, float, float], size: tuple[float, float, float],
               yaw_deg: float, room_id: str, where: str, raw: dict[str, Any], origin: Origin) -> SceneObject:
    """``origin``: the file's keys of the centre, size and turn (:data:`~buildbench.scenes.model.Origin`)."""
    if min(size) < 0:  # a side of 0 is a flat thing, as the SceneReVis reader takes it
        raise SceneFormatError(f"{where}: size {size} has a side < 0")
    return SceneObject(id=oid, category=category_of(name), asset_id=name, center=center, size=size,
                       rotation_xyzw=yaw_quat_xyzw(yaw_deg), room_id=room_id,
                       attributes={"description": name.replace("_", " ")}, raw=raw, origin=origin)


def signed_yaw(obj: SceneObject) -> float:
    """The object's heading in (-180, 180]."""
    yaw = obj.yaw_deg
    return yaw - 360.0 if yaw > 180.0 else yaw
