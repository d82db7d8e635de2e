"""Real IFC files from other projects (fixtures/real, see its MANIFEST.md) through the user-IFC
path: reading, task generation, oracle predictions rescored in batch, the IFC diff, and the
real split; a file that cannot be used is one ``error:`` line, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import ifcopenshell
import pytest

from buildbench.cli.main import main
from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.model import ModelError, load_model
from buildbench.suites.bimedit.check.schemas import SCHEMA_ALIASES, copy_readable, readable_name
from buildbench.suites.bimedit.generate.tasks.oracle import write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import generate_from_ifc, unique_names
from buildbench.suites.bimedit.rescore import rescore

REAL = Path(__file__).parent / "fixtures" / "real"

#: file -> (schema, length unit) of the models the generator makes tasks on
BUILDINGS = {
    "ISSUE_044_test_IFCCOMPOSITEPROFILEDEF.ifc": ("IFC2X3", "m"),  # ArchiCAD, \X2\ names
    "ifc2x3_final_wall.ifc": ("IFC2X3", "mm"),  # Revit 2017, header says IFC2X3_FINAL
    "P1_cm.ifc": ("IFC2X3", "cm"),  # Revit 2015 in centimetres
    "4walls1floorSite.ifc": ("IFC2X3", "mm"),  # Revit 2014
    "IfcOpenShell-Issue2499.ifc": ("IFC4", "m"),  # BlenderBIM
    "TestZip.ifczip": ("IFC2X3", "mm"),  # Revit 2014, zipped (xBIM)
}
#: readable models with nothing the six base-edit classes could use
NOTHING_TO_EDIT = ["Sample_entities.ifc", "fileWithAbstractClass.ifc", "webifc_geometry_only.ifc",
                   "grid-placement.ifc", "missing-placement.ifc"]
#: malformed files -> what their one error line says
UNREADABLE = {"InvalidMultiByte.ifc": "not a readable IFC file",
              "Wrongly1251Encoded.ifc": "not a readable IFC file",
              "cyclic-placement.ifc": "is placed relative to itself"}


def test_every_fixture_is_in_the_manifest_and_checked_here() -> None:
    files = {p.name for p in REAL.iterdir() if p.suffix in (".ifc", ".ifczip")}
    listed = set(re.findall(r"^\| `([^`]+\.ifc(?:zip)?)` \|", (REAL / "MANIFEST.md").read_text(), re.MULTILINE))
    assert files == listed
    assert files == set(BUILDINGS) | set(NOTHING_TO_EDIT) | set(UNREADABLE)


@pytest.mark.parametrize("name", sorted(BUILDINGS))
def test_real_model_gives_tasks_the_oracle_solves(name: str, tmp_path: Path) -> None:
    schema, unit = BUILDINGS[name]
    tasks, report = generate_from_ifc(REAL / name, tmp_path, n=9, seed=0)
    assert len(tasks) == 9 and {t.unit for t in tasks} == {unit}
    assert report.models[name]["schema"] == schema
    preds = tmp_path / "preds"
    preds.mkdir()
    groups = {t.group_id: t for t in tasks}
    for t in groups.values():
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    rows = [r.to_dict() for r in rescore(list(groups.values()), preds)]
    assert [(r["status"], r["solved"]) for r in rows] == [("scored", True)] * len(groups)
    assert all(r["final"] == pytest.approx(1.0) for r in rows)
    scene = load_model(tmp_path / "scenes" / readable_name(name))
    assert node_changes(scene, load_model(REAL / name)).empty


@pytest.mark.parametrize("name", NOTHING_TO_EDIT)
def test_model_with_nothing_to_edit_is_one_error_line(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ConfigError, match="no task could be made") as info:
        generate_from_ifc(REAL / name, tmp_path / "api", n=3)
    assert "\n" not in str(info.value)
    assert main(["bimedit", "generate", "--ifc", str(REAL / name), "--n", "3", "--out", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "no task could be made" in err[0]


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_malformed_model_is_one_error_line(name: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ModelError, match=UNREADABLE[name]):
        load_model(REAL / name)
    for argv in (["generate", "--ifc", str(REAL / name), "--n", "3", "--out", str(tmp_path)],
                 ["diff", str(REAL / name), str(REAL / "P1_cm.ifc")]):
        assert main(["bimedit", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:") and UNREADABLE[name] in err[0], argv


def test_placement_missing_its_axis_gives_no_move_of_that_element(tmp_path: Path) -> None:
    """The proxy of missing-placement.ifc as a wall: its placement has no axis to read (the
    reference is dangling), so no task moves it; generation ends in an error line, no crash."""
    wall = tmp_path / "missing-placement-wall.ifc"
    wall.write_text((REAL / "missing-placement.ifc").read_text().replace("IFCBUILDINGELEMENTPROXY", "IFCWALL"))
    with pytest.raises(ConfigError, match="no task could be made"):
        generate_from_ifc(wall, tmp_path / "out", n=3)


def test_moving_a_grid_placed_column_is_a_modification(tmp_path: Path) -> None:
    """IfcGridPlacement has no local matrix; the diff still sees a column put on another grid
    intersection (before the fix it reported no change)."""
    f = ifcopenshell.open(str(REAL / "grid-placement.ifc"))
    column = next(c for c in f.by_type("IfcColumn") if c.ObjectPlacement.is_a("IfcGridPlacement"))
    here = column.ObjectPlacement.PlacementLocation
    other = next(p.PlacementLocation for p in f.by_type("IfcGridPlacement")
                 if p.PlacementLocation.IntersectingAxes != here.IntersectingAxes)
    column.ObjectPlacement.PlacementLocation = f.createIfcVirtualGridIntersection(
        other.IntersectingAxes, other.OffsetDistances)
    moved = tmp_path / "moved.ifc"
    f.write(str(moved))
    changes = node_changes(load_model(REAL / "grid-placement.ifc"), load_model(moved))
    assert changes.modified == {column.GlobalId} and not changes.added and not changes.removed


@pytest.mark.parametrize("alias", sorted(SCHEMA_ALIASES))
def test_schema_alias_is_read_and_copied_readable(alias: str, tmp_path: Path) -> None:
    target = SCHEMA_ALIASES[alias]
    source = {"IFC2X3": REAL / "P1_cm.ifc", "IFC4": REAL / "IfcOpenShell-Issue2499.ifc",
              "IFC4X3_ADD2": REAL.parent / "tiny_house_ifc4x3_ft.ifc"}[target]
    text = source.read_bytes()
    aliased = tmp_path / "aliased.ifc"
    aliased.write_bytes(re.sub(rb"FILE_SCHEMA\s*\(\s*\('[A-Z0-9_]+'\)\)", f"FILE_SCHEMA(('{alias}'))".encode(),
                               text, count=1))
    model = load_model(aliased)
    assert target.startswith(model.schema)
    copy = tmp_path / "copy.ifc"
    copy_readable(aliased, copy)
    assert len(ifcopenshell.open(str(copy)).by_type("IfcWall")) == len(model.file.by_type("IfcWall")) > 0


def test_same_file_name_in_two_folders_gets_two_names(tmp_path: Path) -> None:
    files = [tmp_path / "a" / "model.ifc", tmp_path / "b" / "model.ifc", tmp_path / "b" / "other.ifc"]
    assert unique_names(files) == {files[0]: "a_model.ifc", files[1]: "b_model.ifc", files[2]: "other.ifc"}
    assert unique_names(files[2:]) == {files[2]: "other.ifc"}


def test_repeated_global_id_is_never_named(tmp_path: Path) -> None:
    """Some exports give two elements one GlobalId; "the wall with ID …" or "touching the wall
    (…)" would not say which, so neither is a target or an anchor (before the fix both were)."""
    f = ifcopenshell.open(str(REAL / "4walls1floorSite.ifc"))
    walls = sorted(f.by_type("IfcWall"), key=lambda w: w.GlobalId)
    walls[1].GlobalId = walls[0].GlobalId
    path = tmp_path / "repeated.ifc"
    f.write(str(path))
    tasks, _ = generate_from_ifc(path, tmp_path / "out", n=30, seed=0)
    assert len(tasks) == 30
    assert not [t.task_id for t in tasks if walls[0].GlobalId in t.instruction + " ".join(t.target_guids)]
