"""3D-FRONT house JSON as the dataset ships it (``--from 3dfront``), on a small house of our own
laid out as the dataset's files are (``furniture`` with ``bbox``, ``mesh`` with flat ``xyz`` and
``faces``, ``scene.room`` children referring to them by ``uid``): the floor is the union of the
room's Floor triangles, the ceiling its Ceiling meshes' top, an object's ``pos`` its bottom
centre and its size ``bbox`` x ``scale``. What cannot be placed is a warning naming the room or
child; a malformed field is one ``error:`` line naming it. Before, such a file was refused with
"scene.bounds_bottom: expected >= 3 points" (read as a ReSpace record)."""

from __future__ import annotations

import copy
import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.formats import read_items
from buildbench.scenes.io import load_scene, revis_records
from buildbench.scenes.model import SceneFormatError


def _quad(uid: str, kind: str, x0: float, z0: float, x1: float, z1: float, y: float) -> dict[str, Any]:
    return {"uid": uid, "jid": "", "type": kind, "xyz": [x0, y, z0, x1, y, z0, x1, y, z1, x0, y, z1],
            "normal": [0, 1, 0] * 4, "uv": [0, 0] * 4, "faces": [0, 1, 2, 0, 2, 3], "material": "m0"}


def _child(ref: str, iid: str, pos: list[float], rot: list[float] | None = None,
           scale: list[float] | None = None) -> dict[str, Any]:
    return {"ref": ref, "instanceid": iid, "pos": pos, "rot": rot or [0, 0, 0, 1], "scale": scale or [1, 1, 1]}


S = math.sqrt(0.5)


def _house() -> dict[str, Any]:
    """An L-shaped bedroom (a 4 x 3 floor mesh and a 2 x 2 one beside it), 2.8 m ceiling, a bed
    turned 90 degrees, a wardrobe scaled 1.5 x wide, a lamp without bbox, a rug the file marks not
    valid, a dangling reference; and a hallway with walls only (no floor)."""
    return {
        "uid": "house-a", "jobid": "j", "design_version": "0.1", "north_vector": [0, 1, 0],
        "furniture": [
            {"uid": "10/model", "jid": "bed-jid", "aid": [], "title": "bed/double bed", "bbox": [1.6, 0.9, 2.0],
             "valid": True},
            {"uid": "11/model", "jid": "wardrobe-jid", "aid": [], "title": "wardrobe", "bbox": [1.0, 2.0, 0.6],
             "valid": True, "category": "Wardrobe"},
            {"uid": "12/model", "jid": "lamp-jid", "aid": [], "title": "floor lamp", "valid": True},
            {"uid": "13/model", "jid": "rug-jid", "aid": [], "title": "rug", "bbox": [2, 0.01, 3], "valid": False},
        ],
        "mesh": [_quad("1/floor", "Floor", 0, 0, 4, 3, 0.0), _quad("2/floor", "Floor", 4, 0, 6, 2, 0.0),
                 _quad("3/ceiling", "CustomizedCeiling", 0, 0, 4, 3, 2.8), _quad("4/wall", "WallInner", 0, 0, 4, 0, 0.0),
                 _quad("5/wall", "WallInner", 8, 0, 10, 0, 0.0)],
        "material": [], "extension": {},
        "scene": {"ref": "s", "pos": [0, 0, 0], "rot": [0, 0, 0, 1], "scale": [1, 1, 1], "room": [
            {"type": "MasterBedroom", "instanceid": "MasterBedroom-7", "size": 16.0, "pos": [0, 0, 0],
             "rot": [0, 0, 0, 1], "scale": [1, 1, 1], "children": [
                 _child("1/floor", "mesh/1", [0, 0, 0]), _child("2/floor", "mesh/2", [0, 0, 0]),
                 _child("3/ceiling", "mesh/3", [0, 0, 0]), _child("4/wall", "mesh/4", [0, 0, 0]),
                 _child("10/model", "furniture/1", [2.0, 0.0, 1.5], [0, S, 0, S]),
                 _child("11/model", "furniture/2", [0.8, 0.0, 2.6], scale=[1.5, 1.0, 1.0]),
                 _child("12/model", "furniture/3", [3.5, 0.0, 0.3]),
                 _child("13/model", "furniture/5", [2, 0, 1.5]),
                 _child("99/model", "furniture/4", [1, 0, 1])]},
            {"type": "Hallway", "instanceid": "Hallway-8", "size": 4.0, "pos": [0, 0, 0], "rot": [0, 0, 0, 1],
             "scale": [1, 1, 1], "children": [_child("5/wall", "mesh/5", [0, 0, 0])]},
        ]},
    }


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="buildbench.scenes")


