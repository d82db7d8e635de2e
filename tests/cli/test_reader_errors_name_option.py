"""A reader's error names the file; the CLI adds the option that gave it (``error: tasks/x.jsonl:2:
... (option --tasks)``), for a file in a given folder too, unless the line names the option
already. A positional argument's own file needs no label: the command has one such input."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from buildbench.cli.main import main
from buildbench.cliargs import GivenPath, forget_given_paths, with_path_label

TASK = {"id": "t1", "suite": "example", "inputs": {"target_height_m": 1.25, "lot_half_width_m": 1.5, "max_blocks": 9},
        "target": {"target_height_m": 1.25}}


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.rstrip("\n")


@pytest.mark.parametrize("given", ["file", "folder"])
def test_a_task_file_error_names_the_option(given: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tasks"
    (folder / "more").mkdir(parents=True)
    bad = folder / "more" / "b.jsonl"
    bad.write_text(json.dumps(TASK) + "\n" + '{"id": "t2",}\n')
    err = _error(["run", "example", "--tasks", str(bad if given == "file" else folder), "--run-dir",
                  str(tmp_path / "run"), "-q"], capsys)
    assert err.startswith(f"error: {bad}:2: not a JSON object") and err.endswith(" (option --tasks)"), err


def test_a_line_that_names_its_option_gets_no_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": 3}')
    err = _error(["report", str(run_dir), "--prices", str(prices)], capsys)
    assert err.startswith(f"error: --prices {prices}: ") and "(option" not in err, err


def test_labels_only_whole_given_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    @click.command()
    @click.argument("source", type=GivenPath())
    @click.option("--tasks", type=GivenPath())
    @click.option("--out", type=GivenPath(output=True))
    def command(source: str, tasks: str | None, out: str | None) -> None:
        """Records what it is given."""

    monkeypatch.chdir(tmp_path)
    forget_given_paths()
    command.main(["src.json", "--tasks", "t", "--out", "t/out"], standalone_mode=False)
    assert with_path_label("t/a.jsonl:3: bad") == "t/a.jsonl:3: bad (option --tasks)"
    assert with_path_label(f"{tmp_path}/t: holds no task") == f"{tmp_path}/t: holds no task (option --tasks)"
    assert with_path_label("t/out: cannot write") == "t/out: cannot write (option --out)"  # the longest
    assert with_path_label("tt/a.jsonl: bad") == "tt/a.jsonl: bad"  # another name that starts alike
    assert with_path_label("src.json: bad") == "src.json: bad (argument SOURCE)"
    assert with_path_label("src.json: bad", arguments=False) == "src.json: bad"
    assert with_path_label("--tasks t/a.jsonl: bad") == "--tasks t/a.jsonl: bad"
    forget_given_paths()
