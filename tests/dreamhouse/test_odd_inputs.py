"""The other ways a house or task enters DreamHouse, in the variety real writers produce: task
packs as the released ``build_task_pack.py`` writes them, Phase-0 plans and JSON member lists
as models write them, and dataset shard records. What is allowed is read; what is not is one
line naming the file (or reply), the record and the field, never a crash.
"""

from __future__ import annotations

import copy
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.harness import Task
from buildbench.suites.dreamhouse import actions
from buildbench.suites.dreamhouse.dhpack import DHPACK_FORMAT, PACK_VIEWS, check_constraints
from buildbench.suites.dreamhouse.generate import write_dataset
from buildbench.suites.dreamhouse.model import Structure
from buildbench.suites.dreamhouse.plan import check_plan
from buildbench.suites.dreamhouse.tasks import validate_task

_PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16  # the reader checks the signature; views are saved as given


def _pack(path: Path, constraints_json: str) -> Path:
    """One task laid out as the released build_task_pack.py writes it."""
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE metadata(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                       "CREATE TABLE tasks(task_id TEXT PRIMARY KEY, style TEXT NOT NULL, description TEXT NOT NULL,"
                       " constraints_json TEXT NOT NULL);"
                       "CREATE TABLE images(task_id TEXT NOT NULL, view TEXT NOT NULL, content BLOB NOT NULL,"
                       " PRIMARY KEY (task_id, view));")
    conn.executemany("INSERT INTO metadata VALUES (?, ?)", [("format", DHPACK_FORMAT), ("source", "/data/raw")])
    conn.execute("INSERT INTO tasks VALUES (?, ?, ?, ?)", ("CR_02_0107", "Craftsman",
                 "Generate a 2-story Craftsman timber-frame structure. Footprint: 12.19m x 9.75m. Roof type: hip.",
                 constraints_json))
    conn.executemany("INSERT INTO images VALUES (?, ?, ?)", [("CR_02_0107", v, _PNG) for v in PACK_VIEWS])
    conn.commit()
    conn.close()
    return path


#: What the released builder writes from a structure.json: no lot, no wings, sorted keys, extras.
RELEASED = {"complexity": "moderate", "config": "two_story_hip", "config_id": 4, "footprint_x": 12.19,
            "footprint_y": 9.75, "roof_type": "hip", "stories": 2}


def test_a_pack_as_the_released_builder_writes_it_unpacks_with_a_lot_around_the_footprint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = _pack(tmp_path / "r.dhpack", json.dumps(RELEASED, sort_keys=True))
    assert main(["dreamhouse", "unpack", str(pack), "--out", str(tmp_path / "out")]) == 0
    (line,) = (tmp_path / "out" / "tasks.jsonl").read_text().splitlines()
    inputs = json.loads(line)["inputs"]
    # the server's fixed 8 x 12 m lot would be narrower than this 12.19 m footprint
    assert inputs["lot_size"] == {"width": 14.19, "depth": 11.75, "area": 166.73}
    assert inputs["constraints"]["config"] == "two_story_hip" and inputs["wings"] == 0
    assert (inputs["stories"], inputs["roof_type"], inputs["complexity"]) == (2, "hip", "moderate")
    validate_task(Task.from_dict(json.loads(line)))


@pytest.mark.parametrize(("given", "read"), [
    ({"stories": 2.0, "wings": 1.0}, {"stories": 2, "wings": 1}),        # a float writer's whole numbers
    ({"footprint_x": 12, "lot_width": 16}, {"footprint_x": 12.0, "lot_width": 16.0}),
    ({"lot_width": None, "wings": None}, {"lot_width": 14.19, "wings": 0}),  # null is missing, as the builder drops it
    ({"lot_width": 20.5, "lot_depth": 1.5e1}, {"lot_width": 20.5, "lot_depth": 15.0}),
])
def test_constraint_variants_are_read(given: dict[str, Any], read: dict[str, Any]) -> None:
    out = check_constraints({**RELEASED, **given}, "task")
    assert {k: out[k] for k in read} == read
    assert all(type(out[k]) is type(v) for k, v in read.items())


