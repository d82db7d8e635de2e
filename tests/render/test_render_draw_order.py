"""The renderer draws triangles in reverse order with depth test LEQUAL (Renderer.reverse):
every image must be the one the given order with LESS draws, ties between coplanar faces
and fragments on the far plane included."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from buildbench.render import (
    Boxes,
    Camera,
    Renderer,
    RenderUnavailableError,
    TriangleMesh,
    build_scene,
    gl_info,
)
from buildbench.render.renderer import BELOW_FAR

SIZE = 96


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[Renderer, Renderer]]:
    try:
        made = (Renderer(SIZE, SIZE, samples=0), Renderer(SIZE, SIZE, samples=0, reverse=False))
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    yield made
    for r in made:
        r.release()


def _same(pair: tuple[Renderer, Renderer], scene, cameras) -> np.ndarray:
    fast, given = pair
    a, b = fast.render(scene, cameras), given.render(scene, cameras)
    assert np.array_equal(a, b), f"{int((a != b).any(axis=-1).sum())} pixels differ between the draw orders"
    return a


def _camera(azimuth: float = 20.0, elevation: float = 15.0, far: float = 20.0) -> Camera:
    return Camera.orbit(azimuth, elevation, 6.0, (0.0, 0.0, 0.0), near_m=0.5, far_m=far)


def test_llvmpipe_draws_in_reverse_and_msaa_in_order(pair):
    if "llvmpipe" not in gl_info().renderer:
        pytest.skip("the probe's outcome is only known for llvmpipe")
    assert pair[0].reverse and not pair[1].reverse
    with Renderer(8, 8, samples=4) as msaa:
        assert not msaa.reverse


def test_coplanar_ties_go_to_the_first_drawn_item(pair):
    # Two unit cubes side by side and a third sharing their front faces' plane, overlapping
    # both: on the shared plane the first drawn wins under LESS, and must win reversed too.
    red, green, blue = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
    boxes = Boxes.from_centres(np.array([[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]),
                               np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.75, 0.5, 0.25]]),
                               np.array([red, green, blue]))
    image = _same(pair, build_scene(boxes), [_camera(0.0, 0.0)])[0]
    centre = image[SIZE // 2, SIZE // 2 - SIZE // 8]
    assert centre[0] > 0 and centre[1] == 0 and centre[2] == 0, "the red cube, drawn first, wins the tie"


def test_random_ties_boxes_and_open_meshes(pair):
    rng = np.random.default_rng(7)
    # Boxes on a half-unit grid with half-unit sizes: many faces flush with others.
    centres = rng.integers(-4, 5, size=(120, 3)) * 0.25
    half = rng.integers(1, 4, size=(120, 3)) * 0.25
    boxes = Boxes.from_centres(centres, half, rng.random((120, 3)))
    # Open meshes: each triangle twice in different colours (exact ties between two-sided faces),
    # and lying in the boxes' face planes (ties with closed faces).
    tri = rng.integers(-4, 5, size=(40, 3, 3)).astype(float) * 0.25
    tri[:, :, 2] = tri[:, :1, 2]  # each triangle in a plane z = const, as box faces are
    vertices = np.concatenate([tri, tri]).reshape(-1, 3)
    faces = np.arange(len(vertices)).reshape(-1, 3)
    mesh = TriangleMesh(vertices, faces, rng.random((len(faces), 3)))
    scene = build_scene(boxes, [mesh])
    cams = [_camera(a, e) for a, e in ((0.0, 0.0), (90.0, 0.0), (35.0, 25.0), (200.0, 60.0), (300.0, -30.0))]
    images = _same(pair, scene, cams)
    assert (images[..., 3] > 0).mean() > 0.1, "the scene is in view"


def test_fragments_on_the_far_plane(pair):
    # A wall exactly at the far plane and one a hair nearer: window depths 1.0 and BELOW_FAR
    # or so, where LESS against 1.0 and LEQUAL against BELOW_FAR must agree.
    cam = Camera(eye_m=np.zeros(3), target_m=np.array([0.0, 1.0, 0.0]), up=np.array([0.0, 0.0, 1.0]),
                 near_m=1.0, far_m=10.0)
    walls = []
    for y in (10.0, 10.0 * (1 - 1e-7), 10.0 * (1 - 3e-7), 10.0 * (1 + 1e-7)):
        walls.append(TriangleMesh(np.array([[-20.0, y, -20.0], [20.0, y, -20.0], [0.0, y, 20.0]]),
                                  np.array([[0, 1, 2]]), (0.5, 0.5, 0.5)))
    for wall in walls:
        _same(pair, build_scene(meshes=[wall]), [cam])
    assert BELOW_FAR < 1.0 and np.float32(BELOW_FAR) == BELOW_FAR


def test_dreamhouse_views_unchanged(pair):
    from buildbench.suites.dreamhouse import views
    from buildbench.suites.dreamhouse.generate import PAPER_DATASET_SIZE, dataset_task_ids, generate_structure

    given = Renderer(views.IMAGE_SIZE_PX, views.IMAGE_SIZE_PX, samples=views.MSAA_SAMPLES, reverse=False)
    try:
        ids = dataset_task_ids(PAPER_DATASET_SIZE)
        for tid in ids[7 :: len(ids) // 3][:3]:
            house = generate_structure(str(tid))
            ours = views.house_views(house.structure, house.skin, "gl")
            for condition, skin in (("frame", None), ("facade", house.skin)):
                batches = [views._boxes(house.structure, views.frame_colors(house.structure))]
                if skin is not None:
                    batches.append(views._boxes(skin, views.skin_colors(skin)))
                scene = build_scene(batches)
                assert scene.bounds is not None
                expected = given.render(scene, views.cameras(scene.bounds, scene.bounds))
                assert np.array_equal(ours[condition], expected), f"{tid} {condition}"
    finally:
        given.release()
