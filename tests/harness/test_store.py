"""Store: manifest, exactly-once episodes, exports."""

from __future__ import annotations

import json
import sqlite3

import pyarrow.parquet as pq
import pytest

from buildbench.harness import BuildbenchError, Episode, Step, Store, export_jsonl, export_parquet


def _episode(task_id: str, sample: int = 0, passed: float = 1.0) -> Episode:
    return Episode(task_id=task_id, sample=sample, suite="example", agent="a", protocol="p", seed=7,
                   steps=[Step(index=0, action_text="{}", observation_text="ok")],
                   metrics={"passed": passed}, usage={"requests": 2})


def test_episode_committed_once(tmp_path):
    with Store(tmp_path) as store:
        assert store.add_episode(_episode("t1")) is True
        assert store.add_episode(_episode("t1")) is False
        assert store.add_episode(_episode("t1", sample=1)) is True
        assert store.count() == 2
        assert store.finished() == {("t1", 0), ("t1", 1)}


def test_round_trip_and_wal(tmp_path):
    with Store(tmp_path) as store:
        store.write_manifest({"config": {"suite": "example"}})
        store.add_episode(_episode("t1", passed=0.5))
        assert store.manifest()["config"] == {"suite": "example"}
        (ep,) = list(store.episodes())
        assert ep.metrics == {"passed": 0.5} and ep.steps[0].observation_text == "ok"
    mode = sqlite3.connect(tmp_path / Store.FILENAME).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_exports(tmp_path):
    with Store(tmp_path) as store:
        for i in range(3):
            store.add_episode(_episode(f"t{i}", passed=float(i % 2)))
        assert export_jsonl(store, tmp_path / "e.jsonl") == 3
        assert export_parquet(store, tmp_path / "e.parquet") == 3
    lines = [json.loads(x) for x in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [x["task_id"] for x in lines] == ["t0", "t1", "t2"]
    table = pq.read_table(tmp_path / "e.parquet").to_pydict()
    assert table["metric.passed"] == [0.0, 1.0, 0.0]
    assert table["usage.requests"] == [2, 2, 2]


def test_open_missing_run_is_clear(tmp_path):
    with pytest.raises(BuildbenchError, match="not a buildbench run"):
        Store(tmp_path / "nope", create=False)


def test_corrupt_store_is_clear(tmp_path):
    (tmp_path / Store.FILENAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(BuildbenchError, match="cannot open run store"):
        Store(tmp_path)
