"""``-o image_px`` sizes the images the env's tools give the model; out-of-range values stop the
run before it starts (one ``error:`` line, exit 2, no run folder)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from buildbench.cli.main import main
from buildbench.harness import Action, Task, get_suite
from buildbench.suites.legoeval.env import LegoEvalEnv
from buildbench.suites.legoeval.options import LegoEvalOptions

#: The environment tools that render, with the argument they take on the demo house.
IMAGE_TOOLS = ("get_topdown_scene", "get_topdown_room", "get_wall_scene", "get_topdown_object",
               "get_material_image", "get_multiview_rendered_object", "get_spatial_relation")
#: Material swatches are flat tiles: never rendered larger than this.
SWATCH_MAX_PX = 256


@pytest.fixture(scope="module")
def demo() -> Task:
    return get_suite("legoeval").load_tasks("demo", 0)[0]


def _sizes(task: Task, options: dict[str, object]) -> dict[str, set[tuple[int, int]]]:
    suite = get_suite("legoeval")
    env = suite.make_env(task, suite.parse_options(options))
    assert isinstance(env, LegoEvalEnv)
    env.reset(task)
    assert env.ctx is not None
    scene = env.ctx.scene
    args: dict[str, object] = {
        "get_topdown_scene": None, "get_topdown_room": [scene.rooms[0].id], "get_wall_scene": [scene.walls[0].id],
        "get_topdown_object": [scene.objects[0].id], "get_material_image": [scene.rooms[0].floor_material],
        "get_multiview_rendered_object": [scene.objects[0].id],
        "get_spatial_relation": [[scene.objects[0].id, scene.objects[1].id]]}
    out = {}
    for name in IMAGE_TOOLS:
        images = env.step(Action(data={"tool": name, "args": args[name]})).observation.images
        assert images and all(isinstance(png, bytes) for png in images), name
        out[name] = {Image.open(io.BytesIO(png)).size for png in images if isinstance(png, bytes)}
    return out


@pytest.mark.parametrize("px", [96, 300])
def test_the_option_sizes_every_tool_image(demo: Task, px: int) -> None:
    for name, sizes in _sizes(demo, {"image_px": px}).items():
        side = min(px, SWATCH_MAX_PX) if name == "get_material_image" else px
        assert sizes == {(side, side)}, name


def test_the_declared_default_sizes_them(demo: Task) -> None:
    default = LegoEvalOptions().image_px
    assert _sizes(demo, {})["get_topdown_scene"] == {(default, default)}


@pytest.mark.parametrize("value, message", [("31", "must be >= 32"), ("2049", "must be <= 2048"),
                                            ("big", "expected an integer")])
def test_an_out_of_range_size_is_one_error_line_and_exit_2(
        value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    rc = main(["run", "legoeval", "--split", "demo", "--limit", "1", "-q", "-o", f"image_px={value}",
               "--run-dir", str(run_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: option image_px={value!r}") and err[0].endswith(message), err
    assert not run_dir.exists()
