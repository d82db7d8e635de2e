"""Stored runs as the viewer reads them: read-only, paginated, and confined to the run folder.

Each run is opened read-only (SQLite ``mode=ro``), so viewing never changes a run and a run
still being written can be watched. Episode lists are answered by SQL with ``LIMIT`` and
``OFFSET`` (sorting on a metric through ``json_extract``), so the first page of a
10,000-episode run never loads the step logs of the other 9,950 episodes.
"""

from __future__ import annotations

import sqlite3
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from buildbench.harness.episode import SCORED_STATUSES, Episode
from buildbench.harness.errors import BuildbenchError
from buildbench.harness.store import (
    Store,
    StoreCorruptError,
    check_columns,
    connect_readonly,
    episode_from_record,
    load_json,
)
from buildbench.jsonio import finite_float

#: Episodes per page unless asked; and the most one request may ask for.
DEFAULT_PAGE = 50
MAX_PAGE = 500
#: Image types served from a run folder (never HTML or SVG, which could carry script).
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
               ".gif": "image/gif"}
#: Columns an episode list can be sorted on besides ``metric:<key>``.
SORT_COLUMNS = {"task": "task_id", "sample": "sample", "status": "status", "duration": "duration_s",
                "finished": "finished_at"}

#: The metrics shown first in each suite's episode table (the rest can be picked in the page).
HEADLINE_METRICS: dict[str, tuple[str, ...]] = {
    "dreamhouse": ("structural_pass", "pass_rate", "visual_fidelity", "topological_fidelity", "members"),
    "buildarena": ("passed", "indicator", "parts", "broken_welds", "invalid_action_rate"),
    "bimedit": ("final", "solved", "geometry", "semantics", "topology"),
    "scenerevis": ("collision_rate", "oob_rate", "Avg", "n_objects", "turns"),
    "legoeval": ("holistic_correct", "partial_accuracy", "valid_pred", "valid_label", "n_constraints"),
    "example": ("passed", "height_ratio", "blocks"),
}


class ViewerInputError(BuildbenchError):
    """A request the viewer refuses (unknown run, bad page, path outside the run); one line."""


@dataclass(frozen=True)
class PageQuery:
    """What one page of an episode list asks for.

    Attributes:
        offset, limit: Rows to skip and to return (``limit`` at most :data:`MAX_PAGE`).
        sort: ``task``, ``sample``, ``status``, ``duration``, ``finished`` or ``metric:<key>``.
        descending: Sort order.
        text: Substring the task id must contain ("" for any).
        status: Exact status ("" for any).
        metric, minimum, maximum: Keep episodes whose metric lies in ``[minimum, maximum]``.
    """

    offset: int = 0
    limit: int = DEFAULT_PAGE
    sort: str = "task"
    descending: bool = False
    text: str = ""
    status: str = ""
    metric: str = ""
    minimum: float | None = None
    maximum: float | None = None

    @classmethod
    def from_params(cls, params: dict[str, str]) -> PageQuery:
        """Parse URL query parameters, naming the bad one on error."""
        def number(name: str, default: float | None) -> float | None:
            raw = params.get(name, "")
            if raw == "":
                return default
            try:
                return finite_float(raw)
            except ValueError as exc:
                raise ViewerInputError(f"query parameter {name}={raw[:40]!r} {exc}") from None

        offset, limit = number("offset", 0), number("limit", DEFAULT_PAGE)
        assert offset is not None and limit is not None
        if offset < 0 or offset != int(offset):
            raise ViewerInputError(f"query parameter offset={offset} must be a whole number >= 0")
        if not 1 <= limit <= MAX_PAGE or limit != int(limit):
            raise ViewerInputError(f"query parameter limit={limit} must be a whole number in 1..{MAX_PAGE}")
        sort = params.get("sort", "task")
        if sort not in SORT_COLUMNS and not (sort.startswith("metric:") and len(sort) > 7):
            raise ViewerInputError(f"query parameter sort={sort[:60]!r} is not one of "
                                   f"{', '.join(SORT_COLUMNS)} or metric:<name>")
        return cls(offset=int(offset), limit=int(limit), sort=sort, descending=params.get("order") == "desc",
                   text=params.get("q", "")[:200], status=params.get("status", "")[:40],
                   metric=params.get("metric", "")[:200], minimum=number("min", None), maximum=number("max", None))


