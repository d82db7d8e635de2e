"""Perspective cameras in a Z-up world (Blender convention) and the matrices OpenGL needs.

World frame: +X right, +Y forward (away from a viewer standing at the front), +Z up; metres.

Orbit convention (used by :meth:`Camera.orbit` and :func:`frame_bounds`): the camera sits at

    target + distance * (sin(az)·cos(el), −cos(az)·cos(el), sin(el))

so azimuth 0° puts the camera on the −Y side looking towards +Y (the "front" view), and
azimuth grows counter-clockwise seen from above (+Z): 90° puts the camera on +X, 180° on
+Y, 270° on −X. Elevation is positive above the target. This is the convention that
makes the DreamHouse Table 4 azimuths consistent (Front 0°, Front-right 45°, Right 90°).

Lens model: a pinhole with Blender's default sensor fit ("auto"): the sensor width (36 mm
by default) spans the larger image dimension, so a 32 mm lens on a square image has a
field of view of 2·atan(18/32) ≈ 58.7° both ways. A camera with ``ortho_scale_m`` set is
orthographic instead, Blender's way: the larger image dimension spans that many metres.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from buildbench.render import fixed
from buildbench.render.errors import RenderInputError

DEFAULT_FOCAL_LENGTH_MM = 32.0
DEFAULT_SENSOR_WIDTH_MM = 36.0

# Clip planes sit this fraction outside the scene's depth range, so faces lying exactly on
# the bounding box are never clipped by float rounding.
_CLIP_MARGIN = 0.01
# Lower bound for near/far; keeps 24-bit depth precision usable when the camera is inside
# the scene bounds.
_MIN_NEAR_OVER_FAR = 1e-4
#: Farthest coordinate a view holds: GL draws in float32 (up to 3.4e38) with cameras a few
#: diagonals away, so a scene beyond this would be framed with infinite or NaN numbers.
MAX_COORDINATE_M = 1e30


@dataclass(frozen=True)
class Bounds:
    """An axis-aligned box in world metres; validated on construction.

    Attributes:
        min_m: Minimum corner, shape (3,).
        max_m: Maximum corner, shape (3,).
    """

    min_m: np.ndarray
    max_m: np.ndarray

    def __post_init__(self) -> None:
        lo = np.asarray(self.min_m, dtype=np.float64)
        hi = np.asarray(self.max_m, dtype=np.float64)
        if lo.shape != (3,) or hi.shape != (3,):
            raise RenderInputError(f"bounds must be two 3-vectors, got shapes {lo.shape} and {hi.shape}")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise RenderInputError(f"bounds must be finite, got {lo.tolist()} .. {hi.tolist()}")
        if np.any(lo > hi):
            raise RenderInputError(f"bounds minimum {lo.tolist()} exceeds maximum {hi.tolist()}")
        reach = np.maximum(np.abs(lo), np.abs(hi))
        if np.any(reach > MAX_COORDINATE_M):
            axis = int(np.argmax(reach))
            end = hi[axis] if abs(hi[axis]) >= abs(lo[axis]) else lo[axis]
            raise RenderInputError(
                f"the scene reaches {'xyz'[axis]} = {end:.3g} m, beyond the ±{MAX_COORDINATE_M:g} m a view can "
                f"hold (bounds {lo.tolist()} .. {hi.tolist()} m)")
        object.__setattr__(self, "min_m", lo)
        object.__setattr__(self, "max_m", hi)

    @property
    def centre_m(self) -> np.ndarray:
        """Centre point, shape (3,)."""
        return 0.5 * (self.min_m + self.max_m)

    @property
    def diagonal_m(self) -> float:
        """Length of the box diagonal."""
        return _length(self.max_m - self.min_m)

    def corners_m(self) -> np.ndarray:
        """The 8 corners, shape (8, 3)."""
        return np.where(_CORNER_PICKS_MAX, self.max_m, self.min_m)


#: Per corner of a box, which coordinates come from its maximum corner (binary counting).
_CORNER_PICKS_MAX = np.array([[i >> 2 & 1, i >> 1 & 1, i & 1] for i in range(8)], dtype=bool)


@dataclass(frozen=True)
class ClipPlanes:
    """Near and far clip distances along the viewing direction, in metres."""

    near_m: float
    far_m: float


@dataclass(frozen=True)
class FieldOfView:
    """Full horizontal and vertical field-of-view angles, in radians."""

    x_rad: float
    y_rad: float


@dataclass(frozen=True)
class OrbitView:
    """A named view around a scene's bounding box: angles in degrees, distance as a multiple.

    The camera distance is ``distance_multiplier`` times the bounding-box diagonal; see the
    module docstring for the azimuth convention.
    """

    name: str
    azimuth_deg: float
    elevation_deg: float
    distance_multiplier: float


@dataclass(frozen=True)
class Camera:
    """A perspective pinhole camera.

    Attributes:
        eye_m: Camera position in world metres, shape (3,).
        target_m: Point the camera looks at, world metres, shape (3,).
        up: Approximate up direction (need not be unit or orthogonal to the view direction,
            but must not be parallel to it).
        near_m: Near clip distance in metres (> 0).
        far_m: Far clip distance in metres (> near_m).
        focal_length_mm: Lens focal length in millimetres.
        sensor_width_mm: Sensor width in millimetres; spans the larger image dimension.
        ortho_scale_m: None for a perspective camera; otherwise the camera is orthographic
            and the larger image dimension spans this many metres (the lens is then unused).
    """

    eye_m: np.ndarray
    target_m: np.ndarray
    up: np.ndarray
    near_m: float
    far_m: float
    focal_length_mm: float = DEFAULT_FOCAL_LENGTH_MM
    sensor_width_mm: float = DEFAULT_SENSOR_WIDTH_MM
    ortho_scale_m: float | None = None

    def __post_init__(self) -> None:
        for name in ("eye_m", "target_m", "up"):
            value = np.asarray(getattr(self, name), dtype=np.float64)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise RenderInputError(f"Camera.{name} must be 3 finite numbers, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        forward = self.target_m - self.eye_m
        if _length(forward) == 0.0:
            raise RenderInputError("Camera.eye_m and Camera.target_m coincide; the view direction is undefined")
        if _length(cross3(forward, self.up)) <= 1e-12 * _length(forward) * _length(self.up):
            raise RenderInputError(f"Camera.up {self.up.tolist()} is zero or parallel to the view direction")
        if not (0.0 < self.near_m < self.far_m and math.isfinite(self.far_m)):
            raise RenderInputError(
                f"Camera clip planes need 0 < near_m < far_m < inf, got near_m={self.near_m}, far_m={self.far_m}"
            )
        if not (self.focal_length_mm > 0 and self.sensor_width_mm > 0):
            raise RenderInputError(
                f"Camera focal_length_mm and sensor_width_mm must be > 0, got "
                f"{self.focal_length_mm} and {self.sensor_width_mm}"
            )
        if self.ortho_scale_m is not None and not (math.isfinite(self.ortho_scale_m) and self.ortho_scale_m > 0):
            raise RenderInputError(f"Camera.ortho_scale_m must be a finite number > 0 or None, got {self.ortho_scale_m}")

    @classmethod
    def orbit(
        cls,
        azimuth_deg: float,
        elevation_deg: float,
        distance_m: float,
        target_m: Sequence[float] | np.ndarray,
        *,
        near_m: float,
        far_m: float,
        focal_length_mm: float = DEFAULT_FOCAL_LENGTH_MM,
        sensor_width_mm: float = DEFAULT_SENSOR_WIDTH_MM,
    ) -> Camera:
        """Place a camera on a sphere around ``target_m`` (convention in the module docstring).

        The up vector is the camera's own up (the derivative of the position with respect to
        elevation), so even a straight top-down view (elevation 90°) is well defined: its
        image top then points away from the azimuth direction.
        """
        if not distance_m > 0:
            raise RenderInputError(f"orbit distance_m must be > 0, got {distance_m}")
        target = np.asarray(target_m, dtype=np.float64)
        eye, up = _orbit_pose(azimuth_deg, elevation_deg, distance_m, target)
        return cls(
            eye_m=eye,
            target_m=target,
            up=up,
            near_m=near_m,
            far_m=far_m,
            focal_length_mm=focal_length_mm,
            sensor_width_mm=sensor_width_mm,
        )

    @property
    def forward(self) -> np.ndarray:
        """Unit viewing direction (from the eye towards the target)."""
        return _unit(self.target_m - self.eye_m)

    def field_of_view(self, width_px: int, height_px: int) -> FieldOfView:
        """Full field-of-view angles for an image of the given size (Blender sensor fit "auto")."""
        half_sensor_tan = 0.5 * self.sensor_width_mm / self.focal_length_mm
        if width_px >= height_px:
            tan_x, tan_y = half_sensor_tan, half_sensor_tan * height_px / width_px
        else:
            tan_x, tan_y = half_sensor_tan * width_px / height_px, half_sensor_tan
        return FieldOfView(x_rad=2.0 * math.atan(tan_x), y_rad=2.0 * math.atan(tan_y))

    def view_matrix(self) -> np.ndarray:
        """World-to-camera 4x4 matrix (OpenGL: camera looks down −Z, +Y up), float64."""
        f = self.forward
        right = cross3(f, self.up)
        right /= _length(right)
        true_up = cross3(right, f)
        m = np.eye(4)
        m[0, :3], m[1, :3], m[2, :3] = right, true_up, -f
        m[:3, 3] = -fixed.apply(self.eye_m, m[:3, :3])  # fixed-order sums, not BLAS (``fixed``)
        return m

    def projection_matrix(self, width_px: int, height_px: int) -> np.ndarray:
        """Camera-to-clip 4x4 matrix, perspective or orthographic (OpenGL: NDC depth in [−1, 1]), float64."""
        if width_px <= 0 or height_px <= 0:
            raise RenderInputError(f"image size must be positive, got {width_px}x{height_px}")
        n, f = self.near_m, self.far_m
        m = np.zeros((4, 4))
        if self.ortho_scale_m is not None:
            span_x = self.ortho_scale_m * min(1.0, width_px / height_px)
            span_y = self.ortho_scale_m * min(1.0, height_px / width_px)
            m[0, 0], m[1, 1] = 2.0 / span_x, 2.0 / span_y
            m[2, 2], m[2, 3], m[3, 3] = -2.0 / (f - n), -(f + n) / (f - n), 1.0
            return m
        fov = self.field_of_view(width_px, height_px)
        m[0, 0] = 1.0 / math.tan(0.5 * fov.x_rad)
        m[1, 1] = 1.0 / math.tan(0.5 * fov.y_rad)
        m[2, 2] = -(f + n) / (f - n)
        m[2, 3] = -2.0 * f * n / (f - n)
        m[3, 2] = -1.0
        return m

    def project_to_pixels(self, points_m: np.ndarray, width_px: int, height_px: int) -> np.ndarray:
        """Where world points land in a rendered image, as :class:`~buildbench.render.Renderer` draws it.

        Args:
            points_m: World points, shape (n, 3).
            width_px, height_px: The image size.

        Returns:
            float64 array (n, 3): column and row in pixels (continuous: pixel ``(c, r)`` covers
            ``[c, c + 1) × [r, r + 1)``, row 0 at the top) and the depth in front of the camera
            in metres (negative behind it, where the column and row are meaningless).
        """
        pts = np.asarray(points_m, dtype=np.float64).reshape(-1, 3)
        cam = fixed.apply(pts - self.eye_m, self.view_matrix()[:3, :3])
        clip = fixed.apply(np.c_[cam, np.ones(len(cam))], self.projection_matrix(width_px, height_px))
        w = np.where(np.abs(clip[:, 3]) < 1e-12, 1e-12, clip[:, 3])
        col = (clip[:, 0] / w + 1.0) * 0.5 * width_px
        row = (1.0 - clip[:, 1] / w) * 0.5 * height_px
        return np.c_[col, row, -cam[:, 2]]


def _orbit_pose(azimuth_deg: float, elevation_deg: float, distance_m: float,
                target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eye position and up vector of :meth:`Camera.orbit` (convention in the module docstring)."""
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    direction = np.array([math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el)])
    up = np.array([-math.sin(az) * math.sin(el), math.cos(az) * math.sin(el), math.cos(el)])
    return target + distance_m * direction, up


