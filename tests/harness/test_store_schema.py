"""A run store is opened only by the buildbench whose table layout wrote it: an older or newer
store's schema version is refused with one line saying which, for readers and resumes alike."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from buildbench.cli.main import main
from buildbench.harness import BuildbenchError, Store
from buildbench.harness.store import SCHEMA_VERSION


def _store_with_version(run_dir: Path, version: object) -> None:
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example"}})
    db = sqlite3.connect(run_dir / Store.FILENAME)
    with db:
        db.execute("UPDATE manifest SET value = ? WHERE key = 'schema_version'", (json.dumps(version),))
    db.close()


@pytest.mark.parametrize("version, says", [(SCHEMA_VERSION + 1, "newer buildbench"), (0, "older buildbench"),
                                           ("1", "older buildbench")])
def test_another_schema_version_is_refused_on_open(version: object, says: str, tmp_path: Path) -> None:
    _store_with_version(tmp_path, version)
    for create in (False, True):
        with pytest.raises(BuildbenchError, match=f"written by an? {says} \\(store schema"):
            Store(tmp_path, create=create)


def test_the_current_version_and_a_new_store_open(tmp_path: Path) -> None:
    _store_with_version(tmp_path / "a", SCHEMA_VERSION)
    with Store(tmp_path / "a", create=False) as store:
        assert store.manifest()["schema_version"] == SCHEMA_VERSION
    with Store(tmp_path / "b") as store:  # no manifest yet
        assert store.manifest() == {}


def test_the_cli_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _store_with_version(tmp_path, SCHEMA_VERSION + 1)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "newer buildbench" in err[0] and err[0].startswith("error: ")
