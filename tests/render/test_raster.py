"""The deterministic rasterizer (render/raster.py, _raster.c): the pixel definition's invariants,
its input errors, and the C extension drawing the numpy code's pixels bit for bit."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pytest

from buildbench.render import (
    Boxes,
    Camera,
    OrbitView,
    Rasterizer,
    RenderInputError,
    TriangleMesh,
    build_scene,
    raster,
)
from buildbench.render.scene import Scene


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    yield


def _both(width: int, height: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Rasterizer, Rasterizer]:
    """A C rasterizer and a numpy one of the same size (skips where the extension is not built)."""
    native = Rasterizer(width, height)
    if not native.native:
        pytest.skip("the C rasterizer (render/_raster.c) is not built here: setup.py build_ext")
    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    slow = Rasterizer(width, height)
    monkeypatch.delenv("BUILDBENCH_NATIVE")
    assert not slow.native
    return native, slow


def _ortho(eye: tuple[float, float, float], scale: float = 4.0, near: float = 0.5, far: float = 50.0,
           target: tuple[float, float, float] = (0.0, 0.0, 0.0), up: tuple[float, float, float] = (0.0, 0.0, 1.0)
           ) -> Camera:
    return Camera(eye_m=np.array(eye), target_m=np.array(target), up=np.array(up), near_m=near, far_m=far,
                  ortho_scale_m=scale)


def _persp(eye, target=(0.0, 0.0, 0.0), near=0.1, far=100.0, up=(0.0, 0.0, 1.0), focal=35.0) -> Camera:
    return Camera(eye_m=np.array(eye, float), target_m=np.array(target, float), up=np.array(up, float),
                  near_m=near, far_m=far, focal_length_mm=focal)


def _rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(n, 3, 3)))
    return q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]


def _random_boxes(rng: np.random.Generator, n: int, spread: float = 2.0, offset: float = 0.0) -> Boxes:
    sizes = np.exp(rng.uniform(np.log(0.005), np.log(1.0), size=(n, 3)))  # thin members to blocks
    centres = rng.uniform(-spread, spread, size=(n, 3)) + offset
    colors = rng.integers(0, 256, size=(n, 4))
    colors[:, 3] = rng.choice([255, 128, 7], size=n)
    return Boxes.from_centres(centres, sizes / 2, colors, rotations=_rotations(rng, n))


def _touching_grid() -> Boxes:
    """Unit cubes face to face (coplanar touching faces), two colours alternating."""
    idx = np.array([(i, j, k) for i in range(3) for j in range(3) for k in range(2)], float)
    colors = np.where((idx.sum(axis=1) % 2 == 0)[:, None], [200, 40, 40, 255], [40, 40, 200, 255])
    return Boxes.from_centres(idx - 1.0, np.full((len(idx), 3), 0.5), colors)


def _degenerate_mesh() -> TriangleMesh:
    v = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [0, 1, 0], [0.5, 0.5, 1.0]], float)
    faces = np.array([[0, 1, 2], [3, 4, 0], [3, 3, 3], [0, 1, 5], [1, 3, 5]])
    return TriangleMesh(v, faces, (0.3, 0.9, 0.5, 1.0))


def _scenes_and_cameras(seed: int) -> list[tuple[str, Scene, list[Camera]]]:
    rng = np.random.default_rng(seed)
    around = [_persp(rng.normal(size=3) * 6 + [0, 0, 2]) for _ in range(3)]
    return [
        ("odd poses", build_scene(_random_boxes(rng, 40)), around),
        ("touching faces", build_scene(_touching_grid()), [_persp((5.0, -4.0, 3.0)), _ortho((3.0, -7.0, 2.0))]),
        # The camera inside the boxes: triangles cross the near plane and lie behind the eye.
        ("near plane", build_scene(_random_boxes(rng, 30, spread=1.0)),
         [_persp((0.2, 0.1, 0.0), target=(1.0, 0.3, 0.2), near=0.05), _persp((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), 0.3)]),
        ("far plane", build_scene(_random_boxes(rng, 30)), [_persp((6.0, -5.0, 2.0), far=8.0)]),
        ("huge coordinates", build_scene(_random_boxes(rng, 20, offset=1e6)),
         [_persp(np.array([1e6 + 7.0, 1e6 - 5.0, 1e6 + 3.0]), target=(1e6, 1e6, 1e6))]),
        ("tiny boxes", build_scene(Boxes.from_centres(rng.normal(size=(20, 3)) * 1e-3, np.full((20, 3), 2e-4),
                                                      (0.5, 0.5, 0.5), rotations=_rotations(rng, 20))),
         [_persp((4e-3, -3e-3, 2e-3), near=1e-4, far=1.0)]),
        ("degenerate triangles", build_scene(meshes=[_degenerate_mesh()]), [_persp((2.0, -3.0, 2.0))]),
        ("open and closed", build_scene(_random_boxes(rng, 10), [_degenerate_mesh(), _big_triangle(1e7)]),
         [_persp((1.0, -3.0, 0.5)), _persp((1.0, 3.0, -0.5))]),
    ]


def _big_triangle(reach: float) -> TriangleMesh:
    """One open triangle in the plane z = 0 reaching ``reach`` metres: far outside any image."""
    v = np.array([[-reach, -reach, 0.0], [reach, -reach, 0.0], [0.0, reach, 0.0]])
    return TriangleMesh(v, np.array([[0, 1, 2]]), (0.2, 0.4, 0.6, 1.0))


@pytest.mark.parametrize("size", [(64, 48), (33, 70), (1, 1)])
@pytest.mark.parametrize("seed", [0, 1])
def test_c_draws_the_numpy_pixels_bit_for_bit(size: tuple[int, int], seed: int,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    native, slow = _both(*size, monkeypatch)
    drawn = 0
    for name, scene, cams in _scenes_and_cameras(seed):
        a, b = native.render(scene, cams), slow.render(scene, cams)
        assert a.shape == (len(cams), size[1], size[0], 4)
        differ = int((a != b).any(axis=-1).sum())
        assert differ == 0, f"{name}: {differ} pixels differ between C and numpy"
        drawn += int((a[..., 3] > 0).sum())
    assert drawn > (0 if size == (1, 1) else 1000)  # the scenes are in view


def test_a_triangle_far_beyond_the_guard_band_covers_the_image(monkeypatch: pytest.MonkeyPatch) -> None:
    native, slow = _both(40, 30, monkeypatch)
    for reach in (1e3, 1e7, 1e12):
        scene = build_scene(meshes=[_big_triangle(reach)])
        cams = [_persp((0.0, -0.5, 3.0), target=(0.0, 0.0, 0.0), up=(0.0, 1.0, 0.0)), _ortho((0.0, 0.0, 5.0), 2.0,
                                                                                             up=(0.0, 1.0, 0.0))]
        a, b = native.render(scene, cams), slow.render(scene, cams)
        assert np.array_equal(a, b)
        assert (a[..., 3] == 255).all(), f"reach {reach}: {(a[..., 3] == 0).sum()} pixels left uncovered"
        # The plane seen edge-on from inside it: no pixel, and nothing overflows.
        assert not native.render(scene, _persp((0.0, -2.0, 0.0), (0.0, 0.0, 0.0)))[..., 3].any()


@pytest.mark.parametrize("native", [True, False])
def test_ground_crossing_the_near_plane_fills_exactly_below_the_horizon(native: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A ground square reaching far behind the camera: clipped at the near plane, its image is every
    row below the horizon (the middle row, the camera looking level) and nothing above: no wrap-around
    of corners behind the eye."""
    if not native:
        monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    r = Rasterizer(48, 40)
    if native and not r.native:
        pytest.skip("the C rasterizer is not built here")
    reach = 1e3
    v = np.array([[-reach, -reach, 0.0], [reach, -reach, 0.0], [reach, reach, 0.0], [-reach, reach, 0.0]])
    ground = TriangleMesh(v, np.array([[0, 1, 2], [0, 2, 3]]), (0.5, 0.5, 0.5, 1.0), closed=True)
    cam = _persp((3.0, -5.0, 1.0), target=(3.0, 10.0, 1.0), near=0.05, far=5000.0)
    covered = r.render(build_scene(meshes=[ground]), cam)[0, ..., 3] > 0
    assert not covered[:19].any()  # rows wholly above the horizon (the middle of the image, row 20)
    assert covered[21:].all()
    # Seen from below, the closed ground is a back face everywhere: nothing at all.
    under = _persp((3.0, -5.0, -1.0), target=(3.0, 10.0, -1.0), near=0.05, far=5000.0)
    assert not r.render(build_scene(meshes=[ground]), under)[..., 3].any()


