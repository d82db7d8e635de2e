"""The viewer's first page for a 10,000-episode run (issue 17: ≤ 1 s), beside a naive reader.

The run is synthetic but shaped like a real one: every episode has six turns of a few
hundred characters of prompt and reply, ~40 metrics and a status mix with errors. "First
page" is everything the browser fetches before it can draw the episode table: the page,
its bundle, the run list, the metric names and the first 50 rows, over HTTP from a freshly
started server (nothing cached). The baseline is what a simple viewer does: read every
episode record through ``Store.episodes()``, sort in Python, and slice the first 50.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from _common import Figure, median_time, scaled_limit

from buildbench.harness.episode import Episode, Step
from buildbench.harness.store import Store
from buildbench.web.data import ViewerData, to_json_bytes
from buildbench.web.runs import open_runs
from buildbench.web.server import start_server

EPISODES = 10_000
PAGE = 50
TARGET_S = 1.0


def _make_run(run_dir: Path) -> None:
    with Store(run_dir) as store:
        store.write_manifest({"config": {"suite": "example", "agent": "synthetic", "protocol": "refine",
                                         "split": "default", "seed": 0, "samples": 1}, "tasks": EPISODES})
    text = "Place the next block so that the tower stays inside the footprint. " * 6
    rows = []
    for i in range(EPISODES):
        status = "error" if i % 25 == 0 else "ok"
        metrics = {} if status == "error" else {f"metric_{k:02d}": ((i * (k + 7)) % 997) / 997 for k in range(40)}
        steps = [Step(index=k, action_text=text, observation_text=text, reward=0.1 * k) for k in range(6)]
        ep = Episode(task_id=f"task_{i:05d}", sample=0, suite="example", agent="synthetic", protocol="refine",
                     seed=i, status=status, steps=steps, metrics=metrics, error="boom" if status == "error" else None)
        rows.append((ep.task_id, 0, i, status, json.dumps(metrics), "{}", "{}", 1.0, time.time(),
                     json.dumps(ep.to_dict())))
    db = sqlite3.connect(run_dir / Store.FILENAME)
    with db:
        db.executemany("INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.close()


def _first_page(run_dir: Path, query: str) -> float:
    """Seconds from opening the run to the last byte of the first page (server shutdown, which
    waits for the serving loop's poll, is left out)."""
    t0 = time.perf_counter()
    server, thread = start_server(ViewerData(open_runs([run_dir])))
    try:
        for path in ("", "static/app.js", "api/runs", f"api/runs/0/episodes?limit={PAGE}{query}"):
            with urllib.request.urlopen(server.url + path, timeout=scaled_limit(60)) as res:
                assert res.status == 200 and res.read()
        return time.perf_counter() - t0
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _median(fn: Callable[[], float], repeat: int) -> float:
    fn()  # warm-up: imports and the OS file cache
    return statistics.median(fn() for _ in range(repeat))


def _metric_names(run_dir: Path) -> None:
    open_runs([run_dir])[0].metric_keys()


def _naive_page(run_dir: Path, metric: str | None) -> None:
    with Store(run_dir, create=False) as store:
        episodes = list(store.episodes())
    if metric:
        episodes.sort(key=lambda ep: -ep.metrics.get(metric, float("-inf")))
    rows = [{"task_id": ep.task_id, "status": ep.status, "metrics": ep.metrics} for ep in episodes[:PAGE]]
    to_json_bytes(rows)


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        _make_run(run_dir)
        size_mb = (run_dir / Store.FILENAME).stat().st_size / 1e6
        ours = _median(lambda: _first_page(run_dir, ""), repeat=5)
        naive = median_time(lambda: _naive_page(run_dir, None), repeat=3)
        sorted_ours = _median(lambda: _first_page(run_dir, "&sort=metric:metric_07&order=desc&status=ok"), repeat=5)
        names = median_time(lambda: _metric_names(run_dir), repeat=3)
        sorted_naive = median_time(lambda: _naive_page(run_dir, "metric_07"), repeat=3)
    extra = {"episodes": EPISODES, "page_rows": PAGE, "run_sqlite_mb": round(size_mb, 1),
             "metric_names_s (filter menu, fetched alongside)": round(names, 3)}
    return [
        Figure("viewer: first page of a 10,000-episode run (fresh server: page, bundle, run list, 50 rows)", ours,
               "read every record via Store.episodes(), slice", naive, TARGET_S, extra),
        Figure("viewer: first page sorted by a metric, errors filtered out (fresh server)", sorted_ours,
               "read every record, sort in Python, slice", sorted_naive, TARGET_S, extra),
    ]
