"""``buildbench legoeval ...``: tool runs (text and images), the tool list, deterministic
evaluation, generation, and bad input as one ``error:`` line with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.scenes.build import HouseBuilder
from buildbench.scenes.io import write_thor


@pytest.fixture(scope="module")
def house_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = HouseBuilder()
    b.room("living room", (0, 0, 6, 4), room_type="living room")
    b.room("bedroom", (6, 0, 10, 4), room_type="bedroom", floor_material="DarkWoodFloors")
    b.door("living room", "bedroom", along=0.3)
    b.window("bedroom", "north")
    b.place("bed", "bedroom", center_xz=(8, 2))
    b.place("sofa", "living room", center_xz=(3, 1), color="red")
    path = tmp_path_factory.mktemp("house") / "house.json"
    path.write_text(json.dumps(write_thor(b.build())))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["legoeval", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_tool_prints_the_output_dict_as_json(capsys: pytest.CaptureFixture[str], house_file: Path) -> None:
    code, out, _ = run(capsys, "tool", "get_door_info", "--scene", str(house_file),
                       "--args", '{"door_ids": ["door|0|living room|bedroom", "door|9"]}', "--json")
    assert code == 0
    data = json.loads(out)
    assert data["door|0|living room|bedroom_rooms"] == ["living room", "bedroom"]
    assert "'door|9'" in data["door|9_error"]
    code, out, _ = run(capsys, "tool", "get_room_list", "--scene", str(house_file), "--json")
    assert json.loads(out) == {"room_list": ["living room", "bedroom"]}


def test_door_positions_true_or_as_the_original(capsys: pytest.CaptureFixture[str], house_file: Path) -> None:
    args = ["tool", "get_door_info", "--scene", str(house_file), "--args", '["door|0|living room|bedroom"]', "--json"]
    true = json.loads(run(capsys, *args)[1])["door|0|living room|bedroom_position"]
    compat = json.loads(run(capsys, *args, "--wall-midpoint")[1])["door|0|living room|bedroom_position"]
    assert true["x"] == compat["x"] == 6.0 and true["z"] != compat["z"] == 2.0


def test_images_are_written_as_png_files(capsys: pytest.CaptureFixture[str], house_file: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "tool", "get_multiview_rendered_object", "--scene", str(house_file),
                       "--args", '["bed-0 (bedroom)"]', "--out", str(tmp_path / "img"), "--px", "64", "--json")
    assert code == 0
    data = json.loads(out)
    keys = [k for k in data if k.endswith("*/*output__image")]
    assert len(keys) >= 4
    for k in keys:
        path = Path(data[k])
        assert path.parent == tmp_path / "img" and path.read_bytes().startswith(b"\x89PNG")
    assert len({data[k] for k in keys}) == len(keys)
    code, out, _ = run(capsys, "tool", "get_topdown_scene", "--scene", str(house_file), "--px", "64", "--json")
    assert "pass --out DIR" in json.loads(out)["scene*/*topdown_scene*/*output__image"]


def test_tools_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "tools", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 21
    rel = next(r for r in rows if r["name"] == "get_spatial_relation")
    assert rel["family"] == 5 and rel["group"] == "environment" and rel["menus"] == ["FL", "OS", "OP"]
    code, out, _ = run(capsys, "tools")
    assert "get_object_match([targets=[...]])  [multimodal" in out
    assert "get_wall_info(wall_ids=[...])  [textual, family 2" in out


@pytest.mark.parametrize("argv, message", [
    (["tool", "get_magic", "--scene", "{house}"], "unknown tool 'get_magic'"),
    (["tool", "get_room_info", "--scene", "{missing}"], "no such file"),
    (["tool", "get_room_info", "--scene", "{house}", "--args", "[bedroom"], "--args: not JSON"),
    (["tool", "get_room_info", "--scene", "{house}", "--args", '{"wall_ids": ["x"]}'], "unknown argument(s)"),
    (["tool", "get_room_info", "--scene", "{house}"], "argument 'room_ids' is required"),
    (["tool", "get_room_list", "--scene", "{bad}"], "--scene"),
    (["evaluate", "--scene", "{house}", "--constraints", "{missing}"], "no such file"),
    # checking nothing printed 'house not fully judged' and exited 0, which reads as a pass
    (["evaluate", "--scene", "{house}", "--constraints", "{comments}"], "no constraints (no line that is not blank"),
    (["evaluate", "--scene", "{house}", "--constraints", "{none}"], "no constraints (an empty list)"),
    (["tool", "get_room_info", "--scene", "{house}", "--args", '{"room_ids": [], "room_ids": ["x"]}'],
     "key 'room_ids' given twice"),
    # --scene and --constraints are text: a link loop or a link to nothing read as "no such file", "" as a folder
    (["evaluate", "--scene", "{loop}", "--constraints", "{comments}"], "--scene {loop}: a loop of symbolic links"),
    (["evaluate", "--scene", "{house}", "--constraints", "{dangling}"],
     "--constraints {dangling}: a symbolic link to {missing}, which does not exist"),
    (["tool", "get_room_list", "--scene", ""], "--scene : an empty path; give a file name"),
])
def test_bad_input_is_one_error_line_and_exit_2(capsys: pytest.CaptureFixture[str], house_file: Path,
                                                  tmp_path: Path, argv: list[str], message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"rooms": [{"id": "r"}], "walls": 3}')
    (tmp_path / "comments.txt").write_text("# only a comment\n\n   \n")
    (tmp_path / "none.json").write_text('{"instruction": "x", "constraints": []}')
    paths = {"house": str(house_file), "missing": str(tmp_path / "nope.json"), "bad": str(bad),
             "comments": str(tmp_path / "comments.txt"), "none": str(tmp_path / "none.json"),
             "loop": str(tmp_path / "loop"), "dangling": str(tmp_path / "dangling")}
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nope.json")
    code, out, err = run(capsys, *[paths.get(a.strip("{}"), a) for a in argv])
    for name, path in paths.items():
        message = message.replace("{" + name + "}", path)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


def test_evaluate_exits_0_when_valid_and_1_when_a_constraint_fails(capsys: pytest.CaptureFixture[str],
                                                                    house_file: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_text("# one per line\nThere is a bed in the bedroom.\nThe floor of the bedroom is wood.\n")
    code, out, _ = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(good))
    assert code == 0 and out.count("PASS") == 2 and "house valid" in out
    failing = tmp_path / "bad.json"
    failing.write_text(json.dumps({"instruction": "x", "constraints": [
        "There is a bed in the bedroom.",
        {"id": "sofa", "program": {"op": "attribute", "of": {"category": "sofa"}, "attrs": {"color": "gray"}}}]}))
    code, out, _ = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(failing), "--json")
    data = json.loads(out)
    assert code == 1 and data["valid"] is False
    assert [v["holds"] for v in data["verdicts"]] == [True, False] and "sofa-0 (living room)" in out
    unreadable = tmp_path / "odd.txt"
    unreadable.write_text("The house feels cosy.\n")
    code, _, err = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(unreadable))
    assert code == 2 and "constraint c0 could not be checked" in err


def test_evaluate_measures_at_the_geometry_level(capsys: pytest.CaptureFixture[str], house_file: Path,
                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    near = tmp_path / "near.json"
    near.write_text(json.dumps([{"id": "c0", "program": {"op": "relation", "rel": "far", "a": {"category": "bed"},
                                                          "b": {"category": "sofa"}}}]))
    code, out, _ = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(near), "--json",
                       "--geometry", "procedural")
    data = json.loads(out)
    assert code == 0 and data["geometry"] == "procedural" and data["verdicts"][0]["holds"] is True
    code, out, _ = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(near))
    assert code == 0 and "objects measured as box shapes" in out
    monkeypatch.delenv("BUILDBENCH_3DFUTURE_DIR", raising=False)
    monkeypatch.delenv("BUILDBENCH_OBJAVERSE_DIR", raising=False)
    code, _, err = run(capsys, "evaluate", "--scene", str(house_file), "--constraints", str(near), "--geometry", "mesh")
    assert code == 2 and err.startswith("error:") and "geometry=mesh needs an asset folder" in err


def test_generate_writes_the_lego_bench_layout(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "generate", "--pairs", "1", "--out", str(tmp_path / "bench"))
    assert code == 0 and "wrote" in out
    assert list((tmp_path / "bench").rglob("full_data.json"))


def test_report_prints_the_tables_of_a_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", "legoeval", "--agent", "always-valid", "--split", "demo", "--limit", "4",
                 "--run-dir", str(run_dir), "--workers", "0", "-q"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "report", str(run_dir), "--json")
    tables = json.loads(out)["tables"]
    ours = [r for r in tables["Table 1: agreement with labels"] if r.get("source") == "ours"]
    assert code == 0 and [r["method"] for r in ours] == ["always-valid"]
    assert ours[0]["hol_kappa"] == pytest.approx(0.0)
