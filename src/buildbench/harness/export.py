"""Export a stored run as JSONL (full episode records), Parquet (one flat row per episode) or
SFT data (chat JSONL and a Hugging Face dataset; see `buildbench.harness.sft`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .sft import SftExport, export_sft
from .store import Store

__all__ = ["SftExport", "export_jsonl", "export_parquet", "export_sft", "flat_rows"]


def export_jsonl(store: Store, path: str | Path) -> int:
    """Write every episode record (with steps) as one JSON line. Returns the count."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for episode in store.episodes():
            fh.write(json.dumps(episode.to_dict(), default=str) + "\n")
            n += 1
    return n


def flat_rows(store: Store) -> list[dict[str, Any]]:
    """Episode rows with metrics and usage spread into ``metric.*`` / ``usage.*`` columns."""
    rows = []
    for row in store.rows():
        flat = {k: row[k] for k in ("task_id", "sample", "seed", "status", "duration_s", "finished_at")}
        for key, value in row["metrics"].items():
            flat[f"metric.{key}"] = value
        for key, value in row["usage"].items():
            flat[f"usage.{key}"] = value
        flat["artifacts"] = json.dumps(row["artifacts"])
        rows.append(flat)
    return rows


def export_parquet(store: Store, path: str | Path) -> int:
    """Write one flat row per episode to a Parquet file. Returns the count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = flat_rows(store)
    columns = sorted({k for r in rows for k in r})
    table = pa.table({c: [r.get(c) for r in rows] for c in columns}) if rows else pa.table({})
    pq.write_table(table, path)
    return len(rows)
