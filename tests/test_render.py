"""Rendering with moderngl/EGL: silhouettes, orientation, shading, determinism, errors."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pytest

from buildbench.render import (
    Bounds,
    Boxes,
    Camera,
    Lighting,
    OrbitView,
    Renderer,
    RenderInputError,
    RenderUnavailableError,
    TriangleMesh,
    build_scene,
    frame_views,
    load_png,
    save_png,
    shade_factor,
    to_png_bytes,
)
from buildbench.render import context as render_context
from buildbench.render.camera import cross3
from buildbench.render.scene import MAX_CONDITION, box_world_geometry, well_conditioned

SIZE = 128
GREY = (0.8, 0.6, 0.4, 1.0)


@pytest.fixture(scope="module")
def renderers() -> Iterator[dict[int, Renderer]]:
    try:
        made = {0: Renderer(SIZE, SIZE, samples=0), 4: Renderer(SIZE, SIZE, samples=4)}
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    yield made
    for r in made.values():
        r.release()


def _cube(centre=(0.0, 0.0, 0.0), half=0.5, color=GREY) -> Boxes:
    return Boxes.from_centres(np.array([centre], dtype=float), np.full((1, 3), half), color)


def _front_camera(distance: float = 3.0, target=(0.0, 0.0, 0.0)) -> Camera:
    return Camera.orbit(0.0, 0.0, distance, target, near_m=0.1, far_m=20.0)


class _PixelBox(NamedTuple):
    top: int
    bottom: int
    left: int
    right: int


def _covered(image: np.ndarray, threshold: int = 128) -> _PixelBox:
    """Inclusive pixel extent of alpha >= threshold."""
    rows, cols = np.nonzero(image[..., 3] >= threshold)
    return _PixelBox(int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max()))


@pytest.mark.parametrize("samples", [0, 4])
def test_unit_cube_head_on_covers_the_predicted_rectangle(renderers, samples: int) -> None:
    image = renderers[samples].render(build_scene(_cube()), _front_camera(3.0))[0]
    # Front face at depth 2.5 m, half-width 0.5 m; tan(half fov) = 18/32 for a 32 mm lens.
    half_ndc = 0.5 / (2.5 * 18 / 32)
    lo_px, hi_px = SIZE / 2 * (1 - half_ndc), SIZE / 2 * (1 + half_ndc)
    first, last = math.ceil(lo_px - 0.5), math.floor(hi_px - 0.5)  # pixels whose centre is inside
    top, bottom, left, right = _covered(image)
    for got, want in ((top, first), (bottom, last), (left, first), (right, last)):
        assert abs(got - want) <= 1, (top, bottom, left, right, first, last)


def test_orientation_left_right_up_and_top_left_origin(renderers) -> None:
    r = renderers[0]
    scene = build_scene(_cube(centre=(-1.0, 0.0, 1.0), half=0.3))
    image = r.render(scene, _front_camera(6.0))[0]
    top, bottom, left, right = _covered(image)
    assert right < SIZE // 2 and bottom < SIZE // 2  # world -X is image left, world +Z image top
    # Camera on +X (azimuth 90°) looking back at the origin: world +Y is on the image right.
    side = Camera.orbit(90.0, 0.0, 6.0, (0, 0, 0), near_m=0.1, far_m=20.0)
    image = r.render(build_scene(_cube(centre=(0.0, 1.0, 0.0), half=0.3)), side)[0]
    _, _, left, _ = _covered(image)
    assert left > SIZE // 2


def test_pixel_colour_is_item_colour_times_lambert_shade(renderers) -> None:
    boxes = _cube(color=GREY)
    cam = Camera.orbit(30.0, 25.0, 4.0, (0, 0, 0), near_m=0.1, far_m=20.0)
    image = renderers[4].render(build_scene(boxes), cam)[0].astype(int)
    front_normal = np.array([0.0, -1.0, 0.0])
    shade = float(shade_factor(front_normal, cam, renderers[4].lighting))
    expected = np.rint(np.rint(np.array(GREY[:3]) * 255) * shade).astype(int)
    # The -Y face's centre projects slightly left of and below the image centre.
    clip = cam.projection_matrix(SIZE, SIZE) @ cam.view_matrix() @ np.array([0.0, -0.5, 0.0, 1.0])
    col = int((clip[0] / clip[3] + 1) * SIZE / 2)
    row = int((1 - clip[1] / clip[3]) * SIZE / 2)
    assert np.all(np.abs(image[row, col, :3] - expected) <= 1), (image[row, col], expected)
    assert image[row, col, 3] == 255
    top_shade = float(shade_factor(np.array([0.0, 0.0, 1.0]), cam, renderers[4].lighting))
    assert top_shade != pytest.approx(shade)  # faces stay distinguishable


def test_unlit_pixels_are_exactly_the_item_colour() -> None:
    try:
        unlit = Renderer(32, 32, samples=4, lighting=Lighting(ambient=1.0, diffuse=0.0))
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    colors = np.array([[200, 10, 90, 255], [15, 160, 240, 255]], dtype=np.uint8)
    boxes = Boxes.from_centres(np.array([[-0.6, 0.0, 0.0], [0.6, 0.0, 0.0]]), np.full((2, 3), 0.4), colors)
    with unlit:
        image = unlit.render(build_scene(boxes), Camera.orbit(20.0, 30.0, 4.0, (0, 0, 0), near_m=0.1, far_m=20))[0]
    opaque = image[image[..., 3] == 255]
    assert {tuple(px) for px in opaque} == {tuple(c) for c in colors}
    with pytest.raises(RenderInputError, match="direction_view"):
        Lighting(direction_view=(0.0, 0.0, 0.0))


def test_background_is_transparent_black_and_edges_keep_straight_colour(renderers) -> None:
    image = renderers[4].render(build_scene(_cube()), _front_camera(3.0))[0]
    alpha = image[..., 3]
    assert np.all(image[alpha == 0] == 0)
    assert image[0, 0].tolist() == [0, 0, 0, 0]
    edge = (alpha > 0) & (alpha < 255)
    assert edge.any()  # MSAA gives partial coverage at the silhouette
    interior = image[SIZE // 2, SIZE // 2, :3].astype(int)
    assert np.abs(image[edge][:, :3].astype(int) - interior).max() <= 2  # not darkened by the background


def test_no_aa_alpha_is_binary(renderers) -> None:
    image = renderers[0].render(build_scene(_cube()), _front_camera(3.0))[0]
    assert set(np.unique(image[..., 3])) == {0, 255}


def test_item_alpha_is_written_not_blended(renderers) -> None:
    image = renderers[0].render(build_scene(_cube(color=(1.0, 1.0, 1.0, 0.5))), _front_camera(3.0))[0]
    centre = image[SIZE // 2, SIZE // 2]
    assert centre[3] == 128
    assert centre[0] > 200  # straight colour, not premultiplied by 0.5


def test_rerender_and_fresh_renderer_are_byte_identical(renderers) -> None:
    scene = build_scene(_timber_like())
    cams = frame_views(scene.bounds, [OrbitView("front", 0, 12, 1.05), OrbitView("fr", 45, 18, 1.10)])
    first = renderers[4].render(scene, cams)
    assert first.shape == (2, SIZE, SIZE, 4) and first.dtype == np.uint8
    assert renderers[4].render(scene, cams).tobytes() == first.tobytes()
    with Renderer(SIZE, SIZE, samples=4) as fresh:
        assert fresh.render(scene, cams).tobytes() == first.tobytes()


def test_culled_boxes_match_the_same_boxes_drawn_two_sided(renderers) -> None:
    # Boxes that do not touch: where solids touch, a culled back face could otherwise lose a
    # depth tie it wins when drawn, which is a legitimate difference.
    rng = np.random.default_rng(7)
    rotations = np.array([np.linalg.qr(rng.normal(size=(3, 3))).Q for _ in range(9)])
    rotations[0] = np.diag([-1.0, 1.0, 1.0]) @ rotations[0]  # one mirrored transform
    grid = np.array([(x, y, 0.3 * x) for x in range(3) for y in range(3)], dtype=float) * 1.5
    boxes = Boxes.from_centres(grid, rng.uniform(0.1, 0.4, (9, 3)), rng.uniform(0.2, 1.0, (9, 3)), rotations)
    geometry = box_world_geometry(boxes)
    open_mesh = TriangleMesh(
        geometry.positions_m, geometry.indices.reshape(-1, 3), np.repeat(boxes.colors, 12, axis=0)
    )
    culled, two_sided = build_scene(boxes), build_scene(meshes=[open_mesh])
    assert two_sided.closed_vertex_count == 0
    views = [OrbitView(str(a), a, e, 1.05) for a, e in ((0, 12), (90, 12), (200, -30), (45, 70))]
    cams = frame_views(culled.bounds, views)
    a, b = renderers[0].render(culled, cams), renderers[0].render(two_sided, cams)
    assert a.tobytes() == b.tobytes()
    a, b = renderers[4].render(culled, cams), renderers[4].render(two_sided, cams)
    assert np.array_equal(a[..., 3], b[..., 3])
    # With MSAA, a sample on a silhouette edge may tie in depth between a front face and the
    # back face sharing that edge; drawn two-sided, the back face can win. A culling or
    # winding error would instead open holes of whole faces.
    assert np.count_nonzero(np.any(a != b, axis=-1)) <= 10


def test_batched_box_geometry_is_each_box_alone() -> None:
    """Boxes sharing a 3x3 part get their normals and winding from one computation per distinct
    part: every box's values are the bytes it gets in a batch of its own (mirrored ones too)."""
    rng = np.random.default_rng(3)
    rotations = np.array([np.linalg.qr(rng.normal(size=(3, 3))).Q for _ in range(4)])
    rotations[1] = np.diag([1.0, -1.0, 1.0]) @ rotations[1]
    picks = rng.integers(0, 4, 40)
    boxes = Boxes.from_centres(rng.normal(size=(40, 3)) * 5, rng.uniform(0.01, 2.0, (40, 3)),
                               rng.integers(0, 256, (40, 4)), rotations[picks])
    batch = box_world_geometry(boxes)
    for i in range(len(boxes)):
        alone = box_world_geometry(Boxes(boxes.matrices[i : i + 1], boxes.sizes_m[i : i + 1], boxes.colors[i : i + 1]))
        rows = slice(24 * i, 24 * (i + 1))
        assert batch.positions_m[rows].tobytes() == alone.positions_m.tobytes()
        assert batch.normals[rows].tobytes() == alone.normals.tobytes()
        assert np.array_equal(batch.indices[36 * i : 36 * (i + 1)] - 24 * i, alone.indices)
    empty = box_world_geometry(Boxes(np.zeros((0, 4, 4)), np.zeros((0, 3)), np.zeros((0, 4), np.uint8)))
    assert [a.shape for a in empty] == [(0, 3), (0, 3), (0,)]


