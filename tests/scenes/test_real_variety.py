"""Scene files from other projects, in their variety (fixtures/real/MANIFEST.md): every reader
path on real files, and on the format variants other generators and schema versions write,
derived here from a real house by the documented rewrite (values unchanged otherwise).

Each variant must read to the same geometry as the house it was derived from and write
back unchanged; malformed files must fail with one line naming the element and field."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from buildbench.cli.main import main
from buildbench.scenes import collision, relations
from buildbench.scenes.io import load_scene, revis_records, save_scene, scene_lines, write_revis, write_thor
from buildbench.scenes.model import EXTERIOR, Scene, SceneFormatError
from buildbench.scenes.reachability import reachable
from buildbench.suites.scenerevis.check.cli import metrics
from buildbench.suites.scenerevis.generate.flat import check_scene, read_scenes
from buildbench.suites.scenerevis.metrics import scene_metrics

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL = sorted((FIXTURES / "real").glob("*.json"))
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "scenerevis"
BASE = FIXTURES / "procthor_zg_klbr_house_0.json"  # 3 rooms, doors, windows, nested children


@pytest.fixture(autouse=True)
def _quiet_size_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="buildbench.scenes.thor")


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _tools_run(scene: Scene) -> None:
    for hit in collision.collisions(scene):
        assert hit.depth_m > 0
    for miss in collision.out_of_bounds(scene):
        assert 0.0 <= miss.outside_fraction <= 1.0
    collision.blocked_openings(scene, windows=True)
    for room in scene.rooms:
        assert reachable(scene, room.id).room_id == room.id
    if len(scene.objects) >= 3:
        a, b, c = (o.id for o in scene.objects[:3])
        for name, ids in (("near", (a, b)), ("facing", (a, b)), ("on_top_of", (a, b)), ("between", (a, b, c)),
                          ("against_wall", (a,)), ("in_corner", (a,))):
            assert relations.RELATIONS[name](scene, *ids).explanation


def _revis_rooms_score(scene: Scene) -> None:
    """Each room, as SceneReVis JSON, passes the suite's own reader and physics metrics."""
    for room in scene.rooms:
        flat = write_revis(scene, room_id=room.id)
        checked = check_scene(flat, room.id)
        assert len(checked["objects"]) == len([o for o in scene.objects if o.room_id in (room.id, "")])
        assert scene_metrics(flat, voxels=False)["n_objects"] == len(checked["objects"])


