"""DreamHouse views: Table-4 cameras, per-category colours, Frame/Facade renders against silhouettes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.views import (
    CATEGORY_COLORS,
    SKIN_COLORS,
    VIEW_NAMES,
    VIEWS,
    cameras,
    frame_colors,
    render_views,
    skin_colors,
    target_frame,
    view_bounds,
    views_for,
)

# A 4 m × 3 m floor slab (joists), a tall post at the back-right corner (+X, +Y).
HOUSE = Structure.from_members(
    [
        Member.from_aabb("Joist_01", (0, 0, 0), (4, 3, 0.2)),
        Member.from_aabb("Post_01", (3.6, 2.6, 0), (4, 3, 3)),
    ]
)


def _alpha(image: np.ndarray) -> np.ndarray:
    return image[..., 3] > 0


def _centroid_x(image: np.ndarray, rows: slice = slice(None)) -> float:
    ys, xs = np.nonzero(_alpha(image)[rows])
    return float(xs.mean()) / image.shape[1]


def test_table4_views_in_prompt_order() -> None:
    got = [(v.name, v.azimuth_deg, v.elevation_deg, v.distance_multiplier) for v in VIEWS]
    assert got == [
        ("front", 0.0, 12.0, 1.05),
        ("back", 180.0, 12.0, 1.05),
        ("left", 270.0, 12.0, 1.05),
        ("right", 90.0, 12.0, 1.05),
        ("front_right", 45.0, 18.0, 1.10),
    ]
    assert tuple(v.name for v in VIEWS) == VIEW_NAMES


def test_cameras_sit_where_table4_puts_them() -> None:
    bounds = view_bounds(HOUSE)
    assert bounds is not None
    cams = cameras(bounds)
    centre, diag = bounds.centre_m, bounds.diagonal_m
    offsets = {v.name: (c.eye_m - centre) for v, c in zip(VIEWS, cams, strict=True)}
    # Front on -Y, back on +Y, left on -X, right on +X (the azimuth formula of spec §7.1).
    assert offsets["front"][1] < 0 and abs(offsets["front"][0]) < 1e-9
    assert offsets["back"][1] > 0 and abs(offsets["back"][0]) < 1e-9
    assert offsets["left"][0] < 0 and abs(offsets["left"][1]) < 1e-9
    assert offsets["right"][0] > 0 and abs(offsets["right"][1]) < 1e-9
    fr = offsets["front_right"]
    assert fr[0] > 0 and fr[1] < 0 and math.isclose(fr[0], -fr[1])
    for view, off in offsets.items():
        spec = next(v for v in VIEWS if v.name == view)
        assert math.isclose(np.linalg.norm(off), spec.distance_multiplier * diag)
        assert math.isclose(math.degrees(math.asin(off[2] / np.linalg.norm(off))), spec.elevation_deg)
    assert all(c.focal_length_mm == 32.0 for c in cams)


def test_frame_renders_put_the_back_right_post_where_each_view_sees_it() -> None:
    images = render_views(HOUSE)
    assert images.shape == (5, 512, 512, 4) and images.dtype == np.uint8
    top = slice(0, 200)  # only the post reaches this high in the image
    by_view = dict(zip(VIEW_NAMES, images, strict=True))
    # Front: +X is image right. Back: mirrored. Left (camera on -X): back (+Y) is image left.
    assert _centroid_x(by_view["front"], top) > 0.6
    assert _centroid_x(by_view["back"], top) < 0.4
    assert _centroid_x(by_view["left"], top) < 0.4
    assert _centroid_x(by_view["right"], top) > 0.6
    # Every view sees the house, and the frame is centred in it.
    for image in images:
        assert 0.02 < _alpha(image).mean() < 0.6


def test_category_colours_are_flat_and_fixed() -> None:
    from buildbench.suites.dreamhouse.model import CATEGORIES

    assert set(CATEGORIES) == set(CATEGORY_COLORS)
    s = Structure.from_members(
        [Member.from_aabb("Rafter_1", (0, 0, 0), (1, 1, 1)), Member.from_aabb("x_1", (0, 0, 0), (1, 1, 1))]
    )
    colours = frame_colors(s)
    assert colours[0].tolist() == [*CATEGORY_COLORS["Rafter"], 255]
    assert colours[1].tolist() == [128, 128, 128, 255]
    skin = Structure.from_members([Member.from_aabb("Roofing_1", (0, 0, 0), (1, 1, 1))])
    assert skin_colors(skin)[0].tolist() == [*SKIN_COLORS["Roofing"], 255]
    # A roof member renders tan (red well above blue), a stud near-white.
    roof = render_views(Structure.from_members([Member.from_aabb("Rafter_1", (0, 0, 0), (2, 2, 2))]))[0]
    stud = render_views(Structure.from_members([Member.from_aabb("Stud_1", (0, 0, 0), (2, 2, 2))]))[0]
    r, b = roof[_alpha(roof)][:, 0].mean(), roof[_alpha(roof)][:, 2].mean()
    assert r > 1.3 * b
    sr, sb = stud[_alpha(stud)][:, 0].mean(), stud[_alpha(stud)][:, 2].mean()
    assert abs(sr - sb) < 0.05 * sr


def test_colour_tables_give_each_category_and_prefix_its_colour() -> None:
    from buildbench.suites.dreamhouse.model import CATEGORIES
    from buildbench.suites.dreamhouse.views import SKIN_DEFAULT_COLOR

    names = [f"{c}_1" for c in CATEGORIES] + ["Nothing_1"]
    s = Structure.from_members([Member.from_aabb(n, (0, 0, 0), (1, 1, 1)) for n in names])
    expected = [[*CATEGORY_COLORS[c], 255] for c in s.categories[:-1]] + [[128, 128, 128, 255]]
    assert frame_colors(s).tolist() == expected
    skin = Structure.from_members([Member.from_aabb(n, (0, 0, 0), (1, 1, 1))
                                   for n in ("Sheathing_1", "Roofing_2", "Trim_3", "Sheathing")])
    assert skin_colors(skin).tolist() == [[*SKIN_COLORS["Sheathing"], 255], [*SKIN_COLORS["Roofing"], 255],
                                          [*SKIN_DEFAULT_COLOR, 255], [*SKIN_COLORS["Sheathing"], 255]]
    empty = Structure.from_members([])
    for colours in (frame_colors(empty), skin_colors(empty)):
        assert colours.shape == (0, 4) and colours.dtype == np.uint8


def test_empty_and_undrawable_structures_render_transparent() -> None:
    empty = render_views(Structure.from_members([]))
    assert empty.shape == (5, 512, 512, 4) and not empty.any()
    broken = Structure.from_members([Member.box("Stud_1", (float("nan"), 1, 1), (0, 0, 0))])
    assert not render_views(broken).any()


def test_facade_needs_a_skin_and_covers_more_than_the_frame() -> None:
    with pytest.raises(ConfigError, match="skin"):
        render_views(HOUSE, condition="facade")
    with pytest.raises(ConfigError, match="unknown condition"):
        render_views(HOUSE, condition="wireframe")
    skin = Structure.from_members([Member.from_aabb("Sheathing_front", (0, -0.02, 0.2), (4, 0, 3))])
    frame = render_views(HOUSE, skin, "frame")
    facade = render_views(HOUSE, skin, "facade")
    front = 0
    assert _alpha(facade[front]).sum() > _alpha(frame[front]).sum()
    # The sheathing's flat colour shows (times the Lambert shade factor ≤ 1).
    pixels = facade[front][_alpha(facade[front])][:, :3].astype(float)
    ratio = pixels / np.array(SKIN_COLORS["Sheathing"], float)
    assert np.any(np.all(np.abs(ratio - ratio[:, :1]) < 0.02, axis=1) & (ratio[:, 0] > 0.3))


def test_target_framing_keeps_a_small_candidate_small() -> None:
    half = Structure.from_members([Member.from_aabb("Joist_01", (0, 0, 0), (2, 1.5, 0.1))])
    own = render_views(half)
    on_target = render_views(half, frame=target_frame(HOUSE))
    assert _alpha(on_target[0]).sum() < 0.6 * _alpha(own[0]).sum()
    # A candidate much larger than the target is drawn, not clipped away by the target's planes.
    big = Structure.from_members([Member.from_aabb("Joist_01", (-20, -20, 0), (20, 20, 0.2))])
    assert _alpha(render_views(big, frame=target_frame(HOUSE))).any(axis=(1, 2)).all()


def test_views_for_renders_a_task_without_view_files() -> None:
    task = Task(id="t1", suite="dreamhouse", inputs={}, target={"structure": HOUSE.to_json_dict()})
    images = views_for(task, "frame")
    assert len(images) == 5
    assert np.array_equal(np.stack(images), render_views(HOUSE))
    with pytest.raises(ConfigError, match="facade"):
        views_for(task, "facade")


def test_views_for_reads_named_png_files(tmp_path) -> None:
    from buildbench.suites.dreamhouse.views import save_views

    images = render_views(HOUSE)
    paths = save_views(images, tmp_path, "frame_")
    named = {v: str(p) for v, p in zip(VIEW_NAMES, paths, strict=True)}
    task = Task(id="t2", suite="dreamhouse", inputs={"views": {"frame": named}}, target={})
    assert np.array_equal(np.stack(views_for(task, "frame")), images)
    del named["left"]
    task = Task(id="t3", suite="dreamhouse", inputs={"views": {"frame": named}}, target={})
    with pytest.raises(ConfigError, match="lack left"):
        views_for(task, "frame")


def test_scratch_views_are_each_house_s_own_images() -> None:
    """Dataset rendering draws into reused buffers: a house drawn over another one's images gets
    exactly its own (the buffers are reused, so a caller must encode them before the next call)."""
    from buildbench.suites.dreamhouse.generate import generate_structure
    from buildbench.suites.dreamhouse.views import house_views

    a, b = generate_structure("CY_01_0000"), generate_structure("COL_01_0000")
    first = house_views(a.structure, a.skin, scratch=True)
    assert {c: np.array_equal(first[c], img) for c, img in house_views(a.structure, a.skin).items()} == {
        "frame": True, "facade": True}
    second = house_views(b.structure, b.skin, scratch=True)
    assert all(second[c] is first[c] for c in second)  # reused
    for condition, image in house_views(b.structure, b.skin).items():
        assert np.array_equal(second[condition], image), condition
        assert np.array_equal(image, render_views(b.structure, b.skin, condition)), condition


def test_render_dataset_in_worker_processes_matches_in_process(tmp_path) -> None:
    from buildbench.render import load_png
    from buildbench.suites.dreamhouse.generate import write_dataset
    from buildbench.suites.dreamhouse.views_dataset import render_dataset

    write_dataset(tmp_path / "a", 2, fmt="jsonl", workers=1)
    write_dataset(tmp_path / "b", 2, fmt="jsonl", workers=1)
    assert render_dataset(tmp_path / "a", workers=1) == 2
    assert render_dataset(tmp_path / "b", workers=2) == 2
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a" / "renders").rglob("*.png"))
    assert len(files) == 20
    for rel in files:
        assert np.array_equal(load_png(tmp_path / "a" / rel), load_png(tmp_path / "b" / rel)), rel


def test_png_bytes_round_trips_exactly() -> None:
    from buildbench.render import load_png
    from buildbench.suites.dreamhouse.views import png_bytes

    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    assert np.array_equal(load_png(png_bytes(image)), image)
    with pytest.raises(ConfigError, match="RGBA"):
        png_bytes(np.zeros((4, 4, 3), np.uint8))


def test_png_bytes_deflates_png_rows_in_place_with_the_same_bytes() -> None:
    """An image lying in PNG rows (a zero filter byte before each row, as the dataset's scratch
    buffers are laid out) is deflated where it is: the same bytes as for a copy of it; where the
    byte before a row is not zero, it is copied as any other image."""
    from buildbench.render import load_png
    from buildbench.suites.dreamhouse import views_png

    rng = np.random.default_rng(1)
    h, w = 9, 6
    rows = np.zeros((2, h, 1 + 4 * w), np.uint8)
    rows[:, :, 1:] = rng.integers(0, 256, size=(2, h, 4 * w), dtype=np.uint8)
    images = np.ndarray((2, h, w, 4), np.uint8, buffer=rows, offset=1, strides=(h * (1 + 4 * w), 1 + 4 * w, 4, 1))
    for image in images:
        assert views_png._rows_in_place(image) is not None
        assert views_png.png_bytes(image) == views_png.png_bytes(image.copy())
        assert np.array_equal(load_png(views_png.png_bytes(image)), image)
    rows[1, 4, 0] = 9  # not a filter byte of None any more
    assert views_png._rows_in_place(images[1]) is None
    assert views_png._rows_in_place(images[0]) is not None
    assert np.array_equal(load_png(views_png.png_bytes(images[1])), images[1])
    assert views_png._rows_in_place(images[0].copy()) is None