def test_cross3_is_numpys_cross_bit_for_bit() -> None:
    """Cameras and the conditioning bound use cross3 for speed; its values are np.cross's."""
    rng = np.random.default_rng(11)
    with np.errstate(all="ignore"):
        for shape in [(3,), (50, 3), (4, 6, 3)]:
            for scale in (1e-300, 1e-8, 1.0, 1e8, 1e300):
                a, b = rng.normal(size=shape) * scale, rng.normal(size=shape) * scale
                assert cross3(a, b).tobytes() == np.cross(a, b).tobytes(), (shape, scale)
        columns = rng.normal(size=(20, 4, 4))  # strided columns, as the conditioning bound takes them
        a, b = columns[:, :3, 0], columns[:, :3, 2]
        assert cross3(a, b).tobytes() == np.cross(a, b).tobytes()
        signed_zeros = np.array([0.0, -0.0, 1.0]), np.array([-0.0, 0.0, 2.0])
        assert cross3(*signed_zeros).tobytes() == np.cross(*signed_zeros).tobytes()


def test_camera_matrices_are_numpys_bit_for_bit() -> None:
    """The camera's matrix from its own helpers: crosses as np.cross, lengths and the translation as sums
    taken left to right (not BLAS, whose kernel picks the rounding: the same bytes on every CPU class)."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        scale = 10.0 ** rng.uniform(-3, 4)
        eye, target, up = rng.normal(size=(3, 3)) * scale
        cam = Camera(eye_m=eye, target_m=target, up=up, near_m=0.1, far_m=1e6)
        f = (target - eye) / _plain_length(target - eye)
        right = np.cross(f, up)
        right /= _plain_length(right)
        expected = np.eye(4)
        expected[0, :3], expected[1, :3], expected[2, :3] = right, np.cross(right, f), -f
        rows = expected[:3, :3]
        expected[:3, 3] = -((rows[:, 0] * eye[0] + rows[:, 1] * eye[1]) + rows[:, 2] * eye[2])
        assert cam.view_matrix().tobytes() == expected.tobytes()
        lo, hi = np.minimum(eye, target), np.maximum(eye, target)
        assert Bounds(lo, hi).diagonal_m == _plain_length(hi - lo)


def _plain_length(v: np.ndarray) -> float:
    x, y, z = (float(c) for c in v)
    return math.sqrt((x * x + y * y) + z * z)


def test_well_conditioned_is_the_svd_verdict() -> None:
    """The cheap bound only spares SVDs: verdicts are np.linalg.cond's, near the limit too."""
    rng = np.random.default_rng(2)
    sets = [rng.normal(size=(400, 3, 3)), np.tile(np.eye(3), (3, 1, 1)), np.zeros((2, 3, 3))]
    for eps in (1e-6, 1e-11, 1e-12, 1e-13, 1e-16, 0.0):  # a column nearly in the others' plane
        m = rng.normal(size=(200, 3, 3))
        m[:, :, 2] = 0.7 * m[:, :, 0] + 0.3 * m[:, :, 1] + eps * rng.normal(size=(200, 3))
        sets.append(m)
    sets += [rng.normal(size=(100, 3, 3)) * scale for scale in (1e-150, 1e-3, 1e3, 1e150)]
    sets.append(np.array([np.diag([1.0, k, 1.0]) for k in (1e-11, 2e-12, 1e-12, 9e-13)]))
    for m in sets:
        with np.errstate(all="ignore"):
            expected = np.linalg.cond(m) < MAX_CONDITION
        assert np.array_equal(well_conditioned(m), expected)
    columns = rng.normal(size=(30, 4, 4))[:, :3, :3]  # a strided view, as Boxes passes it
    assert np.array_equal(well_conditioned(columns), np.linalg.cond(columns) < MAX_CONDITION)


