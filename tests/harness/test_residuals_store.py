"""Readers of a damaged store say so: a Parquet export of a store with an unreadable episode
record is one ``error:`` line naming the episode (exit 2, no file), as the JSONL export is; a
report or comparison of a store without a run config names the run folder (exit 2)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from buildbench.cli import main
from buildbench.harness import RunConfig, Runner, Store


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("stored") / "run"
    Runner(RunConfig(suite="example", agent="reference", protocol="one-shot", split="demo", limit=2, workers=0),
           run_dir).run()
    return run_dir


def _tampered(stored_run: Path, tmp_path: Path, sql: str, *args: object) -> Path:
    run_dir = tmp_path / "run"
    shutil.copytree(stored_run, run_dir)
    with sqlite3.connect(run_dir / Store.FILENAME) as db:
        db.execute(sql, args)
    return run_dir


def _one_error(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("record", ["{not json", json.dumps({"task_id": "x"}), "[]"])
def test_an_unreadable_record_is_named_by_every_export(stored_run: Path, tmp_path: Path, fmt: str, record: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _tampered(stored_run, tmp_path, "UPDATE episodes SET record = ? WHERE sample = 0 AND task_id = "
                        "(SELECT MAX(task_id) FROM episodes)", record)
    out = tmp_path / f"out.{fmt}"
    err = _one_error(capsys, ["export", str(run_dir), "--format", fmt, "--out", str(out)])
    assert f"{run_dir / Store.FILENAME}: episode 'tower_0000_0001' sample 0" in err
    assert not out.exists()


def test_a_whole_store_still_exports_every_row(stored_run: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "out.parquet"
    assert main(["export", str(stored_run), "--format", "parquet", "--out", str(out)]) == 0
    assert "wrote 2 episode(s)" in capsys.readouterr().out and pq.read_table(out).num_rows == 2


@pytest.mark.parametrize("sql, what", [
    ("DELETE FROM manifest", "has no manifest"),
    ("DELETE FROM manifest WHERE key = 'config'", "has no run config naming a suite in its manifest"),
    ("UPDATE manifest SET value = '{\"suite\": \"\"}' WHERE key = 'config'", "has no run config naming a suite"),
    ("UPDATE manifest SET value = '[]' WHERE key = 'config'", "has no run config naming a suite"),
])
@pytest.mark.parametrize("command", [["report"], ["report", "--json"], ["compare", "{ok}"]])
def test_a_report_of_a_store_without_its_run_config_names_the_folder(
        stored_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], sql: str, what: str,
        command: list[str]) -> None:
    run_dir = _tampered(stored_run, tmp_path, sql)
    args = [command[0], str(run_dir), *[a.format(ok=stored_run) for a in command[1:]]]
    err = _one_error(capsys, args)
    assert err.startswith(f"error: {run_dir} holds no run (run.sqlite {what}")