def _write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "house-a.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def test_a_room_reads_to_its_floor_ceiling_and_objects(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = _write(tmp_path, _house())
    (item,) = read_items(path, "3dfront")
    room = item.scene.rooms[0]
    assert item.name == "house-a/MasterBedroom-7" and item.room == "MasterBedroom"
    assert room.area_m2 == pytest.approx(12.0 + 4.0) and len(room.vertices) == 6  # the L's corners only
    assert room.floor_y == 0.0 and room.ceiling_y == pytest.approx(2.8)
    bed, wardrobe = item.scene.objects
    assert bed.id == "furniture/1" and bed.category == "bed" and bed.asset_id == "bed-jid"
    assert bed.center == pytest.approx((2.0, 0.45, 1.5)) and bed.size == pytest.approx((1.6, 0.9, 2.0))
    assert bed.yaw_deg == pytest.approx(90.0)
    assert wardrobe.size == pytest.approx((1.5, 2.0, 0.6)) and wardrobe.center == pytest.approx((0.8, 1.0, 2.6))
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("scene.room[0].children[6]" in m and "'lamp-jid' has no 'bbox'" in m for m in messages), messages
    assert any("scene.room[0]" in m and "1 child(ren) refer to no furniture or mesh" in m and "'99/model'" in m
               for m in messages), messages
    assert any("scene.room[1]" in m and "no Floor mesh" in m for m in messages), messages
    assert any("scene.room[0]" in m and "1 child(ren) are furniture the file marks not valid" in m and "'rug-jid'" in m
               for m in messages), messages


def test_mesh_vertices_are_world_space(tmp_path: Path) -> None:
    """The dataset's meshes carry world coordinates; the toolbox ignores a mesh child's transform."""
    doc = _house()
    doc["scene"]["room"][0]["children"][0]["pos"] = [100.0, 0.0, 0.0]
    (item,) = read_items(_write(tmp_path, doc), "3dfront")
    assert item.scene.rooms[0].area_m2 == pytest.approx(16.0)
    assert max(x for x, _ in item.scene.rooms[0].vertices) == pytest.approx(6.0)


def test_a_bbox_given_as_corners_reads_as_its_extents(tmp_path: Path) -> None:
    doc = _house()
    doc["furniture"][0]["bbox"] = [[-0.8, 0.0, -1.0], [0.8, 0.9, 1.0]]
    (item,) = read_items(_write(tmp_path, doc), "3dfront")
    assert item.scene.objects[0].size == pytest.approx((1.6, 0.9, 2.0))