def test_scene_of_parts_is_the_scene_of_the_concatenated_arrays() -> None:
    """assemble_scene writes each part into the interleaved array in place: the same bytes as
    rounding the concatenated float64 arrays once, bounds over every vertex."""
    rng = np.random.default_rng(5)
    a = Boxes.from_centres(rng.normal(size=(7, 3)) * 3, rng.uniform(0.1, 1.0, (7, 3)), (0.9, 0.1, 0.1))
    b = Boxes.from_centres(rng.normal(size=(5, 3)) * 9 + 40, rng.uniform(0.1, 1.0, (5, 3)), (0.1, 0.9, 0.1, 0.5))
    tri = TriangleMesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, -7.0]]), np.array([[0, 1, 2]]), (0.2, 0.2, 0.9))
    scene = build_scene([a, b], meshes=[tri])
    geometries = [box_world_geometry(a), box_world_geometry(b)]
    positions = np.concatenate([g.positions_m for g in geometries] + [tri.vertices_m])
    lo, hi = positions.min(axis=0), positions.max(axis=0)
    assert np.array_equal(scene.bounds.min_m, lo) and np.array_equal(scene.bounds.max_m, hi)
    assert np.array_equal(scene.origin_m, 0.5 * (lo + hi))
    assert scene.vertices["position"].tobytes() == (positions - 0.5 * (lo + hi)).astype(np.float32).tobytes()
    normals = np.concatenate([g.normals for g in geometries] + [np.repeat([[0.0, 0.0, 0.0]], 3, axis=0)])
    normals[-3:] = np.cross([1.0, 0, 0], [0, 1.0, -7.0]) / np.linalg.norm(np.cross([1.0, 0, 0], [0, 1.0, -7.0]))
    assert scene.vertices["normal"].tobytes() == normals.astype(np.float32).tobytes()
    assert np.array_equal(scene.vertices["color"][:24], np.repeat(a.colors[:1], 24, axis=0))
    assert np.array_equal(scene.indices[:36 * 7], geometries[0].indices)
    assert np.array_equal(scene.indices[36 * 7 : 36 * 12], geometries[1].indices + 24 * 7)
    assert np.array_equal(scene.indices[36 * 12 :], [24 * 12, 24 * 12 + 1, 24 * 12 + 2])
    assert scene.closed_vertex_count == 36 * 12 and scene.indices.dtype == np.uint32


