"""Hostile input files and arguments that once reached the CLI's last-resort handler (exit 1,
"set BUILDBENCH_DEBUG=1") or a bare Python error instead of one ``error:`` line naming the input."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.errors import ConfigError

BIG_INT = b'{"a": ' + b"9" * 10_000 + b"}"
DEEP = b"[" * 100_000 + b"]" * 100_000


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("content, message", [(BIG_INT, "an integer of more than 4300 digits (line 1, column 7)"),
                                              (DEEP, "nested deeper than 200 levels")])
def test_a_run_file_number_or_nesting_beyond_python_is_one_line(
        content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.json"
    run_file.write_bytes(content)
    assert message in _one_error(capsys, ["run", "--config", str(run_file), "--print-config"])


@pytest.mark.parametrize("command", ["apply", "render"])
@pytest.mark.parametrize("content, message", [(BIG_INT, "an integer of 10000 digits is over the 4300-digit limit"),
                                              (DEEP, "nested deeper than 200 levels")])
def test_a_scenerevis_scene_beyond_python_is_one_line(
        command: str, content: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = tmp_path / "scene.json"
    scene.write_bytes(content)
    args = ["scenerevis", "apply", str(scene), str(scene)] if command == "apply" else \
        ["scenerevis", "render", str(scene), "--out", str(tmp_path / "out.png")]
    err = _one_error(capsys, args)
    assert f"{scene}: not a JSON scene ({message}" in err


def test_gymnasium_options_that_are_not_a_mapping_are_a_config_error() -> None:
    from buildbench.gym import BuildbenchEnv

    with pytest.raises(ConfigError, match="options for buildbench/Example: expected a mapping of option names "
                                          "to values, got list"):
        BuildbenchEnv("example", split="demo", options=[1])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("hostile-files") / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
    return run_dir


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_failed_export_leaves_what_was_there(fmt: str, stored_run: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import errno
    import json

    import pyarrow.parquet as pq

    out = tmp_path / f"episodes.{fmt}"
    out.write_text("the earlier export\n")

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    # pyarrow deletes the file it fails to write: once the user's earlier export, or /dev/full.
    if fmt == "parquet":
        monkeypatch.setattr(pq, "write_table", full_disk)
    else:
        monkeypatch.setattr(json, "dumps", full_disk)
    err = _one_error(capsys, ["export", str(stored_run), "--format", fmt, "--out", str(out)])
    assert f"--out {out}: cannot write it (No space left on device)" in err
    assert out.read_text() == "the earlier export\n" and [p.name for p in tmp_path.iterdir()] == [out.name]


def test_an_export_onto_a_fifo_is_refused_not_a_hang(stored_run: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    err = _one_error(capsys, ["export", str(stored_run), "--out", str(fifo)])
    assert f"--out': {fifo}: is a FIFO (named pipe)" in err and fifo.exists()
    assert main(["export", str(stored_run), "--out", str(tmp_path / "e.jsonl")]) == 0
    assert (tmp_path / "e.jsonl").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("args", [["run", "example", "-q", "--run-dir", ""], ["report", "{run}", "--figures", " "],
                                  ["export", ""], ["view", "{run}", "--static", ""]])
def test_an_empty_path_is_refused_not_the_current_folder(
        args: list[str], stored_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    err = _one_error(capsys, [a.format(run=stored_run) for a in args])
    assert "an empty path; give a file or folder name" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("record, message", [("{file}/x.jsonl", "'--record': {file}/x.jsonl: {file} is not a folder"),
                                             ("{fifo}", "'--record': {fifo}: is a FIFO (named pipe), not a regular file")])
def test_a_record_file_that_cannot_be_written_is_refused_before_the_run(
        record: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    (tmp_path / "file").write_text("")
    os.mkfifo(tmp_path / "fifo")
    where = {"file": tmp_path / "file", "fifo": tmp_path / "fifo"}
    run_dir = tmp_path / "run"
    err = _one_error(capsys, ["run", "example", "-q", "--model", "openai:gpt-4o", "--record",
                              record.format(**where), "--run-dir", str(run_dir)])
    assert message.format(**where) in err and not run_dir.exists()
