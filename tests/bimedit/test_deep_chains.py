"""Reference chains thousands of entities deep (a placement relative to a placement … 3,000 times;
a body clipped 3,000 times over): reading and diffing them walked each chain by recursion, and a
prediction like that ended scoring with a RecursionError instead of a score."""

from __future__ import annotations

from pathlib import Path

from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.edit import score_edit
from buildbench.suites.bimedit.check.model import load_model

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"
WALL_1 = "1W20ImXcWl0KGutJD63H9t"
DEPTH = 3000


def _with(tmp_path: Path, old: str, new: str, extra: list[str]) -> Path:
    text = FIXTURE.read_text("latin-1")
    assert old in text
    path = tmp_path / "deep.ifc"
    path.write_text(text.replace(old, new).replace("ENDSEC;\nEND-ISO", "\n".join(extra) + "\nENDSEC;\nEND-ISO"),
                    "latin-1")
    return path


def test_deep_placement_chain_is_measured_and_scored(tmp_path: Path) -> None:
    # identity placements between Wall 1 and its storey, the last one 2 ft along x
    extra = [f"#{10000 + i}=IFCLOCALPLACEMENT(#{10000 + i - 1 if i else 33},#55);" for i in range(DEPTH)]
    extra += ["#9000=IFCCARTESIANPOINT((2.,0.,0.));", "#9001=IFCAXIS2PLACEMENT3D(#9000,$,$);",
              f"#9002=IFCLOCALPLACEMENT(#{10000 + DEPTH - 1},#9001);"]
    deep = _with(tmp_path, "#56=IFCLOCALPLACEMENT(#33,#55);", "#56=IFCLOCALPLACEMENT(#9002,#55);", extra)
    model = load_model(deep)
    assert model.world_matrix(WALL_1)[0, 3] - load_model(FIXTURE).world_matrix(WALL_1)[0, 3] == 2 * 0.3048
    assert WALL_1 in node_changes(load_model(FIXTURE), model).modified
    task = {"task_id": "WAL-UPD-DIR-R-001", "operation": "update", "target_guids": [WALL_1]}
    assert score_edit(FIXTURE, deep, deep, task).solved


def test_deep_boolean_chain_is_hashed(tmp_path: Path) -> None:
    extra = ["#9000=IFCPLANE(#10);", "#9001=IFCHALFSPACESOLID(#9000,.T.);"]
    extra += [f"#{10000 + i}=IFCBOOLEANCLIPPINGRESULT(.DIFFERENCE.,#{10000 + i - 1 if i else 48},#9001);"
              for i in range(DEPTH)]
    deep = _with(tmp_path, "(#48));", f"(#{10000 + DEPTH - 1}));", extra)
    model = load_model(deep)
    assert node_changes(load_model(FIXTURE), model).modified == {WALL_1}
    assert model.signature(WALL_1) == load_model(deep).signature(WALL_1)
    same = tmp_path / "same.ifc"
    same.write_bytes(deep.read_bytes())
    assert node_changes(load_model(deep), load_model(same)).empty
