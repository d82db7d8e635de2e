"""A deterministic CPU rasterizer: the same pixels on every machine, no OpenGL needed.

:class:`Rasterizer` draws a :class:`~buildbench.render.scene.Scene` as :class:`~buildbench.render.Renderer`
does without anti-aliasing (``samples=0``): flat Lambert shade (:func:`~buildbench.render.shade_factor`,
the same :class:`~buildbench.render.Lighting`), closed parts back-face culled, open meshes two-sided,
alpha the item's alpha where covered, background (0, 0, 0, 0), straight alpha, and among fragments of
equal depth the first drawn wins. GL's pixels depend on the driver (float32 vertex maths, its own
snapping and depth format); these are defined below, exactly, and computed by the C extension
``_raster.c`` or, bit for bit the same, by the numpy code of this module (``BUILDBENCH_NATIVE=0``
or no extension built). Edge pixels differ from GL's, rarely (tests measure how rarely).

The pixel definition (version :data:`PIXEL_VERSION`; every operation is IEEE-754 float64 unless
said otherwise, evaluated in the order written, without fused multiply-adds):

1. Camera. ``M = P · V · T`` (projection, view, translation by ``Scene.origin_m``), multiplied in
   float64 as ``M[i][j] = ((A[i][0]·B[0][j] + A[i][1]·B[1][j]) + A[i][2]·B[2][j]) + A[i][3]·B[3][j]``
   (``P · V`` first); ``R`` is the view matrix's 3×3 rotation. Both from the :class:`Camera`'s
   float64 matrices, which (like the scene's vertices, normals and bounds, and the framing and
   clip planes) are computed by fixed-order sums (:mod:`buildbench.render.fixed`), never BLAS,
   so they hold the same bits on every CPU.
2. Vertices. A position ``(x, y, z)`` (float32, widened) goes to clip space
   ``c_i = ((M[i][0]·x + M[i][1]·y) + M[i][2]·z) + M[i][3]``. Its shade, from its normal ``n``:
   ``r_j = (R[j][0]·n_x + R[j][1]·n_y) + R[j][2]·n_z``, ``λ = |(r_0·l_0 + r_1·l_1) + r_2·l_2|``,
   ``s = min(ambient + diffuse·λ, 1)``; its colour channels ``floor(c·s + 0.5)`` for red, green
   and blue (``c`` the uint8 value), alpha unchanged. A triangle takes its last corner's colour
   (GL's provoking vertex).
3. Clipping. A triangle with a non-finite clip coordinate is not drawn. It is clipped
   (Sutherland–Hodgman, corners in order) by the half-spaces ``z + w ≥ 0`` (near), then
   ``x + G·w ≥ 0``, ``G·w − x ≥ 0``, ``y + G·w ≥ 0``, ``G·w − y ≥ 0`` (a guard band, ``G =
   2^21 / max(width, height)``, which keeps window coordinates within ±2^21 pixels so that the
   integer edge functions below cannot overflow int64). A corner is kept where its distance ``d``
   is ``≥ 0``; where an edge crosses a plane, the new corner is computed from the kept end ``p``
   towards the dropped one ``q``: ``t = d_p / (d_p − d_q)``, ``p_i + t·(q_i − p_i)``, so that two
   triangles sharing the edge get the same point. The polygon (3 to 8 corners) is drawn as the fan
   ``(0, k, k+1)``. A triangle with all corners outside one plane is not drawn (whatever rounding
   in the clipping against earlier planes would make of it). No far-plane clipping: per pixel,
   depth ≥ 1 is rejected (step 7).
4. Window coordinates, per fan triangle: ``X = floor(((x/w + 1)·(width/2))·256 + 0.5)``,
   ``Y = floor(((1 − y/w)·(height/2))·256 + 0.5)`` (int64, 8 sub-pixel bits, row 0 at the top),
   depth ``Z = (z/w)·0.5 + 0.5``. A fan triangle with a corner whose ``w ≤ 0`` or whose
   ``|X|`` or ``|Y|`` exceeds 2^30 (only by rounding at the guard band) is not drawn.
5. Facing. ``A = (X1−X0)(Y2−Y0) − (X2−X0)(Y1−Y0)`` (int64). ``A = 0``: not drawn. Front faces
   (counter-clockwise as seen in the image, GL's default) have ``A < 0``; the back faces
   (``A > 0``) of closed parts are culled. Then corners 1 and 2 are swapped where ``A < 0``,
   so that ``A > 0``.
6. Coverage. Pixel ``(col, row)`` is sampled at ``P = (256·col + 128, 256·row + 128)``. For the
   edges ``a → b`` = ``1 → 2``, ``2 → 0``, ``0 → 1``, ``E = (X_b−X_a)(P_y−Y_a) − (Y_b−Y_a)(P_x−X_a)``
   (int64); the pixel is covered where every ``E > 0``, or ``E = 0`` on a top or left edge
   (``Y_b < Y_a``, or ``Y_b = Y_a`` and ``X_b > X_a``): pixels on an edge two triangles share
   are drawn by exactly one.
7. Depth, per triangle: ``a = ((Z1−Z0)·(Y2−Y0) − (Z2−Z0)·(Y1−Y0)) / A``,
   ``b = ((Z2−Z0)·(X1−X0) − (Z1−Z0)·(X2−X0)) / A`` (integers and ``A`` as float64); per pixel
   ``z = (Z0 + a·(P_x−X0)) + b·(P_y−Y0)``, then rounded to float32 (to nearest, ties to even). The
   depth buffer (float32, as GL's is at most: half the memory traffic of float64, which is most of
   the cost per pixel) starts at 1.0; a covered pixel is written (its depth and the triangle's RGBA)
   where its float32 depth is ``<`` the buffer's value, the triangles taken in the scene's order.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from types import ModuleType

import numpy as np

from buildbench.render import fixed
from buildbench.render.camera import DEFAULT_FOCAL_LENGTH_MM, Camera, OrbitView, frame_views
from buildbench.render.errors import RenderInputError
from buildbench.render.renderer import Lighting, checked_views
from buildbench.render.scene import VERTEX_DTYPE, Scene

#: Bumped whenever the pixel definition (module docstring) changes: stored images made under
#: another version may differ at edge pixels.
PIXEL_VERSION = 2
#: Largest width or height: with the guard band, window coordinates stay within ±2^21 pixels.
MAX_SIZE_PX = 16384
#: Sub-pixel bits of window coordinates.
SUBPIXEL_BITS = 8
_ONE = 1 << SUBPIXEL_BITS
_HALF = _ONE // 2
_GUARD_PX = 2.0**21
#: Snapped coordinates beyond this are not drawn (step 4): products of differences stay < 2^63.
_LIMIT = 2.0**30


def _load_native() -> ModuleType | None:
    if sys.byteorder != "little":  # the C code reads VERTEX_DTYPE's little-endian floats as native ones
        return None
    try:
        from buildbench.render import _raster  # type: ignore[attr-defined]
    except ImportError:
        return None
    # A build from other sources would draw other pixels (or take other arguments): use numpy instead.
    current = getattr(_raster, "PIXEL_VERSION", None) == PIXEL_VERSION and getattr(_raster, "ROW_PITCH", 0) == 1
    return _raster if current else None


_native = _load_native()


class Rasterizer:
    """Deterministic CPU renderer with a fixed image size; the images of ``Renderer(samples=0)``
    up to edge pixels, the same bytes on every machine (module docstring).

    Args:
        width: Image width in pixels (1 to :data:`MAX_SIZE_PX`).
        height: Image height in pixels.
        lighting: The camera-relative light.

    Attributes:
        native: True when the C extension draws (``BUILDBENCH_NATIVE=0`` when the object is
            made, or a missing build, selects the numpy code: the same pixels, much slower).

    Raises:
        RenderInputError: for a size out of range.
    """

    def __init__(self, width: int = 512, height: int = 512, lighting: Lighting | None = None):
        if not (0 < width <= MAX_SIZE_PX and 0 < height <= MAX_SIZE_PX):
            raise RenderInputError(f"Rasterizer size must be in 1..{MAX_SIZE_PX} per side, got {width}x{height}")
        self.width, self.height = int(width), int(height)
        self.lighting = lighting or Lighting()
        self.native = _native is not None and os.environ.get("BUILDBENCH_NATIVE", "1") != "0"

    def render(self, scene: Scene, cameras: Camera | Sequence[Camera], out: np.ndarray | None = None) -> np.ndarray:
        """Render the scene from each camera.

        Args:
            scene: What to draw.
            cameras: One camera or several.
            out: Where to draw (optional): a writable uint8 array of the returned shape,
                overwritten, C-contiguous or with its rows spaced further apart (each row's pixels
                contiguous, views ``height`` rows apart: e.g. rows of a PNG encoder, which puts a
                filter byte before each row, so the image need not be copied to be encoded). A
                caller that draws many scenes and encodes each at once may pass the same array
                every time: a fresh 5 MB image per call costs more in page faults than drawing a
                house's five views (measured: up to ~3 ms a call under load).

        Returns:
            uint8 array (views, height, width, 4), RGBA with straight alpha, row 0 at the top
            (``out`` where given).

        Raises:
            RenderInputError: for a non-Scene or a malformed one, no cameras, a non-Camera entry,
                or an ``out`` of another shape or type.
        """
        views = checked_views(scene, cameras)
        vertices, indices, closed = _checked_arrays(scene)
        matrices = self._matrices(views, scene.origin_m)
        shape = (len(views), self.height, self.width, 4)
        if out is None:
            out = np.zeros(shape, dtype=np.uint8)
        else:
            if not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == np.uint8
                    and out.flags.writeable and _row_pitch(out) is not None):
                raise RenderInputError(f"out must be a writable uint8 array of shape {shape} with contiguous "
                                       f"rows of pixels (C-contiguous, or rows spaced further apart)")
            out.fill(0)  # the background, and what the drawing code expects
        if indices.size == 0:
            return out
        light = self.lighting
        params = (*light.direction_view, float(light.ambient), float(light.diffuse))
        if self.native:
            assert _native is not None
            pitch = _row_pitch(out)
            assert pitch is not None
            # The bytes from the first pixel to the last, as one writable buffer (``out`` itself
            # when C-contiguous).
            span = np.lib.stride_tricks.as_strided(out, shape=((len(views) * self.height - 1) * pitch + 4 * self.width,),
                                                   strides=(1,))
            _native.render(vertices, indices, closed, np.ascontiguousarray(matrices[:, :16]),
                           np.ascontiguousarray(matrices[:, 16:]), params, self.width, self.height, span, pitch)
        else:
            for view, m in zip(out, matrices, strict=True):
                _render_view(vertices, indices, closed, m, params, view)
        return out

    def render_orbit(
        self, scene: Scene, views: Sequence[OrbitView], *, focal_length_mm: float = DEFAULT_FOCAL_LENGTH_MM
    ) -> np.ndarray:
        """Frame the scene's own bounds from each view and render (see ``frame_views``).

        An empty scene, or one whose bounds are a single point, gives fully transparent images.
        """
        if not views:
            raise RenderInputError("render_orbit() needs at least one view")
        if scene.bounds is None or scene.bounds.diagonal_m == 0.0:
            return np.zeros((len(views), self.height, self.width, 4), dtype=np.uint8)
        return self.render(scene, frame_views(scene.bounds, views, focal_length_mm=focal_length_mm))

    def _matrices(self, cameras: Sequence[Camera], origin_m: np.ndarray) -> np.ndarray:
        """Per camera, the 16 entries of ``M`` (row-major) then the 9 of ``R`` (step 1), float64,
        shape ``(views, 25)``: the products of all views in one elementwise pass (per view they
        cost more in numpy calls than in arithmetic)."""
        views = np.array([cam.view_matrix() for cam in cameras])
        projections = np.array([cam.projection_matrix(self.width, self.height) for cam in cameras])
        to_world = np.eye(4)
        to_world[:3, 3] = origin_m
        mvp = fixed.matmul4(fixed.matmul4(projections, views), to_world)
        return np.concatenate([mvp.reshape(-1, 16), views[:, :3, :3].reshape(-1, 9)], axis=1)


def _row_pitch(out: np.ndarray) -> int | None:
    """Bytes from one row of ``out`` (views, height, width, 4) to the next, where its pixels lie in
    rows of contiguous pixels, each view ``height`` rows after the one before; otherwise None."""
    views, height, width, _ = out.shape
    s_view, s_row, s_px, s_chan = out.strides
    if s_chan != 1 or s_px != 4 or s_row < 4 * width:
        return None
    return s_row if views == 1 or s_view == height * s_row else None


def _checked_arrays(scene: Scene) -> tuple[np.ndarray, np.ndarray, int]:
    """The scene's vertex and index arrays, contiguous, and its closed index count; checked."""
    vertices = scene.vertices
    if not isinstance(vertices, np.ndarray) or vertices.dtype != VERTEX_DTYPE or vertices.ndim != 1:
        raise RenderInputError(f"Scene.vertices must be a 1-d array of VERTEX_DTYPE, got {getattr(vertices, 'dtype', None)}")
    indices = np.ascontiguousarray(scene.indices, dtype=np.uint32).reshape(-1)
    if indices.size % 3:
        raise RenderInputError(f"Scene.indices must hold three entries per triangle, got {indices.size}")
    if indices.size and int(indices.max()) >= vertices.shape[0]:
        raise RenderInputError(
            f"Scene.indices refer to vertex {int(indices.max())} of only {vertices.shape[0]} vertices")
    closed = int(scene.closed_vertex_count)
    if not 0 <= closed <= indices.size or closed % 3:
        raise RenderInputError(
            f"Scene.closed_vertex_count {closed} must be a multiple of 3 in [0, {indices.size}]")
    return np.ascontiguousarray(vertices), indices, closed