def _length(v: np.ndarray) -> float:
    """Length of a float64 3-vector summed in a fixed order (``np.linalg.norm`` calls BLAS's dot,
    whose rounding depends on the CPU's kernel)."""
    return fixed.length(v)


def cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.cross`` of 3-vectors along the last axis, by its formula (a1·b2 − a2·b1, …: the same
    products and differences, so the same values) without its axis handling, which costs
    more than the arithmetic for the few vectors of a camera (tens of calls per house)."""
    if a.ndim == b.ndim == 1:  # one vector: float64 scalars, several times faster than 0-d slices
        (a0, a1, a2), (b0, b1, b2) = a, b
        return np.array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / _length(v)


def clip_planes_for_bounds(eye_m: np.ndarray, forward: np.ndarray, bounds: Bounds) -> ClipPlanes:
    """Tight near/far planes that keep every corner of an axis-aligned box in view depth.

    Args:
        eye_m: Camera position, shape (3,).
        forward: Unit viewing direction, shape (3,).
        bounds: The box that must stay between the planes.
    """
    depths = fixed.dot3(bounds.corners_m() - np.asarray(eye_m, dtype=np.float64), np.asarray(forward, dtype=np.float64))
    far = max(float(depths.max()), 1e-3) * (1.0 + _CLIP_MARGIN)
    near = max(float(depths.min()) * (1.0 - _CLIP_MARGIN), far * _MIN_NEAR_OVER_FAR)
    return ClipPlanes(near_m=near, far_m=far)


def frame_bounds(
    bounds: Bounds,
    view: OrbitView,
    *,
    focal_length_mm: float = DEFAULT_FOCAL_LENGTH_MM,
    sensor_width_mm: float = DEFAULT_SENSOR_WIDTH_MM,
) -> Camera:
    """Camera looking at a box's centre from ``view.distance_multiplier`` × its diagonal.

    Args:
        bounds: The scene's axis-aligned bounds (e.g. ``Scene.bounds``).
        view: Azimuth/elevation in degrees and the distance multiplier.
        focal_length_mm: Lens focal length.
        sensor_width_mm: Sensor width (spans the larger image dimension).

    Raises:
        RenderInputError: if the bounds are a single point or the multiplier is not positive.
    """
    if bounds.diagonal_m == 0.0:
        raise RenderInputError(f"cannot frame a single point {bounds.min_m.tolist()}: the bounding diagonal is 0")
    if not view.distance_multiplier > 0:
        raise RenderInputError(f"view {view.name!r}: distance_multiplier must be > 0, got {view.distance_multiplier}")
    distance_m = view.distance_multiplier * bounds.diagonal_m
    # The orbit pose first (as Camera.orbit places it), then the clip planes it needs, so one
    # camera is built and validated per view.
    target = bounds.centre_m
    eye, up = _orbit_pose(view.azimuth_deg, view.elevation_deg, distance_m, target)
    planes = clip_planes_for_bounds(eye, _unit(target - eye), bounds)
    return Camera(
        eye_m=eye,
        target_m=target,
        up=up,
        near_m=planes.near_m,
        far_m=planes.far_m,
        focal_length_mm=focal_length_mm,
        sensor_width_mm=sensor_width_mm,
    )


def frame_views(
    bounds: Bounds,
    views: Sequence[OrbitView],
    *,
    focal_length_mm: float = DEFAULT_FOCAL_LENGTH_MM,
    sensor_width_mm: float = DEFAULT_SENSOR_WIDTH_MM,
) -> list[Camera]:
    """One framed camera per view, in order (see :func:`frame_bounds`)."""
    return [
        frame_bounds(bounds, v, focal_length_mm=focal_length_mm, sensor_width_mm=sensor_width_mm) for v in views
    ]
