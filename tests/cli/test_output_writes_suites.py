"""The suites' commands that write fixed names into an --out folder declare them (`GivenPath`'s
``writes``): an input under one of those names is refused while the command line is parsed, an
input beside them is fine. ``dreamhouse unpack`` writes tasks.jsonl and views/; ``bimedit
generate`` writes scenes/, inputs/, truth/, tasks.jsonl and generation-report.txt."""

from __future__ import annotations

from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.suites.bimedit.cli import GENERATE_WRITES


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_dreamhouse_unpack_refuses_a_houses_tree_where_it_writes_its_views(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "views" / "house_1"
    tree.mkdir(parents=True)
    (tree / "structure.json").write_text('{"members": []}')
    assert main(["dreamhouse", "unpack", str(tmp_path / "views"), "--out", str(tmp_path)]) == 2
    err = _one_error(capsys)
    assert f"{tmp_path}: this command writes views in it, the path of {tmp_path / 'views'}" in err
    assert not (tmp_path / "tasks.jsonl").exists()
    pack = tmp_path / "tasks.jsonl"
    pack.write_text("not a pack\n")
    assert main(["dreamhouse", "unpack", str(pack), "--out", str(tmp_path)]) == 2
    assert "this command writes tasks.jsonl in it" in _one_error(capsys)
    assert pack.read_text() == "not a pack\n"


def test_dreamhouse_unpack_reads_a_pack_beside_what_it_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = tmp_path / "mine.dhpack"
    pack.write_bytes(b"not SQLite")
    assert main(["dreamhouse", "unpack", str(pack), "--out", str(tmp_path)]) == 2
    err = _one_error(capsys)
    assert "writes" not in err and str(pack) in err  # the pack's own error: the folder was accepted


@pytest.mark.parametrize("under", ["scenes", "inputs", "truth"])
def test_bimedit_generate_refuses_an_ifc_model_where_it_writes(under: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / under / "model.ifc"
    model.parent.mkdir()
    model.write_text("ISO-10303-21;\n")
    assert main(["bimedit", "generate", "--ifc", str(model), "--out", str(tmp_path)]) == 2
    err = _one_error(capsys)
    assert f"{tmp_path}: this command writes {under} in it, which holds {model}, given as option --ifc" in err
    assert model.read_text() == "ISO-10303-21;\n" and not (tmp_path / "tasks.jsonl").exists()


def test_bimedit_generate_reads_a_model_beside_what_it_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.ifc"
    model.write_text("not IFC\n")
    assert main(["bimedit", "generate", "--ifc", str(model), "--out", str(tmp_path)]) == 2
    err = _one_error(capsys)
    assert "this command writes" not in err and str(model) in err


def test_bimedit_generate_writes_only_the_names_it_declares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bimedit", "generate", "--n", "1", "--out", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert "tasks.jsonl" in written and written <= set(GENERATE_WRITES), written