# --- the numpy implementation (the C extension does the same operations in the same order) ---

def _render_view(vertices: np.ndarray, indices: np.ndarray, closed: int, m: np.ndarray,
                 params: tuple[float, ...], out: np.ndarray) -> None:
    """Draw one view into ``out`` (height, width, 4), zeroed."""
    height, width = out.shape[:2]
    mvp = [[float(v) for v in m[4 * i : 4 * i + 4]] for i in range(4)]
    rot = [[float(v) for v in m[16 + 3 * i : 19 + 3 * i]] for i in range(3)]
    pos = vertices["position"].astype(np.float64)
    x, y, z = pos[:, 0], pos[:, 1], pos[:, 2]
    clip = np.stack([((r[0] * x + r[1] * y) + r[2] * z) + r[3] for r in mvp], axis=1)
    nrm = vertices["normal"].astype(np.float64)
    nx, ny, nz = nrm[:, 0], nrm[:, 1], nrm[:, 2]
    rn = [(r[0] * nx + r[1] * ny) + r[2] * nz for r in rot]
    lx, ly, lz, ambient, diffuse = params
    shade = np.minimum(ambient + diffuse * np.abs((rn[0] * lx + rn[1] * ly) + rn[2] * lz), 1.0)
    colors = vertices["color"].copy()
    colors[:, :3] = np.floor(colors[:, :3].astype(np.float64) * shade[:, None] + 0.5).astype(np.uint8)
    depth = np.ones((height, width), dtype=np.float32)
    guard = _GUARD_PX / max(width, height)
    corners = clip.tolist()
    tris = indices.reshape(-1, 3).tolist()
    for t, (i0, i1, i2) in enumerate(tris):
        poly = [corners[i0], corners[i1], corners[i2]]
        if not all(math.isfinite(v) for c in poly for v in c):
            continue
        clipped = _clip(poly, guard)
        for k in range(1, len(clipped) - 1):
            _draw(clipped[0], clipped[k], clipped[k + 1], 3 * t < closed, colors[i2], depth, out)


