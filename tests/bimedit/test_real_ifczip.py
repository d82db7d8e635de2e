"""Zipped IFC models (``.ifczip``, as xBIM, Revit and BlenderBIM write them; IfcOpenShell opens
them by suffix): diff, scoring caps, task generation and the real split read the model the
archive holds, never its compressed bytes."""

from __future__ import annotations

import json
import random
import re
import zipfile
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.bimedit.check.caps import over_caps
from buildbench.suites.bimedit.check.diff import node_changes
from buildbench.suites.bimedit.check.model import load_model
from buildbench.suites.bimedit.check.schemas import readable_name
from buildbench.suites.bimedit.generate.tasks.oracle import write_oracle_prediction
from buildbench.suites.bimedit.generate.tasks.usergen import generate_from_ifc, ifc_files, unique_names
from buildbench.suites.bimedit.rescore import rescore

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_house_ifc4x3_ft.ifc"
#: the last element statement of the fixture, renamed by the edit below
WINDOW = "3DLoJg$mebNos8H1ASHdhL"


def _padded(text: str) -> str:
    """The fixture with 3,000 loose points of random coordinates ahead of its entities: its archive
    is then large, and an edit near the end changes only the archive's last bytes (the case a diff
    of the compressed bytes took for "nothing changed")."""
    rng = random.Random(0)
    points = "".join(f"#{100000 + i}=IFCCARTESIANPOINT(({rng.uniform(-1e3, 1e3):.6f},"
                     f"{rng.uniform(-1e3, 1e3):.6f},{rng.uniform(-1e3, 1e3):.6f}));\n" for i in range(3000))
    return text.replace("DATA;\n", "DATA;\n" + points, 1)


def _zip(path: Path, text: str, member: str = "model.ifc") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, text)
    return path


def _one_error(capsys: pytest.CaptureFixture, *needles: str) -> None:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert all(n in err[0] for n in needles), err


def test_diff_of_two_archives_names_an_edit_near_the_end(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text = _padded(FIXTURE.read_text())
    edited = re.sub(rf"('{re.escape(WINDOW)}',\$,)'Window'", r"\1'Edited window'", text)
    assert edited != text
    a, b = _zip(tmp_path / "a.ifczip", text), _zip(tmp_path / "b.ifczip", edited)
    (tmp_path / "a.ifc").write_text(text)
    assert node_changes(load_model(a), load_model(tmp_path / "a.ifc")).empty
    assert main(["bimedit", "diff", str(a), str(a), "--json"]) == 0
    assert not any(json.loads(capsys.readouterr().out).values())
    assert main(["bimedit", "diff", str(a), str(b), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["modified"] == [WINDOW]
    assert not found["added"] and not found["removed"]


@pytest.mark.parametrize("content, needle", [
    ({"readme.txt": "no model"}, "the archive holds no .ifc file"),
    ({"model.ifcXML": "<ifc/>"}, "is ifcXML, which is not read"),
    (None, "not a readable IFC zip archive"),
])
def test_archive_without_a_readable_model_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                            content: dict[str, str] | None, needle: str) -> None:
    bad = tmp_path / "bad.ifczip"
    if content is None:
        bad.write_text(FIXTURE.read_text())  # STEP text under the archive's suffix
    else:
        with zipfile.ZipFile(bad, "w") as archive:
            for name, data in content.items():
                archive.writestr(name, data)
    assert main(["bimedit", "diff", str(bad), str(FIXTURE)]) == 2
    _one_error(capsys, str(bad), needle)
    assert main(["bimedit", "generate", "--ifc", str(bad), "--n", "1", "--out", str(tmp_path / "out")]) == 2
    _one_error(capsys, needle)


def test_archive_is_bounded_unpacked(tmp_path: Path, capsys: pytest.CaptureFixture,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A small archive of a large model is refused before it is unpacked (IfcOpenShell would
    unpack it whole into a temporary folder)."""
    text = _padded(FIXTURE.read_text())
    archive = _zip(tmp_path / "big.ifczip", text)
    monkeypatch.setenv("BUILDBENCH_LIMIT_INPUT_FILE_BYTES", str(archive.stat().st_size * 2))
    assert archive.stat().st_size * 2 < len(text)
    assert main(["bimedit", "diff", str(archive), str(archive)]) == 2
    _one_error(capsys, "unpacked, over the limit", "BUILDBENCH_LIMIT_INPUT_FILE_BYTES")


def test_caps_count_the_model_in_an_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _zip(tmp_path / "m.ifczip", _padded(FIXTURE.read_text()))
    assert over_caps(archive) is None
    monkeypatch.setenv("BUILDBENCH_LIMIT_IFC_ENTITIES", "3000")
    over = over_caps(archive)
    assert over is not None and "IFC entities, over the cap of 3,000" in over


def test_tasks_on_an_archive_use_its_model_unpacked(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "house.ifczip", FIXTURE.read_text(), member="inner name.ifc")
    tasks, _ = generate_from_ifc(archive, tmp_path / "out", n=3, seed=0)
    scene = tmp_path / "out" / "scenes" / "house.ifc"
    assert scene.read_bytes() == FIXTURE.read_bytes()
    assert {Path(t.input_ifc).name for t in tasks if "UPD" in t.task_id or "DEL" in t.task_id} <= {"house.ifc"}
    preds = tmp_path / "preds"
    preds.mkdir()
    groups = list({t.group_id: t for t in tasks}.values())
    for t in groups:
        write_oracle_prediction(t, preds / f"{t.task_id}.ifc")
    assert all(r.score is not None and r.score.solved for r in rescore(groups, preds))


def test_folder_of_buildings_reads_archives_under_distinct_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    plain = tmp_path / "a" / "house.ifc"
    plain.write_text(FIXTURE.read_text())
    zipped = _zip(tmp_path / "a" / "house.ifczip", FIXTURE.read_text())
    other = _zip(tmp_path / "b.IFCZIP", FIXTURE.read_text())
    (tmp_path / "notes.zip").write_bytes(b"")
    assert ifc_files(tmp_path) == [plain, zipped, other]
    names = unique_names(ifc_files(tmp_path))
    assert names == {plain: "a_house.ifc", zipped: "a_house_ifczip.ifc", other: "b.ifc"}
    assert readable_name("x.IfcZip") == "x.ifc" and readable_name("x.ifc") == "x.ifc"
