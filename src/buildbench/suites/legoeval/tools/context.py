"""What every tool call sees: the scene, an id index over it, and the evaluation's state.

The original tools scan the house JSON on each call; :class:`SceneIndex` builds the id maps
once per scene so a textual tool is a few dictionary lookups.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from buildbench.scenes.model import EXTERIOR, Opening, Room, Scene, SceneObject, Wall, wall_direction
from buildbench.scenes.thor_open import file_walls_only

from .memo import ViewMemo

if TYPE_CHECKING:
    from buildbench.llm import ChatModel

#: Decimal places of reported positions (the original rounds to 2).
POSITION_DP = 2


class ToolArgumentError(ValueError):
    """A tool was called with arguments of the wrong shape; the message names tool and argument."""


@dataclass
class SceneIndex:
    """Id maps and per-room listings over one scene, built once."""

    scene: Scene
    rooms: dict[str, Room] = field(default_factory=dict)
    walls: dict[str, Wall] = field(default_factory=dict)
    doors: dict[str, Opening] = field(default_factory=dict)
    windows: dict[str, Opening] = field(default_factory=dict)
    objects: dict[str, SceneObject] = field(default_factory=dict)
    walls_by_room: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    doors_by_room: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    windows_by_room: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    objects_by_room: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    rooms_by_segment: dict[tuple[tuple[float, float], tuple[float, float]], list[str]] = field(
        default_factory=lambda: defaultdict(list))
    directions: dict[str, str] = field(default_factory=dict)
    centroids: dict[str, tuple[float, float]] = field(default_factory=dict)
    areas_m2: dict[str, float] = field(default_factory=dict)

    @classmethod
    def build(cls, scene: Scene) -> SceneIndex:
        idx = cls(scene)
        idx.rooms = {r.id: r for r in scene.rooms}
        idx.walls = {w.id: w for w in scene.walls}
        idx.doors = {d.id: d for d in scene.doors}
        idx.windows = {w.id: w for w in scene.windows}
        idx.objects = {o.id: o for o in scene.objects}
        for w in scene.walls:
            if not w.exterior and "exterior" not in w.id:
                idx.walls_by_room[w.room_id].append(w.id)
                idx.rooms_by_segment[segment_key(w.start, w.end)].append(w.room_id)
        for d in scene.doors:
            for rid in dict.fromkeys(d.rooms):
                idx.doors_by_room[rid].append(d.id)
        for win in scene.windows:
            idx.windows_by_room[win.room0].append(win.id)
        for o in scene.objects:
            idx.objects_by_room[o.room_id].append(o.id)
        return idx

    def direction(self, wall: Wall) -> str:
        """Holodeck's cardinal name of a wall side (``raw["direction"]`` when the file has one)."""
        if wall.id not in self.directions:
            given = wall.raw.get("direction") if isinstance(wall.raw, dict) else None
            room = self.rooms.get(wall.room_id)
            if isinstance(given, str) and given:
                self.directions[wall.id] = given
            elif room is not None:
                self.directions[wall.id] = wall_direction(wall.start, wall.end, room.vertices)
            else:
                self.directions[wall.id] = "unknown"
        return self.directions[wall.id]

    def centroid(self, room_id: str) -> tuple[float, float]:
        """Floor centroid of a room, computed once."""
        if room_id not in self.centroids:
            self.centroids[room_id] = self.rooms[room_id].centroid
        return self.centroids[room_id]

    def area_m2(self, room_id: str) -> float:
        """Floor area of a room, computed once."""
        if room_id not in self.areas_m2:
            self.areas_m2[room_id] = self.rooms[room_id].area_m2
        return self.areas_m2[room_id]

    def connected_rooms(self, wall: Wall) -> list[str]:
        """Rooms on either side of the wall: rooms sharing its segment, and rooms its doors join."""
        rooms = list(self.rooms_by_segment.get(segment_key(wall.start, wall.end), []))
        for door_id in self.doors_by_room.get(wall.room_id, []):
            door = self.doors[door_id]
            if wall.id in (door.wall0, door.wall1):
                rooms.extend(r for r in door.rooms if r != EXTERIOR)
        return sorted(set(rooms) | {wall.room_id})

    def kind_of(self, element_id: str) -> str | None:
        for kind, table in (("object", self.objects), ("room", self.rooms), ("wall", self.walls),
                            ("door", self.doors), ("window", self.windows)):
            if element_id in table:
                return kind
        return None


def segment_key(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]]:
    """An order-free key of a wall segment, endpoints rounded to the millimetre."""
    p = (round(a[0], 3), round(a[1], 3))
    q = (round(b[0], 3), round(b[1], 3))
    return (p, q) if p <= q else (q, p)


