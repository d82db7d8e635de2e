"""A stored value tampered into a 10,000-digit integer raised a bare ValueError out of the
store's JSON reader (``report`` exit 1); it is one ``error:`` line naming the store and episode."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness.store import Store, StoreCorruptError, load_json


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("hostile-json-store") / "run"
    assert main(["run", "example", "--limit", "1", "--workers", "0", "-q", "--run-dir", str(run_dir)]) == 0
    return run_dir


def test_a_huge_stored_integer_is_named(stored_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(stored_run, run_dir)
    with sqlite3.connect(run_dir / Store.FILENAME) as db:
        db.execute("UPDATE episodes SET record = ?", ('{"a": ' + "9" * 10_000 + "}",))
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {run_dir / Store.FILENAME}: episode 'tower_0000_0000' sample 0 is not valid JSON "
                          "(Exceeds the limit (4300 digits)") and err.count("\n") == 1, err


def test_a_stored_nan_still_reads() -> None:
    value = load_json('{"score": NaN}', "x")
    assert value["score"] != value["score"]
    with pytest.raises(StoreCorruptError, match="x is not valid JSON"):
        load_json("9" * 10_000, "x")
