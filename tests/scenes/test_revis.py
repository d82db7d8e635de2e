"""SceneReVis flat/grouped JSON: conversion, exact round trips on real rooms, bad input."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from buildbench.scenes.io import detect_format, load_scene, save_scene
from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.revis import read_revis, write_revis

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scenerevis"

ROOM = {
    "room_type": "bedroom", "room_id": "Bedroom-1",
    "bounds_top": [[-2, 2.6, 2], [2, 2.6, 2], [2, 2.6, -2], [-2, 2.6, -2]],
    "bounds_bottom": [[-2, 0.0, 2], [2, 0.0, 2], [2, 0.0, -2], [-2, 0.0, -2]],
    "objects": [
        {"desc": "Modern queen-sized bed with gray fabric headboard", "size": [1.6, 0.5, 2.0],
         "pos": [-1.0, 0.0, 0.0], "rot": [0, 0.70711, 0, 0.70711], "jid": "abc"},
        {"desc": "Wooden nightstand", "size": [0.5, 0.5, 0.4], "pos": [-1.0, 0.0, 1.5], "rot": [0, 0, 0, 1]},
        {"id": "lamp-a", "desc": "table lamp", "size": [0.3, 0.5, 0.3], "pos": [-1.0, 0.5, 1.5], "rot": [0, 0, 0, 1]},
    ],
}


def test_flat_conversion() -> None:
    scene = read_revis(copy.deepcopy(ROOM))
    room = scene.rooms[0]
    assert (room.id, room.floor_y, room.ceiling_y) == ("Bedroom-1", 0.0, 2.6)
    bed = scene.object("bed-0")
    assert bed.center == pytest.approx((-1.0, 0.25, 0.0)) and bed.yaw_deg == pytest.approx(90.0, abs=1e-3)
    assert bed.asset_id == "abc" and bed.attributes["description"].startswith("Modern")
    assert scene.object("nightstand-0").category == "nightstand"
    assert scene.object("lamp-a").category == "table lamp"
    assert write_revis(scene) == ROOM


def test_grouped_round_trip_and_conversion() -> None:
    grouped = write_revis(read_revis(copy.deepcopy(ROOM)), grouped=True)
    assert detect_format(grouped) == "scenerevis-grouped"
    assert grouped["groups"][0]["group_name"] == "main_group" and len(grouped["groups"][0]["objects"]) == 3
    scene = read_revis(copy.deepcopy(grouped))
    assert write_revis(scene, grouped=True) == grouped
    assert write_revis(scene) == ROOM


def test_moved_object_writes_bottom_centre() -> None:
    scene = read_revis(copy.deepcopy(ROOM))
    scene.object("nightstand-0").center = (1.0, 0.25, 1.0)
    out = write_revis(scene)
    assert out["objects"][1]["pos"] == pytest.approx([1.0, 0.0, 1.0])
    assert out["objects"][0] == ROOM["objects"][0]


def test_shared_example_scenes_round_trip(tmp_path: Path) -> None:
    files = sorted((SHARED / "example_scenes").glob("*.json"))
    if not files:
        pytest.skip("shared SceneReVis examples absent (../shared/data/scenerevis/example_scenes)")
    for path in files:
        data = json.loads(path.read_text())
        scene = load_scene(path)
        assert write_revis(scene) == data, path.name
        out = tmp_path / path.name
        save_scene(scene, out)
        assert out.read_text() == path.read_text().rstrip("\n") + "\n"  # byte-identical but the final newline
        grouped = write_revis(scene, grouped=True)
        assert write_revis(read_revis(copy.deepcopy(grouped)), grouped=True) == grouped


def test_shared_respace_rooms_round_trip() -> None:
    path = SHARED / "respace_scenes" / "dataset_bedroom_test.jsonl"
    if not path.exists():
        pytest.skip("shared ReSpace rooms absent (../shared/data/scenerevis/respace_scenes)")
    with path.open() as lines:
        for line in itertools.islice(lines, 40):
            record = json.loads(line)
            scene = read_revis(copy.deepcopy(record["scene"]))
            assert write_revis(scene) == record["scene"]
            assert sum(o.category == "object" for o in scene.objects) <= len(scene.objects) // 2


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d["objects"][0].update(pos=[0, 0]), r"objects\[0\]\.pos: expected \[x, y, z\]"),
    (lambda d: d["objects"][1].update(size=[1, -1, 1]), r"objects\[1\]\.size: extents must be >= 0"),
    (lambda d: d["objects"][0].update(rot=[0, 0, 0, 0]), r"objects\[0\]\.rot: zero quaternion"),
    (lambda d: d["objects"][0].update(rot=[0, 0, 1]), r"objects\[0\]\.rot: expected a quaternion"),
    (lambda d: d["objects"][2].update(pos=[0, float("inf"), 0]), r"objects\[2\]\.pos: expected a finite"),
    (lambda d: d.update(bounds_bottom=[[0, 0, 0]]), r"bounds_bottom: expected >= 3"),
    (lambda d: d.update(bounds_top=d["bounds_top"][:3]), r"bounds_top: 3 points, bounds_bottom has 4"),
    (lambda d: d["objects"].append({**d["objects"][2]}), r"objects\[3\]\.id: duplicate id 'lamp-a'"),
    (lambda d: d.update(objects="none"), r"objects: expected a list"),
])
def test_bad_input(mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    data = copy.deepcopy(ROOM)
    mutate(data)
    with pytest.raises(SceneFormatError, match=message):
        read_revis(data)


def test_load_scene_garbage_names_the_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SceneFormatError, match=r"bad\.json: invalid JSON at line 1"):
        load_scene(bad)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(SceneFormatError, match=r"other\.json: not a scene.*hello"):
        load_scene(other)
    with pytest.raises(SceneFormatError, match="cannot read"):
        load_scene(tmp_path / "missing.json")
    nan = tmp_path / "nan.json"
    nan.write_text('{"rooms": [], "x": NaN}')
    with pytest.raises(SceneFormatError, match="NaN is not a finite number"):
        load_scene(nan)
    with pytest.raises(SceneFormatError, match="expected a path or a JSON object"):
        load_scene([1, 2])  # type: ignore[arg-type]
    multi = load_scene({"rooms": [{"id": "a", "vertices": [[0, 0], [0, 1], [1, 1], [1, 0]]},
                                  {"id": "b", "vertices": [[1, 0], [1, 1], [2, 1], [2, 0]]}]})
    with pytest.raises(SceneFormatError, match="one room; the scene has 2"):
        write_revis(multi)
    assert write_revis(multi, room_id="b")["room_id"] == "b"
