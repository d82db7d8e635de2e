"""Orthographic cameras and world-to-pixel projection agree with what the renderer draws."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from buildbench.render import Boxes, Camera, Renderer, RenderInputError, RenderUnavailableError, build_scene

SIZE = 96


@pytest.fixture(scope="module")
def renderer() -> Iterator[Renderer]:
    try:
        r = Renderer(SIZE, SIZE, samples=0)
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    yield r
    r.release()


def _silhouette(image: np.ndarray) -> tuple[int, int, int, int]:
    rows, cols = np.nonzero(image[..., 3])
    return int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())


def test_orthographic_box_spans_its_size_over_the_scale(renderer: Renderer) -> None:
    box = Boxes.from_centres(np.array([[0.5, 0.0, 0.0]]), np.array([[0.5, 0.25, 0.3]]), (0.8, 0.2, 0.2))
    # Looking straight down (-z) with +y up the image: +x is to the right.
    cam = Camera(np.array([0.0, 0.0, 5.0]), np.zeros(3), np.array([0.0, 1.0, 0.0]), near_m=1.0, far_m=10.0,
                 ortho_scale_m=4.0)
    image = renderer.render(build_scene(box), cam)[0]
    top, bottom, left, right = _silhouette(image)
    per_m = SIZE / 4.0
    assert right - left + 1 == pytest.approx(1.0 * per_m, abs=1)
    assert bottom - top + 1 == pytest.approx(0.5 * per_m, abs=1)
    assert left == pytest.approx(SIZE / 2, abs=1)  # the box starts at x = 0, the image centre


def test_orthographic_size_does_not_depend_on_distance(renderer: Renderer) -> None:
    box = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.full((1, 3), 0.5), (0.5, 0.5, 0.5)))
    spans = []
    for height in (3.0, 30.0):
        cam = Camera(np.array([0.0, 0.0, height]), np.zeros(3), np.array([0.0, 1.0, 0.0]), near_m=0.5,
                     far_m=height + 5.0, ortho_scale_m=3.0)
        top, bottom, left, right = _silhouette(renderer.render(box, cam)[0])
        spans.append((bottom - top, right - left))
    assert spans[0] == spans[1]


@pytest.mark.parametrize("ortho", [None, 3.0])
def test_projected_corners_bound_the_silhouette(renderer: Renderer, ortho: float | None) -> None:
    centre, half = np.array([0.3, -0.2, 0.1]), np.array([0.4, 0.3, 0.2])
    scene = build_scene(Boxes.from_centres(centre[None], half[None], (0.9, 0.9, 0.9)))
    cam = Camera(np.array([2.0, -3.0, 2.5]), np.zeros(3), np.array([0.0, 0.0, 1.0]), near_m=0.5, far_m=20.0,
                 ortho_scale_m=ortho)
    top, bottom, left, right = _silhouette(renderer.render(scene, cam)[0])
    corners = centre + half * np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    px = cam.project_to_pixels(corners, SIZE, SIZE)
    assert np.all(px[:, 2] > 0)
    assert px[:, 0].min() == pytest.approx(left, abs=1.0)
    assert px[:, 0].max() == pytest.approx(right + 1, abs=1.0)
    assert px[:, 1].min() == pytest.approx(top, abs=1.0)
    assert px[:, 1].max() == pytest.approx(bottom + 1, abs=1.0)


def test_points_behind_the_camera_have_negative_depth() -> None:
    cam = Camera(np.zeros(3), np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), near_m=0.1, far_m=10.0)
    depth = cam.project_to_pixels(np.array([[0.0, 2.0, 0.0], [0.0, -2.0, 0.0]]), 64, 64)[:, 2]
    assert depth.tolist() == pytest.approx([2.0, -2.0])


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_ortho_scale_is_rejected(scale: float) -> None:
    with pytest.raises(RenderInputError, match="ortho_scale_m"):
        Camera(np.zeros(3), np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), near_m=0.1, far_m=10.0,
               ortho_scale_m=scale)