@pytest.mark.parametrize(("text", "says"), [
    ('{"footprint_x": ' + "9" * 400 + "}",
     "constraints_json is not JSON (an integer of 400 digits is out of the range of a finite number: line 1 column 17"),
    ('{"stories": 2.5}', "constraints.stories must be an integer in [1, 10], got 2.5"),
    ('{"stories": true}', "constraints.stories must be an integer in [1, 10], got True"),
    ('{"lot_width": "14.19"}', "constraints.lot_width must be a number of metres, got '14.19'"),
    ('{"footprint_x": 1e999}', "constraints_json is not JSON (1e999 is out of the range of a finite number"),
    ('{"footprint_x": 600}', "constraints.footprint_x = 600 is outside (0, 500] m"),
])
def test_malformed_constraints_are_one_error_line_and_nothing_unpacked(
        tmp_path: Path, text: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    pack = _pack(tmp_path / "bad.dhpack", text)
    out = tmp_path / "out"
    assert main(["dreamhouse", "unpack", str(pack), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {pack}: task CR_02_0107: ") and says in err[0], err
    assert not (out / "tasks.jsonl").exists() and not (out / "views").exists()


LOT = {"width": 14.19, "depth": 11.75, "area": 166.73}
PLAN: dict[str, Any] = {
    "analysis": {"stories": 2, "roof_type": "hip", "lot_size": dict(LOT)},
    "sections": [{"name": "main", "bounds": {"x_min": 1.0, "x_max": 13.19, "y_min": -10.75, "y_max": -1.0,
                                             "z_base": 0.0}}],
    "construction_order": [{"step": 1, "section": "main", "phase": "foundation", "step_type": "critical",
                            "members": [{"type": "Sill", "count": 4}], "depends_on": []}],
    "expected_member_counts": {"Sill": 4},
}


@pytest.mark.parametrize("text", [
    "```JSON\n{}\n```", "```json\r\n{}\r\n```", "Here is the plan.\n\n```\n{}\n```\nDone.", "{}",
    # the released scaffold's last resort: from the first "{" to the last "}"
    "Here is the plan:\n{}\nLet me know if it needs changes.",
])
def test_plan_replies_as_models_fence_them_are_read(text: str) -> None:
    check = check_plan(text.replace("{}", json.dumps(PLAN, indent=1)), LOT)
    assert check.ok, check.problems
    assert [s.members for s in check.steps] == [(("Sill", 4),)]


def _edited(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(PLAN)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def test_a_reply_without_a_parsable_plan_names_the_first_error() -> None:
    check = check_plan("```json\n{\"analysis\": {},}\n```\nand no other block", LOT)
    assert check.problems == ("the plan is not valid JSON: Expecting property name enclosed in double quotes at "
                              "line 1 column 17",)


@pytest.mark.parametrize(("path", "value", "says"), [
    (("construction_order", 0, "members"), 4, 'step 1: members must be a list of {"type", "count"} objects'),
    (("construction_order", 0, "members"), "Sill", 'step 1: members must be a list of {"type", "count"} objects'),
    (("analysis", "lot_size", "width"), 10**400, "analysis.lot_size.width must be a number (given: 14.19)"),
    (("sections", 0, "bounds", "x_max"), -10**400, "section 'main': bounds need numbers for x_max"),
    (("construction_order", 0, "section"), {"name": "main"}, "step 1: section {'name': 'main'} is not declared in "
                                                             "'sections'"),
    (("expected_member_counts", "Sill"), "4", "expected_member_counts of Sill must be non-negative integers"),
    (("expected_member_counts", "Sill"), 4.0, "expected_member_counts of Sill must be non-negative integers"),
])
def test_malformed_plan_fields_are_problems_not_crashes(path: tuple[Any, ...], value: Any, says: str) -> None:
    check = check_plan(_edited(path, value), LOT)
    assert says in check.problems, check.problems


def test_a_boolean_story_is_no_story() -> None:
    (step,) = check_plan(_edited(("construction_order", 0, "story"), True), LOT).steps
    assert step.story is None


def test_json_action_with_a_null_matrix_is_placed_by_its_location() -> None:
    """As the released rebuild does (a submission document is a JSON action too)."""
    reply = '```json\n{"members": [{"name": "Sill_1", "dimensions": [2, 0.14, 0.038], "location": [1, 0, 0.019],' \
            ' "matrix_world": null, "bbox_world_corners": []}]}\n```'
    (member,) = actions.parse_member_list(actions.read_text(reply).document).members
    assert member.location_m.tolist() == [1.0, 0.0, 0.019]


def test_json_action_euler_angles_are_radians_as_in_blender() -> None:
    """A full turn is no turn; 90 means 90 radians (Blender's rotation_euler unit), not a quarter turn."""
    def extents(rotation: list[float]) -> list[float]:
        (m,) = actions.parse_members([{"name": "Rafter_1", "size": [0.038, 0.184, 4.0], "location": [0, 0, 3],
                                       "rotation_euler": rotation}])
        return Structure.from_members([m]).half_extents_world_m[0].round(9).tolist()
    assert extents([0.0, 2 * math.pi, -2 * math.pi]) == extents([0.0, 0.0, 0.0])
    assert extents([0.0, math.pi / 2, 0.0]) == [2.0, 0.092, 0.019]
    assert extents([0.0, 90.0, 0.0]) == extents([0.0, 90.0 - 28 * math.pi, 0.0]) != extents([0.0, math.pi / 2, 0.0])


@pytest.mark.parametrize(("entry", "says"), [
    ({"size": [1, 1, 10**400], "location": [0, 0, 0]}, "'size' must hold finite numbers, got [1, 1, 1000"),
    ({"size": [1, 1, 1], "location": [0, 0, 0], "rotation_euler": [0, 0, -10**400]},
     "'rotation_euler' must hold finite numbers"),
    ({"size": [1, 1, 1], "matrix_world": [[10**400, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
     "'matrix_world' must hold finite numbers"),
    ({"size": [1, 1, 1], "matrix_world": [["1", 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
     "'matrix_world' must hold finite numbers"),
    ({"size": [1, 1, 1], "matrix_world": [[True, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
     "'matrix_world' must hold finite numbers"),
    ({"size": [1, 1, 1], "matrix_world": [[1, 0, 0, 0], [0, 1, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
     "'matrix_world' must be a 4x4 list of numbers (4 rows of 4)"),
])
def test_malformed_json_action_members_are_action_errors(entry: dict[str, Any], says: str) -> None:
    with pytest.raises(actions.ActionError, match=r"^members\[0\] \(Stud_1\): ") as info:
        actions.parse_members([{"name": "Stud_1", **entry}])
    assert says in str(info.value) and len(str(info.value)) < 300


@pytest.fixture(scope="module")
def shard(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds")
    write_dataset(out, 2, 0, fmt="jsonl", workers=1)
    (path,) = out.glob("structures-*.jsonl")
    return path


@pytest.mark.parametrize(("field", "edit", "says"), [
    ("style", lambda r: r.pop("style"), "missing field 'style'"),
    ("names", lambda r: r["names"].pop(), "field 'phases' must hold"),
    ("sizes_m", lambda r: r["sizes_m"].__setitem__(4, True), "field 'sizes_m' entry 4 must be a finite number, got True"),
    ("sizes_m", lambda r: r["sizes_m"].__setitem__(1, 10**400),
     "not JSON (an integer of 401 digits is out of the range of a finite number)"),
    ("matrices", lambda r: r["matrices"].__setitem__(0, "1.0"), "field 'matrices' entry 0 must be a finite number"),
    ("names", lambda r: r["names"].__setitem__(2, 7), "field 'names' entry 2 must be text, got 7"),
    ("skin_matrices", lambda r: r["skin_matrices"].pop(), "field 'skin_matrices' must hold"),
])
def test_a_bad_dataset_record_is_one_error_line_naming_line_and_field(
        shard: Path, field: str, edit: Any, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = shard.read_text().splitlines()
    record = json.loads(second)
    edit(record)
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / shard.name).write_text(first + "\n" + json.dumps(record) + "\n")
    (folder / "manifest.json").write_text((shard.parent / "manifest.json").read_text())
    for source in (folder / shard.name, folder):
        assert main(["dreamhouse", "validate", str(source)]) == 2
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {folder / shard.name}:2: ") and says in err[0], err


def test_a_task_file_with_a_malformed_inline_target_is_one_error_line(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from buildbench.suites.dreamhouse.tasks import load_tasks

    record = load_tasks("demo")[0].to_dict()
    record["target"] = {"structure": {"members": [{"name": "Sill_1", "dimensions": [2.4, "Infinity", 0.038],
                                                   "location": [1.2, 0.07, 0.019]}]}}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(record) + "\n")
    run_dir = tmp_path / "run"
    assert main(["run", "dreamhouse", "--tasks", str(path), "--agent", "oracle", "--run-dir", str(run_dir),
                 "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}:1: task {record['id']!r}: target.structure: member 0 ('Sill_1'): field "
                   "'dimensions' is invalid: 'Infinity' is not a finite number ([1]) (option --tasks)"]
    assert not run_dir.exists()


def _house_folder(root: Path, task_id: str, files: dict[str, Any], views: tuple[str, ...] = (
        "front", "back", "left", "right", "front_right")) -> Path:
    folder = root / task_id
    folder.mkdir(parents=True)
    for view in views:
        (folder / f"{view}.png").write_bytes(_PNG + view.encode())
    for name, doc in files.items():
        (folder / name).write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return folder


def test_a_released_houses_folder_tree_unpacks_like_a_pack(tmp_path: Path) -> None:
    """The released server's DREAMHOUSE_TASKS_DIR layout (and its pack builder's input)."""
    root = tmp_path / "houses"
    _house_folder(root, "CR_02_0107", {"structure.json": {
        "main_body": {"width": 12.19, "depth": 9.75, "stories": 2}, "roof": {"type": "hip"}, "config": "two_story_hip",
        "config_id": 4, "params": {"complexity": "moderate", "seed": 7}, "style_display_name": "Craftsman"}})
    skinned = _house_folder(root, "BN_01_0003", {"constraints.json": {"footprint_x": 8.0, "footprint_y": 12.0,
                                                                      "stories": 1, "style": "Barn"}}, views=())
    for view in ("front", "back", "left", "right", "front_right"):  # the older <id>_skin_<view>.png names
        (skinned / f"BN_01_0003_skin_{view}.png").write_bytes(_PNG + view.encode())
    out = tmp_path / "out"
    assert main(["dreamhouse", "unpack", str(root), "--out", str(out)]) == 0
    tasks = {t["id"]: t for t in map(json.loads, (out / "tasks.jsonl").read_text().splitlines())}
    craftsman, barn = tasks["CR_02_0107"]["inputs"], tasks["BN_01_0003"]["inputs"]
    assert (craftsman["style"], craftsman["stories"], craftsman["roof_type"], craftsman["complexity"]) == (
        "Craftsman", 2, "hip", "moderate")
    assert craftsman["lot_size"] == {"width": 14.19, "depth": 11.75, "area": 166.73}
    assert (barn["style"], barn["roof_type"], barn["footprint"]) == ("Barn", "gable", {"x": 8.0, "y": 12.0})
    front_right = Path(barn["views"]["frame"]["front_right"]).read_bytes()
    assert front_right == _PNG + b"front_right"  # the released "top" view is the front-right render
    for record in tasks.values():
        validate_task(Task.from_dict(record))


@pytest.mark.parametrize(("files", "views", "says"), [
    ({}, ("front", "back", "left", "right"), "CR_02_0107: no 'top' view (CR_02_0107_skin_front_right.png or "
                                             "front_right.png)"),
    ({"structure.json": '{"main_body": {"width": 12.19,}}'}, None, "structure.json: not valid JSON"),
    ({"structure.json": '{"main_body": {"width": 12.19, "width": 9.75}}'}, None,
     "structure.json: not valid JSON (key 'width' given twice in one object"),
    ({"structure.json": {"main_body": [12.19, 9.75]}}, None, "structure.json: field 'main_body' must be an object"),
    ({"structure.json": {"main_body": {"width": "12.19"}}}, None, "CR_02_0107: constraints.footprint_x must be a "
                                                                  "number of metres, got '12.19'"),
    ({"constraints.json": [1]}, None, "constraints.json: must be a JSON object, got list"),
])
def test_a_bad_task_folder_is_one_error_line_and_nothing_unpacked(
        tmp_path: Path, files: dict[str, Any], views: tuple[str, ...] | None, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "houses"
    _house_folder(root, "AF_01_0018", {})
    _house_folder(root, "CR_02_0107", files, *([views] if views else []))
    out = tmp_path / "out"
    assert main(["dreamhouse", "unpack", str(root), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {root / 'CR_02_0107'}") and says in err[0], err
    assert not out.exists()


def test_a_folder_without_task_folders_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    houses = tmp_path / "houses"
    houses.mkdir()
    assert main(["dreamhouse", "unpack", str(houses), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (f"error: {houses}: holds no task folder (expected <task_id>/front.png"
                                               " ... as the released houses/ tree)")


@pytest.mark.parametrize("name", [{"name": "Stud_1"}, ["Stud_1"], None, 3])
def test_a_tool_change_naming_no_member_is_an_action_error(name: Any) -> None:
    scene = Structure.from_members(actions.parse_members([{"name": "Stud_1", "size": [0.038, 0.089, 2.4],
                                                           "location": [0, 0, 1.2]}]))
    with pytest.raises(actions.ActionError, match=r"^changes\[0\]: no member named .* in the scene$"):
        actions.modify_members(scene, [{"name": name, "size": [0.038, 0.089, 2.5]}])


@pytest.mark.parametrize(("manifest", "says"), [
    ([], 'manifest.json: must be an object whose "files" is a list'),
    ({"files": {"path": "x"}}, 'manifest.json: must be an object whose "files" is a list'),
    ({"files": [7]}, 'manifest.json: files[0] must be an object whose "path" names a file in the folder, got 7'),
    ({"files": [{"sha256": "0"}]}, "files[0] must be an object whose \"path\" names a file in the folder"),
    ({"files": [{"path": "../elsewhere/structures-00000.jsonl"}]}, "files[0] must be an object whose \"path\""),
])
def test_a_malformed_dataset_manifest_is_one_error_line(shard: Path, manifest: Any, says: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / shard.name).write_bytes(shard.read_bytes())
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert main(["dreamhouse", "validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'manifest.json'}: ") and says in err[0], err
