"""Formats that store a heading only (LayoutGPT's orientation, I-Design's z_angle): an object tilted
out of upright (a 3D-FRONT chair lying on its back, a picture turned about x) is written upright,
and the conversion now says which objects (it did so without a word)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from buildbench.scenes.formats import read_items, write_items

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]


def _room(tmp_path: Path, tilt_xyzw: list[float]) -> Path:
    room = {"bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR], "objects": [
        {"desc": "armchair", "size": [0.8, 0.9, 0.8], "pos": [0.0, 0.0, 0.0], "rot": [0.0, 0.70711, 0.0, 0.70711]},
        {"desc": "wall picture", "size": [0.6, 0.4, 0.05], "pos": [1.0, 1.5, 1.9], "rot": tilt_xyzw}]}
    path = tmp_path / "room.jsonl"
    path.write_text(json.dumps({"room_type": "living room", "scene": room}) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["idesign", "layoutgpt"])
def test_tilted_object_is_named(fmt: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    source = _room(tmp_path, [0.38268, 0.0, 0.0, 0.92388])  # 45 degrees about x
    with caplog.at_level(logging.WARNING):
        write_items(read_items(source, "respace"), tmp_path / "out.json", fmt, source)
    lines = [r.getMessage() for r in caplog.records if "tilted" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(f"{source}: scene 1")
    assert f"1 object(s) tilted out of upright, written upright ({fmt} stores a heading only): 'painting-0'" in lines[0]


@pytest.mark.parametrize(("fmt", "tilt"), [("idesign", [0.0, 0.38268, 0.0, 0.92388]),  # a turn about up only
                                           ("sceneeval", [0.38268, 0.0, 0.0, 0.92388])])  # keeps the tilt
def test_no_warning_where_nothing_is_lost(fmt: str, tilt: list[float], tmp_path: Path,
                                          caplog: pytest.LogCaptureFixture) -> None:
    source = _room(tmp_path, tilt)
    with caplog.at_level(logging.WARNING):
        write_items(read_items(source, "respace"), tmp_path / "out.json", fmt, source)
    assert not [r for r in caplog.records if "tilted" in r.getMessage()]
