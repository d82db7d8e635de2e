"""Headless rasterizing of coloured boxes and triangle meshes into RGBA images.

Knows nothing of houses: callers give boxes (world matrices + sizes) and meshes with colours,
cameras (azimuth/elevation/distance around a target, Z-up), and get ``(views, H, W, 4)``
uint8 arrays back. Backends: :class:`Renderer`, moderngl on EGL (Mesa llvmpipe on a CPU, the GPU
where present), and :class:`Rasterizer`, our own deterministic CPU rasterizer (C, or numpy with the
same pixels): no OpenGL needed, the same bytes on every machine.

Example:
    >>> import numpy as np
    >>> from buildbench.render import Boxes, OrbitView, Renderer, build_scene
    >>> scene = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.full((1, 3), 0.5), (0.9, 0.8, 0.6)))
    >>> views = [OrbitView("front", azimuth_deg=0.0, elevation_deg=12.0, distance_multiplier=1.05)]
    >>> Renderer(64, 64).render_orbit(scene, views).shape
    (1, 64, 64, 4)
"""

from buildbench.render.camera import (
    Bounds,
    Camera,
    ClipPlanes,
    FieldOfView,
    OrbitView,
    frame_bounds,
    frame_views,
)
from buildbench.render.context import GLInfo, get_context, gl_info, on_gl_thread
from buildbench.render.errors import EGL_SYSTEM_PACKAGES, RenderInputError, RenderUnavailableError
from buildbench.render.image import load_png, save_png, to_png_bytes
from buildbench.render.metrics import (
    alpha_weighted_mse,
    fidelity_from_mse,
    masked_mse,
    silhouette_iou,
    to_float_image,
)
from buildbench.render.raster import Rasterizer
from buildbench.render.renderer import Lighting, Renderer, shade_factor
from buildbench.render.scene import Boxes, Scene, TriangleMesh, build_scene

__all__ = [
    "EGL_SYSTEM_PACKAGES",
    "Bounds",
    "Boxes",
    "Camera",
    "ClipPlanes",
    "FieldOfView",
    "GLInfo",
    "Lighting",
    "OrbitView",
    "Rasterizer",
    "RenderInputError",
    "RenderUnavailableError",
    "Renderer",
    "Scene",
    "TriangleMesh",
    "alpha_weighted_mse",
    "build_scene",
    "fidelity_from_mse",
    "frame_bounds",
    "frame_views",
    "get_context",
    "on_gl_thread",
    "gl_info",
    "load_png",
    "masked_mse",
    "save_png",
    "shade_factor",
    "silhouette_iou",
    "to_float_image",
    "to_png_bytes",
]