def _expected_axis_box_mask(box_lo: tuple[float, float], box_hi: tuple[float, float], width: int, height: int,
                            span: float) -> np.ndarray:
    """Pixels of an axis-aligned rectangle seen head-on by an orthographic camera, from step 4 and 6:
    columns whose centre lies in [X_lo, X_hi) of the snapped edges (top-left rule), rows likewise."""
    def snapped(v: float, n: int, flip: bool) -> int:
        ndc = v / (span / 2)
        return int(np.floor((((1.0 - ndc) if flip else (ndc + 1.0)) * (n * 0.5)) * 256.0 + 0.5))
    x0, x1 = snapped(box_lo[0], width, False), snapped(box_hi[0], width, False)
    y0, y1 = snapped(box_hi[1], height, True), snapped(box_lo[1], height, True)
    cols = np.arange(width) * 256 + 128
    rows = np.arange(height) * 256 + 128
    return ((rows >= y0) & (rows < y1))[:, None] & ((cols >= x0) & (cols < x1))[None, :]


@pytest.mark.parametrize("native", [True, False])
def test_axis_box_covers_the_pixels_its_snapped_edges_say(native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not native:
        monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    r = Rasterizer(37, 37)
    if native and not r.native:
        pytest.skip("the C rasterizer is not built here")
    lo, hi = (-0.731, -0.52), (0.4455, 1.003)  # edges at odd sub-pixel positions, one on a pixel centre row
    box = Boxes.from_centres(np.array([[(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, 0.0]]),
                             np.array([[(hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2, 0.25]]), (1.0, 1.0, 1.0))
    # Looking down -z from above, x right and y up: the box's top face is the rectangle.
    cam = _ortho((0.0, 0.0, 10.0), scale=3.0, up=(0.0, 1.0, 0.0))
    image = r.render(build_scene(box), cam)[0]
    # float32 positions (relative to the box centre, the scene origin) are what is drawn.
    c = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2])
    lo32 = tuple(float(np.float32(v - o)) + o for v, o in zip(lo, c, strict=True))
    hi32 = tuple(float(np.float32(v - o)) + o for v, o in zip(hi, c, strict=True))
    expected = _expected_axis_box_mask(lo32, hi32, 37, 37, 3.0)
    assert expected.sum() > 100
    assert np.array_equal(image[..., 3] > 0, expected)


@pytest.mark.parametrize("native", [True, False])
def test_two_triangles_of_a_quad_cover_each_pixel_once(native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not native:
        monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    r = Rasterizer(50, 41)
    if native and not r.native:
        pytest.skip("the C rasterizer is not built here")
    rng = np.random.default_rng(3)
    cams = [_persp(rng.normal(size=3) * 3 + [0, 0, 3], near=0.01) for _ in range(4)]
    # A convex planar quad of exact (dyadic) coordinates: each scene's float32 positions relative to
    # its own origin are the same points, so the triangles are snapped alike in all three scenes.
    quad = np.array([[-1.0, -1.125, 0.0], [1.25, -0.75, 0.0], [0.875, 1.0, 0.0], [-0.75, 0.625, 0.0]])
    first = TriangleMesh(quad, np.array([[0, 1, 2]]), (1.0, 0.0, 0.0, 1.0))
    second = TriangleMesh(quad, np.array([[0, 2, 3]]), (0.0, 1.0, 0.0, 1.0))
    a = r.render(build_scene(meshes=[first]), cams)[..., 3] > 0
    b = r.render(build_scene(meshes=[second]), cams)[..., 3] > 0
    both = r.render(build_scene(meshes=[first, second]), cams)[..., 3] > 0
    assert not (a & b).any(), f"{int((a & b).sum())} pixels drawn by both triangles"
    assert np.array_equal(a | b, both)
    assert a.sum() > 50 and b.sum() > 50


def test_back_faces_of_closed_solids_are_culled_and_open_meshes_two_sided() -> None:
    r = Rasterizer(32, 32)
    tri = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])  # counter-clockwise seen from +z
    above, below = _ortho((0.0, 0.0, 5.0), up=(0.0, 1.0, 0.0)), _ortho((0.0, 0.0, -5.0), up=(0.0, 1.0, 0.0))
    for closed, seen_below in ((True, False), (False, True)):
        scene = build_scene(meshes=[TriangleMesh(tri, np.array([[0, 1, 2]]), (1.0, 1.0, 1.0), closed=closed)])
        images = r.render(scene, [above, below])
        assert images[0, ..., 3].any()
        assert bool(images[1, ..., 3].any()) is seen_below


