"""Two length units in one IfcUnitAssignment: IFC allows one unit of each type per assignment,
and IfcOpenShell silently reads the first, so every length could be off by a factor. A model
saying so is refused with one line naming the file and both units."""

from __future__ import annotations

from pathlib import Path

import ifcopenshell
import pytest

from buildbench.cli.main import main
from buildbench.suites.bimedit.check.model import ModelError, load_model

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"


def _two_length_units(tmp_path: Path) -> tuple[Path, str]:
    f = ifcopenshell.open(str(FIXTURE))
    (assignment,) = f.by_type("IfcUnitAssignment")
    (foot,) = [u for u in assignment.Units if u.UnitType == "LENGTHUNIT"]
    milli = f.createIfcSIUnit(None, "LENGTHUNIT", "MILLI", "METRE")
    assignment.Units = (*assignment.Units, milli)
    path = tmp_path / "two_units.ifc"
    f.write(str(path))
    expected = (f"{path}: IfcUnitAssignment #{assignment.id()} assigns two length units, "
                f"{foot.Name} (#{foot.id()}) and millimetre (#{milli.id()}) (IFC allows one)")
    return path, expected


def test_two_length_units_are_refused(tmp_path: Path) -> None:
    path, expected = _two_length_units(tmp_path)
    with pytest.raises(ModelError) as err:
        load_model(path)
    assert str(err.value) == expected
    assert load_model(FIXTURE).unit_scale_m == pytest.approx(0.3048)  # one unit: read as before


def test_diff_of_two_length_units_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, expected = _two_length_units(tmp_path)
    assert main(["bimedit", "diff", str(FIXTURE), str(path), "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and err[0].endswith(expected)
