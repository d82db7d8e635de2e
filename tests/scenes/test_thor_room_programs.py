"""One-room THOR houses as "room program" generators write them: an LLM emits a short program
(floor polygon in centimetre tokens, wall materials, ``obj_k`` and ``child_k`` lines, windows
naming a wall by its index) and a ``House`` class turns it into AI2-THOR JSON. Facts of that
layout (read, not copied, from such a generator's ``House`` class found on GitHub): walls with
integer ids ``0..n-1`` and exterior twins ``exterior_i`` sharing the same polygon (bottom,
bottom, top, top), walls as high as the program's maximum dimension (8 m), ``roomType: ""``,
a window whose ``wall0`` is the integer id and whose ``room0`` and ``room1`` are the same room,
objects with ``"material": null`` and ``"layer": ""``, and child ids numbered from
``child_0`` again under every parent, so two children can share an id.

The house below is our own, written in that layout. It must read, round-trip unchanged and
score; a repeated id must be one ``error:`` line naming the file's own path of both records
(``objects[2].children[0]``) and its line, not our flattened object index."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.thor import read_thor, write_thor

WHITE = {"r": 1, "g": 1, "b": 1, "a": 1}


def _room_program_house(children: bool = False) -> dict[str, Any]:
    """An L-shaped room (6 corners, centimetre tokens / 100) with six objects and a window."""
    corners = [(3.58, 3.58), (3.58, 8.94), (8.94, 8.94), (8.94, 0.0), (5.36, 0.0), (5.36, 3.58)]
    floor = [{"x": x, "y": 0.0, "z": z} for x, z in corners]
    walls: list[dict[str, Any]] = []
    for i, a in enumerate(floor):
        b = floor[(i + 1) % len(floor)]
        wall = {"id": i, "color": WHITE, "material": {"name": "PureWhite", "color": WHITE}, "roomId": "room_0",
                "polygon": [a, b, dict(a, y=8), dict(b, y=8)]}
        walls += [wall, dict(wall, roomId="exterior", id=f"exterior_{i}")]
    placed = [("TV_Stand_206_3", (8.61, 0.38, 0.63), 270), ("Cart_1", (6.36, 0.64, 6.66), 0),
              ("Dining_Table_221_1", (8.52, 0.39, 8.02), 270), ("RoboTHOR_sofa_vreta", (5.79, 0.36, 0.91), 90)]
    objects = [{"assetId": asset, "position": dict(zip("xyz", pos, strict=True)), "rotation": {"x": 0, "y": yaw, "z": 0},
                "id": f"obj_{k}", "kinematic": True, "layer": "", "material": None, "children": []}
               for k, (asset, pos, yaw) in enumerate(placed)]
    if children:  # the generator numbers children from child_0 under each parent
        objects[2]["children"].append({"assetId": "Apple_1", "position": {"x": 8.5, "y": 0.8, "z": 8.0},
                                       "rotation": {"x": 0, "y": 0, "z": 0}, "id": "child_0"})
        objects[0]["children"].append({"assetId": "Laptop_1", "position": {"x": 8.6, "y": 0.8, "z": 0.6},
                                       "rotation": {"x": 0, "y": 0, "z": 0}, "id": "child_0"})
    window = {"assetId": "Window_Hung_48x24", "assetPosition": {"x": 1.01, "y": 1.5, "z": 0.0},
              "holePolygon": [{"x": 0.4, "y": 1.17, "z": 0.0}, {"x": 1.62, "y": 1.83, "z": 0.0}],
              "id": "window_0", "room0": "room_0", "room1": "room_0", "wall0": 4, "wall1": "exterior_4"}
    return {"doors": [], "metadata": {"roomSpecId": "kitchen", "schema": "1.0.0", "warnings": {}},
            "objects": objects,
            "proceduralParameters": {"ceilingMaterial": {"name": "PureWhite"}, "lights": [], "skyboxId": "SkyAlbany"},
            "rooms": [{"ceilings": [], "children": [], "floorMaterial": {"name": "WoodFineDarkFloorsRedNRM1"},
                       "floorPolygon": floor, "id": "room_0", "roomType": ""}],
            "walls": walls, "windows": [window]}


def test_a_room_program_house_reads_and_round_trips() -> None:
    house = _room_program_house()
    scene = read_thor(house)
    assert [w.id for w in scene.walls[:2]] == ["0", "exterior_0"] and scene.walls[1].exterior
    assert scene.rooms[0].ceiling_y == 8.0
    window = scene.windows[0]
    assert (window.wall0, window.wall1, window.room0, window.room1) == ("4", "exterior_4", "room_0", "room_0")
    assert [o.id for o in scene.objects] == ["obj_0", "obj_1", "obj_2", "obj_3"]
    assert write_thor(scene) == house  # integer wall ids, null materials and '' layers come back as written


def test_children_sharing_an_id_are_named_at_their_own_paths() -> None:
    with pytest.raises(SceneFormatError) as err:
        read_thor(_room_program_house(children=True))
    # The flattened list is obj_0, child_0, obj_1, obj_2, child_0: index 4 is not a path of the file.
    assert str(err.value) == ("objects[2].children[0].id: duplicate id 'child_0' "
                              "(also at objects[0].children[0])")


def test_the_repeated_id_is_one_error_line_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "room.json"
    path.write_text(json.dumps(_room_program_house(children=True), indent=1))
    lines = path.read_text().splitlines()
    apple = next(n for n, text in enumerate(lines, 1) if '"Apple_1"' in text)
    repeat_line = next(n for n, text in enumerate(lines, 1) if n > apple and '"child_0"' in text)
    assert main(["scenes", "convert", str(path), "--from", "thor", "--to", "scenerevis-flat",
                 "--out", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}: line {repeat_line}: objects[2].children[0].id: duplicate id 'child_0' "
                   "(also at objects[0].children[0])"]
    assert not (tmp_path / "out.json").exists()


def test_a_room_program_house_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "room.json"
    path.write_text(json.dumps(_room_program_house()))
    constraints = tmp_path / "c.txt"
    constraints.write_text("There is a sofa in the living room.\n")
    # roomType "" is no living room: the sofa is there, the room is not (exit 1, a verdict)
    assert main(["legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints)]) == 1
    out = capsys.readouterr().out
    assert "FAIL c0" in out and "Traceback" not in out


def test_another_generators_assets_keep_their_size_through_thor(tmp_path: Path) -> None:
    """A SceneReVis room's 3D-FUTURE assets are unknown to THOR's catalogue: the written house
    carries each one's size, so reading it back measures the room's own furniture (before, a
    1.6 m wardrobe came back 1.2 m wide and a 0.9 m high bed 0.55 m: category defaults)."""
    from buildbench.scenes.revis import read_revis

    room = {"room_type": "bedroom", "bounds_top": [[-2, 2.6, -2], [2, 2.6, -2], [2, 2.6, 2], [-2, 2.6, 2]],
            "bounds_bottom": [[-2, 0, -2], [2, 0, -2], [2, 0, 2], [-2, 0, 2]],
            "objects": [{"desc": "A king-size bed", "size": [1.56, 0.9, 2.22], "pos": [0, 0, 0.5],
                         "rot": [0, 0, 0, 1], "jid": "3d-future-bed-jid"},
                        {"desc": "A tall wardrobe", "size": [1.6, 2.11, 0.5], "pos": [0, 0, -1.7],
                         "rot": [0, 0, 0, 1], "jid": "3d-future-wardrobe-jid"}]}
    scene = read_revis(room)
    house = write_thor(scene)
    assert [o["size"] for o in house["objects"]] == [[1.56, 0.9, 2.22], [1.6, 2.11, 0.5]]
    back = read_thor(json.loads(json.dumps(house)))
    assert [o.size for o in back.objects] == [o.size for o in scene.objects]
    assert {o.attributes["size_source"] for o in back.objects} == {"record"}


def test_a_thor_asset_is_written_without_a_size() -> None:
    scene = read_thor(_room_program_house())
    fresh = write_thor(replace(scene, objects=[replace(o, raw={}) for o in scene.objects]))
    assert not any("size" in o for o in fresh["objects"])  # THOR's own assets: the id says it
