"""``make demo``'s episodes rendered from meshes: one SceneReVis episode's final room and one
LEGO-Eval episode's environment-tool images are written as PNGs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from buildbench.render import Renderer, RenderUnavailableError


@pytest.fixture(scope="module", autouse=True)
def _gl() -> None:
    try:
        Renderer(16, 16, samples=0).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


def test_scenerevis_demo_draws_an_episode_from_meshes(tmp_path: Path) -> None:
    from buildbench.suites.scenerevis.demo import mesh_episode_images

    procedural, box = mesh_episode_images(tmp_path)
    assert procedural.name.endswith("procedural.png") and box.name.endswith("box.png")
    a, b = np.asarray(Image.open(procedural)), np.asarray(Image.open(box))
    assert a.shape == b.shape == (570, 1070, 3) and not np.array_equal(a, b)


def test_legoeval_demo_writes_an_episode_s_tool_images_from_meshes(tmp_path: Path) -> None:
    from buildbench.harness.episode import Episode
    from buildbench.suites.legoeval.demo import MESH_IMAGE_PX, mesh_episode_images
    from buildbench.suites.legoeval.env import load_task_scene
    from buildbench.suites.legoeval.suite import load_tasks

    task = load_tasks("demo", 0)[0]
    obj = load_task_scene(task).objects[0].id
    calls = [{"tool": "get_topdown_scene", "args": [], "image_keys": ["scene*/*topdown_scene*/*output__image"]},
             {"tool": "get_topdown_scene", "args": [], "image_keys": ["scene*/*topdown_scene*/*output__image"]},
             {"tool": "get_room_list", "args": [], "image_keys": []},
             {"tool": "get_multiview_rendered_object", "args": [obj], "image_keys": ["k"] * 5}]
    episode = Episode(task.id, 0, "legoeval", "llm", "evaluate", 0, outcome={"trace": [{"calls": calls}]})
    folder = mesh_episode_images(episode, tmp_path / "images")
    pngs = sorted(folder.glob("*.png"))
    assert len(pngs) == 6  # the house once (a repeated call is drawn once) and the object from five sides
    assert all(Image.open(p).size == (MESH_IMAGE_PX, MESH_IMAGE_PX) for p in pngs)
    assert "topdown_scene" in pngs[0].name and "front_rendered" in pngs[1].name
