"""A scene that breaks the rules every reader shares (coordinates within 10 km, a ceiling above
the floor) is refused naming what the user can find in the file: the format's own key (``pos``,
``position.z``, ``left``, ``wall_height``), the record it sits in, and the line, never the
scene model's field (``center``) or an id the reader made up."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.formats import Item, get_format
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import Scene, SceneFormatError, SceneObject, check_scene
from buildbench.scenes.revis import read_revis

ROOM: dict[str, Any] = {
    "room_type": "bedroom",
    "bounds_bottom": [[0, 0, 0], [4, 0, 0], [4, 0, 3], [0, 0, 3]],
    "bounds_top": [[0, 2.6, 0], [4, 2.6, 0], [4, 2.6, 3], [0, 2.6, 3]],
    "objects": [{"desc": "a double bed", "size": [1.6, 0.9, 2.1], "pos": [2, 0, 1.5], "rot": [0, 0, 0, 1]},
                {"desc": "a nightstand", "size": [0.5, 0.5, 0.4], "pos": [3.5, 0, 0.3], "rot": [0, 0, 0, 1]}],
}


def _written(fmt: str) -> Any:
    write = get_format(fmt).write
    assert write is not None
    return json.loads(json.dumps(write([Item(read_revis(copy.deepcopy(ROOM)))])))


def _wall(doc: dict[str, Any]) -> int:
    return next(k for k, el in enumerate(doc["scene"]["arch"]["elements"]) if el["type"] == "Wall")


def _layoutvlm() -> dict[str, Any]:
    box = {"assetMetadata": {"boundingBox": {"x": 1.6, "y": 0.9, "z": 2.1}}}
    return {"task": {"boundary": {"floor_vertices": [[0, 0, 0], [3, 0, 0], [3, 4, 0], [0, 4, 0]]},
                     "assets": {"bed-0": {"category": "bed", **box}}},
            "layout": {"bed-0": {"position": [1.5, 2.0, 0.0], "rotation": [0, 0, 90.0]}}}


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


# format, the document with one bad value, the key the error names, what it says, the text on its line
CASES: dict[str, tuple[str, Callable[[], Any], str, str, str]] = {
    "flat pos": ("scenerevis-flat", lambda: _set(copy.deepcopy(ROOM), ("objects", 1, "pos", 2), 12345),
                 "objects[1].pos[2]", "12345 exceeds 10000 m", "12345"),
    "grouped size": ("scenerevis-grouped",
                     lambda: _set(_written("scenerevis-grouped"), ("groups", 0, "objects", 0, "size", 1), 23456),
                     "groups[0].objects[0].size[1]", "23456 exceeds 10000 m", "23456"),
    "thor position": ("thor", lambda: _set(_written("thor"), ("objects", 1, "position", "z"), 34567),
                      "objects[1].position.z", "34567 exceeds 10000 m", "34567"),
    # a floor point is named as a whole: its line is where the [x, z] pair opens, one above
    "thor floor": ("thor", lambda: _set(_written("thor"), ("rooms", 0, "vertices", 2, 0), 45678),
                   "rooms[0].vertices[2]", "45678 exceeds 10000 m", "45678"),
    # I-Design is z up: its position.y is our -z (placed at the wrapper's origin_xz, z = 3)
    "idesign position": ("idesign", lambda: _set(_written("idesign"), ("scene_graph", 1, "position", "y"), 45678),
                         "scene_graph[1].position.y", "-45675 exceeds 10000 m", "45678"),
    "sceneeval wall": ("sceneeval", lambda: (lambda d: _set(d, ("scene", "arch", "elements", _wall(d), "height"),
                                                            56789))(_written("sceneeval")),
                       "scene.arch.elements[{wall}].height", "56789 exceeds 10000 m", "56789"),
    "layoutvlm height": ("layoutvlm", lambda: _set(_layoutvlm(), ("task", "boundary", "wall_height"), 0),
                         "task.boundary.wall_height", "ceiling y 0.0 is not above floor y 0.0", '"wall_height"'),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_convert_names_the_files_key_and_line(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fmt, make, key, says, marker = CASES[case]
    doc = make()
    if fmt == "sceneeval":
        key = key.format(wall=_wall(doc))
    src, out = tmp_path / "in.json", tmp_path / "out.json"
    text = json.dumps(doc, indent=2)
    src.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if marker in row) - (case == "thor floor")
    to = "thor" if fmt != "thor" else "scenerevis-flat"
    assert main(["scenes", "convert", str(src), "--from", fmt, "--to", to, "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {src}: line {line}: {key}: {says}"]
    assert not out.exists()


def test_layoutgpt_names_its_pixel_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _set(_written("layoutgpt"), (0, "object_list", 1, 1, "top"), 4_567_800)  # px: 45,678 m
    src = tmp_path / "lg.json"
    src.write_text(json.dumps(doc))
    assert main(["scenes", "convert", str(src), "--from", "layoutgpt", "--to", "thor", "--out",
                 str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {src}: line 1: [0].object_list[1].top: 45678 exceeds 10000 m"


def test_a_record_of_several_is_named_by_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    houses = [_written("thor"), _set(_written("thor"), ("objects", 0, "position", "x"), 20000)]
    src = tmp_path / "houses.json"
    src.write_text(json.dumps(houses))
    assert main(["scenes", "convert", str(src), "--from", "procthor", "--to", "scenerevis-flat", "--out",
                 str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {src}: line 1: [1].objects[0].position.x: 20000 exceeds 10000 m"
    lines = tmp_path / "rooms.jsonl"
    good, bad = _written("respace"), _set(_written("respace"), ("scene", "objects", 0, "pos", 0), 67890)
    lines.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert main(["scenes", "convert", str(lines), "--from", "respace", "--to", "thor", "--out",
                 str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.strip() == f"error: {lines}: line 2: scene.objects[0].pos[0]: 67890 exceeds 10000 m"


def test_load_scene_names_the_files_key_and_line(tmp_path: Path) -> None:
    src = tmp_path / "house.json"
    text = json.dumps(_set(_written("thor"), ("objects", 1, "position", "z"), 34567), indent=2)
    src.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "34567" in row)
    with pytest.raises(SceneFormatError) as raised:
        load_scene(src)
    assert str(raised.value) == f"{src}: line {line}: objects[1].position.z: 34567 exceeds 10000 m"
    record = tmp_path / "record.json"  # a ReSpace record: the room under "scene"
    record.write_text(json.dumps(_set(_written("respace"), ("scene", "bounds_top"), ROOM["bounds_bottom"])))
    with pytest.raises(SceneFormatError, match=r"record\.json: line 1: scene\.bounds_top: ceiling y 0\.0 is not above"):
        load_scene(record)


def test_asset_sizes_beyond_the_bound_name_their_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, sizes = tmp_path / "vlm.json", tmp_path / "sizes.json"
    doc = _layoutvlm()
    del doc["task"]["assets"]["bed-0"]["assetMetadata"]
    src.write_text(json.dumps(doc))
    sizes.write_text(json.dumps({"bed-0": [1.6, 1e300, 2.1]}))
    assert main(["scenes", "convert", str(src), "--from", "layoutvlm", "--to", "thor", "--asset-sizes", str(sizes),
                 "--out", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"error: {sizes}: 'bed-0': a size of 1e+300 m exceeds 10000 m (option --asset-sizes)"


def test_a_scene_made_in_code_is_named_by_the_models_fields() -> None:
    scene = Scene(objects=[SceneObject("bed-0", "bed", "", (20000.0, 0.0, 0.0), (1.0, 1.0, 1.0))])
    with pytest.raises(SceneFormatError, match=r"^objects\[0\] 'bed-0' center: 20000 exceeds 10000 m$"):
        check_scene(scene)


def test_export_names_the_files_key_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scenes export`` reads a pretty-printed file as one document from line 1: the error's line is
    the bad value's in the file (it said line 1), and a list's house is named by its index."""
    src = tmp_path / "room.json"
    text = json.dumps(_set(copy.deepcopy(ROOM), ("objects", 1, "pos", 2), 30000), indent=2)
    src.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "30000" in row)
    assert main(["scenes", "export", str(src), "--out", str(tmp_path / "a"), "--geometry", "box"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {src} line {line}: objects[1].pos[2]: 30000 exceeds 10000 m"
    houses = tmp_path / "houses.json"
    houses.write_text(json.dumps([_written("thor"), _set(_written("thor"), ("objects", 0, "position", "x"), 20000)]))
    assert main(["scenes", "export", str(houses), "--out", str(tmp_path / "b"), "--geometry", "box"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {houses} line 1: [1].objects[0].position.x: 20000 exceeds 10000 m"]
