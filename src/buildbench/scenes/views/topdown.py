"""Views from above: the whole house with room labels, one room with object labels, and
the spatial-relation overlay with labelled 3D boxes (LEGO-Eval's ``get_topdown_scene``,
``get_topdown_room`` and ``get_spatial_relation``).

Orientation (:data:`~buildbench.scenes.views.frame.THOR_FRAME`): house and room views have
north (+z) at the top and east (+x) to the right. Empty (invisible) walls, the open
boundaries of an open floor plan, are not rendered (AI2-THOR does not render them); room
outlines draw them dashed, so a viewer sees where one room ends without taking it for a
wall. The relation overlay is turned so its
anchor faces the bottom of the image (see :func:`relation_overlay`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from shapely.geometry import LineString, Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import linemerge, unary_union

from buildbench.geometry import BOX_CORNER_SIGNS
from buildbench.render import Camera
from buildbench.scenes.model import EXTERIOR, Room, Scene
from buildbench.scenes.views.cameras import look_camera, top_camera
from buildbench.scenes.views.colors import distinct_colors
from buildbench.scenes.views.drawing import WHITE, Canvas, label_size_px, render_views
from buildbench.scenes.views.frame import THOR_FRAME, ViewInputError, check_px
from buildbench.scenes.views.geometry import ElementBox, SceneGeometry, element_box, scene_geometry

RGB = tuple[float, float, float]

# Fraction of the image left around the house or room on each side.
_MARGIN = 0.06
#: Field of view of the relation overlay's camera, as the original's (degrees).
RELATION_FOV_DEG = 60.0


def topdown_scene(scene: Scene, *, px: int = 512, background: RGB | None = WHITE, labels: bool = True,
                  geometry: str = "box") -> np.ndarray:
    """The whole house from straight above (orthographic, exact for plans), every room
    outlined in its own colour and labelled with its id. A label sits just outside its
    room (above, below, left or right of it, as the original places them) where that
    covers no room and no other label, else inside the room.

    Returns:
        ``(px, px, 4)`` uint8 RGBA; north up, east right.
    """
    px = check_px(px, "topdown_scene")
    if not scene.rooms:
        raise ViewInputError("topdown_scene: the scene has no rooms")
    (x0, z0), (x1, z1) = scene.bounds_xz()
    span = max(x1 - x0, z1 - z0, 0.5) / (1.0 - 2 * _MARGIN)
    geo = scene_geometry(scene, geometry=geometry)
    floor_y, eye_y = _vertical_range(scene, geo)
    camera = top_camera(THOR_FRAME, ((x0 + x1) / 2, (z0 + z1) / 2), span, eye_y=eye_y, floor_y=floor_y)
    canvas = Canvas(render_views(geo.render_scene(), [camera], px)[0], background)
    palette = distinct_colors(len(scene.rooms))
    width = max(2, px // 170)
    outlines = []
    for room, rgb in zip(scene.rooms, palette, strict=True):
        ring = np.array([(x, room.floor_y, z) for x, z in room.vertices])
        outline = camera.project_to_pixels(THOR_FRAME.points(ring), px, px)[:, :2]
        _draw_outline(canvas, camera, scene, room, rgb, width, px)
        outlines.append(Polygon(outline))
    if labels:
        size = label_size_px(px, 1.1)
        plan = unary_union(outlines).buffer(width)
        for room, rgb, outline in zip(scene.rooms, palette, outlines, strict=True):
            at = _room_label_spot(canvas, plan, outline, canvas.text_size(room.id, size), px, gap=width + 2)
            canvas.label(room.id, at, size_px=size, fg=WHITE, bg=rgb, bg_alpha=0.9)
    return canvas.array()


def _draw_outline(canvas: Canvas, camera: Camera, scene: Scene, room: Room, rgb: RGB, width: int, px: int) -> None:
    """The room's floor outline: solid along walls, dashed along its empty walls."""
    ring = LineString([*room.vertices, room.vertices[0]])
    open_runs = [LineString([w.start, w.end]) for w in scene.walls_of(room.id) if w.empty]
    if not open_runs:
        canvas.polyline(_to_px(camera, ring, room.floor_y, px), rgb, width)
        return
    gaps = unary_union([run.buffer(1e-3, cap_style="flat") for run in open_runs])
    for part in _lines(ring.difference(gaps)):
        canvas.polyline(_to_px(camera, part, room.floor_y, px), rgb, width)
    dash = max(3.0 * width, 6.0)
    for part in _lines(ring.intersection(gaps)):
        canvas.dashed(_to_px(camera, part, room.floor_y, px), rgb, width, dash_px=dash, gap_px=dash)