def test_open_mesh_is_visible_from_both_sides(renderers) -> None:
    tri = TriangleMesh(np.array([[-1, 0, -1], [1, 0, -1], [0, 0, 1.0]]), np.array([[0, 1, 2]]), (0.2, 0.9, 0.2))
    scene = build_scene(meshes=[tri])
    front, back = renderers[0].render(scene, [_front_camera(4.0), Camera.orbit(180, 0, 4.0, (0, 0, 0), near_m=0.1, far_m=20)])
    assert (front[..., 3] > 0).sum() == (back[..., 3] > 0).sum() > 100


def test_non_square_image_keeps_square_pixels() -> None:
    try:
        wide = Renderer(160, 80, samples=0)
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    with wide:
        image = wide.render(build_scene(_cube()), _front_camera(3.0))[0]
    top, bottom, left, right = _covered(image)
    assert abs((bottom - top) - (right - left)) <= 1
    assert abs((top + bottom) / 2 - 39.5) <= 1 and abs((left + right) / 2 - 79.5) <= 1


def test_empty_scene_renders_transparent(renderers) -> None:
    images = renderers[4].render(build_scene(), [_front_camera(), _front_camera(5.0)])
    assert images.shape == (2, SIZE, SIZE, 4) and not images.any()
    views = [OrbitView("front", 0.0, 12.0, 1.05)]
    assert not renderers[4].render_orbit(build_scene(), views).any()
    flat = build_scene(_cube(half=0.0))  # zero-size box: a single point, nothing to frame
    assert not renderers[4].render_orbit(flat, views).any()


