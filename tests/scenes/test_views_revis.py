"""SceneReVis's top + diagonal views and their merge; material swatches."""

from __future__ import annotations

import numpy as np
import pytest

from buildbench.render import Renderer, RenderUnavailableError
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.model import Scene
from buildbench.scenes.views import ViewInputError, material_swatch, merge_views, revis_views
from buildbench.scenes.views.revis import BORDER_PX, BORDER_RGBS, LABEL_BAND_PX, PADDING_PX

PX = 128


@pytest.fixture(scope="module", autouse=True)
def _gl() -> None:
    try:
        Renderer(16, 16, samples=0).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


def _room(red_xz: tuple[float, float] = (1.0, 3.0)) -> Scene:
    b = HouseBuilder()
    b.room("bedroom", (0.0, 0.0, 4.0, 4.0))
    b.place("sofa", "bedroom", red_xz, color="red")
    return b.build()


def _red(image: np.ndarray) -> np.ndarray:
    """The red sofa (0.75, 0.15, 0.15) shaded, not the pure-red floor dots and labels."""
    c = image[..., :3].astype(float)
    ratio = c[..., 1] / np.maximum(c[..., 0], 1.0)
    return (c[..., 0] > 100) & (ratio > 0.12) & (ratio < 0.3) & (np.abs(c[..., 1] - c[..., 2]) < 8)


def test_revis_views_shapes_determinism_and_seeded_azimuth() -> None:
    scene = _room()
    top, diagonal = revis_views(scene, 7, px=PX)
    assert top.shape == diagonal.shape == (PX, PX, 4) and top.dtype == np.uint8
    again = revis_views(scene, 7, px=PX)
    assert top.tobytes() == again[0].tobytes() and diagonal.tobytes() == again[1].tobytes()
    diagonals = {revis_views(scene, seed, px=PX)[1].tobytes() for seed in range(8)}
    assert len(diagonals) > 1  # the seed picks among four azimuths
    assert top[0, 0, 3] == 0  # transparent background, as the original's PNGs


def test_revis_top_view_has_x_right_and_z_down() -> None:
    # SceneReVis's Blender import maps (x, y, z) -> (x, -z, y): +z points down the top view.
    top_a, _ = revis_views(_room((1.0, 3.0)), 0, px=PX)
    top_b, _ = revis_views(_room((3.0, 1.0)), 0, px=PX)
    rows_a, cols_a = np.nonzero(_red(top_a))
    rows_b, cols_b = np.nonzero(_red(top_b))
    assert cols_b.mean() > cols_a.mean() + 20  # +x is to the right
    assert rows_a.mean() > rows_b.mean() + 20  # +z is down
    # ortho_scale = 1.2 x span: the 4 m room spans 1/1.2 of the image.
    span_px = PX / 1.2 * (2.0 / 4.0)  # the sofa is 2 m wide
    sofa_cols = np.flatnonzero(_red(top_a).sum(axis=0) > 16)  # the sofa is 0.9 m (24 px) deep
    assert sofa_cols.max() - sofa_cols.min() + 1 == pytest.approx(span_px, abs=3)


def test_revis_views_draw_floor_dots_boxes_and_labels() -> None:
    top, _ = revis_views(_room(), 0, px=256, background=(1.0, 1.0, 1.0))
    c = top[..., :3].astype(int)
    blue = (c[..., 2] > 200) & (c[..., 0] < 60) & (c[..., 1] < 120)  # box outlines (0, 0.3, 1)
    assert blue.sum() > 100
    dots = (c[..., 0] > 200) & (c[..., 1] < 60) & (c[..., 2] < 60)
    # 25 whole-metre points of the 4 x 4 m floor, each a dot and an "(x, z)" label in red.
    assert dots.sum() > 25 * 6


def test_merge_views_layout() -> None:
    a = np.zeros((50, 60, 4), np.uint8)
    b = np.full((40, 30, 4), 255, np.uint8)
    merged = merge_views([a, b], ["Top View", "Diagonal View"])
    width = PADDING_PX + (60 + 2 * BORDER_PX + PADDING_PX) + (30 + 2 * BORDER_PX + PADDING_PX)
    height = 2 * PADDING_PX + LABEL_BAND_PX + 50 + 2 * BORDER_PX
    assert merged.shape == (height, width, 4)
    top = PADDING_PX + LABEL_BAND_PX
    assert tuple(merged[top, PADDING_PX, :3]) == tuple(round(255 * v) for v in BORDER_RGBS[0])
    x_b = PADDING_PX + 60 + 2 * BORDER_PX + PADDING_PX
    assert tuple(merged[top, x_b, :3]) == tuple(round(255 * v) for v in BORDER_RGBS[1])
    band = merged[PADDING_PX: PADDING_PX + LABEL_BAND_PX, :, :3]
    assert (band.max(axis=2) < 100).sum() > 50  # the labels' black letters
    with pytest.raises(ViewInputError, match="as many labels"):
        merge_views([a], ["x", "y"])
    with pytest.raises(ViewInputError, match=r"images\[0\]"):
        merge_views([a[..., :3]], ["x"])


def test_material_swatch_uses_the_catalogue_colour_and_family_texture() -> None:
    wood = material_swatch("DarkWoodFloors", px=PX, label=False)
    assert wood.shape == (PX, PX, 4) and np.all(wood[..., 3] == 255)
    assert wood.tobytes() == material_swatch("DarkWoodFloors", px=PX, label=False).tobytes()
    r, g, b = wood[..., :3].reshape(-1, 3).mean(0)
    assert r > g > b  # brown
    rows = wood[..., :3].astype(float).mean(axis=(1, 2))
    assert rows.std() > 3 * wood[..., :3].astype(float).mean(axis=(0, 2)).std()  # planks run across
    carpet = material_swatch("BedroomCarpet", px=PX, label=False)
    assert carpet.tobytes() != wood.tobytes()


def test_material_swatch_writes_its_name_and_guesses_families_by_name() -> None:
    plain = material_swatch("BeigePaint", px=PX, label=False)
    named = material_swatch("BeigePaint", px=PX)
    changed = np.any(plain != named, axis=2)
    assert changed[PX * 3 // 4:].sum() > 100 and changed[: PX // 2].sum() == 0
    assert material_swatch("SomeUnlistedOakFloor", px=PX).shape == (PX, PX, 4)
    with pytest.raises(ViewInputError, match="unknown material 'Zzz'"):
        material_swatch("Zzz")
    with pytest.raises(ViewInputError, match="px must be"):
        material_swatch("BeigePaint", px=10_000)
