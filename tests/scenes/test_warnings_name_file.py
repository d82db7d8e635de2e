"""Every warning about a THOR/ProcTHOR scene file names the file, and where in it (the line, and
the house of a list) when known, as the errors do (`buildbench.scenes.scene_warnings`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from buildbench.cli.main import main
from buildbench.scenes.io import load_scene, read_thor

FIXTURES = Path(__file__).parent / "fixtures"
PARTIAL = "procthor_zg_partial_1_doors.json"  # doors[0].wall1 names an exterior wall not in the file
MISSING_WALL = "wall|exterior|0.00|0.00|0.00|6.71"


def _house(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def _line_of(text: str, needle: str, after: int = 0) -> int:
    """The 1-based line of the first ``needle`` past character ``after``."""
    return text.count("\n", 0, text.index(needle, after)) + 1


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="buildbench.scenes")


def test_convert_names_the_file_and_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "house.json"
    text = json.dumps(_house(PARTIAL), indent=1)
    path.write_text(text, encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "procthor", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 0
    (line,) = _warnings(caplog)
    assert line.startswith(f"{path}: line {_line_of(text, MISSING_WALL)}: doors[0].wall1: exterior wall ")


def test_a_list_of_houses_names_the_house(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "houses.json"
    text = json.dumps([_house("procthor_zg_klbr_house_0.json"), _house(PARTIAL)], indent=1)
    path.write_text(text, encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "procthor", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 0
    (line,) = _warnings(caplog)
    second = text.index('"doors"', text.index('"doors"') + 1)  # the second house's doors
    assert line.startswith(f"{path}: line {_line_of(text, MISSING_WALL, second)}: [1].doors[0].wall1: ")


def test_a_jsonl_file_names_the_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "houses.jsonl"
    path.write_text("\n".join(json.dumps(h) for h in (_house("procthor_zg_klbr_house_0.json"), _house(PARTIAL)))
                    + "\n", encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "procthor", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 0
    assert [w.split(": exterior")[0] for w in _warnings(caplog)] == [f"{path}: line 2: doors[0].wall1"]


def test_a_warning_about_the_whole_house_names_the_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    source = FIXTURES / "holodeck_a_living_room.json"  # Objaverse assets of unknown size
    assert main(["scenes", "convert", str(source), "--from", "holodeck", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 0
    (line,) = _warnings(caplog)
    assert line.startswith(f"{source}: 7 object(s) of unknown asset size")
    caplog.clear()
    load_scene(source)
    assert [w.split(": 7 object")[0] for w in _warnings(caplog)] == [str(source)]


def test_load_scene_export_metrics_and_legoeval_name_the_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from buildbench.suites.legoeval.cli import _load_scene
    from buildbench.suites.scenerevis.check.cli import metrics

    path = tmp_path / "house.json"
    text = json.dumps(_house(PARTIAL), indent=1)
    path.write_text(text, encoding="utf-8")
    line = _line_of(text, MISSING_WALL)
    load_scene(path)
    assert _warnings(caplog)[-1].startswith(f"{path}: line {line}: doors[0].wall1: exterior wall ")
    _load_scene(str(path))
    assert _warnings(caplog)[-1].startswith(f"--scene {path} line {line}: doors[0].wall1: exterior wall ")
    assert main(["scenes", "export", str(path), "--out", str(tmp_path / "out"), "--geometry", "box"]) == 0
    assert _warnings(caplog)[-1].startswith(f"{path} line {line}: doors[0].wall1: exterior wall ")
    CliRunner().invoke(metrics, [str(path), "--json"], catch_exceptions=False)
    assert _warnings(caplog)[-1].startswith(f"{path} line {line}: doors[0].wall1: exterior wall ")


def test_a_refused_file_gets_its_error_alone(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    house = _house(PARTIAL)
    for point in house["walls"][0]["polygon"]:  # read, warned about, then refused by check_scene
        point["y"] = point["y"] and 1e5
    path = tmp_path / "house.json"
    path.write_text(json.dumps(house), encoding="utf-8")
    assert main(["scenes", "convert", str(path), "--from", "procthor", "--to", "thor",
                 "--out", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.startswith(f"error: {path}: line 1: walls[0].polygon: 100000 exceeds")
    with pytest.raises(Exception, match=str(path)):
        load_scene(path)
    assert _warnings(caplog) == []


def test_a_house_read_in_code_warns_as_the_reader_says(caplog: pytest.LogCaptureFixture) -> None:
    read_thor(_house(PARTIAL))  # no file to name
    assert _warnings(caplog)[0].startswith("doors[0].wall1: exterior wall ")
