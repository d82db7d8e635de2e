"""Exports of the chain records: ms-swift JSONL (as written), a Hugging Face ``datasets``
folder, and verl-style RL parquet (spec §3.6).

* ms-swift: one record a line, ``{"id", "images", "messages", "metadata"}`` (§3.5).
* Hugging Face: ``Dataset.save_to_disk`` of rows ``{"id", "images": [str], "messages":
  [{"role", "content"}], "metadata": str}``; the metadata is JSON text because its scenes
  have no fixed Arrow schema. Read back with ``datasets.load_from_disk``.
* verl: one row per chain for multi-turn GRPO: ``data_source = "scene_editing"``,
  ``prompt`` = [system, first user message], ``ability``, ``reward_model`` ({"style":
  "rule", "ground_truth": the final scene as JSON text}) and ``extra_info`` ({"split",
  "index", "interaction_kwargs": {"name", "user_requirement", "target_scene" (JSON text)}}),
  written with pyarrow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from buildbench.inputs import iter_lines
from buildbench.jsonio import parse_json

DATA_SOURCE = "scene_editing"


class ExportError(ValueError):
    """A chain file could not be read or exported; the message names the file and line."""


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of an ms-swift JSONL file, each checked for ``id`` and ``messages``."""
    try:
        for n, line in iter_lines(path):
            if not line.strip():
                continue
            try:
                rec = parse_json(line)
            except json.JSONDecodeError as exc:
                raise ExportError(f"{path}:{n}: invalid JSON at column {exc.colno}: {exc.msg}") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("messages"), list) or "id" not in rec:
                raise ExportError(f"{path}:{n}: not a chain record (needs 'id' and a 'messages' list)")
            yield rec
    except OSError as exc:
        raise ExportError(f"{path}: cannot read ({exc.strerror})") from None


def hf_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": str(r["id"]), "images": [str(p) for p in r.get("images", [])],
             "messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in r["messages"]],
             "metadata": json.dumps(r.get("metadata", {}), ensure_ascii=False)} for r in records]


def save_hf(records: list[dict[str, Any]], out_dir: Path) -> int:
    """Write a ``datasets`` folder; the number of rows. Needs the ``datasets`` package."""
    try:
        import datasets
    except ImportError:
        raise ExportError("the Hugging Face export needs the 'datasets' package (pip install datasets)") from None
    features = datasets.Features({
        "id": datasets.Value("string"),
        "images": datasets.Sequence(datasets.Value("string")),
        "messages": [{"role": datasets.Value("string"), "content": datasets.Value("string")}],
        "metadata": datasets.Value("string"),
    })
    # datasets draws progress bars on stderr; a CLI command's stderr is for errors only.
    # The switch is process-wide, so it is put back as it was.
    bars_were_off = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        ds = datasets.Dataset.from_list(hf_rows(records), features=features)
        ds.save_to_disk(str(out_dir))
    finally:
        if not bars_were_off:
            datasets.enable_progress_bars()
    return len(ds)


def verl_rows(records: list[dict[str, Any]], split: str = "train") -> list[dict[str, Any]]:
    rows = []
    for i, r in enumerate(records):
        msgs = r["messages"]
        system = next((m for m in msgs if m["role"] == "system"), None)
        first_user = next((m for m in msgs if m["role"] == "user"), None)
        if first_user is None:
            raise ExportError(f"record {r['id']}: no user message")
        meta = r.get("metadata", {})
        target = json.dumps(meta.get("final_scene"), ensure_ascii=False) if meta.get("final_scene") else ""
        prompt = ([{"role": "system", "content": system["content"]}] if system else []) + [
            {"role": "user", "content": first_user["content"]}]
        rows.append({
            "data_source": DATA_SOURCE,
            "prompt": prompt,
            "ability": "scene_layout",
            "reward_model": {"style": "rule", "ground_truth": target},
            "extra_info": {"split": split, "index": i, "id": str(r["id"]), "interaction_kwargs": {
                "name": DATA_SOURCE,
                "user_requirement": str(meta.get("global_user_instruction") or first_user["content"]),
                "target_scene": target}},
        })
    return rows


def write_verl_parquet(records: list[dict[str, Any]], path: Path, split: str = "train") -> int:
    """Write the verl rows with pyarrow; the number of rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(verl_rows(records, split))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return table.num_rows
