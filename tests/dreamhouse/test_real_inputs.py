"""House files and task packs other tools write, beyond the variants of test_odd_houses.py and
test_odd_inputs.py: a matrix written column-major, a pack whose tasks table lacks the released
primary key and holds a task twice.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from buildbench.cli.main import main
from buildbench.suites.dreamhouse.check import validate
from buildbench.suites.dreamhouse.dhpack import DHPACK_FORMAT, PACK_VIEWS
from buildbench.suites.dreamhouse.generate import generate_structure
from buildbench.suites.dreamhouse.model import load_structure

_PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


@pytest.fixture(scope="module")
def house() -> dict[str, Any]:
    return generate_structure("RN_01_0001", 0).structure.to_submission()


def test_a_column_major_house_fails_as_in_the_original_and_says_why(house: dict[str, Any], tmp_path: Path) -> None:
    """Blender's Matrix(rows) reads the transpose's last row as no translation at all: the
    original puts every member at the origin and fails the house. So do we, naming the layout
    (the plain house passes every test)."""
    doc = {"members": [{**m, "matrix_world": [list(col) for col in zip(*m["matrix_world"], strict=True)]}
                       for m in house["members"]]}
    path = tmp_path / "colmajor.json"
    path.write_text(json.dumps(doc))
    report = validate(load_structure(path), "released")
    assert not report.passed
    members = report["member_integrity"]
    assert members.measured["invalid_geometry"] == len(house["members"])
    x, y, z = (f"{v:g}" for v in (row[3] for row in house["members"][0]["matrix_world"][:3]))
    assert (f"transform is not a rotation plus translation (its last row holds a translation ({x}, {y}, {z}): "
            "written column-major?") in members.messages[0]


def test_a_matrix_with_a_projective_last_row_is_not_called_column_major(house: dict[str, Any], tmp_path: Path) -> None:
    doc = json.loads(json.dumps(house))
    doc["members"][0]["matrix_world"][3] = [0.0, 0.0, 0.0, 2.0]
    path = tmp_path / "projective.json"
    path.write_text(json.dumps(doc))
    members = validate(load_structure(path), "paper")["member_integrity"]
    assert not members.passed and members.messages[0].endswith("(shear or bad last row)")


def test_a_pack_holding_a_task_twice_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The released schema's primary key keeps task ids unique; without it the second row would
    overwrite the first one's views and both would land in tasks.jsonl."""
    pack = tmp_path / "twice.dhpack"
    conn = sqlite3.connect(pack)
    conn.executescript("CREATE TABLE metadata(key TEXT, value TEXT);"
                       "CREATE TABLE tasks(task_id TEXT, style TEXT, description TEXT, constraints_json TEXT);"
                       "CREATE TABLE images(task_id TEXT, view TEXT, content BLOB);")
    conn.execute("INSERT INTO metadata VALUES ('format', ?)", (DHPACK_FORMAT,))
    constraints = json.dumps({"footprint_x": 7.32, "footprint_y": 10.97, "stories": 2, "roof_type": "gable"})
    for task_id in ("AF_01_0018", "RN_01_0119", "AF_01_0018"):
        conn.execute("INSERT INTO tasks VALUES (?, 'A-Frame', 'a house', ?)", (task_id, constraints))
    conn.executemany("INSERT INTO images VALUES (?, ?, ?)",
                     [(t, v, _PNG) for t in ("AF_01_0018", "RN_01_0119") for v in PACK_VIEWS])
    conn.commit()
    conn.close()
    out = tmp_path / "out"
    assert main(["dreamhouse", "unpack", str(pack), "--out", str(out)]) == 2
    stdout, err = capsys.readouterr()
    assert stdout == "" and not (out / "tasks.jsonl").exists()
    assert err == (f"error: {pack}: task AF_01_0018 is in the tasks table twice (rows 1 and 3); "
                   "task ids must be unique\n")


def test_our_form_without_its_format_key_is_named_as_such(house: dict[str, Any], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    ours = generate_structure("RN_01_0001", 0).structure.to_json_dict()
    del ours["format"]
    path = tmp_path / "ours.json"
    path.write_text(json.dumps(ours))
    assert main(["dreamhouse", "validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"error: {path}: member 0 (") and "missing field 'dimensions' (it has our form's 'size_m'" in err
    assert '"format": "buildbench.dreamhouse.structure"' in err


@pytest.mark.parametrize("file,content", [
    ("structure.json", {"main_body": {"width": 7.32, "depth": 10.97, "stories": 2}, "roof": {"type": "gable"},
                        "style_display_name": {"en": "A-Frame"}}),
    ("constraints.json", {"footprint_x": 7.32, "footprint_y": 10.97, "stories": 2, "roof_type": "gable", "style": 7}),
])
def test_a_task_folder_whose_style_is_no_text_is_one_error_line(file: str, content: dict[str, Any], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "houses" / "AF_01_0018"
    folder.mkdir(parents=True)
    for stem in ("front", "back", "left", "right", "front_right"):
        (folder / f"{stem}.png").write_bytes(_PNG)
    (folder / file).write_text(json.dumps(content))
    assert main(["dreamhouse", "unpack", str(tmp_path / "houses"), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    kind = type(content.get("style_display_name", content.get("style"))).__name__
    assert out == "" and err == f"error: {folder / file}: the style must be text, got {kind}\n"
