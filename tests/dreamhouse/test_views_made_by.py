"""Provenance of stored target views: named PNGs are used only when the renderer that drew them
is the one candidates are drawn with; otherwise the target is drawn again from the ground truth,
or, with none to draw from, the task is refused (views of unknown origin are then kept)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from buildbench.harness import Task
from buildbench.harness.errors import ConfigError
from buildbench.render.raster import PIXEL_VERSION
from buildbench.suites.dreamhouse import views, views_made_by
from buildbench.suites.dreamhouse.dhpack import pack_task_of, read_dhpack, task_from_pack, write_dhpack
from buildbench.suites.dreamhouse.fidelity_visual import visual_fidelity
from buildbench.suites.dreamhouse.model import Member, Structure
from buildbench.suites.dreamhouse.tasks import load_tasks, target_structure
from buildbench.suites.dreamhouse.views import (
    VIEW_NAMES,
    as_submitted,
    render_views,
    save_views,
    score_visual,
    target_frame,
    target_images,
    target_views,
    views_for,
)
from buildbench.suites.dreamhouse.views_made_by import MADE_BY_KEY, made_by

RASTER = f"raster v{PIXEL_VERSION}"
HOUSE = Structure.from_members([
    Member.from_aabb("Joist_01", (0, 0, 0), (4, 3, 0.2)),
    Member.from_aabb("Post_01", (3.6, 2.6, 0), (4, 3, 3)),
])


def _noise_views(tmp_path: Path, name: str = "v") -> tuple[np.ndarray, dict[str, str]]:
    """Five 512² views no renderer draws, saved as PNGs: reading them back proves they were used."""
    images = np.random.default_rng(3).integers(0, 256, (5, 512, 512, 4), dtype=np.uint8)
    paths = save_views(images, tmp_path / name)
    return images, {v: str(p) for v, p in zip(VIEW_NAMES, paths, strict=True)}


def _task(named: dict[str, str], target: dict[str, object], stamp: str | None, tid: str = "t1") -> Task:
    inputs: dict[str, object] = {"views": {"frame": named}}
    if stamp is not None:
        inputs[MADE_BY_KEY] = stamp
    return Task(id=tid, suite="dreamhouse", inputs=inputs, target=target)


@pytest.fixture(autouse=True)
def _fresh_warning_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views_made_by, "_warned", set())


def test_stamps_name_the_renderer_and_its_pixel_definition() -> None:
    assert made_by("raster") == RASTER
    assert made_by("cycles").startswith("cycles ") and made_by("cycles").endswith(" spp")
    with pytest.raises(ConfigError, match="unknown renderer 'vulkan'"):
        made_by("vulkan")
    with pytest.raises(ConfigError, match="unknown renderer"):
        views_for(Task(id="t", suite="dreamhouse", inputs={}, target={"structure": HOUSE.to_json_dict()}),
                  "frame", "vulkan")


def test_named_views_of_the_same_renderer_are_used_as_stored(tmp_path: Path) -> None:
    images, named = _noise_views(tmp_path)
    task = _task(named, {"structure": HOUSE.to_json_dict()}, RASTER)
    got, stamp = target_images(task, "frame", "raster")
    assert np.array_equal(np.stack(got), images) and stamp == RASTER


def test_views_of_another_renderer_are_drawn_again_from_the_ground_truth(tmp_path: Path) -> None:
    _, named = _noise_views(tmp_path)
    for other in ("gl llvmpipe (LLVM 15.0.6, 256 bits)", f"raster v{PIXEL_VERSION - 1}", "cycles 16 spp"):
        task = _task(named, {"structure": HOUSE.to_json_dict()}, other)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a known origin is no surprise: no warning
            got, stamp = target_images(task, "frame", "raster")
        assert np.array_equal(np.stack(got), render_views(as_submitted(HOUSE))) and stamp == RASTER
    # A generated task's facade is drawn again from the generator (the skin comes with it).
    (gen,) = load_tasks("demo")[:1]
    facade = Task(id=gen.id, suite="dreamhouse", inputs={**gen.inputs, "views": {"facade": named},
                                                          MADE_BY_KEY: "gl some GPU"}, target=gen.target)
    assert np.array_equal(np.stack(views_for(facade, "facade")), target_views(gen, "facade"))


def test_views_of_another_renderer_without_ground_truth_are_refused(tmp_path: Path) -> None:
    _, named = _noise_views(tmp_path)
    task = _task(named, {}, "gl llvmpipe (LLVM 15.0.6, 256 bits)", tid="AF_01_0018")
    with pytest.raises(ConfigError) as err:
        views_for(task, "frame", "raster")
    message = str(err.value)
    assert "\n" not in message
    for part in ("task AF_01_0018", "gl llvmpipe (LLVM 15.0.6, 256 bits)", RASTER, "-o renderer=gl"):
        assert part in message
    # An inline frame has no skin: the facade cannot be drawn again either.
    facade = Task(id="t9", suite="dreamhouse", inputs={"views": {"facade": named}, MADE_BY_KEY: "cycles 16 spp"},
                  target={"structure": HOUSE.to_json_dict()})
    with pytest.raises(ConfigError, match=f"task t9: its facade views were drawn by cycles 16 spp .*{RASTER}"):
        views_for(facade, "facade", "raster")


def test_views_of_unknown_origin_are_drawn_again_with_one_warning(tmp_path: Path) -> None:
    _, named = _noise_views(tmp_path)
    task = _task(named, {"structure": HOUSE.to_json_dict()}, None)
    with pytest.warns(UserWarning, match="do not record which renderer drew them.*raster"):
        got, stamp = target_images(task, "frame", "raster")
    assert np.array_equal(np.stack(got), render_views(as_submitted(HOUSE))) and stamp == RASTER
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process
        views_for(_task(named, {"structure": HOUSE.to_json_dict()}, None, tid="t2"), "frame", "raster")


def test_views_of_unknown_origin_without_ground_truth_are_kept(tmp_path: Path) -> None:
    """A released pack: its views are the task (only the agent sees them; no score compares
    against them, since S needs the target frame)."""
    images, named = _noise_views(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got, stamp = target_images(_task(named, {}, None), "frame", "raster")
    assert np.array_equal(np.stack(got), images) and stamp is None


def test_packs_record_the_stamp_per_task_and_old_packs_read_as_unknown(tmp_path: Path) -> None:
    tasks = load_tasks("demo")[:2]
    images, stamp = target_images(tasks[0], "frame", "raster")
    pngs = [views.png_bytes(i) for i in images]
    entries = [pack_task_of(tasks[0], pngs, stamp), pack_task_of(tasks[1], pngs, None)]
    pack = write_dhpack(tmp_path / "p.dhpack", entries, metadata={"condition": "frame", "renderer": "raster"})
    _, read = read_dhpack(pack)
    assert [e.made_by for e in read] == [RASTER, None]
    # A pack written before the record has no buildbench_views table: every task is unknown.
    import sqlite3

    conn = sqlite3.connect(pack)
    conn.execute("DROP TABLE buildbench_views")
    conn.commit()
    conn.close()
    assert [e.made_by for e in read_dhpack(pack)[1]] == [None, None]
    paths = {v: str(tmp_path / f"{v}.png") for v in VIEW_NAMES}
    assert task_from_pack(read[0], paths, "frame").inputs[MADE_BY_KEY] == RASTER
    assert MADE_BY_KEY not in task_from_pack(read[1], paths, "frame").inputs


def test_an_exact_copy_scores_one_against_stored_raster_views(tmp_path: Path) -> None:
    """Through a pack (views stored as PNG, read back) and through the in-episode scorer: a copy of
    the target drawn by the rasterizer has MSE 0 against the target."""
    (task,) = load_tasks("demo")[:1]
    images, stamp = target_images(task, "frame", "raster")
    named = {v: str(p) for v, p in zip(VIEW_NAMES, save_views(np.stack(images), tmp_path / "t"), strict=True)}
    packed = Task(id=task.id, suite="dreamhouse", inputs={**task.inputs, "views": {"frame": named},
                                                          MADE_BY_KEY: stamp}, target=task.target)
    target = as_submitted(target_structure(task))
    candidate = render_views(target, frame=target_frame(target), renderer="raster")
    assert visual_fidelity(candidate, views_for(packed, "frame", "raster")).per_view == (1.0,) * 5
    score = score_visual(packed, target, "frame", "raster")
    assert score.score == 1.0 and score.per_view == (1.0,) * 5


def test_gl_and_raster_targets_differ_which_is_why_stamps_are_compared() -> None:
    from buildbench.render import RenderUnavailableError

    (task,) = load_tasks("demo")[:1]
    try:
        gl = target_views(task, "frame", "gl")
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")
    raster = target_views(task, "frame", "raster")
    differing = (gl != raster).any(axis=3).mean()
    assert 0.0 < differing < 0.005  # edge pixels only, and never none on a whole house
    assert visual_fidelity(raster, gl).mean < 1.0 == visual_fidelity(raster, raster).mean


def test_dataset_renders_record_their_renderer(tmp_path: Path) -> None:
    from buildbench.suites.dreamhouse.generate import write_dataset
    from buildbench.suites.dreamhouse.views_dataset import render_dataset

    write_dataset(tmp_path / "d", 2, fmt="jsonl", workers=1)
    record = tmp_path / "d" / "renders" / "made_by.json"
    assert render_dataset(tmp_path / "d", workers=1, limit=1) == 1  # nothing else there: recorded
    assert json.loads(record.read_text()) == {"renderer": "raster", "made_by": RASTER}
    record.write_text(json.dumps({"renderer": "gl", "made_by": "gl some GPU"}))
    # Only the first house drawn again: the second keeps the other renderer's views, so no record.
    assert render_dataset(tmp_path / "d", workers=1, limit=1) == 1
    assert not record.exists()
    assert render_dataset(tmp_path / "d", workers=1) == 2  # every house: recorded again
    assert json.loads(record.read_text())["made_by"] == RASTER
    with pytest.raises(ConfigError, match="unknown renderer"):
        render_dataset(tmp_path / "d", workers=1, renderer="vulkan")


def test_cli_renderer_choices_are_the_renderers() -> None:
    from buildbench.suites.dreamhouse.cli import RENDERER_CHOICES
    from buildbench.suites.dreamhouse.options import DreamHouseOptions

    assert RENDERER_CHOICES == views.RENDERERS and views.DEFAULT_RENDERER == "raster"
    assert DreamHouseOptions().renderer == "raster"


def test_a_task_file_with_a_malformed_stamp_is_refused() -> None:
    from buildbench.suites.dreamhouse.tasks import validate_task

    (task,) = load_tasks("demo")[:1]
    for bad in (2, "", ["raster v2"]):
        odd = Task(id=task.id, suite="dreamhouse", inputs={**task.inputs, MADE_BY_KEY: bad}, target=task.target)
        with pytest.raises(ValueError, match="^inputs.views_made_by: must be the text naming what drew the views"):
            validate_task(odd)
    validate_task(Task(id=task.id, suite="dreamhouse", inputs={**task.inputs, MADE_BY_KEY: RASTER},
                       target=task.target))