def test_render_orbit_frames_the_scene(renderers) -> None:
    scene = build_scene(_timber_like())
    views = [OrbitView("front", 0.0, 12.0, 1.05), OrbitView("right", 90.0, 12.0, 1.05)]
    images = renderers[0].render_orbit(scene, views)
    assert images.tobytes() == renderers[0].render(scene, frame_views(scene.bounds, views)).tobytes()
    for image in images:  # framed at 1.05 x diagonal: visible, centred, and not touching the border
        top, bottom, left, right = _covered(image, threshold=1)
        assert top > 0 and left > 0 and bottom < SIZE - 1 and right < SIZE - 1
        assert abs((left + right) / 2 - SIZE / 2) < SIZE * 0.15


def test_render_input_errors(renderers) -> None:
    scene = build_scene(_cube())
    with pytest.raises(RenderInputError, match="at least one camera"):
        renderers[0].render(scene, [])
    with pytest.raises(RenderInputError, match=r"cameras\[1\] is a str"):
        renderers[0].render(scene, [_front_camera(), "front"])
    with pytest.raises(RenderInputError, match="scene must be a Scene"):
        renderers[0].render(_cube(), _front_camera())
    with pytest.raises(RenderInputError, match="samples"):
        Renderer(SIZE, SIZE, samples=64)
    released = Renderer(8, 8, samples=0)
    released.release()
    released.release()
    with pytest.raises(RenderInputError, match="released"):
        released.render(scene, _front_camera())


def test_missing_egl_raises_with_package_names(monkeypatch) -> None:
    def no_egl():
        raise OSError("libEGL.so.1: cannot open shared object file")

    monkeypatch.setattr(render_context, "_cached", None)
    monkeypatch.setattr(render_context, "_create_gl_context", no_egl)
    with pytest.raises(RenderUnavailableError) as info:
        Renderer(16, 16)
    message = str(info.value)
    assert "libegl1 libegl-mesa0 libgl1-mesa-dri" in message
    assert "libEGL.so.1: cannot open shared object file" in message


def test_forked_child_gets_an_error_not_a_hang(renderers, monkeypatch) -> None:
    context = render_context.get_context()
    monkeypatch.setattr(render_context, "_cached", render_context._Cached(context=context, pid=-1))
    with pytest.raises(RenderUnavailableError, match="spawn"):
        renderers[0].render(build_scene(_cube()), _front_camera())


def test_png_round_trip(renderers, tmp_path) -> None:
    image = renderers[4].render(build_scene(_cube()), _front_camera(3.0))[0]
    data = to_png_bytes(image)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(load_png(data), image)
    path = save_png(image, tmp_path / "cube.png")
    assert np.array_equal(load_png(path), image)
    with pytest.raises(RenderInputError, match="uint8"):
        to_png_bytes(image.astype(np.float32))
    with pytest.raises(RenderInputError, match="cannot read"):
        load_png(b"not a png")


def _timber_like() -> Boxes:
    """A small wall: studs, two plates and a tilted rafter."""
    xs = np.arange(0.0, 3.0, 0.4)
    centres = [(x, 0.0, 1.2) for x in xs] + [(1.4, 0.0, 0.02), (1.4, 0.0, 2.42), (1.4, -0.8, 2.9)]
    half = [(0.019, 0.045, 1.18)] * len(xs) + [(1.6, 0.045, 0.019)] * 2 + [(1.6, 0.9, 0.09)]
    rotations = np.tile(np.eye(3), (len(centres), 1, 1))
    c, s = math.cos(0.6), math.sin(0.6)
    rotations[-1] = [[1, 0, 0], [0, c, -s], [0, s, c]]
    colors = np.linspace([0.9, 0.85, 0.7, 1.0], [0.6, 0.4, 0.3, 1.0], len(centres))
    return Boxes.from_centres(np.array(centres), np.array(half), colors, rotations=rotations)
