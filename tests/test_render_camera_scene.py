"""Cameras (orbit convention, lens, matrices, framing) and scene batching; no GL needed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.render import Bounds, Boxes, Camera, OrbitView, RenderInputError, TriangleMesh, build_scene
from buildbench.render.camera import clip_planes_for_bounds, frame_bounds


def _project(cam: Camera, point: np.ndarray, w: int = 512, h: int = 512) -> np.ndarray:
    clip = cam.projection_matrix(w, h) @ cam.view_matrix() @ np.append(point, 1.0)
    return clip[:3] / clip[3]


@pytest.mark.parametrize(
    ("azimuth", "direction"),
    [(0.0, (0, -1, 0)), (90.0, (1, 0, 0)), (180.0, (0, 1, 0)), (270.0, (-1, 0, 0))],
)
def test_orbit_azimuth_convention(azimuth: float, direction: tuple[int, int, int]) -> None:
    cam = Camera.orbit(azimuth, 0.0, 5.0, (1.0, 2.0, 3.0), near_m=0.1, far_m=10.0)
    np.testing.assert_allclose(cam.eye_m, np.array([1.0, 2.0, 3.0]) + 5.0 * np.array(direction), atol=1e-12)


def test_orbit_front_right_elevated() -> None:
    cam = Camera.orbit(45.0, 18.0, 10.0, (0.0, 0.0, 0.0), near_m=0.1, far_m=20.0)
    el = math.radians(18.0)
    expected = 10.0 * np.array([math.cos(el) / math.sqrt(2), -math.cos(el) / math.sqrt(2), math.sin(el)])
    np.testing.assert_allclose(cam.eye_m, expected, atol=1e-12)


def test_field_of_view_uses_sensor_width_on_the_larger_side() -> None:
    cam = Camera.orbit(0.0, 0.0, 5.0, (0, 0, 0), near_m=0.1, far_m=10.0)
    square = cam.field_of_view(512, 512)
    assert square.x_rad == pytest.approx(2 * math.atan(18 / 32))
    assert square.y_rad == pytest.approx(square.x_rad)
    wide = cam.field_of_view(512, 256)
    assert wide.x_rad == pytest.approx(2 * math.atan(18 / 32))
    assert wide.y_rad == pytest.approx(2 * math.atan(9 / 32))
    tall = cam.field_of_view(256, 512)
    assert tall.y_rad == pytest.approx(2 * math.atan(18 / 32))
    assert tall.x_rad == pytest.approx(2 * math.atan(9 / 32))


def test_view_and_projection_matrices_follow_opengl() -> None:
    cam = Camera.orbit(30.0, 20.0, 4.0, (1.0, -2.0, 0.5), near_m=1.0, far_m=9.0)
    view = cam.view_matrix()
    np.testing.assert_allclose(view[:3, :3] @ view[:3, :3].T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(view @ np.append(cam.target_m, 1.0), [0, 0, -4.0, 1.0], atol=1e-12)
    # World up projects to screen up (positive camera y).
    assert (view[:3, :3] @ np.array([0, 0, 1.0]))[1] > 0
    f = cam.forward
    np.testing.assert_allclose(_project(cam, cam.eye_m + 1.0 * f)[2], -1.0, atol=1e-9)
    np.testing.assert_allclose(_project(cam, cam.eye_m + 9.0 * f)[2], 1.0, atol=1e-9)
    right = view[0, :3]
    edge = cam.eye_m + 5.0 * f + 5.0 * (18 / 32) * right
    np.testing.assert_allclose(_project(cam, edge)[0], 1.0, atol=1e-9)


def test_straight_down_view_is_well_defined() -> None:
    cam = Camera.orbit(0.0, 90.0, 5.0, (0, 0, 0), near_m=0.1, far_m=10.0)
    np.testing.assert_allclose(cam.eye_m, [0, 0, 5.0], atol=1e-12)
    # Image top points away from the azimuth side (towards +Y for azimuth 0).
    np.testing.assert_allclose(cam.view_matrix()[1, :3], [0, 1.0, 0], atol=1e-12)


def test_frame_bounds_distance_target_and_clip_planes() -> None:
    bounds = Bounds(np.array([0.0, 0.0, 0.0]), np.array([12.0, 9.0, 8.0]))
    cam = frame_bounds(bounds, OrbitView("front_right", 45.0, 18.0, 1.10))
    assert np.linalg.norm(cam.eye_m - cam.target_m) == pytest.approx(1.10 * bounds.diagonal_m)
    np.testing.assert_allclose(cam.target_m, [6.0, 4.5, 4.0])
    assert cam.focal_length_mm == 32.0
    depths = (bounds.corners_m() - cam.eye_m) @ cam.forward
    assert cam.near_m < depths.min() and depths.max() < cam.far_m
    assert cam.near_m > 0.5 * depths.min()  # tight, for depth precision


@pytest.mark.parametrize("view", [OrbitView("front", 0.0, 12.0, 1.05), OrbitView("odd", 301.7, -33.3, 0.37),
                                  OrbitView("top", 45.0, 90.0, 2.0)])
def test_frame_bounds_is_the_orbit_camera_with_its_clip_planes(view: OrbitView) -> None:
    """Bit for bit, so renders framed this way keep their pixels (the speed snapshot)."""
    bounds = Bounds(np.array([-3.1, 0.7, 0.0]), np.array([11.9, 9.3, 7.77]))
    orbit = Camera.orbit(view.azimuth_deg, view.elevation_deg, view.distance_multiplier * bounds.diagonal_m,
                         bounds.centre_m, near_m=1.0, far_m=2.0)
    planes = clip_planes_for_bounds(orbit.eye_m, orbit.forward, bounds)
    cam = frame_bounds(bounds, view)
    for name in ("eye_m", "target_m", "up"):
        assert np.array_equal(getattr(cam, name), getattr(orbit, name)), name
    assert (cam.near_m, cam.far_m) == (planes.near_m, planes.far_m)


def test_clip_planes_stay_positive_inside_the_bounds() -> None:
    bounds = Bounds(np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0]))
    planes = clip_planes_for_bounds(np.zeros(3), np.array([0, 1.0, 0]), bounds)
    assert 0 < planes.near_m < planes.far_m


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"eye_m": (0, 0, 0), "target_m": (0, 0, 0)}, "coincide"),
        ({"eye_m": (0, 0, 5), "target_m": (0, 0, 0)}, "parallel"),
        ({"near_m": 2.0, "far_m": 1.0}, "near_m"),
        ({"focal_length_mm": 0.0}, "focal_length_mm"),
        ({"eye_m": (0, float("nan"), 0)}, "eye_m"),
    ],
)
def test_camera_rejects_bad_parameters(kwargs: dict, message: str) -> None:
    base = {"eye_m": (0, -5, 0), "target_m": (0, 0, 0), "up": (0, 0, 1), "near_m": 0.1, "far_m": 10.0}
    with pytest.raises(RenderInputError, match=message):
        Camera(**{**base, **kwargs})


def test_frame_bounds_rejects_a_point() -> None:
    with pytest.raises(RenderInputError, match="single point"):
        frame_bounds(Bounds(np.ones(3), np.ones(3)), OrbitView("front", 0, 12, 1.05))
    with pytest.raises(RenderInputError, match="exceeds"):
        Bounds(np.ones(3), np.zeros(3))


def _triangle_normals_from_winding(positions: np.ndarray) -> np.ndarray:
    tri = positions.reshape(-1, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def test_box_triangles_are_wound_outward_even_when_mirrored() -> None:
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    matrices = np.tile(np.eye(4), (3, 1, 1))
    matrices[1, :3, :3] = rot @ np.diag([2.0, 1.0, 0.5])  # rotated and scaled
    matrices[2, :3, :3] = np.diag([-1.0, 1.0, 1.0])  # mirrored
    matrices[:, :3, 3] = [[0, 0, 0], [5, 0, 0], [-5, 0, 0]]
    scene = build_scene(Boxes(matrices, np.array([[1.0, 2.0, 3.0]] * 3), (0.5, 0.5, 0.5, 1.0)))
    assert scene.triangle_count == 36 and scene.closed_vertex_count == 108
    corners = scene.vertices[scene.indices]  # each triangle's three corners, in drawing order
    positions = corners["position"].astype(np.float64) + scene.origin_m
    stored = corners["normal"][::3].astype(np.float64)
    assert np.all(corners["normal"][1::3] == corners["normal"][::3])  # flat: one normal per triangle
    np.testing.assert_allclose(_triangle_normals_from_winding(positions), stored, atol=1e-5)
    centres = np.repeat(matrices[:, :3, 3], 12, axis=0)
    tri_centres = positions.reshape(-1, 3, 3).mean(axis=1)
    assert np.all(np.einsum("ij,ij->i", tri_centres - centres, stored) > 0)  # outward
    # Box 1: local x (size 1, scaled 2) becomes world y; local y (size 2) becomes world x.
    box1 = positions[36:72]
    np.testing.assert_allclose(box1.max(axis=0) - box1.min(axis=0), [2.0, 2.0, 1.5], atol=1e-5)


def test_from_centres_and_bounds() -> None:
    boxes = Boxes.from_centres(np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 0.0]]), np.full((2, 3), 0.5), (1.0, 0.0, 0.0))
    scene = build_scene(boxes)
    np.testing.assert_allclose(scene.bounds.min_m, [-1.5, -0.5, -0.5])
    np.testing.assert_allclose(scene.bounds.max_m, [1.5, 2.5, 3.5])
    assert np.all(scene.vertices["color"] == [255, 0, 0, 255])


def test_closed_items_come_first() -> None:
    tri = TriangleMesh(np.eye(3), np.array([[0, 1, 2]]), (0.0, 1.0, 0.0, 1.0))
    tet = TriangleMesh(
        np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]),
        np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]),
        np.array([[0, 0, 255, 255]] * 4, dtype=np.uint8),
        closed=True,
    )
    scene = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.ones((1, 3)), (1.0, 0, 0)), [tri, tet])
    assert scene.closed_vertex_count == 36 + 12
    colors = scene.vertices["color"][scene.indices]
    assert np.all(colors[36:48] == [0, 0, 255, 255])
    assert np.all(colors[48:] == [0, 255, 0, 255])


def test_empty_scene() -> None:
    scene = build_scene()
    assert scene.triangle_count == 0 and scene.bounds is None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Boxes(np.eye(4)[None], np.ones((2, 3)), (1, 1, 1)), r"sizes_m must have shape \(1, 3\)"),
        (lambda: Boxes(np.eye(4)[None], -np.ones((1, 3)), (1.0, 1, 1)), r"sizes_m\[0\]"),
        (lambda: Boxes(np.zeros((1, 4, 4)), np.ones((1, 3)), (1.0, 1, 1)), r"matrices\[0\] is not affine"),
        (lambda: Boxes(np.diag([1.0, 0, 1, 1])[None], np.ones((1, 3)), (1.0, 1, 1)), "singular"),
        (lambda: Boxes(np.eye(4)[None], np.ones((1, 3)), (1.5, 0.0, 0.0)), r"in \[0, 1\]"),
        (lambda: Boxes(np.eye(4)[None], np.ones((1, 3)), np.ones((2, 4))), "colors must have shape"),
        (lambda: TriangleMesh(np.zeros((3, 3)), np.array([[0, 1, 3]]), (1.0, 1, 1)), "outside the 3 vertices"),
        (lambda: TriangleMesh(np.zeros((3, 3)), np.array([[0.0, 1, 2]]), (1.0, 1, 1)), "integers"),
    ],
)
def test_bad_geometry_is_rejected_with_its_index(make, message: str) -> None:
    with pytest.raises(RenderInputError, match=message):
        make()