@dataclass
class ToolContext:
    """The state a tool call runs in.

    Attributes:
        scene / index: The scene under evaluation and its id maps.
        constraint: The constraint being checked (the multimodal tools read it).
        vision_model: Any chat model that accepts images; None selects the labelled
            catalogue fallback for the multimodal tools.
        wall_midpoint_positions: The original-compatible mode of the textual tools: door and
            window ``_position`` as the original reports it (the midpoint of ``wall0``, the
            file's ``assetPosition`` height) instead of the true world centre of the hole, and
            the file's own unrounded numbers where the original passes them through (room
            vertices, wall segments, widths, heights, object rotations, opening walls) with
            footprint corners in the original's order.
        render: Produce images (False gives the text parts only, for ablations and timing).
        image_px: Side of rendered views, pixels (the original renders 1200); material swatches,
            flat tiles, are drawn at most 256.
        geometry: How rendered views draw objects: ``box`` (their boxes), ``procedural``
            (part-based furniture) or ``mesh`` (asset meshes); see :mod:`buildbench.scenes.assets`.
        visual_targets: Ids and material names last passed to ``get_multiview_rendered_object``
            and ``get_material_image``: the multimodal tools' implicit arguments (§3.3).
        visual_images: The images those calls produced, by target.
        views: Views already drawn (see :mod:`.memo`): the scene, like ``index``, is settled
            for the context's life, so a view asked for again is not drawn again.
    """

    scene: Scene
    index: SceneIndex
    constraint: str = ""
    vision_model: ChatModel | None = None
    wall_midpoint_positions: bool = False
    render: bool = True
    image_px: int = 512
    geometry: str = "box"
    visual_targets: list[str] = field(default_factory=list)
    visual_images: dict[str, list[bytes]] = field(default_factory=dict)
    views: ViewMemo = field(default_factory=ViewMemo, repr=False, compare=False)

    @classmethod
    def for_scene(cls, scene: Scene, **kw: Any) -> ToolContext:
        if kw.get("wall_midpoint_positions"):
            # The original lists the walls of the file; Holodeck deletes the walls of an open
            # boundary, which our reader rebuilds as empty walls (``scenes.thor_open``).
            scene = file_walls_only(scene)
        return cls(scene=scene, index=SceneIndex.build(scene), **kw)

    def remember_visual(self, target: str, images: list[bytes]) -> None:
        if target not in self.visual_targets:
            self.visual_targets.append(target)
        self.visual_images[target] = images


def unknown(kind: str, element_id: Any, known: dict[str, Any] | list[str]) -> str:
    """The one-line error for an id the scene does not have, with a few known ids."""
    names = list(known)
    sample = ", ".join(repr(n) for n in names[:6]) + (" …" if len(names) > 6 else "")
    return f"no {kind} with id {element_id!r} in the scene (known: {sample or 'none'})"


def rounded(values: tuple[float, ...] | list[float], dp: int = POSITION_DP) -> list[float]:
    return [round(float(v), dp) + 0.0 for v in values]


def xyz(values: tuple[float, float, float], dp: int = POSITION_DP) -> dict[str, float]:
    x, y, z = rounded(values, dp)
    return {"x": x, "y": y, "z": z}


def front_xz(obj: SceneObject) -> tuple[float, float]:
    """Unit floor direction of the object's front (local +z), straight from its quaternion
    (the third column of the rotation matrix); :attr:`SceneObject.front_xz` when it is vertical."""
    x, y, z, w = obj.rotation_xyzw
    fx, fz = 2.0 * (x * z + w * y), 1.0 - 2.0 * (x * x + y * y)
    n = math.hypot(fx, fz)
    return (fx / n, fz / n) if n > 1e-9 else obj.front_xz


def yaw_deg(obj: SceneObject) -> float:
    """Heading in [0, 360): 0 faces +z, 90 faces +x."""
    fx, fz = front_xz(obj)
    return math.degrees(math.atan2(fx, fz)) % 360.0


def file_rotation(obj: SceneObject) -> dict[str, float] | None:
    """The Euler ``rotation`` the house file gives the object (degrees), if it has one."""
    raw = obj.raw.get("rotation") if isinstance(obj.raw, dict) else None
    if isinstance(raw, dict) and all(is_number(raw.get(a)) for a in "xyz"):
        return {a: raw[a] for a in "xyz"}
    return None


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool), as a house file's number should be."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def original_footprint_cm(obj: SceneObject, yaw: float) -> list[list[float]]:
    """``get_object_info``'s ``coordinates`` listed as the original lists them (compatible
    mode), for the file's yaw in degrees: the same rectangle as :func:`footprint_cm`, but the
    corners start at local (+x, -z) and run toward +z when the yaw is 0 and toward -x
    otherwise; they are turned counter-clockwise in (x, z), and for a yaw off the right
    angles mirrored in x about the centre (which turns them the THOR way)."""
    # the original's order of operations, so that values on a rounding edge round alike
    hx, hz = obj.size[0] * 100 / 2, obj.size[2] * 100 / 2
    cx, cz = obj.center[0] * 100, obj.center[2] * 100
    signs = ((1, -1), (1, 1), (-1, 1), (-1, -1)) if yaw == 0 else ((1, -1), (-1, -1), (-1, 1), (1, 1))
    t = math.radians(yaw)
    c, s = math.cos(t), math.sin(t)
    mirror = yaw not in (0, 90, 180, 270)
    pts = []
    for sx, sz in (*signs, signs[0]):
        lx, lz = (hx if sx > 0 else -hx), (hz if sz > 0 else -hz)
        x = cx + (lx * c - lz * s)
        z = cz + (lx * s + lz * c)
        pts.append([round(2 * cx - x if mirror else x, 2) + 0.0, round(z, 2) + 0.0])
    return pts


def footprint_cm(obj: SceneObject) -> list[list[float]]:
    """The rotated floor rectangle of the object's box in centimetres, closed (5 points), as
    ``get_object_info``'s ``coordinates`` (§3.1)."""
    yaw = math.radians(yaw_deg(obj))
    c, s = math.cos(yaw), math.sin(yaw)
    hx, hz = obj.size[0] * 50.0, obj.size[2] * 50.0
    cx, cz = obj.center[0] * 100.0, obj.center[2] * 100.0
    pts = []
    for sx, sz in ((-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1)):
        lx, lz = sx * hx, sz * hz
        # local +x maps to (cos, -sin) and local +z (the front) to (sin, cos) in world (x, z)
        pts.append([round(cx + lx * c + lz * s, 2) + 0.0, round(cz - lx * s + lz * c, 2) + 0.0])
    return pts
