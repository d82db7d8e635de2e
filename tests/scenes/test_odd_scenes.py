"""Odd-but-possible SceneReVis rooms: what is kept, and what is one error line naming the object."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.scenes.formats import Item, ReadOptions, get_format, read_items, write_items
from buildbench.scenes.model import SceneFormatError
from buildbench.scenes.revis import read_revis, write_revis

ROOM: dict[str, Any] = {
    "room_type": "bedroom",
    "bounds_bottom": [[-1.5, 0.0, 2.0], [1.5, 0.0, 2.0], [1.5, 0.0, -2.0], [-1.5, 0.0, -2.0]],
    "bounds_top": [[-1.5, 2.6, 2.0], [1.5, 2.6, 2.0], [1.5, 2.6, -2.0], [-1.5, 2.6, -2.0]],
    "objects": [
        {"id": 3, "desc": "a double bed", "size": [1.6, 0.9, 2.1], "pos": [0.0, 0.0, 0.5], "rot": [0, 0, 0, 1]},
        {"id": "床 1", "desc": "a nightstand", "size": [0.5, 0.5, 0.4], "pos": [1.1, 0.0, 1.6], "rot": None},
        {"desc": "a wardrobe", "size": [1.2, 2.0, 0.6], "pos": [-0.8, 0.0, -1.6], "rot": 1.5707963},
    ],
}


def test_integer_text_and_missing_ids_read_and_write_back() -> None:
    scene = read_revis(copy.deepcopy(ROOM))
    assert [o.id for o in scene.objects] == ["3", "床 1", "wardrobe-0"]
    assert write_revis(scene) == ROOM


@pytest.mark.parametrize("ident", [True, 1.5, [1], {"n": 1}])
def test_id_of_another_type_is_one_error_line(ident: Any, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Before the fix such an id was read as none and replaced by a made-up one without a word."""
    room = copy.deepcopy(ROOM)
    room["objects"][1]["id"] = ident
    with pytest.raises(SceneFormatError, match=r"^objects\[1\]\.id: expected text or a whole number, got "):
        read_revis(room)
    path = tmp_path / "room.json"
    path.write_text(json.dumps(room), encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "scenerevis-flat", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}") and "objects[1].id" in err[0]
    assert not (tmp_path / "out.json").exists()


def test_null_id_is_no_id() -> None:
    room = copy.deepcopy(ROOM)
    room["objects"][1]["id"] = None
    assert [o.id for o in read_revis(room).objects] == ["3", "nightstand-0", "wardrobe-0"]


@pytest.mark.parametrize("break_it", ["duplicate id", "unknown wall"])
def test_bad_house_is_its_error_line_alone(break_it: str, tmp_path: Path, capsys: pytest.CaptureFixture,
                                           caplog: pytest.LogCaptureFixture) -> None:
    """The Holodeck house has objects of unknown asset size, which the reader warns about; before
    the fix that warning came out before the error line of a house that then failed."""
    house = json.loads((Path(__file__).parent / "fixtures" / "holodeck_a_living_room.json").read_text())
    if break_it == "duplicate id":
        house["objects"][1]["id"] = house["objects"][0]["id"]
    else:
        house["doors"][0]["wall0"] = "no-such-wall"
    path = tmp_path / "house.json"
    path.write_text(json.dumps(house), encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "holodeck", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}") and break_it in err[0], err
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def _written(fmt: str) -> Any:
    """ROOM written in ``fmt`` (a JSON document of that format)."""
    write = get_format(fmt).write
    assert write is not None
    return json.loads(json.dumps(write([Item(read_revis(copy.deepcopy(ROOM)))])))


def _layoutvlm() -> dict[str, Any]:
    box = {"assetMetadata": {"boundingBox": {"x": 1.6, "y": 0.9, "z": 2.1}}}
    return {"task": {"boundary": {"floor_vertices": [[0, 0, 0], [3, 0, 0], [3, 4, 0], [0, 4, 0]]},
                     "assets": {"bed-0": {"category": "bed", **box}}},
            "layout": {"bed-0": {"position": [1.5, 2.0, 0.0], "rotation": [0, 0, 90.0]}}}


def _set(path: tuple[Any, ...], value: Any) -> Any:
    def change(doc: Any) -> Any:
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value
    return change


