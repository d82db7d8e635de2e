"""Dataset shards and folders given to ``dreamhouse validate``/``render``: a line or manifest
of 100,000 brackets (RecursionError: an error line without the file) or a 10,000-digit integer
(a bare ValueError) is one ``error:`` line naming the file and line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli.main import main

HOSTILE = [('{"a": ' + "9" * 10_000 + "}", "an integer of 10000 digits is over the 4300-digit limit"),
           ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 200 levels")]


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("content, message", HOSTILE)
def test_a_hostile_shard_line_names_the_file_and_line(content: str, message: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    shard = tmp_path / "shard.jsonl"
    shard.write_text("\n" + content + "\n")
    assert f"{shard}:2: not JSON ({message}" in _one_error(capsys, ["dreamhouse", "validate", str(shard)])


@pytest.mark.parametrize("content, message", HOSTILE)
def test_a_hostile_dataset_folder_names_the_file(content: str, message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "manifest.json").write_text(content)
    assert f"{folder} has no readable manifest.json: {message}" in _one_error(
        capsys, ["dreamhouse", "validate", str(folder)])
    (folder / "manifest.json").write_text('{"files": [{"path": "part-0.jsonl"}]}')
    (folder / "part-0.jsonl").write_text(content + "\n")
    assert f"{folder / 'part-0.jsonl'}:1: not JSON ({message}" in _one_error(
        capsys, ["dreamhouse", "render", str(folder), "--out", str(tmp_path / "out")])


def test_a_folder_without_a_manifest_is_named_as_no_dataset(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_error(capsys, ["dreamhouse", "validate", str(tmp_path)])
    assert f"{tmp_path} is no dataset folder: it has no manifest.json" in line and "Errno" not in line