def test_colour_is_the_shaded_item_colour_and_alpha_is_written() -> None:
    from buildbench.render import shade_factor

    r = Rasterizer(16, 16)
    cam = _ortho((0.0, 0.0, 5.0), up=(0.0, 1.0, 0.0))
    box = Boxes.from_centres(np.zeros((1, 3)), np.full((1, 3), 0.5), [101, 202, 53, 77])
    image = r.render(build_scene(box), cam)[0]
    shade = float(shade_factor(np.array([0.0, 0.0, 1.0]), cam, r.lighting))
    expected = [int(np.floor(c * shade + 0.5)) for c in (101, 202, 53)] + [77]
    covered = image[..., 3] > 0
    assert covered.any()
    assert (image[covered] == expected).all()
    assert (image[~covered] == 0).all()


def test_empty_scene_and_point_scene_render_transparent() -> None:
    r = Rasterizer(8, 5)
    empty = build_scene()
    assert r.render(empty, _persp((1.0, 1.0, 1.0))).shape == (1, 5, 8, 4)
    assert not r.render(empty, [_persp((1.0, 1.0, 1.0))] * 2).any()
    views = [OrbitView("front", 0.0, 10.0, 1.5)]
    assert not r.render_orbit(empty, views).any()
    point = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.zeros((1, 3)), (1.0, 1.0, 1.0)))
    assert r.render_orbit(point, views).shape == (1, 5, 8, 4)


