"""SceneReVis's visual feedback: an orthographic top view and a "random diagonal" view of a
room, annotated with blue 3D boxes, front arrows and red floor dots every metre labelled
``(x, z)``, and the side-by-side merge with labelled, coloured borders.

Orientation follows the original's Blender import (:data:`REVIS_FRAME`): in the top view
+x points right and +z points *down* the image. Camera rules as the original: top view
``ortho_scale = 1.2 · span`` (span = the larger room extent); diagonal view a 40 mm lens at
one of the azimuths −45°, 45°, 135°, −135° (drawn from the seed), ``0.9 · dist`` out and
``0.6 · dist`` up with ``dist = max(8, 1.5 · span)``, aimed 0.5 m above the room centre.
Only floors (grey slabs 0.15 m deep) and objects are drawn, no walls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import shapely
from shapely.geometry import Polygon

from buildbench.render import Camera, TriangleMesh
from buildbench.scenes.model import Scene
from buildbench.scenes.views.cameras import top_camera
from buildbench.scenes.views.drawing import BLACK, WHITE, Canvas, label_size_px, render_views, to8
from buildbench.scenes.views.frame import REVIS_FRAME, ViewInputError, check_px
from buildbench.scenes.views.geometry import BoxSet, FloorSlab, SceneGeometry, scene_geometry
from buildbench.scenes.views.meshes import check_level

RGB = tuple[float, float, float]

BOX_RGB: RGB = (0.0, 0.3, 1.0)
DOT_RGB: RGB = (1.0, 0.0, 0.0)
FLOOR_RGB: RGB = (0.8, 0.8, 0.8)
FLOOR_DEPTH_M = 0.15
DOT_SPACING_M = 1.0
DOT_RADIUS_M = 0.05
DIAGONAL_AZIMUTHS_DEG = (-45.0, 45.0, 135.0, -135.0)
DIAGONAL_LENS_MM = 40.0
#: Merge layout of the original, pixels.
BORDER_PX, LABEL_BAND_PX, PADDING_PX = 4, 30, 10
BORDER_RGBS: tuple[RGB, ...] = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.6, 0.0), (1.0, 0.55, 0.0))


def revis_views(scene: Scene, seed: int, px: int = 512, *, background: RGB | None = None,
                geometry: str = "box") -> tuple[np.ndarray, np.ndarray]:
    """The annotated top and diagonal views of the scene's rooms, ``(px, px, 4)`` uint8 each
    (transparent background by default, as the original's PNGs). ``seed`` picks the
    diagonal azimuth. At the ``procedural`` and ``mesh`` levels the objects are their
    shaded meshes and the top view also labels each object with its id."""
    px = check_px(px, "revis_views")
    check_level(geometry, "revis_views")
    if not scene.rooms:
        raise ViewInputError("revis_views: the scene has no room to frame")
    (x0, z0), (x1, z1) = scene.bounds_xz()
    span = max(x1 - x0, z1 - z0, 0.5)
    cx, cz = (x0 + x1) / 2, (z0 + z1) / 2
    floor_y = min(r.floor_y for r in scene.rooms)
    dist = max(8.0, 1.5 * span)
    az = math.radians(DIAGONAL_AZIMUTHS_DEG[int(np.random.default_rng([seed]).integers(len(DIAGONAL_AZIMUTHS_DEG)))])
    top = top_camera(REVIS_FRAME, (cx, cz), 1.2 * span, eye_y=floor_y + dist, floor_y=floor_y - FLOOR_DEPTH_M,
                     image_up_xz=(0.0, -1.0))
    # Blender's (X, Y) = (x, −z): an azimuth counted in Blender's ground plane.
    eye = np.array([cx + 0.9 * dist * math.cos(az), floor_y + 0.6 * dist, cz - 0.9 * dist * math.sin(az)])
    diagonal = Camera(REVIS_FRAME.points(eye), REVIS_FRAME.points(np.array([cx, floor_y + 0.5, cz])),
                      REVIS_FRAME.up(), near_m=0.1, far_m=4.0 * dist, focal_length_mm=DIAGONAL_LENS_MM)
    geo = _objects_on_grey_floors(scene, geometry)
    dots = _floor_dots(scene)
    render = geo.render_scene(REVIS_FRAME, floor_thickness_m=FLOOR_DEPTH_M, extra_meshes=[_dot_mesh(dots)] if len(dots) else [])
    images = render_views(render, [top, diagonal], px)
    labelled = (geo.meshes is not None, False)
    return tuple(_annotate(img, cam, geo.boxes, dots, px, background, labels=lab)  # type: ignore[return-value]
                 for img, cam, lab in zip(images, (top, diagonal), labelled, strict=True))


def merge_views(images: Sequence[np.ndarray], labels: Sequence[str], *,
                border_rgbs: Sequence[RGB] = BORDER_RGBS) -> np.ndarray:
    """Paste views side by side on a white canvas, each under a label band and inside a
    coloured border (first red, second blue, …), as SceneReVis shows them to its model."""
    if len(images) == 0 or len(images) != len(labels):
        raise ViewInputError(f"merge_views: need as many labels as images (>= 1), got {len(images)} and {len(labels)}")
    for i, img in enumerate(images):
        if not (isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 4):
            raise ViewInputError(f"merge_views: images[{i}] must be a (H, W, 4) uint8 array")
    boxed = [(img.shape[1] + 2 * BORDER_PX, img.shape[0] + 2 * BORDER_PX) for img in images]
    width = PADDING_PX + sum(w + PADDING_PX for w, _ in boxed)
    height = 2 * PADDING_PX + LABEL_BAND_PX + max(h for _, h in boxed)
    canvas = Canvas(np.zeros((height, width, 4), np.uint8), background=WHITE)
    x = PADDING_PX
    for i, (img, text) in enumerate(zip(images, labels, strict=True)):
        rgb = border_rgbs[i % len(border_rgbs)]
        w, h = boxed[i]
        top = PADDING_PX + LABEL_BAND_PX
        canvas.draw.rectangle([x, top, x + w - 1, top + h - 1], fill=to8(rgb))
        tile = Canvas(img, background=WHITE).image
        canvas.image.paste(tile, (x + BORDER_PX, top + BORDER_PX))
        canvas.label(text, (x + w / 2, PADDING_PX + LABEL_BAND_PX / 2), size_px=18, fg=BLACK, bg=None, avoid=False)
        x += w + PADDING_PX
    return canvas.array()


def _objects_on_grey_floors(scene: Scene, geometry: str) -> SceneGeometry:
    geo = scene_geometry(scene, front_marks=False, geometry=geometry)
    floors = tuple(FloorSlab(f.room_id, f.vertices_xz, f.floor_y, FLOOR_RGB) for f in geo.floors)
    objects = geo.restricted(keep=lambda b: np.array([k == "object" for k in b.kinds], bool))
    return SceneGeometry(objects.boxes, floors, objects.meshes)


def _floor_dots(scene: Scene) -> np.ndarray:
    """``(n, 3)`` scene points on whole-metre ``(x, z)`` inside (or on) some room's floor."""
    out = []
    for room in scene.rooms:
        poly = Polygon(room.vertices).buffer(1e-6)
        lo = np.ceil(np.asarray(poly.bounds[:2]) / DOT_SPACING_M)
        hi = np.floor(np.asarray(poly.bounds[2:]) / DOT_SPACING_M)
        gx, gz = np.meshgrid(np.arange(lo[0], hi[0] + 1), np.arange(lo[1], hi[1] + 1), indexing="ij")
        xs, zs = gx.ravel() * DOT_SPACING_M, gz.ravel() * DOT_SPACING_M
        inside = shapely.contains_xy(poly, xs, zs)
        out += [(x, room.floor_y + 0.003, z) for x, z in zip(xs[inside], zs[inside], strict=True)]
    return np.unique(np.round(np.array(out, float).reshape(-1, 3), 6), axis=0)


def _dot_mesh(dots: np.ndarray, segments: int = 12) -> TriangleMesh:
    ang = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    ring = np.c_[np.cos(ang), np.zeros(segments), np.sin(ang)] * DOT_RADIUS_M
    verts = np.concatenate([np.vstack([d, d + ring]) for d in dots])
    per = segments + 1
    fan = np.array([[0, 1 + j, 1 + (j + 1) % segments] for j in range(segments)])
    faces = np.concatenate([fan + per * i for i in range(len(dots))])
    return TriangleMesh(REVIS_FRAME.points(verts), faces, np.asarray(DOT_RGB))


def _annotate(image: np.ndarray, camera: Camera, bodies: BoxSet, dots: np.ndarray, px: int,
              background: RGB | None, *, labels: bool) -> np.ndarray:
    canvas = Canvas(image, background)
    width = max(1, px // 256)
    if len(bodies):
        corners_px = camera.project_to_pixels(REVIS_FRAME.points(bodies.corners().reshape(-1, 3)), px, px)
        corners_px = corners_px.reshape(-1, 8, 3)
        starts = np.c_[bodies.centers[:, 0], bodies.tops(), bodies.centers[:, 2]]
        reach = 0.5 * np.maximum(bodies.sizes[:, 2], 0.1) + 0.3
        fronts = bodies.fronts_xz()
        ends = starts + np.c_[fronts[:, 0], np.zeros(len(bodies)), fronts[:, 1]] * reach[:, None]
        arrows = camera.project_to_pixels(REVIS_FRAME.points(np.vstack([starts, ends])), px, px)
        n = len(bodies)
        for i in range(n):
            canvas.box_wireframe(corners_px[i], BOX_RGB, width)
            canvas.arrow(arrows[i], arrows[n + i], BOX_RGB, width + 1)
    if len(dots):
        spots = camera.project_to_pixels(REVIS_FRAME.points(np.vstack([dots, dots[:1] + [DOT_SPACING_M, 0, 0]])), px, px)
        px_per_m = float(np.hypot(*(spots[-1, :2] - spots[0, :2])))
        size = int(min(max(px_per_m * 0.2, 7), label_size_px(px, 0.8)))
        for (x, _, z), at in zip(dots, spots[:-1], strict=True):
            canvas.label(f"({x + 0.0:g}, {z + 0.0:g})", (at[0], at[1] + size * 0.9), size_px=size, fg=DOT_RGB,
                         bg=None, avoid=False)
    if labels and len(bodies):
        tops = camera.project_to_pixels(REVIS_FRAME.points(np.c_[bodies.centers[:, 0], bodies.tops(),
                                                                  bodies.centers[:, 2]]), px, px)
        for object_id, at in zip(bodies.owners, tops, strict=True):
            canvas.label(object_id, at, size_px=label_size_px(px, 0.75), bg_alpha=0.75)
    return canvas.array()