def _lines(geometry: BaseGeometry) -> list[LineString]:
    """The line pieces of a shapely result (merged where they join)."""
    merged = linemerge(geometry) if geometry.geom_type == "MultiLineString" else geometry
    return [g for g in getattr(merged, "geoms", [merged]) if isinstance(g, LineString) and not g.is_empty]


def _to_px(camera: Camera, line: LineString, floor_y: float, px: int) -> np.ndarray:
    pts = np.array([(x, floor_y, z) for x, z in line.coords])
    return camera.project_to_pixels(THOR_FRAME.points(pts), px, px)[:, :2]


def _room_label_spot(canvas: Canvas, plan: BaseGeometry, room_px: Polygon, text_wh: tuple[int, int],
                     px: int, *, gap: float) -> tuple[float, float]:
    """Centre for a room's label: the first of just above, below, left of or right of the
    room's pixel box that stays in the image and off every room and label; else the
    room's inside point."""
    w, h = text_wh
    left, top, right, bottom = room_px.bounds
    cx, cy = (left + right) / 2, (top + bottom) / 2
    candidates = [(cx, top - gap - h / 2), (cx, bottom + gap + h / 2),
                  (left - gap - w / 2, cy), (right + gap + w / 2, cy)]
    taken = [box(*t) for t in canvas.taken()]
    for x, y in candidates:
        spot = box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        inside = spot.bounds[0] >= 0 and spot.bounds[1] >= 0 and spot.bounds[2] <= px and spot.bounds[3] <= px
        if inside and not spot.intersects(plan) and not any(spot.intersects(t) for t in taken):
            return (x, y)
    point = room_px.representative_point()
    return (point.x, point.y)


