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
