"""Tampered run folders through the readers: each damage is one ``error:`` line naming the store,
the episode and the column, never a bare ValueError, KeyError or RecursionError."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.store import Store, StoreCorruptError


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("hostile-store") / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
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


def test_a_column_of_the_wrong_type_is_named(stored_run: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _tampered(stored_run, tmp_path, "UPDATE episodes SET duration_s = 'abc'")
    with Store(run_dir, create=False) as store, pytest.raises(StoreCorruptError,
                                                               match="column duration_s: 'abc' is not a number"):
        list(store.rows())
    # The viewer reads the same columns with its own query (it failed with a bare ValueError).
    err = _one_error(capsys, ["view", str(run_dir), "--static", str(tmp_path / "site")])
    assert "sample 0 column duration_s: 'abc' is not a number" in err


def test_a_deeply_nested_record_is_named(stored_run: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _tampered(stored_run, tmp_path, "UPDATE episodes SET record = ?", "[" * 100_000 + "]" * 100_000)
    err = _one_error(capsys, ["report", str(run_dir)])
    assert f"{run_dir / Store.FILENAME}: episode 'tower_0000_0000' sample 0 is nested too deeply" in err


def test_sft_export_of_a_store_without_its_config_is_one_line(stored_run: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _tampered(stored_run, tmp_path, "DELETE FROM manifest WHERE key = 'config'")
    err = _one_error(capsys, ["export", str(run_dir), "--format", "sft", "--out", str(tmp_path / "sft")])
    assert "the manifest holds no run config this version reads" in err
