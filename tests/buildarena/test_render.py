"""``buildbench buildarena render``: a machine drawn block by block, from several sides, in one PNG."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from buildbench.render import Lighting, Renderer, RenderUnavailableError, load_png, to_png_bytes
from buildbench.suites.buildarena import designs
from buildbench.suites.buildarena.cli import DEFAULT_VIEWS, VIEW_NAMES
from buildbench.suites.buildarena.export import history_json, load_history, load_released_history
from buildbench.suites.buildarena.library.released.convert import ReleasedStageBench
from buildbench.suites.buildarena.model import Machine
from buildbench.suites.buildarena.render import DEFAULT_VIEWS as RENDER_DEFAULT_VIEWS
from buildbench.suites.buildarena.render import (
    TYPE_COLORS,
    VIEWS,
    RenderRequestError,
    id_images,
    machine_scene,
    render_machine,
)
from buildbench.suites.buildarena.render import view_cameras as cameras_for

WHITE = np.array([255, 255, 255])


@pytest.fixture(scope="module", autouse=True)
def _needs_gl() -> None:
    try:
        Renderer(8, 8).release()
    except RenderUnavailableError as exc:
        pytest.skip(f"no headless OpenGL here: {exc}")


@pytest.fixture(scope="module")
def vehicle() -> Machine:
    return designs.build(designs.REFERENCE["transport-1"]())


@pytest.fixture(scope="module")
def braced_beam() -> Machine:
    return designs.build(designs.REFERENCE["support-1"]())


def _flat_colors(machine: Machine, colors: str, views: tuple[str, ...] = ("iso", "top", "south", "east", "bottom"),
                 px: int = 256) -> set[tuple[int, int, int]]:
    """Distinct colours seen over the views, rendered unlit and without anti-aliasing."""
    drawn = machine_scene(machine, colors=colors)  # type: ignore[arg-type]
    renderer = Renderer(px, px, samples=0, lighting=Lighting(ambient=1.0, diffuse=0.0))
    try:
        images = renderer.render(drawn.scene, cameras_for(drawn, views))
    finally:
        renderer.release()
    seen = images[images[..., 3] > 0][:, :3]
    return {tuple(int(v) for v in c) for c in np.unique(seen, axis=0)}


def test_the_image_shows_the_machine_in_every_view(vehicle: Machine) -> None:
    image = render_machine(vehicle, px=128)
    assert image.dtype == np.uint8 and image.shape[1] == 256 and image.shape[0] > 256  # 2 × 2 views + legend
    assert np.all(image[..., 3] == 255)
    for row in (0, 1):
        for col in (0, 1):
            panel = image[row * 128:(row + 1) * 128, col * 128:(col + 1) * 128, :3]
            drawn = np.any(np.abs(panel.astype(int) - WHITE) > 40, axis=2).mean()
            assert 0.03 < drawn < 0.9, (row, col, drawn)


def test_every_block_has_its_own_colour_in_block_mode(vehicle: Machine, braced_beam: Machine) -> None:
    for machine in (vehicle, braced_beam):
        assert len(_flat_colors(machine, "block")) == machine.num_blocks


def test_type_mode_shows_one_colour_per_block_type(braced_beam: Machine) -> None:
    types = {b.type for b in braced_beam.blocks.values()}
    assert types == {"Starting Block", "Small Wooden Block", "Brace"}
    expected = {tuple(int(round(255 * c)) for c in TYPE_COLORS[t]) for t in types}
    assert _flat_colors(braced_beam, "type") == expected


def test_every_block_is_seen_from_some_side(braced_beam: Machine) -> None:
    drawn = machine_scene(braced_beam)
    views = ("top", "bottom", "south", "east", "iso")
    codes = id_images(drawn, cameras_for(drawn, views), 256)
    seen = {drawn.items[int(c) - 1].id for c in np.unique(codes) if c > 0}
    assert seen == set(braced_beam.blocks)


def test_wheels_are_round(vehicle: Machine) -> None:
    drawn = machine_scene(vehicle, colors="block")
    wheel = next(i for i, item in enumerate(drawn.items) if item.type == "Powered Wheel")
    codes = id_images(drawn, cameras_for(drawn, ("east",)), 256)[0]
    rows, cols = np.nonzero(codes == wheel + 1)
    # Seen along its axle, a disc fills pi/4 of its bounding square (a box would fill all of it).
    fill = rows.size / ((np.ptp(rows) + 1) * (np.ptp(cols) + 1))
    assert fill == pytest.approx(np.pi / 4, abs=0.05)


def test_rendering_is_deterministic(braced_beam: Machine) -> None:
    first = to_png_bytes(render_machine(braced_beam, px=160, labels=True))
    assert to_png_bytes(render_machine(braced_beam, px=160, labels=True)) == first
    assert to_png_bytes(render_machine(braced_beam, px=160)) != first  # the labels are drawn


def test_bad_requests_are_refused(vehicle: Machine) -> None:
    with pytest.raises(RenderRequestError, match="unknown view 'front'"):
        render_machine(vehicle, views=("iso", "front"))
    with pytest.raises(RenderRequestError, match=r"view size 20 px must be an integer in \[64, 2048\]"):
        render_machine(vehicle, px=20)
    with pytest.raises(RenderRequestError, match="no blocks to draw"):
        render_machine(Machine())
    with pytest.raises(RenderRequestError, match="gap"):
        machine_scene(vehicle, gap_units=float("nan"))


def test_the_cli_help_names_the_renderer_views() -> None:
    assert VIEW_NAMES == tuple(VIEWS) and DEFAULT_VIEWS == ",".join(RENDER_DEFAULT_VIEWS)


# -- the command --------------------------------------------------------------------------------


def _main(*args: str) -> int:
    from buildbench.cli.main import main

    return main(["buildarena", "render", *args])


def _released_history() -> list[dict[str, object]]:
    bench = ReleasedStageBench()
    for op, params in (("start", {}),
                       ("attach_block_to", {"base_block": 1, "face": "E", "new_block": "Small Wooden Block"}),
                       ("attach_block_to", {"base_block": 1, "face": "C", "new_block": "Ballast"}),
                       ("attach_block_to", {"base_block": 2, "face": "A", "new_block": "Powered Wheel"})):
        assert bench.call(op, params).ok
    return [{"op": h.op, "params": h.params, "result": h.result} for h in bench.machine.history]


def test_the_three_machine_files_and_both_profiles_are_drawn(tmp_path: Path, vehicle: Machine,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.harness import Action, Task
    from buildbench.suites.buildarena.env import BuildArenaEnv
    from buildbench.suites.buildarena.options import BuildArenaOptions

    history = tmp_path / "history.json"
    history.write_text(history_json(vehicle))
    document = tmp_path / "document.json"
    document.write_text(json.dumps(vehicle.to_json()))
    task = Task("transport-1", "buildarena")
    env = BuildArenaEnv(task, BuildArenaOptions(profile="released"))
    env.reset(task)
    for call in _released_history():
        env.step(Action(data={"op": call["op"], "params": call["params"]}))
    env.approve("1")
    env.set_final("1")
    outcome = tmp_path / "outcome.json"
    outcome.write_text(json.dumps(env.outcome().to_dict()))
    for path in (history, document, outcome):
        target = tmp_path / f"{path.stem}.png"
        assert _main(str(path), "--out", str(target), "--size", "96", "--views", "iso,top", "--labels") == 0
        height, width, _ = load_png(target).shape
        assert width == 192 and 96 < height < 96 + 60  # two views side by side, the legend below
    assert "wrote" in capsys.readouterr().out
    released = tmp_path / "released.json"
    released.write_text(json.dumps(_released_history()))
    assert _main(str(released), "--profile", "released", "--colors", "block") == 0
    assert (tmp_path / "released.png").exists()  # the default output sits beside the input
    assert "Ballast" in {i.type for i in machine_scene(load_released_history(released.read_text())).items}
    # our library refuses the Ballast the original let a model attach: the file is refused, not
    # drawn without it
    with pytest.raises(ValueError, match=r"history call 2 \(attach_block_to\).*--profile released"):
        load_history(released.read_text())


@pytest.mark.parametrize("content,args,message", [
    ("{broken", (), "is not valid JSON (line 1, column 2)"),
    ('{"format": "something/9"}', (), "not a buildarena machine document"),
    ("[]", (), "the machine has no blocks to draw"),
    ("HISTORY", ("--views", "iso,sideways"), "unknown view 'sideways'"),
    ("HISTORY", ("--size", "4096"), "'--size': 4096 is not in the range 64<=x<=2048"),
    ("HISTORY", ("--colors", "rainbow"), "Invalid value for '--colors'"),
    ("HISTORY", ("--out", "/nonexistent-dir/x.png"), "cannot write /nonexistent-dir/x.png"),
])
def test_bad_input_is_one_error_line_and_exit_2(tmp_path: Path, vehicle: Machine, capsys: pytest.CaptureFixture[str],
                                                 content: str, args: tuple[str, ...], message: str) -> None:
    path = tmp_path / "machine.json"
    path.write_text(history_json(vehicle) if content == "HISTORY" else content)
    assert _main(str(path), *args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0], err
    assert not (tmp_path / "machine.png").exists()