def test_convert_writes_the_rooms_and_asset_sizes_place_the_unsized(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path, out = _write(tmp_path, _house()), tmp_path / "room.json"
    sizes = tmp_path / "sizes.json"
    sizes.write_text(json.dumps({"lamp-jid": [0.4, 1.6, 0.4]}))
    assert main(["scenes", "convert", str(path), "--from", "3dfront", "--to", "scenerevis-flat", "--out", str(out),
                 "--asset-sizes", str(sizes)]) == 0
    room = json.loads(out.read_text())
    assert [o["jid"] for o in room["objects"]] == ["bed-jid", "wardrobe-jid", "lamp-jid"]
    lamp = room["objects"][2]
    assert lamp["size"] == pytest.approx([0.4, 1.6, 0.4]) and lamp["pos"] == pytest.approx([3.5, 0.0, 0.3])
    assert [p[1] for p in room["bounds_top"]] == pytest.approx([2.8] * len(room["bounds_top"]))


@pytest.mark.parametrize("edit,says", [
    (lambda d: d["mesh"][1]["faces"].__setitem__(2, 7), "mesh[1].faces[2]: 7 is not a vertex index (0..3)"),
    (lambda d: d["mesh"][0].__setitem__("xyz", [0, 0]), "mesh[0]: expected flat 'xyz'"),
    (lambda d: d["scene"]["room"][0]["children"][4].__setitem__("pos", [2.0, "0", 1.5]),
     "scene.room[0].children[4].pos[1]: expected a finite number"),
    (lambda d: d["scene"]["room"][0]["children"][5].__setitem__("rot", [0, 0, 0, 0]),
     "scene.room[0].children[5].rot"),
    (lambda d: d["scene"].__setitem__("room", {"type": "Bedroom"}), "scene.room: expected a list"),
    (lambda d: d["furniture"].__setitem__(0, "10/model"), "furniture[0]: expected an object with a 'uid'"),
    (lambda d: d["furniture"][1].__setitem__("bbox", [1.0, -2.0, 0.6]), "furniture[1].bbox: extents"),
    (lambda d: d["furniture"][1].__setitem__("bbox", [1.0, 2.0]), "furniture[1].bbox: expected [x, y, z]"),
    (lambda d: d["mesh"][1]["xyz"].__setitem__(3, 1e308), "mesh[1].xyz[3]: 1e+308 exceeds 10000 m"),
    (lambda d: d["scene"]["room"][0]["children"][5].__setitem__("scale", [1.0, 0.0, 1.0]),
     "scene.room[0].children[5].scale[1]: 0 is not a scale factor"),
    (lambda d: d["furniture"][0].__setitem__("bbox", [1.6, 0.9, 2e4]), "furniture[0].bbox[2]: 20000 exceeds 10000 m"),
])
def test_a_malformed_field_is_one_error_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       edit: Any, says: str) -> None:
    doc = copy.deepcopy(_house())
    edit(doc)
    path, out = _write(tmp_path, doc), tmp_path / "out.json"
    assert main(["scenes", "convert", str(path), "--from", "3dfront", "--to", "thor", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}") and says in lines[0], lines
    assert not out.exists()


def test_a_file_of_another_format_is_named_as_not_3dfront(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {"rooms": [], "objects": []})
    assert main(["scenes", "convert", str(path), "--from", "3dfront", "--to", "thor", "--out",
                 str(tmp_path / "o.json")]) == 2
    assert "expected a 3D-FRONT house ('furniture' and 'scene' holding 'room')" in capsys.readouterr().err


def test_a_house_without_a_floored_room_has_no_scene(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _house()
    doc["scene"]["room"] = doc["scene"]["room"][1:]
    path = _write(tmp_path, doc)
    assert main(["scenes", "convert", str(path), "--from", "3dfront", "--to", "thor", "--out",
                 str(tmp_path / "o.json")]) == 2
    assert f"error: {path}: no 3dfront scene in the file" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["respace", "scenerevis-flat", "thor"])
def test_a_house_read_as_a_room_format_says_what_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       fmt: str) -> None:
    path = _write(tmp_path, _house())
    assert main(["scenes", "convert", str(path), "--from", fmt, "--to", "idesign", "--out",
                 str(tmp_path / "o.json")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error:") and "(the file is a 3D-FRONT house: --from 3dfront)" in line


def test_a_house_where_one_scene_is_loaded_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(SceneFormatError, match=r"not one scene: a 3D-FRONT house \(2 rooms\); write a room as one "
                                               r"with `buildbench scenes convert --from 3dfront`"):
        load_scene(_write(tmp_path, _house()))


def test_batch_readers_take_each_floored_room_of_a_house(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``scenerevis metrics`` (and every reader of ``revis_records``) splits a 3D-FRONT house
    into its rooms, as it does a THOR house."""
    (record,) = revis_records(_house())
    assert [o["jid"] for o in record["objects"]] == ["bed-jid", "wardrobe-jid"]
    path = _write(tmp_path, _house())
    assert main(["scenerevis", "metrics", "--json", "--no-voxels", "--no-navigation", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_scenes"] == 1 and report["scenes"][0]["n_objects"] == 2


def test_a_floor_with_a_hole_is_read_filled_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A floor laid around a 1 x 1 shaft (four meshes) is our simple polygon, the hole a warning."""
    doc = _house()
    doc["mesh"][:2] = [_quad("1/floor", "Floor", 0, 0, 3, 1, 0.0), _quad("2/floor", "Floor", 0, 2, 3, 3, 0.0)]
    doc["mesh"] += [_quad("6/floor", "Floor", 0, 1, 1, 2, 0.0), _quad("7/floor", "Floor", 2, 1, 3, 2, 0.0)]
    doc["scene"]["room"][0]["children"][:2] = [_child("1/floor", "mesh/1", [0, 0, 0]),
                                              _child("2/floor", "mesh/2", [0, 0, 0]),
                                              _child("6/floor", "mesh/6", [0, 0, 0]),
                                              _child("7/floor", "mesh/7", [0, 0, 0])]
    doc["scene"]["room"][0]["children"] = [c for c in doc["scene"]["room"][0]["children"]
                                           if not c["ref"].endswith("model")]
    (item,) = read_items(_write(tmp_path, doc), "3dfront")
    assert item.scene.rooms[0].area_m2 == pytest.approx(9.0)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("the floor has 1 hole(s) (1.00 m²), read as floor" in m for m in messages), messages
