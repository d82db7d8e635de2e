"""Hand-built SceneReVis scenes for the physics, metrics and reward tests."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REAL_ROOMS = SHARED / "data" / "scenerevis" / "respace_scenes" / "dataset_bedroom_test.jsonl"


def yaw(deg: float) -> list[float]:
    """Quaternion xyzw of a turn of ``deg`` degrees about +y."""
    half = math.radians(deg) / 2
    return [0.0, math.sin(half), 0.0, math.cos(half)]


def obj(
    desc: str, size: list[float], pos: list[float], yaw_deg: float = 0.0, jid: str = ""
) -> dict[str, Any]:
    return {"desc": desc, "size": size, "pos": pos, "rot": yaw(yaw_deg), "jid": jid or desc}


def room(
    vertices_xz: list[tuple[float, float]],
    objects: list[dict[str, Any]],
    height: float = 2.6,
    room_type: str = "bedroom",
) -> dict[str, Any]:
    return {
        "room_type": room_type,
        "room_id": "Bedroom-1",
        "bounds_bottom": [[x, 0.0, z] for x, z in vertices_xz],
        "bounds_top": [[x, height, z] for x, z in vertices_xz],
        "objects": objects,
    }


def rect(w: float, d: float) -> list[tuple[float, float]]:
    """A w × d room centred at the origin."""
    return [(-w / 2, d / 2), (w / 2, d / 2), (w / 2, -d / 2), (-w / 2, -d / 2)]


#: An L: the 4 x 4 square [0, 4] x [0, 4] without its [2, 4] x [2, 4] quarter.
L_ROOM = [(0.0, 0.0), (4.0, 0.0), (4.0, 2.0), (2.0, 2.0), (2.0, 4.0), (0.0, 4.0)]
