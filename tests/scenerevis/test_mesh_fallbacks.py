"""Metrics at geometry=mesh when a room's assets are not in the asset folder (a 3D-FRONT room
without jids, or jids the user's 3D-FUTURE copy lacks): every object is measured on its
procedural stand-in, and the figures say so (before, the output read "mesh geometry" and
nothing else)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from buildbench.suites.scenerevis.check.cli import metrics
from buildbench.suites.scenerevis.metrics import scene_metrics

FLOOR = [[-2.0, 0.0, -2.0], [2.0, 0.0, -2.0], [2.0, 0.0, 2.0], [-2.0, 0.0, 2.0]]
ROOM = {"room_type": "bedroom", "bounds_bottom": FLOOR, "bounds_top": [[x, 2.6, z] for x, _, z in FLOOR],
        "objects": [{"desc": "double bed", "size": [1.6, 0.9, 2.1], "pos": [0.0, 0.0, 0.0], "rot": [0, 0, 0, 1],
                     "jid": "0000-not-in-the-folder"},
                    {"desc": "nightstand", "size": [0.5, 0.5, 0.4], "pos": [1.3, 0.0, -0.8], "rot": [0, 0, 0, 1]}]}


@pytest.fixture
def empty_asset_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "3d-future"
    folder.mkdir()
    monkeypatch.setenv("BUILDBENCH_3DFUTURE_DIR", str(folder))
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    return folder


def test_stand_ins_are_named_per_object(empty_asset_folder: Path) -> None:
    found = scene_metrics(ROOM, geometry="mesh")["mesh_fallbacks"]
    assert [f["object"] for f in found] == [0, 1]
    assert all(f["source"].startswith(("procedural:bed", "procedural:nightstand")) for f in found)
    assert "no asset id" in found[1]["source"]
    assert "mesh_fallbacks" not in scene_metrics(ROOM, geometry="procedural")


def test_cli_says_how_many_objects_were_stand_ins(empty_asset_folder: Path, tmp_path: Path) -> None:
    scenes = tmp_path / "rooms.jsonl"
    scenes.write_text(json.dumps(ROOM) + "\n")
    result = CliRunner().invoke(metrics, [str(scenes), "--geometry", "mesh", "--no-voxels", "--no-navigation"])
    assert result.exit_code == 0, result.output
    assert "procedural stand-ins: 2 of 2 objects had no usable asset mesh (line 1 object 0:" in result.output
    as_json = CliRunner().invoke(metrics, [str(scenes), "--geometry", "mesh", "--json", "--no-voxels",
                                           "--no-navigation"])
    assert len(json.loads(as_json.output)["scenes"][0]["mesh_fallbacks"]) == 2
