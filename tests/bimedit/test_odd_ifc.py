"""Odd-but-real IFC variants of our tiny foreign-style model: a changed length unit, GlobalIds
that are not IfcOpenShell's 22 characters (UUIDs), a missing GlobalId, a byte-order mark. Each
must give the right diff, tasks that never name what cannot be looked up, or one error line."""

from __future__ import annotations

import codecs
import json
import re
import uuid
from pathlib import Path

import ifcopenshell
import pytest

from buildbench.cli.main import main
from buildbench.harness.errors import ConfigError
from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.check.model import NO_LENGTH_UNIT, load_model
from buildbench.suites.bimedit.check.semantics import property_value
from buildbench.suites.bimedit.check.shapes import ShapeCache
from buildbench.suites.bimedit.generate.tasks.oracle import write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import REPORT_FILE, generate_from_ifc
from buildbench.suites.bimedit.rescore import rescore

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


def _oracle_solves_each_group(tasks: list, preds: Path) -> bool:  # type: ignore[type-arg]
    """Whether the oracle's prediction of one task per group scores as solved."""
    preds.mkdir()
    groups = list({t.group_id: t for t in tasks}.values())
    for t in groups:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    return all(r.score is not None and r.score.solved for r in rescore(groups, preds))


def _variant(tmp_path: Path, name: str, change) -> Path:  # type: ignore[no-untyped-def]
    f = ifcopenshell.open(str(FIXTURE))
    change(f)
    path = tmp_path / name
    f.write(str(path))
    return path


def _in_metres(f: ifcopenshell.file) -> None:
    """The same numbers read as metres instead of feet: every element 3.28 times larger."""
    (assignment,) = f.by_type("IfcUnitAssignment")
    assignment.Units = (f.createIfcSIUnit(None, "LENGTHUNIT", None, "METRE"),)