@pytest.mark.parametrize(("fmt", "change", "message"), [
    # each of these raised a TypeError, ValueError or AttributeError (a traceback) before the fix
    ("scenerevis-flat", _set(("objects", 0, "rot"), [1e200, 0.0, 0.0, 1e200]),
     r"objects\[0\]\.rot: quaternion .* too large to normalise"),
    ("idesign", _set(("origin_xz",), 5), r"origin_xz: expected \[x, z\], got 5"),
    ("sceneeval", _set(("scene", "arch"), True), r"scene\.arch: expected an object"),
    ("sceneeval", _set(("scene", "arch", "regions"), 3), r"scene\.arch\.regions: expected a list"),
    ("sceneeval", _set(("scene", "up"), 1), r"scene\.up: only z-up"),
    ("sceneeval", _set(("scene", "object", 0, "transform", "data", 0), -1.0),
     r"scene\.object\[0\]\.transform\.data: a mirroring or flattening matrix"),
    ("layoutvlm", _set(("task", "assets"), "bed"), r"task\.assets: expected an object"),
    ("layoutvlm", _set(("task", "assets", "bed-0", "assetMetadata"), 1.0), r"task\.assets\['bed-0'\]: expected an object"),
    # read as if these were metres, or with a floor corner left out, before the fix
    ("sceneeval", _set(("scene", "unit"), 0.01), r"scene\.unit: only scene states in metres are read \(1\), got 0\.01"),
    ("sceneeval", _set(("scene", "arch", "scaleToMeters"), 0.0254), r"scene\.arch\.scaleToMeters: only scene states"),
    ("layoutvlm", _set(("task", "boundary", "floor_vertices", 2), None),
     r"floor_vertices\[2\]: expected \[x, y, z\], got None"),
])
def test_odd_document_is_an_error_naming_the_field(fmt: str, change: Any, message: str) -> None:
    doc = _layoutvlm() if fmt == "layoutvlm" else _written(fmt)
    reader = get_format(fmt).read
    assert reader(copy.deepcopy(doc), ReadOptions())  # the document as written reads
    change(doc)
    with pytest.raises(SceneFormatError, match=message):
        reader(doc, ReadOptions())


@pytest.mark.parametrize("fmt", ["scenerevis-flat", "holodeck", "sceneeval", "layoutvlm"])
def test_bow_tie_floor_is_an_error_naming_the_room(fmt: str) -> None:
    """A self-crossing floor outline was read, and the geometry checks then raised a ValueError
    (a traceback) when they measured against it; an L-shaped floor reads."""
    def cross(points: list[Any]) -> None:
        points[1], points[2] = points[2], points[1]

    if fmt == "holodeck":
        doc = json.loads((Path(__file__).parent / "fixtures" / "holodeck_a_living_room.json").read_text())
        cross(doc["rooms"][0]["floorPolygon"])
        del doc["rooms"][0]["vertices"]
        message = r"rooms\[0\] \('living room'\): floor polygon is self-intersecting"
    elif fmt == "layoutvlm":
        doc = _layoutvlm()
        cross(doc["task"]["boundary"]["floor_vertices"])
        message = r"floor_vertices: floor polygon is self-intersecting"
    else:
        doc = _written(fmt)
        if fmt == "sceneeval":
            cross(doc["scene"]["arch"]["elements"][0]["points"])
            message = r"elements\[0\]\.points: floor polygon is self-intersecting"
        else:
            cross(doc["bounds_bottom"])
            cross(doc["bounds_top"])
            message = r"^\[0\]\.bounds_bottom: floor polygon is self-intersecting"
    with pytest.raises(SceneFormatError, match=message):
        get_format(fmt).read(doc, ReadOptions())


def test_non_convex_floor_reads() -> None:
    room = copy.deepcopy(ROOM)
    corners = [(-1.5, 2.0), (1.5, 2.0), (1.5, -2.0), (0.0, -2.0), (0.0, 0.0), (-1.5, 0.0)]
    room["bounds_bottom"] = [[x, 0.0, z] for x, z in corners]
    room["bounds_top"] = [[x, 2.6, z] for x, z in corners]
    scene = read_revis(room)
    assert scene.rooms[0].area_m2 == pytest.approx(3.0 * 2.0 + 1.5 * 2.0)


@pytest.mark.parametrize("fmt", ["layoutgpt", "idesign", "sceneeval", "scenerevis-grouped", "respace", "thor"])
def test_flat_object_written_reads_back(fmt: str, tmp_path: Path) -> None:
    """A 0-thick object (sizes >= 0 are SceneReVis's rule): the box formats wrote it and then
    refused to read what they wrote ("has a side <= 0") before the fix."""
    room = copy.deepcopy(ROOM)
    room["objects"][1]["size"] = [0.5, 0.0, 0.4]
    src = tmp_path / "room.json"
    src.write_text(json.dumps(room), encoding="utf-8")
    items = read_items(src, "scenerevis-flat")
    out = tmp_path / "out.json"
    write_items(items, out, fmt)
    back = read_items(out, fmt, ReadOptions())[0].scene
    flat = [o for o in back.objects if min(o.size) == 0.0]
    assert len(flat) == 1  # THOR too: an object its catalogue does not know is written with its size
