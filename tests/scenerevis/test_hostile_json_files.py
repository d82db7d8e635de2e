"""SceneReVis input files (scenes for ``metrics``/``reverse``/``goals``, ms-swift chain files,
the 3D-FUTURE description file): a 10,000-digit integer (a bare ValueError) or 100,000
brackets (RecursionError) is an error naming the file and line like any bad JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.scenerevis.generate.assets import pool_from_descs_file
from buildbench.suites.scenerevis.generate.export import ExportError, read_records
from buildbench.suites.scenerevis.generate.flat import SceneRecordError, scene_items

HOSTILE = [('{"a": ' + "9" * 10_000 + "}", "an integer of 10000 digits is over the 4300-digit limit"),
           ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 200 levels")]


@pytest.mark.parametrize("content, message", HOSTILE)
def test_scenerevis_metrics_names_the_file_and_line(content: str, message: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    scenes = tmp_path / "scenes.jsonl"
    scenes.write_text(content + "\n")
    assert main(["scenerevis", "metrics", str(scenes)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {scenes} line 1: {message}") and err.count("\n") == 1, err


@pytest.mark.parametrize("content, message", HOSTILE)
def test_scene_chain_and_description_files_name_the_file(content: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "input.jsonl"
    path.write_text('{"id": 1, "messages": []}\n' + content + "\n")
    items = list(scene_items(path))
    assert isinstance(items[-1], SceneRecordError) and f"{path}:2: invalid JSON at column" in str(items[-1])
    assert message in str(items[-1])
    with pytest.raises(ExportError, match=f"input.jsonl:2: invalid JSON at column [0-9]+: {message}"):
        list(read_records(path))
    descs = tmp_path / "descs.json"
    descs.write_text(content)
    with pytest.raises(ValueError, match=f"descs.json: cannot read the description file \\({message}"):
        pool_from_descs_file(descs)
