"""Length units that do not come down to the metre by positive factors. IfcOpenShell's unit scale
looped forever on a foot defined through itself (``bimedit diff`` hung), read a context-dependent
unit as the metre and took a zero or negative factor as it was; each is now one error line. Units
defined through other units (a foot of 12 inches) still read right."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.check.model import ModelError, load_model

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"
#: the fixture's foot
FOOT = ("#3=IFCSIUNIT(*,.LENGTHUNIT.,$,.METRE.);\n#4=IFCMEASUREWITHUNIT(IFCREAL(0.3048),#3);\n"
        "#5=IFCCONVERSIONBASEDUNIT(#2,.LENGTHUNIT.,'foot',#4);")


def _with_unit(tmp_path: Path, unit: str) -> Path:
    text = FIXTURE.read_text("latin-1")
    assert FOOT in text
    path = tmp_path / "model.ifc"
    path.write_text(text.replace(FOOT, unit), "latin-1")
    return path


BAD = {
    "defined through itself": ("#3=IFCSIUNIT(*,.LENGTHUNIT.,$,.METRE.);\n#4=IFCMEASUREWITHUNIT(IFCLENGTHMEASURE(0.3048),#5);\n"
                               "#5=IFCCONVERSIONBASEDUNIT(#2,.LENGTHUNIT.,'foot',#4);",
                               r"length unit foot \(#5\) is defined through itself \(#5 -> #5\)"),
    "context dependent": ("#3=IFCSIUNIT(*,.LENGTHUNIT.,$,.METRE.);\n#4=IFCMEASUREWITHUNIT(IFCREAL(0.3048),#3);\n"
                          "#5=IFCCONTEXTDEPENDENTUNIT(#2,.LENGTHUNIT.,'survey foot');",
                          r"length unit survey foot \(#5\) is not defined in metres"),
    "zero factor": (FOOT.replace("IFCREAL(0.3048)", "IFCREAL(0.)"), r"foot \(#5\) converts by 0.0, not a positive number"),
    "negative factor": (FOOT.replace("IFCREAL(0.3048)", "IFCREAL(-0.3048)"), "converts by -0.3048"),
    "down to a second": (FOOT.replace(".LENGTHUNIT.,$,.METRE.", ".TIMEUNIT.,$,.SECOND."),
                         r"foot \(#5\) is not defined in metres \(it comes down to second \(#3\)\)"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", sorted(BAD))
def test_unit_not_in_metres_is_one_error_line(case: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    unit, message = BAD[case]
    path = _with_unit(tmp_path, unit)
    with pytest.raises(ModelError, match=message):
        load_model(path)
    assert main(["bimedit", "diff", str(path), str(FIXTURE)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
    task = {"task_id": "WAL-DEL-DIR-R-001", "operation": "delete", "target_guids": []}
    assert score_edit(FIXTURE, FIXTURE, path, task).reason.startswith("prediction unreadable")


def test_foot_of_twelve_inches_reads_as_a_foot(tmp_path: Path) -> None:
    path = _with_unit(tmp_path, "#3=IFCSIUNIT(*,.LENGTHUNIT.,$,.METRE.);\n"
                                "#4=IFCMEASUREWITHUNIT(IFCLENGTHMEASURE(12.),#900);\n"
                                "#5=IFCCONVERSIONBASEDUNIT(#2,.LENGTHUNIT.,'foot',#4);\n"
                                "#900=IFCCONVERSIONBASEDUNIT(#2,.LENGTHUNIT.,'inch',#901);\n"
                                "#901=IFCMEASUREWITHUNIT(IFCLENGTHMEASURE(0.0254),#3);")
    assert load_model(path).unit_scale_m == pytest.approx(0.3048)