def _plane_distances(c: list[float], guard: float) -> tuple[float, ...]:
    x, y, z, w = c
    gw = guard * w
    return (z + w, x + gw, gw - x, y + gw, gw - y)


def _clip(poly: list[list[float]], guard: float) -> list[list[float]]:
    """Step 3: the polygon clipped by the near plane and the guard band."""
    dists = [_plane_distances(c, guard) for c in poly]
    if all(d >= 0.0 for ds in dists for d in ds):
        return poly
    if any(all(not ds[plane] >= 0.0 for ds in dists) for plane in range(5)):
        return []  # all corners outside one plane
    for plane in range(5):
        out: list[list[float]] = []
        n = len(poly)
        for k in range(n):
            p, q = poly[k], poly[(k + 1) % n]
            dp, dq = _plane_distances(p, guard)[plane], _plane_distances(q, guard)[plane]
            if dp >= 0.0:
                out.append(p)
            if (dp >= 0.0) != (dq >= 0.0):
                inner, outer, di, do = (p, q, dp, dq) if dp >= 0.0 else (q, p, dq, dp)
                s = di / (di - do)
                out.append([a + s * (b - a) for a, b in zip(inner, outer, strict=True)])
        poly = out
        if len(poly) < 3:
            return []
    return poly


def _window(c: list[float], width: int, height: int) -> tuple[int, int, float] | None:
    """Step 4: snapped window coordinates and depth, or None where the corner is not drawable."""
    x, y, z, w = c
    if not w > 0.0:
        return None
    fx = ((x / w + 1.0) * (width * 0.5)) * 256.0 + 0.5
    fy = ((1.0 - y / w) * (height * 0.5)) * 256.0 + 0.5
    if not (math.isfinite(fx) and math.isfinite(fy)):
        return None
    xs, ys = math.floor(fx), math.floor(fy)
    if abs(xs) > _LIMIT or abs(ys) > _LIMIT:
        return None
    return xs, ys, (z / w) * 0.5 + 0.5