def test_changed_length_unit_modifies_every_element(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Before the fix the diff saw no change: no statement reaching an element differs."""
    metres = _variant(tmp_path, "metres.ifc", _in_metres)
    base, other = load_model(FIXTURE), load_model(metres)
    changes = node_changes(base, other)
    assert not changes.added and not changes.removed
    assert changes.modified == base.nodes.keys()
    assert main(["bimedit", "diff", str(FIXTURE), str(metres), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["modified"]) == set(base.nodes)


def _uuid_walls(f: ifcopenshell.file) -> None:
    for i, wall in enumerate(sorted(f.by_type("IfcWall"), key=lambda w: w.GlobalId)):
        wall.GlobalId = str(uuid.UUID(int=i + 1))


def test_uuid_global_ids_are_never_named(tmp_path: Path) -> None:
    """IfcOpenShell's ``by_guid`` finds 22-character GlobalIds only; a wall carrying a UUID can
    be neither a target nor an anchor (the oracle code and agents' tools look elements up by
    it), so tasks leave the walls alone and the report says why."""
    path = _variant(tmp_path, "uuid.ifc", _uuid_walls)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(4)]
    tasks, report = generate_from_ifc(path, tmp_path / "out", n=12, seed=0)
    assert len(tasks) == 12
    for t in tasks:
        text = t.instruction + " ".join(t.target_guids) + t.oracle_code
        assert not [g for g in ids if g in text], t.task_id
    assert report.models["uuid.ifc"]["unnamable"] == 4
    assert "4 elements left out" in (tmp_path / "out" / REPORT_FILE).read_text()
    assert _oracle_solves_each_group(tasks, tmp_path / "preds")
    # the diff and the scorer read UUIDs like any other GlobalId
    assert node_changes(load_model(path), load_model(tmp_path / "out" / "scenes" / "uuid.ifc")).empty


def test_model_whose_ids_cannot_be_looked_up_is_one_error_line(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    def all_uuids(f: ifcopenshell.file) -> None:
        for i, e in enumerate(f.by_type("IfcRoot")):
            e.GlobalId = str(uuid.UUID(int=i + 1))

    path = _variant(tmp_path, "all-uuid.ifc", all_uuids)
    with pytest.raises(ConfigError, match="no task could be made .* elements left out: their GlobalIds"):
        generate_from_ifc(path, tmp_path / "api", n=3)
    assert main(["bimedit", "generate", "--ifc", str(path), "--n", "3", "--out", str(tmp_path / "cli")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "elements left out" in err[0]


def test_missing_global_id_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """GlobalId is mandatory; before the fix a wall written with ``$`` crashed generation with a
    KeyError. The diff still reads the model, keying the wall by its entity id."""
    text = FIXTURE.read_text()
    wall = "#34=IFCWALL('1W20ImXcWl0KGutJD63H9t',"
    assert wall in text
    path = tmp_path / "anonymous.ifc"
    path.write_text(text.replace(wall, "#34=IFCWALL($,"))
    assert main(["bimedit", "generate", "--ifc", str(path), "--n", "3", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}: #34 (IfcWall) has no GlobalId, which IFC requires (1 such entities) (option --ifc)"]
    changes = node_changes(load_model(FIXTURE), load_model(path))
    assert changes.added == {"#34"} and changes.removed == {"1W20ImXcWl0KGutJD63H9t"}


def test_byte_order_mark_is_read_and_dropped_from_the_copy(tmp_path: Path) -> None:
    """IfcOpenShell cannot parse a file that starts with a UTF-8 BOM (some Windows writers add one)."""
    path = tmp_path / "bom.ifc"
    path.write_bytes(codecs.BOM_UTF8 + FIXTURE.read_bytes())
    assert node_changes(load_model(FIXTURE), load_model(path)).empty
    tasks, _ = generate_from_ifc(path, tmp_path / "out", n=3, seed=0)
    copy = tmp_path / "out" / "scenes" / "bom.ifc"
    assert len(tasks) == 3 and copy.read_bytes() == FIXTURE.read_bytes()


def test_prediction_that_changes_the_unit_is_not_solved(tmp_path: Path) -> None:
    """A delete done right in a model whose every element then grew 3.28 times: not solved, and
    the notes say why."""
    tasks, _ = generate_from_ifc(FIXTURE, tmp_path / "out", n=18, seed=0)
    task = next(t for t in tasks if t.operation == "delete")
    pred = write_oracle_prediction(task, tmp_path / "oracle.ifc")
    assert score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec()).solved
    f = ifcopenshell.open(str(pred))
    _in_metres(f)
    f.write(str(pred))
    s = score_edit(task.input_ifc, task.ground_truth_ifc, pred, task.score_spec())
    assert not s.solved and s.topology < 1.0
    assert any("length unit" in n for n in s.notes)


def test_file_cut_short_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """IfcOpenShell reads a file cut inside its DATA section up to the cut; before the fix the
    rest of the building was silently missing (the diff saw it "added" in the whole file)."""
    text = FIXTURE.read_text()
    path = tmp_path / "cut.ifc"
    path.write_text(text[: text.index("IFCWINDOW") + 5])
    for argv in (["diff", str(path), str(FIXTURE)],
                 ["generate", "--ifc", str(path), "--n", "3", "--out", str(tmp_path / "out")]):
        assert main(["bimedit", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:") and "the file is cut short" in err[0], argv


def test_model_without_length_unit_is_read_in_metres_and_says_so(tmp_path: Path) -> None:
    text = FIXTURE.read_text()
    project, assignment = "(#11),#6);", "#6=IFCUNITASSIGNMENT((#5));\n"
    assert project in text and assignment in text
    path = tmp_path / "unitless.ifc"
    path.write_text(text.replace(project, "(#11),$);").replace(assignment, ""))
    model = load_model(path)
    assert model.unit_scale_m == 1.0 and NO_LENGTH_UNIT in model.notes
    assert NO_LENGTH_UNIT not in load_model(FIXTURE).notes
    tasks, report = generate_from_ifc(path, tmp_path / "out", n=3, seed=0)
    assert {t.unit for t in tasks} == {"m"}
    assert f"model unitless.ifc: {NO_LENGTH_UNIT}" in (tmp_path / "out" / REPORT_FILE).read_text()


#: statements of the fixture -> a schema-invalid version IfcOpenShell still parses, and what
#: the one error line says; each gave a TypeError, AttributeError or ValueError before the fix
MALFORMED = {
    "#31=IFCDIRECTION((1.,0.,0.));": ("#31=IFCDIRECTION(1);", "its RelativePlacement cannot be read"),
    "#118=IFCCARTESIANPOINT((0.,13.999999999999998,0.));": ("#118=IFCCARTESIANPOINT(*);",
                                                           "its RelativePlacement cannot be read"),
    "#140=IFCLOCALPLACEMENT(#33,#139);": ("#140=IFCLOCALPLACEMENT(#33,(#1,#2));",
                                          "IfcLocalPlacement #140: its RelativePlacement cannot be read"),
    "#28=IFCLOCALPLACEMENT(#23,#27);": ("#28=IFCLOCALPLACEMENT('x',#27);", "a placement is 'x'"),
    "#197=IFCRELVOIDSELEMENT('1CcXbVyfOLnglO5br75Bny',$,$,$,#34,#180);": (
        "#197=IFCRELVOIDSELEMENT('1CcXbVyfOLnglO5br75Bny',$,$,$,#34,'');",
        "#197 (IfcRelVoidsElement) relates '', which is not an object"),
    "#154=IFCRELAGGREGATES('204vmGgiIVH1WaaIO1JoKI',$,$,$,#15,(#141));": (
        "#154=IFCRELAGGREGATES('204vmGgiIVH1WaaIO1JoKI',$,$,$,IFCLENGTHMEASURE(5.),(#141));",
        "#154 (IfcRelAggregates) relates "),
}


@pytest.mark.parametrize("statement", sorted(MALFORMED))
def test_schema_invalid_attribute_is_one_error_line(statement: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    text = FIXTURE.read_text()
    assert statement in text
    bad, message = MALFORMED[statement]
    path = tmp_path / "bad.ifc"
    path.write_text(text.replace(statement, bad))
    for argv in (["diff", str(FIXTURE), str(path)],
                 ["generate", "--ifc", str(path), "--n", "3", "--out", str(tmp_path / "out")]):
        assert main(["bimedit", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:") and message in err[0], (argv, err)


def test_typed_value_where_an_entity_belongs_hashes(tmp_path: Path) -> None:
    """A building whose representation slot holds a value: read, and compared by that value."""
    text = FIXTURE.read_text()
    building = "#14=IFCBUILDING('1ofLFgv_Bi$WZi6XJZJMaa',$,'House',$,$,#28,$,$,$,$,$,$);"
    path = tmp_path / "value.ifc"
    path.write_text(text.replace(building, building.replace("#28,$,", "#28,1,")))
    assert node_changes(load_model(FIXTURE), load_model(path)).modified == {"1ofLFgv_Bi$WZi6XJZJMaa"}


def _pset_in_a_set(tmp_path: Path, name: str, value: float) -> Path:
    """The fixture with its first wall's property set attached through an
    IfcPropertySetDefinitionSet (a set of property sets in one relation, as IFC4 allows; the
    set is written as text, IfcOpenShell's API takes one property set)."""
    def add(f: ifcopenshell.file) -> None:
        wall = sorted(f.by_type("IfcWall"), key=lambda w: w.GlobalId)[0]
        prop = f.createIfcPropertySingleValue("FireRating", None, f.create_entity("IfcReal", value), None)
        pset = f.createIfcPropertySet("2O2Fr$t4X7Zf8NOew3FLOH", None, "Pset_WallCommon", None, (prop,))
        f.createIfcRelDefinesByProperties("1O2Fr$t4X7Zf8NOew3FLOH", None, None, None, (wall,), pset)

    path = _variant(tmp_path, name, add)
    text = path.read_text()
    path.write_text(re.sub(r"(IFCRELDEFINESBYPROPERTIES\([^;]*),(#\d+)\);", r"\1,(\2));", text))
    assert path.read_text() != text
    return path


def test_property_set_in_a_set_is_compared(tmp_path: Path) -> None:
    """Before the fix a property set given as a set was left out of the comparison, so a changed
    value in it changed nothing."""
    a = _pset_in_a_set(tmp_path, "a.ifc", 30.0)
    b = _pset_in_a_set(tmp_path, "b.ifc", 60.0)
    wall = sorted(w.GlobalId for w in ifcopenshell.open(str(a)).by_type("IfcWall"))[0]
    assert node_changes(load_model(a), load_model(b)).modified == {wall}
    assert node_changes(load_model(a), load_model(a)).empty


def test_property_set_of_the_wrong_type_is_compared_as_a_value(tmp_path: Path) -> None:
    """A malformed relation naming a text instead of a property set: read (it was a traceback)."""
    path = _pset_in_a_set(tmp_path, "a.ifc", 30.0)
    text = path.read_text()
    bad = tmp_path / "bad.ifc"
    bad.write_text(re.sub(r"(IFCRELDEFINESBYPROPERTIES\([^;]*),\(#\d+\)\);", r"\1,'x');", text))
    assert bad.read_text() != text
    wall = sorted(w.GlobalId for w in ifcopenshell.open(str(path)).by_type("IfcWall"))[0]
    assert node_changes(load_model(path), load_model(bad)).modified == {wall}


def test_base_quantity_in_a_set_is_read(tmp_path: Path) -> None:
    """A quantity set attached through a set of definitions was not found (its value read as
    missing, in metres like any other once it is)."""
    def add(f: ifcopenshell.file) -> None:
        wall = sorted(f.by_type("IfcWall"), key=lambda w: w.GlobalId)[0]
        length = f.createIfcQuantityLength("Length", None, None, 20.0, None)
        qto = f.createIfcElementQuantity("2O2Fr$t4X7Zf8NOew3FLOH", None, "Qto_WallBaseQuantities", None, None,
                                         (length,))
        f.createIfcRelDefinesByProperties("1O2Fr$t4X7Zf8NOew3FLOH", None, None, None, (wall,), qto)

    path = _variant(tmp_path, "qto.ifc", add)
    text = path.read_text()
    path.write_text(re.sub(r"(IFCRELDEFINESBYPROPERTIES\([^;]*),(#\d+)\);", r"\1,(\2));", text))
    model = load_model(path)
    wall = sorted(k for k, n in model.nodes.items() if n.ifc_class == "IfcWall")[0]
    value = property_value(model, ShapeCache(model), wall, "Qto_WallBaseQuantities.Length")
    assert value == pytest.approx(20.0 * 0.3048)


REAL = Path(__file__).parent / "fixtures" / "real"


@pytest.mark.parametrize(("statement", "bad"), [
    ("#510=IFCRELASSOCIATESMATERIAL('3lOl0L_tr2Zfr6KUbqgBlQ',#41,$,$,(#280),#283);",
     "#510=IFCRELASSOCIATESMATERIAL('3lOl0L_tr2Zfr6KUbqgBlQ',#41,$,$,.T.,#283);"),
    ("#541=IFCRELCONNECTSPATHELEMENTS('3sdeXzAVv8pAks2rLUsQhb',#41,'10jTc7wFDDIvftO_vi2WFw|10jTc7wFDDIvftO_vi2WE$',"
     "'Structural',$,#382,#416,(),(),.ATSTART.,.ATEND.);",
     "#541=IFCRELCONNECTSPATHELEMENTS('3sdeXzAVv8pAks2rLUsQhb',#41,'10jTc7wFDDIvftO_vi2WFw|10jTc7wFDDIvftO_vi2WE$',"
     "'Structural',$,*,#416,(),(),.ATSTART.,.ATEND.);"),
], ids=["material-objects-a-boolean", "connection-without-its-relating-wall"])
def test_malformed_relation_in_a_real_model_diffs_and_generates(statement: str, bad: str, tmp_path: Path) -> None:
    """Revit's P1_cm.ifc with one relation made schema-invalid (found by mutating real files):
    the diff and generation each raised a TypeError or AttributeError before the fix."""
    text = (REAL / "P1_cm.ifc").read_text(encoding="latin-1")
    assert statement in text
    path = tmp_path / "P1_cm.ifc"
    path.write_text(text.replace(statement, bad), encoding="latin-1")
    node_changes(load_model(REAL / "P1_cm.ifc"), load_model(path))
    tasks, _ = generate_from_ifc(path, tmp_path / "out", n=6, seed=0)
    assert len(tasks) == 6


def test_decimetre_model_gives_tasks_the_oracle_solves(tmp_path: Path) -> None:
    """A length unit with the DECI prefix was refused ("unsupported length unit (0.1 m per unit)")."""
    def in_decimetres(f: ifcopenshell.file) -> None:
        (assignment,) = f.by_type("IfcUnitAssignment")
        assignment.Units = (f.createIfcSIUnit(None, "LENGTHUNIT", "DECI", "METRE"),)

    path = _variant(tmp_path, "dm.ifc", in_decimetres)
    tasks, _ = generate_from_ifc(path, tmp_path / "out", n=6, seed=0)
    assert {t.unit for t in tasks} == {"dm"}
    assert _oracle_solves_each_group(tasks, tmp_path / "preds")
