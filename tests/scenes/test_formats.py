"""Scene format converters (buildbench.scenes.formats) on real files of other projects
(tests/scenes/fixtures/external/MANIFEST.md) and on records written as their code documents."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.scenes.formats import FORMATS, Item, ReadOptions, get_format, read_items
from buildbench.scenes.model import Scene, SceneFormatError

FIX = Path(__file__).parent / "fixtures"
EXT = FIX / "external"
LAYOUTGPT = EXT / "layoutgpt" / "gpt4.bedroom.first3.json"
SCENEEVAL = sorted((EXT / "sceneeval").glob("*.json"))
HOLODECK = sorted(FIX.glob("holodeck_*.json"))
RESPACE = Path(__file__).parents[2] / ".." / "shared" / "data" / "scenerevis" / "respace_scenes" / \
    "dataset_bedroom_test.jsonl"
WRITABLE = [name for name, f in FORMATS.items() if f.write is not None]


def boxes(scene: Scene, relative: bool) -> list[tuple[float, ...]]:
    """Each object's centre (from the floor's min corner when ``relative``), size and heading."""
    (x0, z0), _ = scene.bounds_xz() if relative else ((0.0, 0.0), None)
    out = []
    for o in scene.objects:
        fx, fz = o.front_xz
        out.append((o.center[0] - x0, o.center[1], o.center[2] - z0, *o.size, fx, fz))
    return out


def assert_same_boxes(a: Scene, b: Scene, tol: float = 1e-6, *, relative: bool = False) -> None:
    assert len(a.objects) == len(b.objects)
    for x, y in zip(boxes(a, relative), boxes(b, relative), strict=True):
        assert x == pytest.approx(y, abs=tol)


def through(items: list[Item], fmt: str, options: ReadOptions | None = None) -> list[Item]:
    spec = get_format(fmt)
    assert spec.write is not None
    data = spec.write(items)
    return spec.read(data if isinstance(data, list) else [data], options or ReadOptions())


def test_every_format_in_the_table_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenes", "convert", "--help"]) == 0
    out = capsys.readouterr().out
    for name in ("thor", "holodeck", "scenerevis-flat", "respace", "sceneeval", "layoutgpt", "idesign", "layoutvlm"):
        assert name in FORMATS and f"{name}:" in out


def test_layoutgpt_real_output_reads_as_the_paper_draws_it() -> None:
    items = read_items(LAYOUTGPT, "layoutgpt")
    assert len(items) == 3 and items[0].room == "bedroom"
    assert items[0].name == "52e1f54c-3d9b-4d69-bebc-decfdc950f7c_Bedroom-803"
    room = items[0].scene.rooms[0]
    assert room.area_m2 == pytest.approx(2.70 * 2.52)
    bed = items[0].scene.objects[0]
    # double_bed: length 170, height 57, width 130 px; centre left 129, top 111, depth 28 px
    assert bed.category == "bed" and bed.size == pytest.approx((1.70, 0.57, 1.30))
    assert bed.center == pytest.approx((1.29, 0.28, 1.11))
    wardrobe = items[0].scene.objects[1]  # orientation -90 degrees
    assert wardrobe.front_xz == pytest.approx((-1.0, 0.0), abs=1e-9)
    # the pixel scale is an option: 2 cm a pixel doubles every length
    double = read_items(LAYOUTGPT, "layoutgpt", ReadOptions(metres_per_px=0.02))
    assert double[0].scene.objects[0].size == pytest.approx((3.40, 1.14, 2.60))


@pytest.mark.parametrize("fmt", WRITABLE)
def test_layoutgpt_round_trips_through_every_writable_format(fmt: str) -> None:
    items = read_items(LAYOUTGPT, "layoutgpt")
    back = through(items, fmt)
    assert len(back) == len(items)
    for a, b in zip(items, back, strict=True):
        if fmt in ("thor", "holodeck", "procthor"):
            # THOR keeps asset ids, not boxes: sizes come back from the catalogue (a documented loss)
            for oa, ob in zip(a.scene.objects, b.scene.objects, strict=True):
                assert (*oa.center, *oa.front_xz) == pytest.approx((*ob.center, *ob.front_xz), abs=1e-6)
        else:
            assert_same_boxes(a.scene, b.scene)
        assert b.scene.rooms[0].area_m2 == pytest.approx(a.scene.rooms[0].area_m2)


def test_layoutgpt_writes_back_its_own_file() -> None:
    original = json.loads(LAYOUTGPT.read_text())
    written = get_format("layoutgpt").write(read_items(LAYOUTGPT, "layoutgpt"))  # type: ignore[misc]
    for src, out in zip(original, written, strict=True):
        assert out["query_id"] == src["query_id"] and out["prompt"] == src["prompt"]
        for (_, box_a), (_, box_b) in zip(src["object_list"], out["object_list"], strict=True):
            turn_a, turn_b = box_a.pop("orientation"), box_b.pop("orientation")
            assert box_b == pytest.approx(box_a, abs=1e-6)
            assert (turn_a - turn_b) % 360.0 == pytest.approx(0.0, abs=1e-6)  # -180 and 180 are one heading


@pytest.mark.parametrize("path", SCENEEVAL, ids=lambda p: p.name)
def test_sceneeval_real_examples(path: Path) -> None:
    doc = json.loads(path.read_text())
    with pytest.raises(SceneFormatError, match=r"scene.object\[0\]: size of asset .* unknown"):
        read_items(path, "sceneeval")
    sizes = {o["modelId"]: (0.8, 1.0, 0.6) for o in doc["scene"]["object"]}
    scene = read_items(path, "sceneeval", ReadOptions(asset_sizes=sizes))[0].scene
    assert len(scene.objects) == len(doc["scene"]["object"]) and scene.rooms[0].area_m2 == pytest.approx(36.0)
    first = doc["scene"]["object"][0]["transform"]["translation"]
    # their (x, y, z) bottom centre, z up -> ours (x, z + half height, -y)
    assert scene.objects[0].center == pytest.approx((first[0], first[2] + 0.5, -first[1]), abs=1e-6)
    upright = [o for o in scene.objects if abs(o.rotation[1, 1] - 1.0) < 1e-3]
    assert len(upright) == len(scene.objects)  # every asset stands upright after the y-up -> z-up turn
    back = through([Item(scene)], "sceneeval")
    assert_same_boxes(scene, back[0].scene)
    assert [o.asset_id for o in back[0].scene.objects] == [o["modelId"] for o in doc["scene"]["object"]]


@pytest.mark.parametrize("path", HOLODECK, ids=lambda p: p.name)
def test_holodeck_real_outputs(path: Path) -> None:
    items = read_items(path, "holodeck")
    house = json.loads(path.read_text())
    assert items[0].instruction == house["query"]
    assert get_format("holodeck").write(items) == house  # lossless, open_walls included
    for fmt in ("sceneeval", "idesign", "respace", "layoutgpt"):
        back = through(items, fmt)
        if fmt in ("sceneeval",):
            assert_same_boxes(items[0].scene, back[0].scene)
            assert len(back[0].scene.rooms) == len(items[0].scene.rooms)
        else:
            assert sum(len(b.scene.objects) for b in back) == len(items[0].scene.objects)


@pytest.mark.skipif(not RESPACE.is_file(), reason="needs ../shared/data/scenerevis (3D-FRONT rooms as SSR records)")
def test_respace_records_round_trip(tmp_path: Path) -> None:
    lines = RESPACE.read_text().splitlines()[:3]
    src = tmp_path / "three.jsonl"
    src.write_text("\n".join(lines) + "\n")
    items = read_items(src, "respace")
    assert [i.room for i in items] == ["bedroom"] * 3
    written = get_format("respace").write(items)  # type: ignore[misc]
    assert written == [json.loads(line) for line in lines]  # unchanged records write back equal
    for fmt in ("sceneeval", "layoutgpt", "idesign", "scenerevis-grouped"):
        for a, b in zip(items, through(items, fmt), strict=True):
            # LayoutGPT places a room at its own origin (positions from its min corner)
            assert_same_boxes(a.scene, b.scene, 1e-5, relative=fmt == "layoutgpt")  # 5-decimal quaternions


IDESIGN_GRAPH = [
    {"new_object_id": "south_wall", "itemType": "wall"},
    {"new_object_id": "bed_1", "style": "modern", "material": "wood",
     "size_in_meters": {"length": 2.0, "width": 1.6, "height": 0.5},
     "position": {"x": 2.0, "y": 1.0, "z": 0.25}, "rotation": {"z_angle": 0.0}},
    {"new_object_id": "desk_1", "size_in_meters": {"length": 1.2, "width": 0.6, "height": 0.75},
     "position": {"x": 3.6, "y": 3.0, "z": 0.375}, "rotation": {"z_angle": 90.0}},
]


def test_idesign_scene_graph(tmp_path: Path) -> None:
    path = tmp_path / "scene_graph.json"
    path.write_text(json.dumps(IDESIGN_GRAPH))
    items = read_items(path, "idesign")
    scene = items[0].scene
    assert [o.id for o in scene.objects] == ["bed_1", "desk_1"]  # layout elements skipped
    assert scene.rooms[0].area_m2 == pytest.approx(16.0)  # I-Design's script room, 4 x 4 m
    bed, desk = scene.objects
    assert bed.category == "bed" and bed.size == (2.0, 0.5, 1.6) and bed.attributes["style"] == "modern"
    assert bed.center == pytest.approx((2.0, 0.25, -1.0))
    # the script turns each asset by z_angle + 180 degrees: at 0 the front faces their +y (our -z)
    assert bed.front_xz == pytest.approx((0.0, -1.0), abs=1e-9)
    assert desk.front_xz == pytest.approx((-1.0, 0.0), abs=1e-9)  # their +y turned 90 about +z: their -x
    back = through(items, "idesign")
    assert_same_boxes(scene, back[0].scene)


def test_layoutvlm_layout_with_its_task(tmp_path: Path) -> None:
    task = {"task_description": "a bedroom with a queen bed, 4m x 5m",
            "boundary": {"floor_vertices": [[0, 0, 0], [4, 0, 0], [4, 5, 0], [0, 5, 0]], "wall_height": 2.5},
            "assets": {"abc-0": {"category": "bed", "assetMetadata": {"boundingBox": {"x": 1.6, "y": 0.6, "z": 2.1}}},
                       "def-0": {"category": "nightstand"}}}
    layout = {"abc-0": {"position": [2.0, 1.5, 0.0], "rotation": [0, 0, 90.0]},
              "def-0": {"position": [0.5, 0.4, 0.0], "rotation": [0, 0, 0.0]}}
    path = tmp_path / "bedroom_0.json"
    path.write_text(json.dumps({"task": task, "layout": layout}))
    with pytest.raises(SceneFormatError, match=r"layout\['def-0'\]: size of asset 'def-0' unknown"):
        read_items(path, "layoutvlm")
    items = read_items(path, "layoutvlm", ReadOptions(asset_sizes={"def": (0.5, 0.5, 0.4)}))
    bed = items[0].scene.objects[0]
    assert items[0].instruction == task["task_description"]
    assert bed.asset_id == "abc" and bed.size == (1.6, 0.6, 2.1)
    assert bed.center == pytest.approx((2.0, 0.3, -1.5))
    assert items[0].scene.rooms[0].area_m2 == pytest.approx(20.0)
    assert get_format("layoutvlm").write is None


def test_convert_cli_and_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    assert main(["scenes", "convert", str(LAYOUTGPT), "--from", "layoutgpt", "--to", "sceneeval",
                 "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 3
    capsys.readouterr()
    # a box without its length: one error line naming the file and the element, no output left
    bad = json.loads(LAYOUTGPT.read_text())
    del bad[1]["object_list"][2][1]["length"]
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(bad, indent=4))
    target = tmp_path / "never.json"
    assert main(["scenes", "convert", str(src), "--from", "layoutgpt", "--to", "thor", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # the line is where the box missing its length starts: record 1's object_list[2]
    assert err == [f"error: {src}: line 108: [1].object_list[2].length: missing"]
    assert src.read_text().splitlines()[108].strip() == '"bookshelf",'

    assert not target.exists()
    # JSONL: the line is named
    lines = tmp_path / "rooms.jsonl"
    lines.write_text('{"scene": {"bounds_bottom": [[0,0,0],[1,0,0],[1,0,1]], "bounds_top": [[0,2,0],[1,2,0],[1,2,1]], "objects": []}}\n'
                     '{"room_type": "bedroom"}\n')
    assert main(["scenes", "convert", str(lines), "--from", "respace", "--to", "thor", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {lines}: line 2: scene") and not target.exists()
    broken = tmp_path / "broken.json"
    broken.write_text('[{"prompt": "x",\n "object_list": [}]')
    assert main(["scenes", "convert", str(broken), "--from", "layoutgpt", "--to", "thor", "--out", str(target)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {broken}: line 2: invalid JSON")
    assert main(["scenes", "convert", str(LAYOUTGPT), "--from", "layoutgpt", "--to", "layoutvlm",
                 "--out", str(target)]) == 2
    assert "read only" in capsys.readouterr().err
    # 1e308 m is finite (and would be infinite in LayoutGPT's pixels) but no room: refused on
    # reading, naming the file and the field, as `scenerevis metrics` refuses it
    flat = tmp_path / "flat.json"
    assert main(["scenes", "convert", str(LAYOUTGPT), "--from", "layoutgpt", "--to", "scenerevis-flat",
                 "--out", str(flat)]) == 0
    rooms = json.loads(flat.read_text())
    rooms[0]["objects"][0]["size"][0] = 1e308
    flat.write_text(json.dumps(rooms))
    capsys.readouterr()
    assert main(["scenes", "convert", str(flat), "--from", "scenerevis-flat", "--to", "layoutgpt",
                 "--out", str(target)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {flat}: line 1: [0].objects[0].size[0]: 1e+308 exceeds 10000 m"]  # the file's first room's key
    assert not target.exists() and not target.with_name(target.name + ".tmp").exists()
    # a missing folder for OUT names OUT, not a temporary file
    assert main(["scenes", "convert", str(LAYOUTGPT), "--from", "layoutgpt", "--to", "thor",
                 "--out", str(tmp_path / "no" / "out.json")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"error: {tmp_path / 'no' / 'out.json'}: cannot write (No such file or directory) (option --out)"
    assert math.isfinite(1.0)


def test_error_paths_become_lines() -> None:
    from buildbench.scenes.formats.where import line_of

    text = '{\n  "task": {"a": 1},\n  "layout": {\n    "x-0": {"position": [1, 2]},\n    "def-0": {\n      "rotation": []\n    }\n  }\n}'
    assert line_of(text, "[0].layout['def-0'].position: missing") == 5  # the record missing the key
    assert line_of(text, "[0].layout['x-0'].position: bad") == 4
    assert line_of(text, "no path here") is None
    assert line_of("[1, 2", "[1]: broken") in (1, None)


def test_a_tipped_over_object_converts_without_a_python_warning() -> None:
    import warnings

    from scipy.spatial.transform import Rotation

    from buildbench.scenes.thor_parse import euler_quat, quat_euler

    q = tuple(float(v) for v in Rotation.from_euler("YXZ", [30.0, 90.0, 0.0], degrees=True).as_quat())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SciPy's gimbal-lock warning reached the user's terminal
        back = euler_quat(quat_euler(q), "rotation")  # type: ignore[arg-type]
    assert abs(abs(sum(a * b for a, b in zip(q, back, strict=True))) - 1.0) < 1e-9


@pytest.mark.parametrize("fmt", ["layoutgpt", "idesign", "scenerevis-flat", "respace"])
def test_a_scene_without_a_floor_is_refused_naming_it(fmt: str, tmp_path: Path) -> None:
    from buildbench.scenes.formats import write_items

    items = [Item(Scene(rooms=[], objects=[]), name="empty house")]
    out = tmp_path / "out.json"
    with pytest.raises(SceneFormatError, match=f"^in.json: scene 1 'empty house': cannot be written as {fmt}: "):
        write_items(items, out, fmt, Path("in.json"))
    assert not out.exists()


@pytest.mark.parametrize("value", ["nan", "inf", "1e-320", "0"])
def test_a_pixel_size_that_is_not_a_length_is_refused(value: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.json"
    for command in (["convert", str(LAYOUTGPT), "--from", "layoutgpt", "--to", "thor", "--out", str(out)],
                    ["evaluate", str(tmp_path), "--format", "layoutgpt", "--run-dir", str(tmp_path / "run")]):
        capsys.readouterr()
        assert main(["scenes", *command, "--metres-per-px", value]) == 2  # NaN and inf crashed the reader
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and "--metres-per-px" in err[0], err
    assert not out.exists() and not (tmp_path / "run").exists()