def _top_left(xa: int, ya: int, xb: int, yb: int) -> bool:
    return yb < ya or (yb == ya and xb > xa)


def _draw(c0: list[float], c1: list[float], c2: list[float], cull: bool, rgba: np.ndarray,
          depth: np.ndarray, out: np.ndarray) -> None:
    """Steps 4 to 7 for one fan triangle."""
    height, width = depth.shape
    v0, v1, v2 = _window(c0, width, height), _window(c1, width, height), _window(c2, width, height)
    if v0 is None or v1 is None or v2 is None:
        return
    area = (v1[0] - v0[0]) * (v2[1] - v0[1]) - (v2[0] - v0[0]) * (v1[1] - v0[1])
    if area == 0 or (cull and area > 0):
        return
    if area < 0:
        v1, v2, area = v2, v1, -area
    (x0, y0, z0), (x1, y1, z1), (x2, y2, z2) = v0, v1, v2
    col_lo = max((min(x0, x1, x2) + _HALF - 1) >> SUBPIXEL_BITS, 0)
    col_hi = min((max(x0, x1, x2) - _HALF) >> SUBPIXEL_BITS, width - 1)
    row_lo = max((min(y0, y1, y2) + _HALF - 1) >> SUBPIXEL_BITS, 0)
    row_hi = min((max(y0, y1, y2) - _HALF) >> SUBPIXEL_BITS, height - 1)
    if col_lo > col_hi or row_lo > row_hi:
        return
    px = np.arange(col_lo, col_hi + 1, dtype=np.int64) * _ONE + _HALF
    py = (np.arange(row_lo, row_hi + 1, dtype=np.int64) * _ONE + _HALF)[:, None]
    inside = np.ones((row_hi - row_lo + 1, col_hi - col_lo + 1), dtype=bool)
    for (xa, ya), (xb, yb) in (((x1, y1), (x2, y2)), ((x2, y2), (x0, y0)), ((x0, y0), (x1, y1))):
        e = (xb - xa) * (py - ya) - (yb - ya) * (px - xa)
        inside &= (e >= 0) if _top_left(xa, ya, xb, yb) else (e > 0)
    fa = float(area)
    a = ((z1 - z0) * float(y2 - y0) - (z2 - z0) * float(y1 - y0)) / fa
    b = ((z2 - z0) * float(x1 - x0) - (z1 - z0) * float(x2 - x0)) / fa
    z = ((z0 + a * (px - x0).astype(np.float64)) + b * (py - y0).astype(np.float64)).astype(np.float32)
    window = depth[row_lo : row_hi + 1, col_lo : col_hi + 1]
    write = inside & (z < window)
    window[write] = z[write]
    out[row_lo : row_hi + 1, col_lo : col_hi + 1][write] = rgba
