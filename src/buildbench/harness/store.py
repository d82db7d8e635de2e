"""``Store``: a run on disk — a manifest plus one committed row per finished episode.

SQLite in WAL mode. Each finished episode is one ``INSERT`` in its own transaction, keyed by
``(task_id, sample)``, so a run killed at any moment holds only whole episodes, and resuming
it skips exactly those. The file is ``RUN_DIR/run.sqlite``; artifacts live beside it under
``RUN_DIR/artifacts/``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


class Store:
    """Open (or create) the run stored in ``run_dir``."""

    FILENAME = "run.sqlite"

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / self.FILENAME
        if not self.path.exists() and not create:
            raise BuildbenchError(f"{self.run_dir} is not a buildbench run (no {self.FILENAME})")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise BuildbenchError(f"cannot open run store {self.path}: {exc}") from exc

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
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM manifest")}

    # -- episodes -------------------------------------------------------------------------
    def add_episode(self, episode: Episode) -> bool:
        """Commit one finished episode. Returns False (and writes nothing) if it is already in."""
        record = json.dumps(episode.to_dict(), default=str)
        with self._tx():
            cur = self._db.execute(
                "INSERT OR IGNORE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        return {(t, s) for t, s in self._db.execute("SELECT task_id, sample FROM episodes")}

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    def episodes(self) -> Iterator[Episode]:
        for (record,) in self._db.execute("SELECT record FROM episodes ORDER BY task_id, sample"):
            yield Episode.from_dict(json.loads(record))

    def rows(self) -> Iterator[dict[str, Any]]:
        """Flat episode rows (no step log) for tables and columnar export."""
        cur = self._db.execute(
            "SELECT task_id, sample, seed, status, metrics, usage, artifacts, duration_s, finished_at "
            "FROM episodes ORDER BY task_id, sample"
        )
        for task_id, sample, seed, status, metrics, usage, artifacts, duration_s, finished_at in cur:
            yield {
                "task_id": task_id,
                "sample": sample,
                "seed": seed,
                "status": status,
                "metrics": json.loads(metrics),
                "usage": json.loads(usage),
                "artifacts": json.loads(artifacts),
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
        return {k: json.loads(v) for k, v in self._db.execute("SELECT key, value FROM summary")}

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
