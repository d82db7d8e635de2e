"""Cameras placed in scene terms (y up, ``(x, z)`` plans), and the line-of-sight test that
finds occluders between a camera and its target."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from buildbench.render import Camera
from buildbench.scenes.views.frame import FloatArray, Frame
from buildbench.scenes.views.geometry import BoxSet


def focal_for_fov_mm(fov_deg: float) -> float:
    """Lens for a given full field of view on the renderer's 36 mm sensor."""
    return 18.0 / math.tan(math.radians(fov_deg) / 2.0)


def top_camera(frame: Frame, center_xz: ArrayLike, span_m: float, *, eye_y: float, floor_y: float,
               image_up_xz: ArrayLike = (0.0, 1.0)) -> Camera:
    """Orthographic camera looking straight down on ``center_xz`` from ``eye_y``: the image
    spans ``span_m`` metres and ``image_up_xz`` (a floor direction) points to its top."""
    cx, cz = np.asarray(center_xz, float)
    ux, uz = np.asarray(image_up_xz, float)
    eye = frame.points(np.array([cx, eye_y, cz]))
    below = frame.points(np.array([cx, floor_y - 1.0, cz]))
    return Camera(eye, below, frame.points(np.array([ux, 0.0, uz])), near_m=0.01,
                  far_m=eye_y - floor_y + 2.0, ortho_scale_m=span_m)


def look_camera(frame: Frame, eye: ArrayLike, target: ArrayLike, *, fov_deg: float,
                up: ArrayLike = (0.0, 1.0, 0.0), near_m: float = 0.02, far_m: float = 100.0) -> Camera:
    """Perspective camera from scene point ``eye`` to ``target`` with the given full field of view."""
    return Camera(frame.points(np.asarray(eye, float)), frame.points(np.asarray(target, float)),
                  frame.points(np.asarray(up, float)), near_m=near_m, far_m=far_m,
                  focal_length_mm=focal_for_fov_mm(fov_deg))


def segments_hit(boxes: BoxSet, starts: FloatArray, ends: FloatArray) -> np.ndarray:
    """Boolean ``(n_boxes,)``: which boxes any of the segments ``starts[i] → ends[i]``
    (``(k, 3)`` scene points) passes through (slab test in each box's own frame)."""
    if not len(boxes):
        return np.zeros(0, bool)
    rel = starts[None, :, :] - boxes.centers[:, None, :]              # (n, k, 3)
    p = np.einsum("nji,nkj->nki", boxes.rotations, rel)                # into box frames
    d = np.einsum("nji,kj->nki", boxes.rotations, ends - starts)
    d = np.where(np.abs(d) < 1e-12, 1e-12, d)
    half = boxes.sizes[:, None, :] / 2.0
    t0, t1 = (-half - p) / d, (half - p) / d
    t_enter = np.minimum(t0, t1).max(axis=2)
    t_exit = np.maximum(t0, t1).min(axis=2)
    hit = (t_enter <= t_exit) & (t_exit >= 0.0) & (t_enter <= 1.0)
    return hit.any(axis=1)