def topdown_room(scene: Scene, room_id: str, *, px: int = 512, background: RGB | None = WHITE,
                 labels: bool = True, geometry: str = "box") -> np.ndarray:
    """One room alone from straight above, framed to it, each object labelled with its id.

    Only the room's floor, its own wall sides with their doors and windows, and its objects
    are drawn (as the original renders a copy of the house holding that room only).
    """
    px = check_px(px, "topdown_room")
    room = _room(scene, room_id, "topdown_room")
    walls = {w.id for w in scene.walls if w.room_id == room.id}
    openings = {op.id for op in scene.openings() if op.wall0 in walls or (op.wall1 in walls)}
    keep_ids = walls | openings | {o.id for o in scene.objects if o.room_id == room.id}
    geo = scene_geometry(scene, geometry=geometry)
    geo = geo.restricted(rooms=[room.id], keep=lambda b: b.owned_by(keep_ids))
    pts = np.asarray(room.vertices, float)
    lo, hi = pts.min(0), pts.max(0)
    span = max(*(hi - lo), 0.5) / (1.0 - 2 * _MARGIN)
    floor_y, eye_y = _vertical_range(scene, geo)
    camera = top_camera(THOR_FRAME, (lo + hi) / 2, span, eye_y=eye_y, floor_y=floor_y)
    canvas = Canvas(render_views(geo.render_scene(), [camera], px)[0], background)
    _draw_outline(canvas, camera, scene, room, distinct_colors(1)[0], max(2, px // 250), px)
    bodies = geo.objects()
    if labels and len(bodies):
        tops = np.c_[bodies.centers[:, 0], bodies.tops(), bodies.centers[:, 2]]
        spots = camera.project_to_pixels(THOR_FRAME.points(tops), px, px)
        for object_id, at in zip(bodies.owners, spots, strict=True):
            canvas.label(object_id, at, size_px=label_size_px(px, 0.75), bg_alpha=0.75)
    canvas.label(room.id, (4, 4), size_px=label_size_px(px, 1.1), anchor="topleft", avoid=False)
    return canvas.array()


def relation_overlay(scene: Scene, ids: Sequence[str], *, px: int = 512, background: RGB | None = WHITE,
                     geometry: str = "box") -> np.ndarray:
    """A top-down perspective view with the 3D boxes of ``ids`` outlined in distinct colours
    and labelled with their ids (LEGO-Eval's ``get_spatial_relation``).

    ``ids`` name objects, doors, windows or walls (a wall is its segment as a 0.2 m slab); an
    object standing on a receptacle brings the receptacle's box along. The first id is the
    anchor: the image is turned so the anchor faces its bottom edge (an object's front; a
    wall, door or window's side facing into its room), as if the viewer stood in front of
    the anchor looking at it. The anchor's own left is therefore on the image's right.
    The view frames the boxes and the anchor's room.
    """
    px = check_px(px, "relation_overlay")
    if isinstance(ids, str) or not ids:
        raise ViewInputError(f"relation_overlay: ids must be a non-empty list of element ids, got {ids!r}")
    elements = _with_receptacles(scene, list(dict.fromkeys(ids)))
    anchor = elements[0]
    region = [b.center[[0, 2]] + d for b in elements for d in _footprint_offsets(b)]
    room_poly = _anchor_room(scene, anchor)
    if room_poly is not None:
        region += list(np.asarray(room_poly.exterior.coords))
    fx, fz = anchor.facing_xz
    right = np.array([-fz, fx])  # image right when the facing points down
    pts = np.asarray(region, float)
    a, b = pts @ right, pts @ np.array([fx, fz])
    center = right * (a.min() + a.max()) / 2 + np.array([fx, fz]) * (b.min() + b.max()) / 2
    half = max(a.max() - a.min(), b.max() - b.min(), 1.0) / 2 * 1.08 + 0.2
    geo = scene_geometry(scene, geometry=geometry)
    floor_y, top_y = _vertical_range(scene, geo)
    height = max(half / math.tan(math.radians(RELATION_FOV_DEG / 2)), top_y - floor_y - 0.5)
    eye = (center[0], floor_y + height, center[1])
    camera = look_camera(THOR_FRAME, eye, (center[0], floor_y, center[1]), fov_deg=RELATION_FOV_DEG,
                         up=(-fx, 0.0, -fz), near_m=0.05, far_m=height + 2.0)
    canvas = Canvas(render_views(geo.render_scene(), [camera], px)[0], background)
    palette = distinct_colors(len(elements))
    width = max(2, px // 200)
    corners = [_corners(b) for b in elements]
    for box_corners, rgb in zip(corners, palette, strict=True):
        canvas.box_wireframe(camera.project_to_pixels(THOR_FRAME.points(box_corners), px, px), rgb, width)
    for element, box_corners, rgb in zip(elements, corners, palette, strict=True):
        proj = camera.project_to_pixels(THOR_FRAME.points(box_corners), px, px)
        at = (proj[:, 0].mean(), proj[:, 1].min() - label_size_px(px))
        canvas.label(element.id, at, size_px=label_size_px(px, 0.85), fg=WHITE, bg=rgb, bg_alpha=0.9)
    return canvas.array()


def _room(scene: Scene, room_id: str, where: str) -> Room:
    try:
        return scene.room(room_id)
    except KeyError as exc:
        raise ViewInputError(f"{where}: {exc.args[0]}") from None


def _vertical_range(scene: Scene, geo: SceneGeometry) -> tuple[float, float]:
    """Lowest floor and a height 1 m above everything drawn, metres."""
    floor = min((r.floor_y for r in scene.rooms), default=0.0)
    return floor, max(geo.top_y(), floor + 2.0) + 1.0


def _with_receptacles(scene: Scene, ids: list[str]) -> list[ElementBox]:
    out = [element_box(scene, i, where="relation_overlay") for i in ids]
    seen = set(ids)
    for element in list(out):
        if element.kind != "object":
            continue
        parent = scene.object(element.id).parent_id
        if parent and parent not in seen and scene.kind_of(parent) == "object":
            seen.add(parent)
            out.append(element_box(scene, parent, where="relation_overlay"))
    return out


def _corners(box: ElementBox) -> np.ndarray:
    return box.center + (BOX_CORNER_SIGNS * box.size / 2.0) @ box.rotation.T


def _footprint_offsets(box: ElementBox) -> np.ndarray:
    return (_corners(box) - box.center)[:, [0, 2]]


def _anchor_room(scene: Scene, anchor: ElementBox) -> Polygon | None:
    if anchor.kind == "object":
        room_ids = [scene.object(anchor.id).room_id]
    elif anchor.kind == "wall":
        room_ids = [scene.wall(anchor.id).room_id]
    else:
        op = scene.door(anchor.id) if anchor.kind == "door" else scene.window(anchor.id)
        room_ids = [op.room0, op.room1]
    for rid in room_ids:
        if rid and rid != EXTERIOR and scene.kind_of(rid) == "room":
            return Polygon(scene.room(rid).vertices)
    return None