def test_same_bytes_run_to_run_and_a_fixed_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scene of exact coordinates seen by an exact orthographic camera: the pixels do not depend
    on the machine, so their digest is fixed (a changed pixel definition must bump PIXEL_VERSION and
    this digest)."""
    rng = np.random.default_rng(7)
    v = rng.integers(-64, 64, size=(60, 3)) / 32.0
    faces = rng.integers(0, 60, size=(40, 3))
    mesh = TriangleMesh(v, faces, rng.integers(0, 256, size=(40, 4)))
    scene = build_scene(meshes=[mesh])
    cams = [_ortho((0.0, 0.0, 8.0), scale=5.0, up=(0.0, 1.0, 0.0)), _ortho((0.0, -8.0, 0.0), scale=5.0)]
    images = Rasterizer(64, 48).render(scene, cams)
    assert np.array_equal(images, Rasterizer(64, 48).render(scene, cams))
    monkeypatch.setenv("BUILDBENCH_NATIVE", "0")
    assert np.array_equal(images, Rasterizer(64, 48).render(scene, cams))
    assert raster.PIXEL_VERSION == 2
    assert hashlib.sha256(images.tobytes()).hexdigest()[:16] == DIGEST_V2


DIGEST_V2 = "8149aa8e13588967"


@pytest.mark.parametrize("native", [True, False])
def test_drawing_into_a_given_array_overwrites_it_with_the_same_image(native: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``out`` (reused by dataset rendering) holds exactly a fresh render's pixels, whatever it held
    before (an earlier scene's drawing, or garbage), and is what render returns."""
    if native and raster._native is None:
        pytest.skip("the C extension is not built")
    monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if native else "0")
    r = Rasterizer(16, 12)
    rng = np.random.default_rng(3)
    big = build_scene(Boxes.from_centres(rng.normal(size=(6, 3)), np.full((6, 3), 0.6), (0.9, 0.5, 0.2)))
    small = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.full((1, 3), 0.2), (0.1, 0.8, 0.3)))
    cams = [_persp((4.0, 3.0, 2.0)), _persp((-3.0, 4.0, 1.0))]
    out = np.full((2, 12, 16, 4), 7, dtype=np.uint8)
    for scene in (big, small, build_scene()):  # each over the one before
        fresh = r.render(scene, cams)
        assert r.render(scene, cams, out=out) is out
        assert np.array_equal(out, fresh)
    assert r.render(small, cams, out=out).any()
    for bad in (np.zeros((1, 12, 16, 4), np.uint8), np.zeros((2, 12, 16, 4), np.int16),
                np.zeros((2, 12, 32, 4), np.uint8)[:, :, ::2], np.zeros((2, 12, 16, 4), np.uint8).tolist()):
        with pytest.raises(RenderInputError, match="out must be"):
            r.render(small, cams, out=bad)  # type: ignore[arg-type]
    frozen = np.zeros((2, 12, 16, 4), np.uint8)
    frozen.setflags(write=False)
    with pytest.raises(RenderInputError, match="out must be"):
        r.render(small, cams, out=frozen)


