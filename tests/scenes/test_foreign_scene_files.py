"""Another generator's file given to a command that reads one THOR or SceneReVis scene
(``legoeval evaluate --scene``, ``scenes export``): SceneEval's scene state (real file:
fixtures/external/sceneeval, MIT), LayoutGPT's output list (fixtures/external/layoutgpt, MIT)
and a LayoutVLM layout are one ``error:`` line naming the converter to use, exit 2. Before,
legoeval listed the top-level keys, and export glued its key prefix onto the message
('line 1: scene.not a scene: ...', '[0].not a scene: ...')."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import SceneFormatError

EXTERNAL = Path(__file__).resolve().parent / "fixtures" / "external"
SCENEEVAL = EXTERNAL / "sceneeval" / "LayoutGPT_scene_0.json"
LAYOUTGPT = EXTERNAL / "layoutgpt" / "gpt4.bedroom.first3.json"


def _layoutvlm(tmp_path: Path) -> Path:
    path = tmp_path / "layout.json"
    path.write_text(json.dumps({"task": {"boundary": {"floor_vertices": [[0, 0, 0], [4, 0, 0], [4, 4, 0], [0, 4, 0]],
                                                       "wall_height": 2.5}, "assets": {}},
                                "layout": {"bed-0": {"position": [2, 2, 0], "rotation": [0, 0, 0]}}}))
    return path


@pytest.mark.parametrize(("make", "name", "sizes"), [
    (lambda _: SCENEEVAL, "sceneeval", True),
    (lambda _: LAYOUTGPT, "layoutgpt", False),
    (_layoutvlm, "layoutvlm", True),
])
def test_legoeval_names_the_converter(make, name: str, sizes: bool, tmp_path: Path,  # type: ignore[no-untyped-def]
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path)
    constraints = tmp_path / "c.txt"
    constraints.write_text("There is a bed in the bedroom.\n")
    assert main(["legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --scene {path}: not one scene this command reads"), lines
    assert f"`buildbench scenes convert --from {name} --to thor`" in lines[0]
    assert ("--asset-sizes" in lines[0]) == sizes
    assert "Traceback" not in captured.err + captured.out


@pytest.mark.parametrize("path", [SCENEEVAL, LAYOUTGPT])
def test_export_names_the_converter_once(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenes", "export", "--out", str(tmp_path / "out"), "--geometry", "box", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path} line 1: not one scene this command reads: a "), lines


def test_export_names_a_bad_house_of_a_list_by_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps([{"rooms": 3}, {"a": 1}]))
    assert main(["scenes", "export", "--out", str(tmp_path / "out"), "--geometry", "box", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[1] == (f"error: {path} line 1: [1]: not a scene: no 'rooms' (THOR) or 'bounds_bottom'/"
                        "'room_envelope' (SceneReVis); top-level keys: a")


def test_load_scene_of_a_parsed_layoutgpt_list_names_the_converter() -> None:
    with pytest.raises(SceneFormatError, match=r"a LayoutGPT output file; read it with `buildbench scenes convert"):
        load_scene(json.loads(LAYOUTGPT.read_text()))  # type: ignore[arg-type]
