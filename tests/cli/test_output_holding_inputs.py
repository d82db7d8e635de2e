"""An output folder that holds an input of the same command: refused where the command writes
under the input's name (it would overwrite the input or write among it), fine where it cannot
(``report runs/a --figures .``: figures have fixed names; ``scenerevis export out/chains.jsonl
--out out``: it writes hf/ and verl.parquet). `GivenPath`'s ``writes`` names what is written."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest

from buildbench.cli.main import main
from buildbench.cliargs import GivenPath, forget_given_paths


@click.command()
@click.argument("inputs", nargs=-1, type=GivenPath())
@click.option("--out", type=GivenPath(file_okay=False, output=True, writes=("tasks.jsonl", "views", "*.png")))
@click.option("--anything", type=GivenPath(file_okay=False, output=True))
def command(inputs: tuple[str, ...], out: str | None, anything: str | None) -> None:
    """Reads its inputs, writes tasks.jsonl, views/ and PNGs into --out."""


def _refusal(argv: list[str]) -> str | None:
    forget_given_paths()
    try:
        command.main(argv, standalone_mode=False)
    except click.BadParameter as exc:
        return exc.format_message()
    return None


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    (folder / "views" / "deep").mkdir(parents=True)
    (folder / "views" / "deep" / "house.json").write_text("{}")
    (folder / "tasks.jsonl").write_text("{}\n")
    (folder / "a.png").write_bytes(b"png")
    (folder / "houses").mkdir()
    (folder / "scene.json").write_text("{}")
    os.symlink(folder / "views", tmp_path / "link")
    return folder


@pytest.mark.parametrize("given, name, holds", [
    ("tasks.jsonl", "tasks.jsonl", "the path of"),
    ("views", "views", "the path of"),
    ("views/deep/house.json", "views", "which holds"),
    ("a.png", "a.png", "the path of"),
])
@pytest.mark.parametrize("order", ["output first", "input first"])
def test_an_input_under_a_name_the_output_writes_is_refused(given: str, name: str, holds: str, order: str,
                                                            out: Path) -> None:
    read = out / given
    argv = ["--out", str(out), str(read)] if order == "output first" else [str(read), "--out", str(out)]
    message = _refusal(argv)
    assert message is not None and message.startswith("Invalid value for '--out'"), message
    assert f"{out}: this command writes {name} in it, {holds} {read}, given as argument INPUTS; write the " \
           "output somewhere else" in message


def test_an_input_the_output_does_not_write_over_is_fine(out: Path, tmp_path: Path) -> None:
    # Other names in the folder; an output that names nothing it writes; links followed either way.
    for read in ("houses", "scene.json"):
        assert _refusal(["--out", str(out), str(out / read)]) is None
    assert _refusal(["--anything", str(out), str(out / "tasks.jsonl")]) is None
    assert _refusal(["--out", str(out), str(tmp_path / "link" / "deep" / "house.json")]) is not None
    assert _refusal(["--out", str(tmp_path / "link" / ".."), str(out / "views")]) is not None


def test_scenerevis_reverse_refuses_an_input_where_it_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "images").mkdir()
    scenes = tmp_path / "images" / "scenes.jsonl"
    scenes.write_text("{}\n")
    assert main(["scenerevis", "reverse", str(scenes), "--out", str(tmp_path), "--no-images"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tmp_path}: this command writes images in it, which holds {scenes}" in err, err
    assert sorted(os.listdir(tmp_path)) == ["images"] and os.listdir(tmp_path / "images") == ["scenes.jsonl"]


def test_figures_and_an_export_beside_their_inputs_are_written(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
    assert main(["report", str(run_dir), "--figures", str(tmp_path)]) == 0, capsys.readouterr().err
    assert any(p.suffix == ".png" for p in tmp_path.iterdir()) and (run_dir / "run.sqlite").is_file()
    chains = tmp_path / "chains.jsonl"
    chains.write_text("{}\n")
    capsys.readouterr()
    # The folder holding the chains is fine: the reader judges them (here: not a chain record).
    assert main(["scenerevis", "export", str(chains), "--out", str(tmp_path)]) == 2
    assert "not a chain record" in capsys.readouterr().err


def test_an_export_into_its_run_folder_beside_the_runs_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # export reads only the run's own files: a new file beside them (as its default
    # RUN/episodes.jsonl) is written; the run's files and what lies in them are refused.
    run_dir = tmp_path / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
    (run_dir / "artifacts").mkdir(exist_ok=True)
    run_yaml = (run_dir / "run.yaml").read_bytes()
    assert main(["export", str(run_dir), "--out", str(tmp_path / "outside.jsonl")]) == 0
    for out in (run_dir / "mine.jsonl", run_dir / "exports" / "mine.parquet"):
        assert main(["export", str(run_dir), "--out", str(out), "--format", out.suffix[1:]]) == 0, capsys.readouterr()
    assert (run_dir / "mine.jsonl").read_bytes() == (tmp_path / "outside.jsonl").read_bytes()
    assert main(["export", str(run_dir), "--format", "sft", "--out", str(run_dir / "my-sft")]) == 0
    capsys.readouterr()
    for out, says in ((run_dir / "run.yaml", f"is the run's own run.yaml in the run folder {run_dir}"),
                      (run_dir / "artifacts" / "x.jsonl", f"lies in {run_dir / 'artifacts'}, which this command reads "
                                                          f"(in {run_dir}, given as argument RUN_DIR)"),
                      (run_dir / ".", "is a run folder")):
        assert main(["export", str(run_dir), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err, err
    assert (run_dir / "run.yaml").read_bytes() == run_yaml and not os.listdir(run_dir / "artifacts")
    assert main(["report", str(run_dir)]) == 0  # the run still reads as before
