"""``Store``: a run on disk — a manifest plus one committed row per finished episode.

SQLite in WAL mode. Each finished episode is one ``INSERT`` in its own transaction, keyed by
``(task_id, sample)``, so a run killed at any moment holds only whole episodes, and resuming
it skips exactly those. The file is ``RUN_DIR/run.sqlite``; artifacts live beside it under
``RUN_DIR/artifacts/``.

A finished run is read (``report``, ``export``, ``view``) without writing anything:
``Store(run_dir, create=False)`` opens it read-only (SQLite ``mode=ro``, and ``immutable=1``
when the medium cannot be written, where WAL's ``-shm`` file cannot be made). Every stored
value is checked as it is read: a damaged or tampered store is a `StoreCorruptError` naming
the file and the record, never a parser's message without a place.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from buildbench.inputs import check_regular_file

from .episode import Episode
from .errors import BuildbenchError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    task_id     TEXT    NOT NULL,
    sample      INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    metrics     TEXT    NOT NULL,
    usage       TEXT    NOT NULL,
    artifacts   TEXT    NOT NULL,
    duration_s  REAL    NOT NULL,
    finished_at REAL    NOT NULL,
    record      TEXT    NOT NULL,
    PRIMARY KEY (task_id, sample)
);
CREATE TABLE IF NOT EXISTS summary (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


#: SQL: the stored episode (table ``episodes``) is an error whose process crashed (``error_kind``
#: ``crash``, `buildbench.harness.apart`). A record that is not JSON is not one.
_CRASHED = ("episodes.status = 'error' AND CASE WHEN json_valid(episodes.record) "
            "THEN json_extract(episodes.record, '$.error_kind') = 'crash' ELSE 0 END")


class StoreCorruptError(BuildbenchError):
    """A run store that cannot be read as one: damaged, tampered with, or not a store."""


def connect_readonly(path: Path, **options: Any) -> sqlite3.Connection:
    """``path`` (a run store) opened for reading only, also on read-only media.

    Raises:
        StoreCorruptError: Not a regular file, or not a SQLite database with a manifest.
    """
    try:
        check_regular_file(path)
    except OSError as exc:
        raise StoreCorruptError(f"{path}: {exc.strerror or exc}") from None
    if path.stat().st_size == 0:
        raise StoreCorruptError(f"{path.parent} holds no run ({path.name} is empty: 0 bytes)")
    try:
        if os.access(path.parent, os.W_OK):
            try:
                return _open(path, "mode=ro", options)
            except sqlite3.OperationalError as exc:
                if "unable to open" not in str(exc):
                    raise
                # A medium read-only without the folder saying so (a read-only bind mount).
        # WAL readers need the -shm file, which cannot be made on read-only media: immutable=1
        # reads the database file alone, which holds everything once the WAL is checkpointed
        # (a run closed cleanly); episodes still in the WAL (a run killed while writing) would
        # be missed, so then a private copy of both files is read.
        wal = path.with_name(path.name + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:
            return _open(_private_copy(path, wal), "mode=ro", options)
        return _open(path, "mode=ro&immutable=1", options)
    except sqlite3.DatabaseError as exc:
        raise StoreCorruptError(f"{path}: not a buildbench run store ({exc})") from None


def _open(path: Path, query: str, options: dict[str, Any]) -> sqlite3.Connection:
    db: sqlite3.Connection = sqlite3.connect(f"{path.resolve().as_uri()}?{query}", uri=True, timeout=30.0, **options)
    try:
        db.execute("SELECT COUNT(*) FROM manifest").fetchone()
    except BaseException:
        db.close()
        raise
    return db


def _private_copy(path: Path, wal: Path) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="buildbench-store-"))
    atexit.register(shutil.rmtree, folder, True)
    shutil.copyfile(path, folder / path.name)
    shutil.copyfile(wal, folder / wal.name)
    return folder / path.name


def load_json(text: Any, where: str) -> Any:
    """A stored JSON value; StoreCorruptError naming ``where`` when it is not one."""
    try:
        return json.loads(text)
    # ValueError: malformed JSON, bad UTF-8, or a tampered integer of over 4,300 digits.
    # json.loads, not jsonio.parse_json: stored values may hold NaN (json.dumps writes it).
    except (ValueError, TypeError) as exc:
        raise StoreCorruptError(f"{where} is not valid JSON ({exc})") from None
    except RecursionError:  # a tampered value of 100,000 brackets; nothing we write nests so deep
        raise StoreCorruptError(f"{where} is nested too deeply to be a stored value") from None


_OBJECT_FIELDS = ("outcome", "metrics", "usage", "artifacts", "metadata")
#: The type each plain column of ``episodes`` holds as the store writes it.
_COLUMN_TYPES: dict[str, type | tuple[type, ...]] = {
    "task_id": str, "sample": int, "seed": int, "status": str, "duration_s": (int, float), "finished_at": (int, float)}


def check_columns(where: str, **columns: Any) -> None:
    """StoreCorruptError naming the first of ``columns`` (plain columns of an episode row) whose
    value is not of the column's type: SQLite keeps whatever a writer gave, and readers sort
    and add these."""
    for name, value in columns.items():
        kinds = _COLUMN_TYPES[name]
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise StoreCorruptError(f"{where} column {name}: {repr(value)[:60]} is not "
                                    f"{'text' if kinds is str else 'a number'}")


def episode_from_record(text: Any, where: str) -> Episode:
    """The `Episode` of a stored ``record`` column, its shape checked; StoreCorruptError naming ``where``."""
    data = load_json(text, where)
    problem = None
    if not isinstance(data, dict):
        problem = f"a {type(data).__name__}, not an object"
    elif not isinstance(data.get("task_id"), str) or isinstance(data.get("sample"), bool) \
            or not isinstance(data.get("sample"), int):
        problem = "task_id or sample missing or of the wrong type"
    elif not isinstance(data.get("steps", []), list) or not all(isinstance(s, dict) for s in data.get("steps", [])):
        problem = "steps is not a list of objects"
    else:
        bad = [k for k in _OBJECT_FIELDS if not isinstance(data.get(k, {}), dict)]
        problem = f"{bad[0]} is not an object" if bad else None
    if problem is None:
        try:
            return Episode.from_dict(data)
        except (TypeError, ValueError, KeyError) as exc:
            problem = str(exc)
    raise StoreCorruptError(f"{where}: not an episode record ({problem})")


class Store:
    """Open (or create) the run stored in ``run_dir``; ``create=False`` opens an existing run
    read-only (for reading it: report, export, view)."""

    FILENAME = "run.sqlite"

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / self.FILENAME
        if not self.path.exists() and not create:
            raise BuildbenchError(f"{self.run_dir} is not a buildbench run (no {self.FILENAME})")
        if not create:
            self._db = connect_readonly(self.path)
            self._check_schema()  # every reader needs the manifest whole: a damaged one is named at once
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self.path.exists():
                check_regular_file(self.path)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise BuildbenchError(f"cannot open run store {self.path}: {exc}") from exc
        except OSError as exc:
            raise BuildbenchError(f"cannot open run store {self.path}: {exc.strerror or exc}") from None
        try:
            self._check_schema()
        except BuildbenchError:
            self._db.close()
            raise

    def _check_schema(self) -> None:
        """Refuse a store another layout of the tables wrote: read, or resumed and written, it would
        misread or corrupt episodes. A new store (no manifest yet) has no version to check."""
        version = self.manifest().get("schema_version", SCHEMA_VERSION)
        if version == SCHEMA_VERSION:
            return
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise BuildbenchError(f"{self.path}: written by a newer buildbench (store schema {version}, this one "
                                  f"reads {SCHEMA_VERSION}); upgrade buildbench to read it")
        raise BuildbenchError(f"{self.path}: written by an older buildbench (store schema {version!r}, this one "
                              f"reads {SCHEMA_VERSION}); read it with that version or run it again")

    @property
    def artifact_root(self) -> Path:
        return self.run_dir / "artifacts"

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- manifest -------------------------------------------------------------------------
    def write_manifest(self, manifest: dict[str, Any]) -> None:
        rows = [(k, json.dumps(v, sort_keys=True)) for k, v in manifest.items()]
        rows.append(("schema_version", json.dumps(SCHEMA_VERSION)))
        with self._tx():
            self._db.executemany("INSERT OR REPLACE INTO manifest VALUES (?, ?)", rows)

    def manifest(self) -> dict[str, Any]:
        return {str(k): load_json(v, f"{self.path}: manifest {k!r}") for k, v in self._query("SELECT key, value FROM manifest")}

    def run_config(self) -> dict[str, Any]:
        """The run's settings as its manifest stores them (``RunConfig.to_dict()``), for the readers
        that summarise a run: without them a report would show a suite of None and exit 0.

        Raises:
            StoreCorruptError: Naming the run folder: no manifest, or no config naming a suite.
        """
        manifest = self.manifest()
        config = manifest.get("config")
        if not isinstance(config, dict) or not isinstance(config.get("suite"), str) or not config["suite"].strip():
            what = "no manifest" if not manifest else "no run config naming a suite in its manifest"
            raise StoreCorruptError(f"{self.run_dir} holds no run ({self.FILENAME} has {what}: damaged, or not a run)")
        return config

    # -- episodes -------------------------------------------------------------------------
    def add_episode(self, episode: Episode) -> bool:
        """Commit one finished episode. Returns False (and writes nothing) if it is already in,
        unless what is in is an episode whose process crashed (`finished` leaves those out): the
        episode played again replaces it."""
        record = json.dumps(episode.to_dict(), default=str)
        with self._tx():
            cur = self._db.execute(
                "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_id, sample) DO UPDATE SET "
                "seed = excluded.seed, status = excluded.status, metrics = excluded.metrics, usage = excluded.usage, "
                "artifacts = excluded.artifacts, duration_s = excluded.duration_s, "
                f"finished_at = excluded.finished_at, record = excluded.record WHERE {_CRASHED}",
                (
                    episode.task_id,
                    episode.sample,
                    episode.seed,
                    episode.status,
                    json.dumps(episode.metrics),
                    json.dumps(episode.usage),
                    json.dumps(episode.artifacts),
                    episode.duration_s,
                    time.time(),
                    record,
                ),
            )
        return cur.rowcount == 1

    def finished(self) -> set[tuple[str, int]]:
        """Episodes a resumed run skips: all stored ones but those whose process crashed (a native
        crash of env code may not happen again; played again, the episode replaces its error)."""
        return {(t, s) for t, s in self._db.execute(f"SELECT task_id, sample FROM episodes WHERE NOT ({_CRASHED})")}

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    def episodes(self) -> Iterator[Episode]:
        for task_id, sample, record in self._query("SELECT task_id, sample, record FROM episodes ORDER BY task_id, sample"):
            yield episode_from_record(record, self._where(task_id, sample))

    def _where(self, task_id: Any, sample: Any) -> str:
        return f"{self.path}: episode {task_id!r} sample {sample!r}"

    def _query(self, sql: str) -> list[Any]:
        # All rows at once: a damaged page surfaces here, as one error naming the store.
        try:
            return self._db.execute(sql).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreCorruptError(f"{self.path}: cannot read the run store ({exc})") from None

    def rows(self) -> Iterator[dict[str, Any]]:
        """Flat episode rows (no step log) for tables and columnar export."""
        cur = self._query(
            "SELECT task_id, sample, seed, status, metrics, usage, artifacts, duration_s, finished_at, record "
            "FROM episodes ORDER BY task_id, sample"
        )
        for task_id, sample, seed, status, metrics, usage, artifacts, duration_s, finished_at, record in cur:
            where = self._where(task_id, sample)
            # A row stands for its episode: one whose record cannot be read is an error here as in
            # `episodes`, never a flat row exported as if the episode were whole.
            episode_from_record(record, where)
            check_columns(where, task_id=task_id, sample=sample, seed=seed, status=status, duration_s=duration_s,
                          finished_at=finished_at)
            columns = {name: load_json(text, f"{where} column {name}")
                       for name, text in (("metrics", metrics), ("usage", usage), ("artifacts", artifacts))}
            bad = [name for name, value in columns.items() if not isinstance(value, dict)]
            if bad:
                raise StoreCorruptError(f"{where} column {bad[0]}: not an object")
            yield {
                "task_id": task_id,
                "sample": sample,
                "seed": seed,
                "status": status,
                **columns,
                "duration_s": duration_s,
                "finished_at": finished_at,
            }

    # -- summary --------------------------------------------------------------------------
    def write_summary(self, summary: dict[str, Any]) -> None:
        with self._tx():
            self._db.execute("DELETE FROM summary")
            self._db.executemany(
                "INSERT INTO summary VALUES (?, ?)",
                [(k, json.dumps(v, default=str)) for k, v in summary.items()],
            )

    def summary(self) -> dict[str, Any]:
        return {str(k): load_json(v, f"{self.path}: summary {k!r}") for k, v in self._query("SELECT key, value FROM summary")}

    def _tx(self) -> _Transaction:
        return _Transaction(self._db, self.path)


class _Transaction:
    """One write. SQLite's failure to write (a full disk, a file-size limit: ``disk I/O error``,
    ``database or disk is full``) names the store, as a `BuildbenchError`; the transaction is
    rolled back, so the store holds what it held before."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db, self.path = db, path

    def __enter__(self) -> None:
        self._do("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, *rest: object) -> None:
        if exc_type is None:
            self._do("COMMIT")
            return
        if self.db.in_transaction:  # SQLite rolls back by itself after some failures
            self.db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.OperationalError):
            raise BuildbenchError(f"cannot write run store {self.path}: {exc}") from exc

    def _do(self, statement: str) -> None:
        try:
            self.db.execute(statement)
        except sqlite3.OperationalError as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise BuildbenchError(f"cannot write run store {self.path}: {exc}") from exc
