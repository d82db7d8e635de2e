"""Close views: a wall from inside its room, one element from its front or from above, and
an object alone from five sides (LEGO-Eval's ``get_wall_scene``, ``get_frontview_object``,
``get_topdown_object`` and ``get_multiview_rendered_object``).

Conventions: an object's right is its local +x (facing north, its right is east), its front
local +z; doors and windows face into their room. Top views put the front at the bottom of
the image, so every close-up of the same element agrees on which way is front.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from shapely.geometry import LineString, Polygon

from buildbench.geometry import BOX_CORNER_SIGNS
from buildbench.scenes.model import EXTERIOR, Scene, Wall
from buildbench.scenes.views.cameras import look_camera, segments_hit, top_camera
from buildbench.scenes.views.drawing import WHITE, Canvas, render_views, stamp
from buildbench.scenes.views.frame import THOR_FRAME, ViewInputError, check_px
from buildbench.scenes.views.geometry import ElementBox, SceneGeometry, WallSides, element_box, scene_geometry

RGB = tuple[float, float, float]

#: Objects whose footprint comes this close to the room's outline stay in a wall view; the
#: rest are taken out so the wall is seen unoccluded (the original keeps 0.7–0.8 m).
WALL_KEEP_MARGIN_M = 0.8
#: The wall view's camera stands this far in front of the opposite wall (as the original).
WALL_CAMERA_BACKOFF_M = 1.0
WALL_FOV_DEG = 90.0
FRONT_FOV_DEG = 60.0
FRONT_ELEVATION_DEG = 12.0
MULTIVIEW_FOV_DEG = 50.0
MULTIVIEW_ELEVATION_DEG = 15.0
MULTIVIEW_KEYS = ("front", "right", "left", "top", "back")


def wall_view(scene: Scene, wall_id: str, *, px: int = 512, keep_margin_m: float = WALL_KEEP_MARGIN_M,
              background: RGB | None = WHITE, geometry: str = "box") -> np.ndarray:
    """The wall seen from inside its room, square on, with the room's middle cleared.

    The camera stands :data:`WALL_CAMERA_BACKOFF_M` in front of the opposite side of the
    room (half-way across a shallow room), at half the wall's height (at most 1.5 m), and
    looks straight at the wall's middle with a 90° field of view. Objects of the room whose
    footprint is farther than ``keep_margin_m`` from the room's outline are taken out (with
    what stands on them), as is anything the camera stands inside. Doors and windows show
    as framed holes. An empty wall (an open-plan boundary) is not drawn: its view looks
    through it into the next room, as an agent in AI2-THOR would see.
    """
    px = check_px(px, "wall_view")
    wall = _wall(scene, wall_id, "wall_view")
    sides = WallSides(scene)
    room_poly = sides.room_polygon(wall.room_id)
    if wall.exterior or wall.room_id == EXTERIOR or room_poly is None:
        raise ViewInputError(f"wall_view: wall {wall_id!r} is an exterior side or belongs to no room; "
                             "ask for the side facing into a room")
    n = np.array(sides.normal(wall))
    mid = np.array(wall.point_at(wall.width_m / 2.0))
    depth = _depth_across(room_poly, mid, n)
    backoff = depth - WALL_CAMERA_BACKOFF_M if depth > 2 * WALL_CAMERA_BACKOFF_M else depth / 2.0
    eye_y = wall.bottom_y + min(wall.height_m / 2.0, 1.5)
    eye = np.array([mid[0] + n[0] * backoff, eye_y, mid[1] + n[1] * backoff])
    geo = scene_geometry(scene, geometry=geometry)
    geo = geo.restricted(drop=_middle_objects(scene, geo, wall.room_id, room_poly, keep_margin_m))
    inside = _contains_point(geo, eye, margin_m=0.1)
    geo = geo.restricted(drop={geo.boxes.owners[i] for i in np.flatnonzero(inside)
                               if geo.boxes.kinds[i] not in ("wall", "door", "window")})
    camera = look_camera(THOR_FRAME, eye, (mid[0], eye_y, mid[1]), fov_deg=WALL_FOV_DEG, near_m=0.05, far_m=200.0)
    return Canvas(render_views(geo.render_scene(), [camera], px)[0], background).array()


def object_front_view(scene: Scene, element_id: str, *, px: int = 512, background: RGB | None = WHITE,
                      geometry: str = "box") -> np.ndarray:
    """An object, door or window seen from its front, slightly from above (12°), framed to
    fill about 70 % of a 60° view. Whatever stands between the camera and the element
    (objects, wall pieces) is taken out, so the camera never needs to move to another side.
    """
    px = check_px(px, "object_front_view")
    target = _target(scene, element_id, "object_front_view")
    front = np.array([target.facing_xz[0], 0.0, target.facing_xz[1]])
    up = np.array([0.0, 1.0, 0.0])
    reach = 0.5 * max(target.size[0], target.size[1], 0.1)
    dist = reach / math.tan(math.radians(FRONT_FOV_DEG / 2)) / 0.7 + target.size[2] / 2
    el = math.radians(FRONT_ELEVATION_DEG)
    eye = target.center + dist * (math.cos(el) * front + math.sin(el) * up)
    geo = _clear_line_of_sight(scene, scene_geometry(scene, geometry=geometry), target, eye)
    camera = look_camera(THOR_FRAME, eye, target.center, fov_deg=FRONT_FOV_DEG, near_m=0.02, far_m=200.0)
    return Canvas(render_views(geo.render_scene(), [camera], px)[0], background).array()


def object_top_view(scene: Scene, element_id: str, *, px: int = 512, background: RGB | None = WHITE,
                    geometry: str = "box") -> np.ndarray:
    """An object, door or window from straight above (orthographic), centred on it, its
    front toward the bottom of the image, with about its own size of surroundings on each
    side. Anything above it (shelves, hanging lamps, the wall over a window) is taken out;
    what stands on it stays."""
    px = check_px(px, "object_top_view")
    target = _target(scene, element_id, "object_top_view")
    geo = scene_geometry(scene, geometry=geometry)
    keep = {target.id} | _descendants(scene, target.id)
    corners = geo.boxes.corners()
    target_top = float((target.center + (BOX_CORNER_SIGNS * target.size / 2) @ target.rotation.T)[:, 1].max())
    above = corners[:, :, 1].min(axis=1) >= target_top - 0.01
    geo = geo.restricted(drop={o for o, hit in zip(geo.boxes.owners, above, strict=True) if hit and o not in keep})
    fx, fz = target.facing_xz
    footprint = float(np.hypot(target.size[0], target.size[2]))
    span = max(2.2 * footprint, 1.0)
    top = float(corners[:, :, 1].max()) + 1.0 if len(geo.boxes) else target_top + 1.0
    floor_y = min((r.floor_y for r in scene.rooms), default=0.0)
    camera = top_camera(THOR_FRAME, target.center[[0, 2]], span, eye_y=top, floor_y=floor_y,
                        image_up_xz=(-fx, -fz))
    return Canvas(render_views(geo.render_scene(), [camera], px)[0], background).array()


def object_multiview(scene: Scene, element_id: str, *, px: int = 512,
                     background: RGB | None = WHITE, geometry: str = "box") -> dict[str, np.ndarray]:
    """The object (or door, window) alone, like an asset's catalogue shots: ``front``,
    ``right`` (seen from its right-hand side), ``left``, ``top`` (front at the bottom) and
    ``back``, each 15° from above except ``top``. The front image is stamped
    ``Image of: <id>``."""
    px = check_px(px, "object_multiview")
    target = _target(scene, element_id, "object_multiview")
    geo = scene_geometry(scene, geometry=geometry)
    geo = geo.restricted(rooms=(), keep=lambda b: b.owned_by({target.id}))
    front = np.array([target.facing_xz[0], 0.0, target.facing_xz[1]])
    right = np.array([front[2], 0.0, -front[0]])
    up = np.array([0.0, 1.0, 0.0])
    radius = 0.5 * float(np.linalg.norm(target.size)) or 0.05
    dist = radius / math.sin(math.radians(MULTIVIEW_FOV_DEG / 2)) * 1.05
    el = math.radians(MULTIVIEW_ELEVATION_DEG)
    sides = {"front": front, "right": right, "left": -right, "back": -front}
    cameras = [look_camera(THOR_FRAME, target.center + dist * (math.cos(el) * sides[k] + math.sin(el) * up),
                           target.center, fov_deg=MULTIVIEW_FOV_DEG, near_m=0.01, far_m=dist * 4)
               for k in ("front", "right", "left", "back")]
    cameras.insert(3, look_camera(THOR_FRAME, target.center + dist * up, target.center, fov_deg=MULTIVIEW_FOV_DEG,
                                  up=-front, near_m=0.01, far_m=dist * 4))
    renders = render_views(geo.render_scene(), cameras, px)
    images = {k: Canvas(img, background).array() for k, img in zip(MULTIVIEW_KEYS, renders, strict=True)}
    images["front"] = stamp(images["front"], f"Image of: {target.id}")
    return images


def _wall(scene: Scene, wall_id: str, where: str) -> Wall:
    try:
        return scene.wall(wall_id)
    except KeyError as exc:
        raise ViewInputError(f"{where}: {exc.args[0]}") from None


def _target(scene: Scene, element_id: str, where: str) -> ElementBox:
    target = element_box(scene, element_id, where=where)
    if target.kind == "wall":
        raise ViewInputError(f"{where}: {element_id!r} is a wall; pass an object, door or window id")
    return target


def _depth_across(room: Polygon, start_xz: np.ndarray, normal_xz: np.ndarray) -> float:
    """How far the room reaches from ``start_xz`` along ``normal_xz`` before its outline."""
    far = max(room.bounds[2] - room.bounds[0], room.bounds[3] - room.bounds[1]) * 2 + 1
    ray = LineString([start_xz + normal_xz * 1e-3, start_xz + normal_xz * far])
    hits = ray.intersection(room.exterior)
    pts = [np.array(p.coords[0]) for p in getattr(hits, "geoms", [hits]) if not p.is_empty]
    return min((float(np.linalg.norm(p - start_xz)) for p in pts), default=1.0)


def _middle_objects(scene: Scene, geo: SceneGeometry, room_id: str, room: Polygon, margin_m: float) -> set[str]:
    """Ids of the room's objects farther than ``margin_m`` from its outline, and of what
    stands on them."""
    in_room = {o.id for o in scene.objects_in(room_id) if o.parent_id is None}
    bodies = geo.objects()
    bodies = bodies.select(bodies.owned_by(in_room))
    far = shapely.distance(room.exterior, bodies.footprints()) > margin_m
    drop = {object_id for object_id, is_far in zip(bodies.owners, far, strict=True) if is_far}
    for obj in scene.objects:
        if obj.parent_id in drop:
            drop |= {obj.id} | _descendants(scene, obj.id)
    return drop


def _descendants(scene: Scene, object_id: str) -> set[str]:
    found: set[str] = set()
    frontier = [object_id]
    while frontier:
        kids = [o.id for o in scene.objects if o.parent_id in frontier and o.id not in found]
        found.update(kids)
        frontier = kids
    return found


def _contains_point(geo: SceneGeometry, point: np.ndarray, margin_m: float) -> np.ndarray:
    local = np.einsum("nji,nj->ni", geo.boxes.rotations, point[None, :] - geo.boxes.centers)
    return np.all(np.abs(local) <= geo.boxes.sizes / 2 + margin_m, axis=1)


def _clear_line_of_sight(scene: Scene, geo: SceneGeometry, target: ElementBox, eye: np.ndarray) -> SceneGeometry:
    """``geo`` without what blocks the view from ``eye`` to the target's centre and to its
    corners pulled 10 % inward. Objects go whole; walls lose only the pieces in the way."""
    exempt = {target.id} | _descendants(scene, target.id)
    if target.kind == "object" and (parent := scene.object(target.id).parent_id):
        exempt.add(parent)
    ends = np.vstack([target.center, target.center + (BOX_CORNER_SIGNS * target.size * 0.45) @ target.rotation.T])
    hit = segments_hit(geo.boxes, np.repeat(eye[None], len(ends), 0), ends)
    owners, kinds = geo.boxes.owners, geo.boxes.kinds
    blocked_owners = {owners[i] for i in np.flatnonzero(hit) if kinds[i] != "wall" and owners[i] not in exempt}
    keep = ~geo.boxes.owned_by(blocked_owners) & ~(hit & np.array([k == "wall" for k in kinds], bool))
    return geo.select(keep)

