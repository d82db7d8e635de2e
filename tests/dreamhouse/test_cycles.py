"""``-o renderer=cycles``: Blender Cycles renders of a tiny house, at low resolution and samples."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from buildbench.harness import get_suite
from buildbench.harness.errors import ConfigError
from buildbench.render import build_scene
from buildbench.suites.dreamhouse.executors.blender import BlenderUnavailable, find_blender_python
from buildbench.suites.dreamhouse.model import Structure
from buildbench.suites.dreamhouse.views import _boxes, cameras, check_renderer, frame_colors, render_views
from buildbench.suites.dreamhouse.views_cycles import render_boxes_cycles

PX = 48


def _tiny_house() -> Structure:
    """A 2 × 3 m box frame: four posts, four plates, one ridge beam."""
    from buildbench.suites.dreamhouse.model import Member

    members = [Member.from_aabb(f"Post_{i}", (x, y, 0.0), (x + 0.1, y + 0.1, 2.4))
               for i, (x, y) in enumerate([(0, 0), (1.9, 0), (0, 2.9), (1.9, 2.9)])]
    members += [Member.from_aabb("TopPlate_f", (0, 0, 2.4), (2.0, 0.1, 2.5)),
                Member.from_aabb("TopPlate_b", (0, 2.9, 2.4), (2.0, 3.0, 2.5)),
                Member.from_aabb("TopPlate_l", (0, 0, 2.4), (0.1, 3.0, 2.5)),
                Member.from_aabb("TopPlate_r", (1.9, 0, 2.4), (2.0, 3.0, 2.5)),
                Member.from_aabb("Ridge_1", (0.95, 0, 2.5), (1.05, 3.0, 3.2))]
    return Structure.from_members(members)


@pytest.fixture(scope="module")
def blender() -> None:
    try:
        find_blender_python()
    except BlenderUnavailable as exc:
        pytest.skip(f"no Blender for Cycles: {exc}")


@pytest.mark.slow
def test_cycles_renders_the_gl_cameras_deterministically(blender: None) -> None:
    house = _tiny_house()
    boxes = _boxes(house, frame_colors(house))
    scene = build_scene([boxes])
    cams = cameras(scene.bounds, scene.bounds)[:2]
    first = render_boxes_cycles([boxes], cams, px=PX, samples=2)
    assert first.shape == (2, PX, PX, 4) and first.dtype == np.uint8
    assert np.array_equal(first, render_boxes_cycles([boxes], cams, px=PX, samples=2))
    alpha = first[..., 3] > 0
    assert 0.02 < alpha.mean() < 0.9  # the house is drawn on a transparent background
    # Same cameras as the rasterizer (and GL): the silhouettes agree.
    ours = render_views(house)[:2]
    ours_alpha = np.stack([np.asarray(Image.fromarray(g[..., 3]).resize((PX, PX), Image.NEAREST)) > 0 for g in ours])
    iou = (alpha & ours_alpha).sum() / (alpha | ours_alpha).sum()
    assert iou > 0.6


def test_renderer_option_and_bad_inputs_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown renderer 'vray'"):
        check_renderer("vray")
    with pytest.raises(ConfigError, match="option renderer='vray': expected one of raster, gl, cycles"):
        get_suite("dreamhouse").parse_options({"renderer": "vray"})
    assert get_suite("dreamhouse").parse_options({"renderer": "cycles"}).renderer == "cycles"
    with pytest.raises(ConfigError, match="samples >= 1"):
        render_boxes_cycles([], [], samples=0)
    empty = render_boxes_cycles([], cameras(build_scene([_boxes(_tiny_house(), frame_colors(_tiny_house()))]).bounds))
    assert empty.shape == (5, 512, 512, 4) and not empty.any()


@pytest.mark.slow
def test_cycles_scores_an_exact_copy_at_s_1(blender: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The final score with ``renderer=cycles``: target and candidate both rendered by Cycles
    (1 sample per pixel here, to keep the two 512² five-view renders short)."""
    from pathlib import Path

    from buildbench.harness import Task
    from buildbench.suites.dreamhouse import views_cycles
    from buildbench.suites.dreamhouse.fidelity import fidelity_scores
    from buildbench.suites.dreamhouse.model import load_structure
    from buildbench.suites.dreamhouse.outcome import DreamHouseOutcome

    monkeypatch.setattr(views_cycles, "CYCLES_SAMPLES", 1)
    example = Path(__file__).resolve().parents[2] / "examples" / "files" / "house.json"
    house = load_structure(example)
    task = Task(id="EX_01_0001", suite="dreamhouse", inputs={}, target={"structure": house.to_json_dict()})
    out = fidelity_scores(task, house, DreamHouseOutcome(renderer="cycles"))
    assert out["visual_fidelity"] == 1.0 and out["joint_pass"] == 1.0
