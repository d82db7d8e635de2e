"""Scene and asset files that json.loads could not refuse cleanly (a 10,000-digit integer: a
bare ValueError, exit 1; 100,000 brackets: RecursionError) are one ``error:`` line naming the file."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.scenes.assets.formats import glb_face_count, parse_thor_asset
from buildbench.scenes.assets.mesh import AssetError
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import SceneFormatError

BIG_INT = '{"a": ' + "9" * 10_000 + "}"
DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
CASES = [(BIG_INT, "an integer of 10000 digits is over the 4300-digit limit"),
         (DEEP, "nested deeper than 200 levels"),
         ('{"a": NaN}', "NaN is not a finite number")]


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("content, message", CASES)
def test_scenes_convert_refuses_hostile_json_naming_the_file(
        content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = tmp_path / "house.json"
    scene.write_text(content)
    err = _one_error(capsys, ["scenes", "convert", str(scene), "--from", "thor", "--to", "holodeck",
                              "--out", str(tmp_path / "x.json")])
    assert f"{scene}: line 1: invalid JSON: {message}" in err


@pytest.mark.parametrize("content, message", CASES)
def test_a_jsonl_line_names_its_line(content: str, message: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text('{"a": 1}\n\n' + content + "\n")
    err = _one_error(capsys, ["scenes", "convert", str(records), "--from", "respace", "--to", "holodeck",
                              "--out", str(tmp_path / "x.json")])
    assert f"{records}: line 3: invalid JSON: {message}" in err


@pytest.mark.parametrize("content, message", CASES)
def test_scenes_export_refuses_hostile_json_naming_the_file(
        content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = tmp_path / "room.json"
    scene.write_text(content)
    assert main(["scenes", "export", str(scene), "--out", str(tmp_path / "out")]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"error: {scene} line 1: invalid JSON at column ") and message in first


@pytest.mark.parametrize("content, message", CASES)
def test_load_scene_and_assets_refuse_hostile_json(content: str, message: str, tmp_path: Path) -> None:
    scene = tmp_path / "room.json"
    scene.write_text(content)
    with pytest.raises(SceneFormatError, match=rf"room\.json: invalid JSON at line 1 column \d+: {re.escape(message)}"):
        load_scene(scene)
    with pytest.raises(AssetError, match=f"thing.json: unreadable THOR asset \\({re.escape(message)}"):
        parse_thor_asset(content.encode(), "thing.json")
    chunk = content.encode()
    glb = b"glTF" + struct.pack("<IIII", 2, 20 + len(chunk), len(chunk), 0x4E4F534A) + chunk
    with pytest.raises(AssetError, match=f"thing.glb: unreadable GLB JSON chunk \\({re.escape(message)}"):
        glb_face_count(glb, "thing.glb")
