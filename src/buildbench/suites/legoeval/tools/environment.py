"""The eight environment-interaction tools (§3.2), rendered by :mod:`buildbench.scenes.views`.

Images are PNG bytes under ``"{arg}*/*{func}*/*output__image"`` keys, as the original names
them; :func:`get_spatial_relation` also reports, as text, where each element of a tuple lies
in its anchor's own frame (the original leaves that to the validator reading the overlay).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .context import ToolContext, front_xz, unknown
from .memo import freeze

#: The separator of the original's image keys.
SEP = "*/*"
IMAGE_SUFFIX = "output__image"
#: Offsets smaller than this, metres, count as "level" / "in line" in the relation text.
LEVEL_TOL_M = 0.05


def image_key(arg: str, func: str) -> str:
    return f"{arg}{SEP}{func}{SEP}{IMAGE_SUFFIX}"


def is_image_key(key: str) -> bool:
    return IMAGE_SUFFIX in key


def png(pixels: np.ndarray) -> bytes:
    from buildbench.llm import ImagePart

    return ImagePart.from_array(np.asarray(pixels, dtype=np.uint8)).png


def _views() -> Any:
    from buildbench.scenes import views

    return views


def _view_key(fn: Callable[..., Any], ctx: ToolContext, args: tuple[Any, ...]) -> tuple[Any, ...]:
    # px and geometry are read at each call: a caller may change them on a live context
    return (fn.__module__, fn.__qualname__, ctx.image_px, ctx.geometry, freeze(args))


def _render(fn: Callable[..., Any], ctx: ToolContext, *args: Any) -> bytes:
    """``fn``'s view of the context's scene as PNG bytes, drawn once per context."""
    from buildbench.scenes.views.settled import settled_scene

    def draw(geometries: dict[Any, Any]) -> bytes:
        with settled_scene(ctx.scene, geometries):
            return png(fn(ctx.scene, *args, px=ctx.image_px, geometry=ctx.geometry))

    return ctx.views.get(ctx.scene, _view_key(fn, ctx, args), draw)


def _per_id(ctx: ToolContext, ids: list[str], kinds: dict[str, dict[str, Any]], func: str,
            render: Callable[[str], bytes]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for eid in ids:
        if not any(eid in table for table in kinds.values()):
            out[f"{eid}_error"] = unknown("/".join(kinds), eid, [k for t in kinds.values() for k in t])
            continue
        if ctx.render:
            try:
                out[image_key(eid, func)] = render(eid)
            except (KeyError, ValueError) as exc:
                out[f"{eid}_error"] = f"could not render {eid!r}: {exc}"
    return out


def get_topdown_scene(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    if not ctx.render:
        return {"rooms_shown": list(ctx.index.rooms)}
    return {image_key("scene", "topdown_scene"): _render(_views().topdown_scene, ctx),
            "rooms_shown": list(ctx.index.rooms)}


def get_topdown_room(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    views = _views()
    return _per_id(ctx, ids, {"room": ctx.index.rooms}, "topdown_room",
                   lambda rid: _render(views.topdown_room, ctx, rid))


#: Suffix of the outside twin of a Holodeck wall side.
EXTERIOR_TWIN = "|exterior"


def inside_side(ctx: ToolContext, wall_id: str) -> str:
    """The side to view for a wall id: a Holodeck outside twin (``…|exterior``) is seen from
    inside its room, as the original's pre-rendered view of it is; other ids are themselves."""
    inner = wall_id.removesuffix(EXTERIOR_TWIN)
    return inner if wall_id.endswith(EXTERIOR_TWIN) and inner in ctx.index.walls else wall_id


