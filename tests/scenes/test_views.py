"""Rendered LEGO-Eval views: shapes, determinism, world-to-pixel mapping and orientation,
occluder removal, labels, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.render import Renderer, RenderUnavailableError
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.scenes.views import (
    MULTIVIEW_KEYS,
    ViewInputError,
    object_front_view,
    object_multiview,
    object_top_view,
    relation_overlay,
    scene_boxes,
    topdown_room,
    topdown_scene,
    wall_view,
)
from buildbench.scenes.views.colors import distinct_colors, object_rgb, parse_color
from buildbench.scenes.views.geometry import subtract_rects

PX = 128


@pytest.fixture(scope="module", autouse=True)
def _gl() -> None:
    try:
        Renderer(16, 16, samples=0).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


def _house(*, red_xz: tuple[float, float] = (2.6, 0.8), blue_xz: tuple[float, float] = (1.3, 2.3)) -> Scene:
    """Room ``a`` (4 × 3 m), room ``b`` (3 × 3 m) east of it; a red sofa (2 × 0.9 m, facing
    north) and a blue one (facing south) in ``a``, a green plant in ``b``; a door a-b and a
    north window in ``a``."""
    b = HouseBuilder()
    b.room("a", (0.0, 0.0, 4.0, 3.0), floor_material="DarkWoodFloors")
    b.room("b", (4.0, 0.0, 7.0, 3.0))
    b.door("a", "b")
    b.window("a", "north")
    b.place("sofa", "a", red_xz, color="red")
    b.place("sofa", "a", blue_xz, yaw_deg=180.0, color="blue")
    b.place("plant", "b", (5.5, 1.5), color="green")
    return b.build()


def _mask(image: np.ndarray, rgb: tuple[float, float, float], tol: float = 0.3) -> np.ndarray:
    """Pixels whose colour is ``rgb`` up to shading: same channel ratios within ``tol``."""
    c = image[..., :3].astype(float) / 255.0
    target = np.asarray(rgb) / max(rgb)
    scaled = c / np.maximum(c.max(axis=2, keepdims=True), 1e-6)
    return (np.abs(scaled - target).max(axis=2) < tol) & (c.max(axis=2) > 0.15) & (image[..., 3] > 0)


RED = (0.75, 0.15, 0.15)
BLUE = (0.2, 0.35, 0.7)
GREEN = (0.25, 0.55, 0.3)


def _centroid(mask: np.ndarray) -> tuple[float, float]:
    rows, cols = np.nonzero(mask)
    assert rows.size, "colour not found in the image"
    return float(cols.mean()), float(rows.mean())


# --- scene_boxes -----------------------------------------------------------------------------
def test_scene_boxes_colours_objects_and_cuts_walls_around_holes() -> None:
    scene = _house()
    sb = scene_boxes(scene)
    assert len(sb.boxes) == len(sb.owners) and len(sb.floors) == 2
    red = scene.objects[0]
    i = sb.owners.index(red.id)
    assert tuple(sb.boxes.colors[i, :3]) == tuple(round(255 * c) for c in RED)
    door = scene.doors[0]
    pieces = [k for k, o in enumerate(sb.owners) if o == door.wall0]
    assert len(pieces) == 3  # left of the hole, right of it, above it
    # No piece of the door's wall covers the hole's centre.
    cx, cy, cz = scene.opening_center(door)
    render_point = np.array([cx, cz, cy])  # THOR frame: (x, y, z) -> (x, z, y)
    for k in pieces:
        local = np.linalg.solve(sb.boxes.matrices[k, :3, :3], render_point - sb.boxes.matrices[k, :3, 3])
        assert np.any(np.abs(local) > sb.boxes.sizes_m[k] / 2)


def test_subtract_rects_leaves_the_outer_area_minus_the_holes() -> None:
    pieces = subtract_rects((0.0, 4.0, 0.0, 3.0), [(1.0, 2.0, 0.0, 2.0), (2.5, 3.5, 1.0, 2.0)])
    area = sum((x1 - x0) * (y1 - y0) for x0, x1, y0, y1 in pieces)
    assert area == pytest.approx(12.0 - 2.0 - 1.0)
    assert all(x1 > x0 and y1 > y0 for x0, x1, y0, y1 in pieces)


def test_colours_come_from_attributes_then_catalogue_then_palette() -> None:
    scene = _house()
    sofa = scene.objects[0]
    assert object_rgb(sofa) == pytest.approx(RED)
    sofa.attributes["color"] = "dark green"
    assert object_rgb(sofa)[1] > object_rgb(sofa)[0]
    sofa.attributes.pop("color")
    assert object_rgb(sofa) == pytest.approx(RED)  # the catalogue's bb_sofa_red
    assert parse_color("#ff0000") == (1.0, 0.0, 0.0)
    assert parse_color([255, 0, 0]) == (1.0, 0.0, 0.0)
    assert parse_color("not a colour") is None
    assert len(set(distinct_colors(6))) == 6


# --- top-down views --------------------------------------------------------------------------
def test_topdown_scene_shape_dtype_and_determinism() -> None:
    scene = _house()
    a, b = topdown_scene(scene, px=PX), topdown_scene(scene, px=PX)
    assert a.shape == (PX, PX, 4) and a.dtype == np.uint8
    assert a.tobytes() == b.tobytes()
    assert np.all(a[..., 3] == 255)  # composited on white by default


def _plan_pixel(x: float, z: float, scene: Scene, px: int) -> tuple[float, float]:
    """Where topdown_scene puts floor point (x, z): north up, east right, 6 % margins."""
    (x0, z0), (x1, z1) = scene.bounds_xz()
    span = max(x1 - x0, z1 - z0) / 0.88
    return ((x - (x0 + x1) / 2) / span * px + px / 2, ((z0 + z1) / 2 - z) / span * px + px / 2)


@pytest.mark.parametrize(("red_xz", "blue_xz"), [((2.6, 0.8), (1.3, 2.3)), ((1.3, 2.3), (2.6, 0.8))])
def test_topdown_scene_puts_objects_where_the_plan_says(red_xz, blue_xz) -> None:  # noqa: ANN001
    scene = _house(red_xz=red_xz, blue_xz=blue_xz)
    image = topdown_scene(scene, px=PX)
    for rgb, (x, z) in ((RED, red_xz), (BLUE, blue_xz)):
        col, row = _centroid(_mask(image, rgb, tol=0.03))  # tight: room a's label is red too
        want_col, want_row = _plan_pixel(x, z, scene, PX)
        assert col == pytest.approx(want_col, abs=2.0)
        assert row == pytest.approx(want_row, abs=2.5)  # the dark front band shifts it a little
    # East (+x) is to the right, north (+z) is up.
    red_col, red_row = _centroid(_mask(image, RED, tol=0.03))
    blue_col, blue_row = _centroid(_mask(image, BLUE, tol=0.03))
    assert (red_col > blue_col) == (red_xz[0] > blue_xz[0])
    assert (red_row < blue_row) == (red_xz[1] > blue_xz[1])


def test_topdown_scene_writes_room_labels_outside_the_rooms() -> None:
    scene = _house()
    labelled = topdown_scene(scene, px=256)
    plain = topdown_scene(scene, px=256, labels=False)
    changed = np.any(labelled != plain, axis=2)
    (x0, z0), (x1, z1) = scene.bounds_xz()
    c0, r0 = _plan_pixel(x0, z1, scene, 256)
    c1, r1 = _plan_pixel(x1, z0, scene, 256)
    outside = np.ones_like(changed)
    outside[int(r0) - 2: int(r1) + 3, int(c0) - 2: int(c1) + 3] = False
    for room, rgb in zip(scene.rooms, distinct_colors(2), strict=True):
        on_white = tuple(0.9 * c + 0.1 for c in rgb)  # the label box is 90 % opaque
        label_bg = _mask(labelled, on_white, tol=0.05) & changed & outside
        assert label_bg.sum() > 30, room.id
        assert (np.all(labelled[..., :3] > 170, axis=2) & changed).sum() > 5  # light letters


def test_topdown_room_shows_only_that_room_and_labels_objects() -> None:
    scene = _house()
    image = topdown_room(scene, "b", px=PX)
    assert _mask(image, GREEN).sum() > 10
    assert _mask(image, RED, tol=0.03).sum() == 0 and _mask(image, BLUE).sum() == 0  # (the outline is red)
    plain = topdown_room(scene, "b", px=PX, labels=False)
    changed = np.any(image != plain, axis=2)
    col, row = _centroid(_mask(plain, GREEN))
    assert changed[int(row) - 3: int(row) + 4, int(col) - 10: int(col) + 11].sum() > 10


# --- wall and object views -------------------------------------------------------------------
def test_wall_view_removes_middle_objects_but_keeps_those_by_the_walls() -> None:
    scene = _house(red_xz=(2.0, 1.5), blue_xz=(2.0, 2.4))
    north = next(w.id for w in scene.walls if w.room_id == "a" and "|north|" in w.id and not w.exterior)
    cleared = wall_view(scene, north, px=PX)
    assert cleared.shape == (PX, PX, 4)
    assert _mask(cleared, RED).sum() == 0  # the red sofa stands in the middle of the room
    assert _mask(cleared, BLUE).sum() > 50  # the blue one is against the north wall
    everything = wall_view(scene, north, px=PX, keep_margin_m=10.0)
    assert _mask(everything, RED).sum() > 50


def test_wall_view_shows_the_window_pane() -> None:
    scene = _house()
    north = scene.windows[0].wall0
    image = wall_view(scene, north, px=PX)
    pane = _mask(image, (0.62, 0.80, 0.95), tol=0.08)
    assert pane.sum() > 30


def test_front_view_removes_what_stands_in_front() -> None:
    scene = _house(red_xz=(2.0, 0.8), blue_xz=(2.0, 2.0))
    red = scene.objects[0]  # faces +z, toward the blue sofa 1.2 m away
    image = object_front_view(scene, red.id, px=PX)
    assert _mask(image, BLUE).sum() == 0
    assert _mask(image[PX // 2 - 5: PX // 2 + 5, PX // 2 - 5: PX // 2 + 5], RED).all()


def test_front_view_of_a_door_looks_through_it() -> None:
    scene = _house()
    image = object_front_view(scene, scene.doors[0].id, px=PX)
    door_frame = _mask(image, (0.45, 0.30, 0.20), tol=0.12)
    assert door_frame.sum() > 40
    assert image.tobytes() == object_front_view(scene, scene.doors[0].id, px=PX).tobytes()


@pytest.mark.parametrize("yaw", [0.0, 90.0, 180.0, 270.0])
def test_top_view_puts_the_front_at_the_bottom(yaw: float) -> None:
    b = HouseBuilder()
    b.room("a", (0.0, 0.0, 4.0, 4.0), floor_material="DarkWoodFloors")
    chair = b.place("chair", "a", (2.0, 2.0), yaw_deg=yaw, color="white")
    image = object_top_view(b.build(), chair, px=192).astype(int)
    c = 96
    body = image[c, c, :3]
    column = image[:, c, :3]
    below = next(r for r in range(c, 192) if np.abs(column[r] - body).max() > 40)
    above = next(r for r in range(c, -1, -1) if np.abs(column[r] - body).max() > 40)
    # The dark front band is the first thing past the body's edge going down, not up.
    assert column[below].sum() < 0.7 * body.sum()
    band_like = np.abs(column[above] / max(column[above].sum(), 1) - body / body.sum()).max() < 0.03
    assert not (band_like and column[above].sum() < 0.7 * body.sum())


def test_multiview_keys_and_stamp() -> None:
    scene = _house()
    views = object_multiview(scene, scene.objects[0].id, px=PX)
    assert tuple(views) == MULTIVIEW_KEYS
    assert all(v.shape == (PX, PX, 4) and v.dtype == np.uint8 for v in views.values())
    corner = (slice(0, 14), slice(0, 60))
    assert (views["front"][corner][..., :3].max(axis=2) < 100).sum() > 20  # "Image of: …" in black
    assert (views["back"][corner][..., :3].max(axis=2) < 100).sum() == 0
    assert _mask(views["top"], RED).sum() > 100
    assert not np.array_equal(views["left"], views["right"])


# --- relation overlay ------------------------------------------------------------------------
@pytest.mark.parametrize(("yaw", "other_below"), [(0.0, True), (180.0, False)])
def test_relation_overlay_turns_the_anchor_to_face_down(yaw: float, other_below: bool) -> None:
    b = HouseBuilder()
    b.room("a", (0.0, 0.0, 5.0, 5.0))
    anchor = b.place("sofa", "a", (2.5, 1.5), yaw_deg=yaw, color="gray")
    other = b.place("plant", "a", (2.5, 3.5), color="green")  # north of the anchor
    image = relation_overlay(b.build(), [anchor, other], px=192)
    anchor_rgb, other_rgb = distinct_colors(2)
    _, anchor_row = _centroid(_mask(image, anchor_rgb, tol=0.1))
    _, other_row = _centroid(_mask(image, other_rgb, tol=0.1))
    assert (other_row > anchor_row) == other_below


def test_relation_overlay_accepts_walls_doors_and_windows() -> None:
    scene = _house()
    ids = [scene.windows[0].id, scene.doors[0].id, scene.walls[0].id, scene.objects[2].id]
    image = relation_overlay(scene, ids, px=PX)
    for rgb in distinct_colors(len(ids)):
        assert _mask(image, rgb, tol=0.1).sum() > 5


# --- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: object_front_view(s, "nope"), "'nope'"),
        (lambda s: object_top_view(s, "a"), "is a room"),
        (lambda s: object_multiview(s, s.walls[0].id), "is a wall"),
        (lambda s: topdown_room(s, "kitchen"), "no room with id 'kitchen'"),
        (lambda s: wall_view(s, "wall|x"), "no wall with id 'wall|x'"),
        (lambda s: wall_view(s, next(w.id for w in s.walls if w.exterior)), "exterior side"),
        (lambda s: relation_overlay(s, []), "non-empty list"),
        (lambda s: relation_overlay(s, "a"), "non-empty list"),
        (lambda s: topdown_scene(s, px=3), "px must be an integer"),
        (lambda s: topdown_scene(Scene()), "no rooms"),
        (lambda s: (s.rooms[1].vertices.__setitem__(0, (float("nan"), 0.0)), topdown_scene(s)), "room 'b'"),
        (lambda s: (setattr(s.objects[0], "size", (1.0, float("inf"), 1.0)), object_front_view(s, s.doors[0].id)),
         r"object 'sofa-0 \(a\)': size is not finite"),
    ],
)
def test_bad_input_gives_one_line_errors(call, match: str) -> None:  # noqa: ANN001
    with pytest.raises(ViewInputError, match=match) as info:
        call(_house())
    assert "\n" not in str(info.value)