# --- real files ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_real_house_round_trips_and_every_reader_path_runs(path: Path, tmp_path: Path) -> None:
    house = _json(path)
    scene = load_scene(path)
    assert write_thor(scene) == house
    save_scene(scene, tmp_path / "out.json")
    assert _json(tmp_path / "out.json") == house
    _tools_run(scene)
    _revis_rooms_score(scene)


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_legoeval_evaluate_reads_the_real_house(path: Path, tmp_path: Path) -> None:
    scene = load_scene(path)
    rooms = {r.id: r for r in scene.rooms}
    lines = [f"There is a {o.category} in the {rooms[o.room_id].room_type}."
             for o in scene.objects if o.parent_id is None and o.room_id in rooms][:3]
    constraints = tmp_path / "c.txt"
    constraints.write_text("\n".join(lines) + "\n" if lines else "", encoding="utf-8")
    code, out, err = _cli("legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints))
    if not lines:
        # A house with no object gives no constraint: checking nothing is refused, never a valid house
        # (issue 23), naming the file.
        assert code == 2 and err.startswith("error: --constraints") and "no constraints" in err, err
        return
    assert code == 0 and "house valid" in out, err
    constraints.write_text(f"There is a grand piano in the {scene.rooms[0].room_type}.\n", encoding="utf-8")
    code, out, _ = _cli("legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints))
    assert code == 1 and "FAIL" in out


def test_partial_house_stages_keep_null_lists_and_grow() -> None:
    """ProcTHOR's generator saves its house after each stage: no doors yet (null), then
    exterior walls, then objects with nested small objects."""
    stages = [load_scene(FIXTURES / "real" / name) for name in (
        "procthor_zg_partial_0_structure.json", "procthor_zg_partial_4_exterior_walls.json",
        "procthor_zg_partial_8_small_objs.json")]
    assert [len(s.walls) for s in stages] == [6, 12, 12]
    assert [len(s.doors) for s in stages] == [0, 1, 1] and stages[0].raw["doors"] is None
    assert sum(w.exterior for w in stages[1].walls) == 6
    assert any(o.parent_id for o in stages[2].objects)


@pytest.mark.parametrize("name", ["procthor_zg_partial_8_small_objs.json", "holodeck_a_depressed_dining_room.json"])
def test_scenerevis_reads_a_thor_house_one_room_per_scene(name: str, tmp_path: Path) -> None:
    path = FIXTURES / "real" / name
    scenes = list(read_scenes(path))
    assert len(scenes) == len(load_scene(path).rooms) and scenes[0]["objects"]
    code, out, err = _cli("scenerevis", "goals", str(path), "--out", str(tmp_path / "goals.jsonl"))
    assert code == 0 and "tasks" in out, err


# --- SceneReVis / 3D-FRONT rooms from the shared data -------------------------------------
def _shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared SceneReVis data not found at {path}")
    return path


def test_pretty_printed_scene_files_read_whole(tmp_path: Path) -> None:
    """The SceneReVis example scenes are indented JSON, not JSONL."""
    folder = _shared("example_scenes")
    for path in sorted(folder.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert scene_lines(text) == [(1, text)]
        assert len(list(read_scenes(path))) == 1
        data = _json(path)
        assert write_revis(load_scene(path)) == data
    result = CliRunner().invoke(metrics, [str(path), "--json", "--no-voxels"])
    assert result.exit_code == 0 and len(json.loads(result.stdout)["scenes"]) == 1


def test_respace_rooms_round_trip_flat_and_grouped() -> None:
    lines = _shared("respace_scenes", "dataset_bedroom_test.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines[::50]:
        room = json.loads(line)["scene"]
        scene = load_scene(copy.deepcopy(room))
        assert write_revis(scene) == room
        grouped = write_revis(scene, grouped=True)
        again = load_scene(grouped)
        assert [c for o in again.objects for c in o.center] == pytest.approx([c for o in scene.objects for c in o.center])
        _tools_run(scene)


# --- THOR format variants, derived from a real house ---------------------------------------
def _schema_0_0_1(h: dict[str, Any]) -> None:
    """Before ProcTHOR's 1.0.0 upgrade: materials as names with separate colours, hole
    corners in ``boundingBox`` with an ``assetOffset``, no ``metadata.schema``."""
    h["metadata"] = {}
    for room in h["rooms"]:
        room["floorMaterial"] = room["floorMaterial"]["name"]
    for wall in h["walls"]:
        material = wall["material"]
        wall["material"] = material["name"]
        if "color" in material:
            wall["color"] = material["color"]
    for hole in h["doors"] + h["windows"]:
        lo, hi = hole.pop("holePolygon")
        del hole["assetPosition"]
        hole["boundingBox"] = {"min": lo, "max": hi}
        hole["assetOffset"] = {"x": 0.0, "y": 0.0, "z": 0}


def _phone2proc(h: dict[str, Any]) -> None:
    """Phone2Proc's writer: exterior walls with ``roomId: null`` and a bare material name,
    an interior split wall left with ``roomId: null``, the outside of a door as a null
    room, openings with ``scale``, objects flat, kinematic, without ``roomId``."""
    for wall in h["walls"]:
        if wall["id"].startswith("wall|exterior|"):
            wall["roomId"], wall["material"] = None, wall["material"]["name"]
    h["walls"][0]["roomId"] = None
    for hole in h["doors"] + h["windows"]:
        hole["scale"] = {"x": 1.0, "y": 1.0, "z": 1}
    _outside_first(next(d for d in h["doors"] if d["wall1"].startswith("wall|exterior|")), h["walls"])
    flat = []
    for obj in h["objects"]:
        for item in [obj, *(obj.pop("children", None) or [])]:
            item.pop("roomId", None)
            item.pop("layer", None)
            item["kinematic"] = True
            flat.append(item)
    h["objects"] = flat


def _outside_first(door: dict[str, Any], walls: list[dict[str, Any]]) -> None:
    """The door seen from the outside, as Phone2Proc writes a door whose front wall is an
    exterior one: ``room0`` null, ``wall0`` the exterior twin, and the hole measured from
    that wall's first point (mirrored along the wall)."""
    polygon = next(w["polygon"] for w in walls if w["id"] == door["wall0"])
    xs, zs = {p["x"] for p in polygon}, {p["z"] for p in polygon}
    width = (max(xs) - min(xs)) + (max(zs) - min(zs))  # the walls are axis-aligned
    lo, hi = door["holePolygon"]
    door["holePolygon"] = [{**lo, "x": width - hi["x"]}, {**hi, "x": width - lo["x"]}]
    door["assetPosition"] = {**door["assetPosition"], "x": width - door["assetPosition"]["x"]}
    door["room0"], door["room1"] = None, door["room0"]
    door["wall0"], door["wall1"] = door["wall1"], door["wall0"]


def _integer_ids(h: dict[str, Any]) -> None:
    number = {room["id"]: k for k, room in enumerate(h["rooms"])}
    for room in h["rooms"]:
        room["id"] = number[room["id"]]
    for record in h["walls"] + h["objects"]:
        if record.get("roomId") in number:
            record["roomId"] = number[record["roomId"]]
    for hole in h["doors"] + h["windows"]:
        hole["room0"], hole["room1"] = number[hole["room0"]], number[hole["room1"]]


def _upper_storey(h: dict[str, Any]) -> None:
    """The whole house 3 m up (floor polygons with y = 3)."""
    def lift(point: dict[str, float]) -> None:
        point["y"] = point.get("y", 0) + 3.0

    def lift_object(obj: dict[str, Any]) -> None:
        lift(obj["position"])
        for child in obj.get("children") or []:
            lift_object(child)

    for room in h["rooms"]:
        for point in room["floorPolygon"]:
            lift(point)
    for wall in h["walls"]:
        for point in wall["polygon"]:
            lift(point)
    for obj in h["objects"]:
        lift_object(obj)


def _loose_fields(h: dict[str, Any]) -> None:
    """``children: null``, an object without ``rotation``, an ``empty`` (invisible) wall, a
    window without its outside (``wall1``/``room1`` null, optional in ProcTHOR's types)."""
    for obj in h["objects"]:
        if not obj.get("children"):
            obj["children"] = None
    h["objects"][0].pop("rotation", None)
    h["walls"][0]["empty"] = True
    h["windows"][0].update(wall1=None, room1=None)


VARIANTS: dict[str, Callable[[dict[str, Any]], None]] = {
    "schema-0.0.1": _schema_0_0_1, "phone2proc": _phone2proc, "integer-ids": _integer_ids,
    "upper-storey": _upper_storey, "loose-fields": _loose_fields,
}


def _variant(name: str) -> dict[str, Any]:
    house = _json(BASE)
    VARIANTS[name](house)
    return house


@pytest.mark.parametrize("name", list(VARIANTS))
def test_thor_variant_reads_the_same_house_and_writes_back_unchanged(name: str, tmp_path: Path) -> None:
    base = load_scene(BASE)
    house = _variant(name)
    scene = load_scene(copy.deepcopy(house))
    assert write_thor(scene) == house
    dy = 3.0 if name == "upper-storey" else 0.0
    assert sorted(r.area_m2 for r in scene.rooms) == pytest.approx(sorted(r.area_m2 for r in base.rooms))
    assert len(scene.walls) == len(base.walls) and all(w.room_id != EXTERIOR for w in scene.walls)
    centres = {o.id: base.opening_center(o) for o in base.openings()}
    for opening in scene.openings():
        x, y, z = scene.opening_center(opening)
        assert (x, y - dy, z) == pytest.approx(centres[opening.id], abs=1e-6), opening.id
    rooms = {r.id: str(k) for k, r in enumerate(base.rooms)} if name == "integer-ids" else None
    for obj, was in zip(scene.objects, base.objects, strict=True):
        assert obj.center[1] - dy == pytest.approx(was.center[1]) and obj.size == was.size
        assert obj.room_id == (rooms[was.room_id] if rooms else was.room_id), obj.id
    _tools_run(scene)
    _revis_rooms_score(scene)
    path = tmp_path / "house.json"
    path.write_text(json.dumps(house), encoding="utf-8")
    code, out, err = _cli("legoeval", "evaluate", "--scene", str(path), "--constraints", str(_lines(tmp_path, scene)))
    assert code == 0 and "house valid" in out, err


def _lines(tmp_path: Path, scene: Scene) -> Path:
    rooms = {r.id: r.room_type for r in scene.rooms}
    path = tmp_path / "c.txt"
    path.write_text("".join(f"There is a {o.category} in the {rooms[o.room_id]}.\n"
                            for o in scene.objects[:3] if o.room_id in rooms), encoding="utf-8")
    return path


def test_phone2proc_nulls_mean_the_outside_and_the_room_underneath() -> None:
    house = _variant("phone2proc")
    scene = load_scene(copy.deepcopy(house))
    door = next(d for d in scene.doors if d.raw.get("room0") is None)
    assert door.room0 == EXTERIOR and door.room1 != EXTERIOR
    assert scene.walls[0].room_id == load_scene(BASE).walls[0].room_id
    moved = copy.deepcopy(scene)
    moved.walls[0].room_id = moved.rooms[-1].id
    assert write_thor(moved)["walls"][0]["roomId"] == moved.rooms[-1].id  # a real change is written


def test_material_names_as_bare_strings_read_like_records() -> None:
    """``floorMaterial``/``wallMaterial``/wall ``material`` as ``{"name", "color"}`` records
    (Holodeck) or as bare names (ProcTHOR 0.0.1, hand-written houses) name the same material."""
    house = _json(FIXTURES / "real" / "holodeck_a_depressed_dining_room.json")
    plain = copy.deepcopy(house)
    for room in plain["rooms"]:
        room["floorMaterial"], room["wallMaterial"] = room["floorMaterial"]["name"], room["wallMaterial"]["name"]
    for wall in plain["walls"]:
        wall["material"] = wall["material"]["name"]
    scene, named = load_scene(house), load_scene(copy.deepcopy(plain))
    assert write_thor(named) == plain
    assert [(r.floor_material, r.wall_material) for r in named.rooms] == [
        (r.floor_material, r.wall_material) for r in scene.rooms]
    assert [w.material for w in named.walls] == [w.material for w in scene.walls] and named.walls[0].material
    named.rooms[0].floor_material = "WhiteMarble"
    named.walls[0].material = "BrownDrywall"
    out = write_thor(named)
    assert out["rooms"][0]["floorMaterial"] == "WhiteMarble" and out["walls"][0]["material"] == "BrownDrywall"
    scene.rooms[0].floor_material = "WhiteMarble"
    assert write_thor(scene)["rooms"][0]["floorMaterial"] == {**house["rooms"][0]["floorMaterial"], "name": "WhiteMarble"}


def test_a_file_of_several_houses(tmp_path: Path) -> None:
    """ProcTHOR writes batches of houses as one JSON list: SceneReVis takes every room of
    every house; a single-scene reader names the list instead of misreading it."""
    path = tmp_path / "houses.json"
    houses = [_json(BASE), _json(FIXTURES / "real" / "procthor_zg_partial_8_small_objs.json")]
    path.write_text(json.dumps(houses), encoding="utf-8")
    rooms = list(read_scenes(path))
    assert [r["room_id"] for r in rooms] == [r.id for h in houses for r in load_scene(h).rooms]
    with pytest.raises(SceneFormatError, match=r"not a scene: expected a JSON object, got a list of 2 \(several"):
        load_scene(path)
    constraints = tmp_path / "c.txt"
    constraints.write_text("There is a bed in the bedroom.\n", encoding="utf-8")
    code, _, err = _cli("legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints))
    assert code == 2 and "got a list of 2" in err and err.count("\n") == 1


def test_changed_integer_id_is_written_as_text() -> None:
    scene = load_scene(_variant("integer-ids"))
    assert [r.id for r in scene.rooms] == ["0", "1", "2"]
    scene.rooms[0].id = "kitchen"
    out = write_thor(scene)
    assert out["rooms"][0]["id"] == "kitchen" and out["rooms"][1]["id"] == 1


# --- SceneReVis variants ------------------------------------------------------------------
def _rooms() -> list[dict[str, Any]]:
    lines = _shared("respace_scenes", "dataset_bedroom_test.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["scene"] for line in lines]


def _revis_variants() -> dict[str, dict[str, Any]]:
    room = next(r for r in _rooms() if len(r["objects"]) >= 6)
    objects = room["objects"]
    bounds = {"bounds_top": room["bounds_top"], "bounds_bottom": room["bounds_bottom"]}
    grouped = {"room_type": "bedroom", "room_id": "Bedroom-1", "room_envelope": bounds, "groups": [
        {"group_name": "Sleeping Area", "group_type": "sleeping", "description": "bed",
         "objects": [dict(o, type="major", sampled_asset_jid=o["jid"]) for o in objects[:3]]},
        {"group_name": "Storage", "group_type": "storage", "description": "",
         "objects": [dict(o, type="minor") for o in objects[3:]]},
        {"group_name": "Empty", "group_type": "misc", "description": "", "objects": []}]}
    numbered = copy.deepcopy(room)
    for k, obj in enumerate(numbered["objects"]):
        obj["id"] = k + 1
        if k % 2:
            obj["uid"] = obj.pop("jid")
    del numbered["objects"][0]["rot"]
    return {"grouped-adapter": grouped, "integer-ids-uid-no-rot": numbered, "yaw-and-sampled-asset": _yaw_form(room)}


def _yaw_form(room: dict[str, Any]) -> dict[str, Any]:
    """The room as SceneReVis's own reader also takes it: ``rot`` as a yaw in radians (null
    for none), and one object known only by its retrieved asset (``sampled_asset_*``)."""
    out = copy.deepcopy(room)
    for obj in out["objects"]:
        x, y, z, w = obj["rot"]
        assert abs(x) < 1e-9 and abs(z) < 1e-9  # the 3D-FRONT rooms turn about +y only
        obj["rot"] = 2.0 * math.atan2(y, w) if abs(y) > 1e-12 else None
    last = out["objects"][-1]
    for key in ("desc", "size", "jid"):
        last[f"sampled_asset_{key}"] = last.pop(key)
    return out


@pytest.mark.parametrize("name", ["grouped-adapter", "integer-ids-uid-no-rot", "yaw-and-sampled-asset"])
def test_revis_variant_round_trips_with_its_ids(name: str) -> None:
    data = _revis_variants()[name]
    scene = load_scene(copy.deepcopy(data))
    assert write_revis(scene, grouped="groups" in data) == data
    if name == "yaw-and-sampled-asset":
        plain = load_scene(next(r for r in _rooms() if len(r["objects"]) >= 6))
        assert [v for o in scene.objects for v in (*o.center, *o.size, *o.front_xz)] == pytest.approx(
            [v for o in plain.objects for v in (*o.center, *o.size, *o.front_xz)], abs=1e-6)
        assert [o.attributes["description"] for o in scene.objects] == [
            o.attributes["description"] for o in plain.objects]
        assert check_scene(data, "yaw")["objects"][-1]["jid"] == plain.objects[-1].asset_id
        assert scene_metrics(data, voxels=False)["pairs"] == scene_metrics(write_revis(plain), voxels=False)["pairs"]
    elif name == "integer-ids-uid-no-rot":
        assert [o.id for o in scene.objects] == [str(k + 1) for k in range(len(scene.objects))]
        assert all(o.asset_id for o in scene.objects)
    else:
        groups = [g["group_name"] for g in data["groups"] for _ in g["objects"]]
        assert [o.attributes["group"] for o in scene.objects] == groups and "Storage" in groups
    assert revis_records(write_revis(scene)) == [write_revis(scene)]
    _tools_run(scene)


# --- malformed files: one line naming what and where --------------------------------------
@pytest.mark.parametrize(("break_it", "message"), [
    (lambda h: h["doors"][0].pop("holePolygon"), r"doors\[0\]\.holePolygon: expected 2 points"),
    (lambda h: h["doors"][0].update(room0=None, room1=None), r"doors\[0\]\.room0: expected a room id"),
    (lambda h: h["walls"][0].update(roomId=None, polygon=[{"x": 50, "y": 0, "z": 50}, {"x": 51, "y": 0, "z": 50},
                                                          {"x": 51, "y": 3, "z": 50}, {"x": 50, "y": 3, "z": 50}]),
     r"walls\[0\]\.roomId: missing, and the wall from .* lies on no room's outline"),
    (lambda h: h["rooms"][0].update(id=True), r"rooms\[0\]\.id: expected a non-empty string"),
])
def test_malformed_house_fails_with_one_line(break_it: Callable[[dict[str, Any]], Any], message: str,
                                             tmp_path: Path) -> None:
    house = _json(BASE)
    break_it(house)
    with pytest.raises(SceneFormatError, match=message) as info:
        load_scene(house)
    assert "\n" not in str(info.value)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(house), encoding="utf-8")
    constraints = tmp_path / "c.txt"
    constraints.write_text("There is a bed in the bedroom.\n", encoding="utf-8")
    code, _, err = _cli("legoeval", "evaluate", "--scene", str(path), "--constraints", str(constraints))
    assert code == 2 and err.count("\n") == 1 and err.startswith("error:")


def test_a_scene_of_another_format_is_named_not_misread() -> None:
    """EchoScene's export (``room_bounds``, ``objects`` with bbox lists) is neither THOR nor SceneReVis."""
    other = {"schema_version": "0.1", "generator": {"name": "EchoScene"}, "room_bounds": {}, "objects": []}
    with pytest.raises(SceneFormatError, match=r"not a scene: .*top-level keys: generator, objects, room_bounds"):
        load_scene(other)
