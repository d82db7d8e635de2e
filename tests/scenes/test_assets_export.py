"""``buildbench scenes export``: folder and file naming, world coordinates, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import trimesh

from buildbench.cli import main
from buildbench.scenes.io import load_scene

FIXTURES = Path(__file__).parent / "fixtures"


def _room(room_id: str, n: int) -> dict[str, object]:
    objects = [{"desc": d, "size": s, "pos": p, "rot": [0.0, 0.38268343, 0.0, 0.92387953], "jid": f"j{i}"}
               for i, (d, s, p) in enumerate([("oak double bed", [1.6, 1.0, 2.0], [0.0, 0.0, 0.0]),
                                              ("white nightstand", [0.5, 0.55, 0.4], [1.4, 0.0, -0.8]),
                                              ("grey fabric armchair", [0.8, 0.9, 0.7], [-1.5, 0.0, 1.2])][:n])]
    return {"room_type": "bedroom", "room_id": room_id,
            "bounds_bottom": [[-3, 0, -3], [3, 0, -3], [3, 0, 3], [-3, 0, 3]],
            "bounds_top": [[-3, 2.6, -3], [3, 2.6, -3], [3, 2.6, 3], [-3, 2.6, 3]], "objects": objects}


@pytest.fixture
def rooms(tmp_path: Path) -> Path:
    path = tmp_path / "rooms.jsonl"
    lines = [json.dumps(_room("Bedroom-7", 3)), "{not json", json.dumps({"scene": _room("Bedroom/8 x", 2)})]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["obj", "glb"])
def test_one_folder_per_scene_in_input_order_one_file_per_object_in_world_coordinates(
        tmp_path: Path, rooms: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["scenes", "export", str(rooms), "--out", str(out), "--format", fmt]) == 2  # line 2 is bad
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {rooms} line 2: invalid JSON")
    assert sorted(p.name for p in out.iterdir()) == ["0000_Bedroom-7", "0002_Bedroom_8_x", "manifest.json"]
    first = out / "0000_Bedroom-7"
    names = sorted(p.name for p in first.iterdir())
    assert names == [f"000_bed-0.{fmt}", f"001_nightstand-0.{fmt}", f"002_armchair-0.{fmt}",
                     f"room_floor.{fmt}", f"room_walls.{fmt}"]
    scene = load_scene(_room("Bedroom-7", 3))
    for index, obj in enumerate(scene.objects):
        loaded = trimesh.load_mesh(first / names[index], process=False)
        local = (np.asarray(loaded.vertices) - np.asarray(obj.center)) @ obj.rotation
        assert np.allclose(local.min(0), -np.asarray(obj.size) / 2, atol=1e-6)
        assert np.allclose(local.max(0), np.asarray(obj.size) / 2, atol=1e-6)
    floor = trimesh.load_mesh(first / f"room_floor.{fmt}", process=False)
    assert floor.area == pytest.approx(36.0) and np.allclose(floor.face_normals[:, 1], 1.0)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["geometry"] == "procedural" and manifest["format"] == fmt
    assert [s["folder"] for s in manifest["scenes"]] == ["0000_Bedroom-7", "0002_Bedroom_8_x"]
    assert manifest["scenes"][0]["objects"][0] == {"file": f"000_bed-0.{fmt}", "id": "bed-0", "category": "bed",
                                                   "source": "procedural:bed"}


def test_box_geometry_writes_the_boxes(tmp_path: Path, rooms: Path) -> None:
    out = tmp_path / "boxes"
    main(["scenes", "export", str(rooms), "--out", str(out), "--geometry", "box"])
    bed = trimesh.load_mesh(out / "0000_Bedroom-7" / "000_bed-0.obj", process=False)
    assert len(bed.faces) == 12 and bed.volume == pytest.approx(1.6 * 1.0 * 2.0)


def test_a_thor_house_exports_every_object_and_its_walls(tmp_path: Path) -> None:
    house = FIXTURES / "holodeck_a_living_room.json"
    out = tmp_path / "house"
    assert main(["scenes", "export", str(house), "--out", str(out)]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    assert folder.name.startswith("0000_")
    scene = load_scene(house)
    objects = sorted(p.name for p in folder.iterdir() if p.name[0].isdigit())
    assert len(objects) == len(scene.objects) and objects[0].startswith("000_")
    assert (folder / "room_walls.obj").is_file() and (folder / "room_floor.obj").is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--out", "{tmp}/x", "{tmp}/absent.jsonl"], "absent.jsonl: cannot read"),
    (["--out", "{tmp}/x", "--geometry", "mesh", "{rooms}"], "--geometry mesh needs BUILDBENCH_3DFUTURE_DIR"),
    (["--out", "{tmp}/full", "{rooms}"], "exists and is not an empty folder"),
    (["--out", "{tmp}/x", "--format", "stl", "{rooms}"], "'stl' is not one of 'obj', 'glb'"),
    (["--out", "{tmp}/x", "{tmp}/empty.jsonl"], "empty.jsonl: no scenes (the file is empty)"),
    # every scene refused: no folder with an empty manifest is left behind
    (["--out", "{tmp}/x", "{tmp}/bad.jsonl"], "bad.jsonl line 1: invalid JSON"),
])
def test_bad_input_is_one_error_line_and_exit_2(tmp_path: Path, rooms: Path, args: list[str], message: str,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    (tmp_path / "empty.jsonl").write_text("\n")
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    argv = ["scenes", "export", *(a.format(tmp=tmp_path, rooms=rooms) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    assert not (tmp_path / "x").exists()


def test_mesh_geometry_names_each_fallback_in_the_manifest(tmp_path: Path, rooms: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assets = tmp_path / "3d-future"
    assets.mkdir()
    monkeypatch.setenv("BUILDBENCH_3DFUTURE_DIR", str(assets))
    monkeypatch.setenv("BUILDBENCH_ASSET_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "mesh"
    main(["scenes", "export", str(rooms), "--out", str(out), "--geometry", "mesh"])
    manifest = json.loads((out / "manifest.json").read_text())
    source = manifest["scenes"][0]["objects"][0]["source"]
    assert source.startswith("procedural:bed (fallback: object 'bed-0': no asset 'j0' in")
    assert main(["scenes", "export", str(rooms), "--out", str(tmp_path / "strict"), "--geometry", "mesh",
                 "--strict-assets"]) == 2