# Python writes NaN into JSON, which this SQLite's JSON functions refuse; such a value reads as
# missing instead of failing the whole page.
_METRIC = "(CASE WHEN json_valid(metrics) THEN json_extract(metrics, ?) END)"
_ERROR = "(CASE WHEN json_valid(record) THEN json_extract(record, '$.error') END)"


def _json_path(key: str) -> str:
    # A metric name becomes a quoted JSON path member: a name with dots or brackets stays one key.
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


class RunView:
    """One stored run, opened read-only.

    Args:
        run_dir: The run folder (holding ``run.sqlite``).
        index: Position of the run on the viewer's command line (its id in URLs).

    Raises:
        ViewerInputError: When ``run_dir`` holds no readable run.
    """

    def __init__(self, run_dir: str | Path, index: int) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.index = index
        path = self.run_dir / Store.FILENAME
        if not path.exists():
            raise ViewerInputError(f"{run_dir} is not a buildbench run (no {Store.FILENAME})")
        self._lock = threading.Lock()
        self.path = path
        self._db = connect_readonly(path, check_same_thread=False)
        self.manifest = {str(k): load_json(v, f"{path}: manifest {k!r}")
                         for k, v in self._query("SELECT key, value FROM manifest")}
        self._metric_keys: tuple[int, list[str]] | None = None

    # -- what the run is ------------------------------------------------------------------
    @property
    def config(self) -> dict[str, Any]:
        config = self.manifest.get("config")
        return config if isinstance(config, dict) else {}

    @property
    def suite(self) -> str:
        return str(self.config.get("suite") or "")

    def _query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.DatabaseError as exc:  # a damaged page, or malformed JSON under json_extract
                raise StoreCorruptError(f"{self.path}: cannot read the run store ({exc})") from None

    def count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM episodes")[0][0])

    def info(self) -> dict[str, Any]:
        """Name, suite, agent, protocol, model, split and status counts."""
        statuses = dict(self._query("SELECT status, COUNT(*) FROM episodes GROUP BY status"))
        cfg = self.config
        return {
            "id": self.index, "name": self.run_dir.name, "suite": self.suite, "agent": cfg.get("agent"),
            "protocol": cfg.get("protocol"), "model": cfg.get("model"), "split": cfg.get("split"),
            "seed": cfg.get("seed"), "episodes": sum(statuses.values()), "status": statuses,
            "expected_episodes": int(self.manifest.get("tasks", 0) or 0) * int(cfg.get("samples", 1) or 1),
            "headline": list(HEADLINE_METRICS.get(self.suite, ())),
        }

    def metric_keys(self) -> list[str]:
        """Every metric name in the run, sorted (recomputed only when episodes were added)."""
        n = self.count()
        if self._metric_keys is None or self._metric_keys[0] != n:
            rows = self._query("SELECT DISTINCT j.key FROM episodes, json_each(episodes.metrics) AS j "
                               "WHERE json_valid(episodes.metrics)")
            self._metric_keys = (n, sorted(str(r[0]) for r in rows))
        return self._metric_keys[1]

    # -- episode lists --------------------------------------------------------------------
    def page(self, query: PageQuery) -> dict[str, Any]:
        """One page of episode rows (no step logs) and the number of rows the filter keeps."""
        where, args = self._where(query)
        total = int(self._query(f"SELECT COUNT(*) FROM episodes {where}", tuple(args))[0][0])
        order = "DESC" if query.descending else "ASC"
        if query.sort.startswith("metric:"):
            # Episodes without the metric sort last in either order.
            key = _METRIC
            sort_sql = f"({key} IS NULL), {key} {order}, task_id, sample"
            sort_args = [_json_path(query.sort[7:])] * 2
        else:
            sort_sql = f"{SORT_COLUMNS[query.sort]} {order}, task_id, sample"
            sort_args = []
        rows = self._query(
            "SELECT task_id, sample, seed, status, metrics, usage, duration_s, finished_at, "
            f"{_ERROR} FROM episodes {where} ORDER BY {sort_sql} LIMIT ? OFFSET ?",
            (*args, *sort_args, query.limit, query.offset),
        )
        return {
            "run": self.index, "total": total, "offset": query.offset, "limit": query.limit,
            "rows": [_row(r, self.path) for r in rows],
        }

    def all_rows(self) -> list[dict[str, Any]]:
        """Every episode row, in task order (for the static export, which pages in the browser)."""
        rows = self._query(
            "SELECT task_id, sample, seed, status, metrics, usage, duration_s, finished_at, "
            f"{_ERROR} FROM episodes ORDER BY task_id, sample"
        )
        return [_row(r, self.path) for r in rows]

    def _where(self, query: PageQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if query.text:
            clauses.append("instr(lower(task_id), lower(?)) > 0")
            args.append(query.text)
        if query.status:
            clauses.append("status = ?")
            args.append(query.status)
        if query.metric and (query.minimum is not None or query.maximum is not None):
            path = _json_path(query.metric)
            if query.minimum is not None:
                clauses.append(f"{_METRIC} >= ?")
                args += [path, query.minimum]
            if query.maximum is not None:
                clauses.append(f"{_METRIC} <= ?")
                args += [path, query.maximum]
        return ("WHERE " + " AND ".join(clauses)) if clauses else "", args

    # -- one episode ----------------------------------------------------------------------
    def episode(self, task_id: str, sample: int) -> Episode:
        """The full record of one episode.

        Raises:
            ViewerInputError: When the run has no such episode.
        """
        rows = self._query("SELECT record FROM episodes WHERE task_id = ? AND sample = ?", (task_id, sample))
        if not rows:
            raise ViewerInputError(f"run {self.index} ({self.run_dir.name}) has no episode {task_id[:80]!r} "
                                   f"sample {sample}")
        return episode_from_record(rows[0][0], f"{self.path}: episode {task_id!r} sample {sample}")

    def image_url(self, relative: str) -> str | None:
        """The URL path of an image a step names, or None when it is not an image inside the run."""
        found = self.resolve_file(relative)
        if found is None:
            return None
        return f"files/{self.index}/" + found.relative_to(self.run_dir).as_posix()

    def resolve_file(self, relative: str) -> Path | None:
        """An image file inside the run folder named by ``relative``, else None.

        Steps name images relative to the run folder or to its ``artifacts/`` folder; both
        are tried. Anything that resolves outside the run folder (``..``, absolute paths,
        links pointing out), a file with more than one hard link (the other may be anywhere)
        or what is not an image type is refused.
        """
        if not relative or "\x00" in relative or Path(relative).is_absolute():
            return None
        for base in (self.run_dir, self.run_dir / "artifacts"):
            candidate = (base / relative).resolve()
            if not candidate.is_relative_to(self.run_dir) or candidate.suffix.lower() not in IMAGE_TYPES:
                continue
            try:
                info = candidate.stat()
            except OSError:
                continue
            # A hard link made inside the folder can name any file on the same disk: refused.
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                return candidate
        return None

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _row(r: tuple[Any, ...], store: Path) -> dict[str, Any]:
    task_id, sample, seed, status, metrics, usage, duration_s, finished_at, error = r
    where = f"{store}: episode {task_id!r} sample {sample!r} column"
    check_columns(f"{store}: episode {task_id!r} sample {sample!r}", task_id=task_id, sample=sample, seed=seed,
                  status=status, duration_s=duration_s, finished_at=finished_at)
    metrics, usage = load_json(metrics, f"{where} metrics"), load_json(usage, f"{where} usage")
    if not isinstance(metrics, dict) or not isinstance(usage, dict):
        raise StoreCorruptError(f"{where} {'metrics' if not isinstance(metrics, dict) else 'usage'}: not an object")
    return {
        "task_id": task_id, "sample": sample, "seed": seed, "status": status,
        "scored": status in SCORED_STATUSES, "metrics": metrics, "usage": usage,
        "duration_s": duration_s, "finished_at": finished_at,
        "error": error.splitlines()[0][:300] if isinstance(error, str) and error else None,
    }


def open_runs(run_dirs: list[str | Path]) -> list[RunView]:
    """Open each run folder read-only, in the order given.

    Raises:
        ViewerInputError: Naming the first folder that holds no readable run.
    """
    if not run_dirs:
        raise ViewerInputError("no run folder given")
    return [RunView(d, i) for i, d in enumerate(run_dirs)]