def get_wall_scene(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    """The wall seen from its room; outside the original-compatible mode an empty
    (invisible) wall, which the view looks through, is also named ``"<id>_empty": true``."""
    views = _views()
    out = _per_id(ctx, ids, {"wall": ctx.index.walls}, "wall in scene",
                  lambda wid: _render(views.wall_view, ctx, inside_side(ctx, wid)))
    if not ctx.wall_midpoint_positions:
        for wid in ids:
            wall = ctx.index.walls.get(wid)
            if wall is not None and wall.empty:
                out[f"{wid}_empty"] = True
    return out


def _viewable(ctx: ToolContext) -> dict[str, dict[str, Any]]:
    return {"object": ctx.index.objects, "door": ctx.index.doors, "window": ctx.index.windows}


def get_frontview_object(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    views = _views()
    return _per_id(ctx, ids, _viewable(ctx), "frontview",
                   lambda oid: _render(views.object_front_view, ctx, oid))


def get_topdown_object(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    views = _views()
    return _per_id(ctx, ids, _viewable(ctx), "topdown_rendered",
                   lambda oid: _render(views.object_top_view, ctx, oid))


def scene_materials(ctx: ToolContext) -> list[str]:
    """Floor and wall material names used in the scene (outside faces included), in
    first-seen order."""
    names = [r.floor_material for r in ctx.scene.rooms] + [r.wall_material for r in ctx.scene.rooms]
    names += [w.material for w in ctx.scene.walls]
    return list(dict.fromkeys(n for n in names if n))


def get_material_image(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    known = scene_materials(ctx)
    out: dict[str, Any] = {}
    for name in ids:
        if name not in known:
            out[f"{name}_error"] = f"no floor or wall material named {name!r} in the scene (known: {known})"
            continue
        if ctx.render:
            image = png(_views().material_swatch(name, px=min(ctx.image_px, 256)))
            out[image_key(name, "material")] = image
            ctx.remember_visual(name, [image])
        else:
            ctx.remember_visual(name, [])
    return out


def get_multiview_rendered_object(ctx: ToolContext, ids: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for oid in ids:
        if not any(oid in table for table in _viewable(ctx).values()):
            out[f"{oid}_error"] = unknown("object/door/window", oid, ctx.index.objects)
            continue
        images: list[bytes] = []
        if ctx.render:
            try:
                views = _multiview(ctx, oid)
            except (KeyError, ValueError) as exc:
                out[f"{oid}_error"] = f"could not render {oid!r}: {exc}"
                continue
            for view, image in views.items():
                out[image_key(oid, f"{view}_rendered")] = image
                images.append(image)
        ctx.remember_visual(oid, images)
    return out


def _multiview(ctx: ToolContext, oid: str) -> dict[str, bytes]:
    """The element's views as PNG bytes by view name, drawn once per context."""
    from buildbench.scenes.views.settled import settled_scene

    fn = _views().object_multiview

    def draw(geometries: dict[Any, Any]) -> dict[str, bytes]:
        with settled_scene(ctx.scene, geometries):
            views = fn(ctx.scene, oid, px=ctx.image_px, geometry=ctx.geometry)
        return {view: png(pixels) for view, pixels in views.items()}

    return dict(ctx.views.get(ctx.scene, _view_key(fn, ctx, (oid,)), draw))


def element_frame(ctx: ToolContext, eid: str) -> tuple[np.ndarray, np.ndarray]:
    """Centre ``(x, y, z)`` and front ``(x, z)`` of an object, wall, door or window: an
    object's front is its local +z; a wall's or opening's front points into its room."""
    idx = ctx.index
    if eid in idx.objects:
        obj = idx.objects[eid]
        return np.asarray(obj.center, float), np.asarray(front_xz(obj), float)
    opening = idx.doors.get(eid) or idx.windows.get(eid)
    wall = idx.walls.get(eid) if opening is None else idx.walls.get(opening.wall0)
    if wall is None:
        raise KeyError(eid)
    if opening is not None:
        center = np.asarray(ctx.scene.opening_center(opening), float)
    else:
        mx, mz = (wall.start[0] + wall.end[0]) / 2, (wall.start[1] + wall.end[1]) / 2
        center = np.array([mx, wall.bottom_y + wall.height_m / 2, mz])
    dx, dz = wall.direction_xz
    normal = np.array([-dz, dx])
    if wall.room_id in idx.rooms:
        cx, cz = idx.centroid(wall.room_id)
        if (cx - center[0]) * normal[0] + (cz - center[2]) * normal[1] < 0:
            normal = -normal
    return center, normal


def relation_text(ctx: ToolContext, anchor: str, other: str) -> dict[str, Any]:
    """Where ``other`` lies in ``anchor``'s frame: right (the anchor's local +x, AI2-THOR's
    left-handed convention), front (its facing) and up offsets in metres, the horizontal
    distance between centres, and whether ``other`` faces the anchor."""
    a_center, a_front = element_frame(ctx, anchor)
    b_center, b_front = element_frame(ctx, other)
    d = b_center - a_center
    right_axis = np.array([a_front[1], -a_front[0]])
    right = float(d[0] * right_axis[0] + d[2] * right_axis[1])
    front = float(d[0] * a_front[0] + d[2] * a_front[1])
    up = float(d[1])
    if abs(right) < LEVEL_TOL_M and abs(front) < LEVEL_TOL_M:
        side = "same spot"
    elif abs(front) >= abs(right):
        side = "in front of" if front > 0 else "behind"
    else:
        side = "right of" if right > 0 else "left of"
    to_anchor = -np.array([d[0], d[2]])
    dist = float(math.hypot(d[0], d[2]))
    facing = bool(dist > 1e-6 and float(b_front @ to_anchor) / dist > math.cos(math.radians(30)))
    return {"distance_m": round(dist, 2), "right_m": round(right, 2), "front_m": round(front, 2),
            "up_m": round(up, 2), "side_in_anchor_frame": side,
            "vertical": "above" if up > LEVEL_TOL_M else "below" if up < -LEVEL_TOL_M else "level",
            "faces_anchor": facing, "same_direction": bool(float(a_front @ b_front) > math.cos(math.radians(30)))}


def get_spatial_relation(ctx: ToolContext, groups: list[list[str]], key: str | None = None) -> dict[str, Any]:
    """Per tuple (anchor first): an overlay of the elements' boxes with id labels and, for each
    other element, :func:`relation_text`. A receptacle of a small object joins its tuple (in
    the overlay, not in the image key, which joins the tuple's ids with ``_`` as the original).
    ``key`` names the image of a one-tuple call as the original-compatible mode builds it (the
    original draws a tuple with unknown ids, showing the ones it finds)."""
    out: dict[str, Any] = {}
    for group in groups:
        missing = [e for e in group if ctx.index.kind_of(e) in (None, "room")]
        for eid in missing:
            out[f"{eid}_error"] = unknown("object/wall/door/window", eid, ctx.index.objects)
        given = [e for e in group if e not in missing]
        members = list(given)
        for e in list(members):
            parent = ctx.index.objects[e].parent_id if e in ctx.index.objects else None
            if parent and parent in ctx.index.objects and parent not in members:
                members.append(parent)
        if not members and key is None:
            continue
        for other in members[1:]:
            out[f"{members[0]}|{other}_relation"] = relation_text(ctx, members[0], other)
        if ctx.render:
            name = key if key is not None else "_".join(given)
            out[image_key(name, "spatial_relation")] = (
                _render(_views().relation_overlay, ctx, members) if members else _render(_views().topdown_scene, ctx))
    return out


ENVIRONMENT: dict[str, Callable[..., Any]] = {
    "get_topdown_scene": get_topdown_scene,
    "get_topdown_room": get_topdown_room,
    "get_wall_scene": get_wall_scene,
    "get_frontview_object": get_frontview_object,
    "get_topdown_object": get_topdown_object,
    "get_material_image": get_material_image,
    "get_multiview_rendered_object": get_multiview_rendered_object,
    "get_spatial_relation": get_spatial_relation,
}
