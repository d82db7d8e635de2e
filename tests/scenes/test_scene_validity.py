"""One notion of a valid room: `scenes convert` refuses what `scenerevis metrics` refuses (a room
of no height, coordinates beyond 10 km, sizes of 1e300), with one error line naming the file and
the field and no OUT, instead of writing a file the other commands refuse."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.io import load_scene
from buildbench.scenes.model import MAX_COORD_M, SceneFormatError, check_scene
from buildbench.scenes.revis import read_revis
from buildbench.suites.scenerevis.check import layout

FLOOR = [[0, 0, 0], [4, 0, 0], [4, 0, 4], [0, 0, 4]]


def _room(**change: Any) -> dict[str, Any]:
    room: dict[str, Any] = {"room_type": "bedroom", "room_id": "r1", "bounds_bottom": FLOOR,
                            "bounds_top": [[x, 2.8, z] for x, _, z in FLOOR],
                            "objects": [{"desc": "bed", "size": [1.6, 0.5, 2.0], "pos": [2, 0, 2],
                                         "rot": [0, 0, 0, 1]}]}
    room.update(change)
    return room


def _bed(**change: Any) -> list[dict[str, Any]]:
    return [{**_room()["objects"][0], **change}]


BAD = {
    # each names the file's own key (SceneReVis's), on the file's one line
    "zero height": (_room(bounds_top=FLOOR), "line 1: bounds_top: ceiling y 0.0 is not above floor y 0.0"),
    "far object": (_room(objects=_bed(pos=[20000, 0, 2])), "line 1: objects[0].pos[0]: 20000 exceeds 10000 m"),
    "huge size": (_room(objects=_bed(size=[1e300, 0.5, 2.0])), "line 1: objects[0].size[0]: 1e+300 exceeds 10000 m"),
    "far floor": (_room(bounds_bottom=[[0, 0, 0], [4e4, 0, 0], [4e4, 0, 4], [0, 0, 4]],
                        bounds_top=[[0, 3, 0], [4e4, 3, 0], [4e4, 3, 4], [0, 3, 4]]),
                  "line 1: bounds_bottom[1]: 40000 exceeds 10000 m"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_convert_refuses_what_metrics_refuses(case: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    room, field = BAD[case]
    src, out = tmp_path / "room.json", tmp_path / "out.json"
    src.write_text(json.dumps(room))
    for to in ("scenerevis-flat", "thor", "layoutgpt"):
        assert main(["scenes", "convert", str(src), "--from", "scenerevis-flat", "--to", to, "--out", str(out)]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [f"error: {src}: {field}"]
        assert not out.exists()
    assert main(["scenerevis", "metrics", str(src)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {src}")
    with pytest.raises(SceneFormatError):
        layout.parse_layout(room)


def test_a_valid_room_converts_and_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "room.json", tmp_path / "out.json"
    src.write_text(json.dumps(_room()))
    assert main(["scenes", "convert", str(src), "--from", "scenerevis-flat", "--to", "scenerevis-flat",
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == _room()
    assert main(["scenerevis", "metrics", str(out)]) == 0


def test_the_bound_is_one_number_and_inclusive() -> None:
    assert layout.MAX_COORD_M is MAX_COORD_M
    edge = read_revis(_room(objects=_bed(pos=[MAX_COORD_M, 0, 2], size=[0.0, 0.5, 2.0])))
    check_scene(edge)  # at the bound: accepted, as parse_layout accepts it
    layout.parse_layout(_room(objects=_bed(pos=[MAX_COORD_M, 0, 2])))


def test_other_formats_meet_the_same_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A LayoutGPT box 2e6 px (20 km at 1 cm a pixel) from the origin is refused on reading."""
    src, out = tmp_path / "lg.json", tmp_path / "out.json"
    src.write_text(json.dumps([{"prompt": "Room Type: bedroom\nRoom Size: max length 270px, max width 252px\n",
                                "object_list": [["double_bed", {"length": 170, "width": 130, "height": 57,
                                                                "left": 2_000_000, "top": 111, "depth": 28,
                                                                "orientation": 0}]]}]))
    assert main(["scenes", "convert", str(src), "--from", "layoutgpt", "--to", "thor", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {src}: ") and "exceeds 10000 m" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("case", sorted(BAD))
def test_load_scene_and_export_apply_the_same_rules(case: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    room, field = BAD[case]
    src = tmp_path / "room.json"
    src.write_text(json.dumps(room))
    with pytest.raises(SceneFormatError, match="^" + re.escape(f"{src}: {field}") + "$"):
        load_scene(src)
    assert main(["scenes", "export", str(src), "--out", str(tmp_path / "meshes"), "--geometry", "box"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and field in err[0]