def test_bad_inputs_are_render_input_errors() -> None:
    with pytest.raises(RenderInputError, match="size"):
        Rasterizer(0, 5)
    with pytest.raises(RenderInputError, match="size"):
        Rasterizer(raster.MAX_SIZE_PX + 1, 5)
    r = Rasterizer(8, 8)
    scene = build_scene(Boxes.from_centres(np.zeros((1, 3)), np.full((1, 3), 0.5), (1.0, 1.0, 1.0)))
    cam = _persp((3.0, 3.0, 3.0))
    with pytest.raises(RenderInputError, match="Scene"):
        r.render("scene", cam)  # type: ignore[arg-type]
    with pytest.raises(RenderInputError, match="at least one camera"):
        r.render(scene, [])
    with pytest.raises(RenderInputError, match=r"cameras\[1\]"):
        r.render(scene, [cam, "x"])  # type: ignore[list-item]
    with pytest.raises(RenderInputError, match="at least one view"):
        r.render_orbit(scene, [])
    broken = Scene(scene.vertices, scene.indices + 100, scene.origin_m, scene.bounds, scene.closed_vertex_count)
    with pytest.raises(RenderInputError, match="refer to vertex"):
        r.render(broken, cam)
    ragged = Scene(scene.vertices, scene.indices[:-1], scene.origin_m, scene.bounds, 0)
    with pytest.raises(RenderInputError, match="three entries"):
        r.render(ragged, cam)
    odd = Scene(scene.vertices, scene.indices, scene.origin_m, scene.bounds, 5)
    with pytest.raises(RenderInputError, match="closed_vertex_count"):
        r.render(odd, cam)


def test_the_c_buffers_kept_between_calls_change_no_pixel(monkeypatch: pytest.MonkeyPatch) -> None:
    """_raster.c keeps its per-call buffers (depth, per-vertex records, position table) for the next
    call: calls of growing and shrinking sizes and scenes, in turn and from several threads at once,
    draw what the numpy code draws."""
    import threading

    rng = np.random.default_rng(11)
    jobs = [(size, build_scene(_random_boxes(rng, n)), [_persp(rng.normal(size=3) * 6 + [0, 0, 2]) for _ in range(2)])
            for size, n in (((40, 30), 5), ((90, 70), 60), ((17, 23), 1), ((90, 70), 60), ((64, 64), 200))]
    expected = []
    for size, scene, cams in jobs:
        native, slow = _both(*size, monkeypatch)
        expected.append(slow.render(scene, cams))
        assert np.array_equal(native.render(scene, cams), expected[-1])
    got: dict[int, list[np.ndarray]] = {}

    def draw(k: int) -> None:
        got[k] = [Rasterizer(*size).render(scene, cams) for size, scene, cams in jobs[k % 2 :] + jobs]

    threads = [threading.Thread(target=draw, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert all(np.array_equal(a, b) for a, b in zip(got[k], expected[k % 2 :] + expected, strict=True))


@pytest.mark.parametrize("native", [True, False])
def test_drawing_into_rows_spaced_further_apart_touches_only_the_pixels(native: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``out`` may have its rows further apart than its pixels need (a PNG encoder's rows, with a
    filter byte before each): the same image as a fresh render, and the bytes between rows untouched
    (the C code's four-pixel stores write back what they read past a row's end)."""
    if native and raster._native is None:
        pytest.skip("the C extension is not built")
    monkeypatch.setenv("BUILDBENCH_NATIVE", "1" if native else "0")
    r = Rasterizer(13, 11)
    rng = np.random.default_rng(5)
    scene = build_scene([_touching_grid(), _random_boxes(rng, 25, spread=1.5)])
    cams = [_persp((5.0, -4.0, 3.0)), _persp((-4.0, 4.0, 1.0)), _ortho((3.0, -7.0, 2.0))]
    pitch = 4 * 13 + 3
    rows = np.full((3, 11, pitch), 0xA5, np.uint8)
    out = np.ndarray((3, 11, 13, 4), np.uint8, buffer=rows, offset=2, strides=(11 * pitch, pitch, 4, 1))
    assert r.render(scene, cams, out=out) is out
    fresh = r.render(scene, cams)
    assert np.array_equal(out, fresh) and (fresh[..., 3] > 0).sum() > 150
    assert (fresh[:, :-1, -3:, 3] > 0).any()  # drawn near a row end but the last row: four-pixel stores pass it
    assert (rows[:, :, :2] == 0xA5).all() and (rows[:, :, 2 + 4 * 13 :] == 0xA5).all()
    views_apart = np.ndarray((3, 11, 13, 4), np.uint8, buffer=np.zeros(4 * 11 * pitch, np.uint8),
                             strides=(12 * pitch, pitch, 4, 1))
    with pytest.raises(RenderInputError, match="out must be"):
        r.render(scene, cams, out=views_apart)
