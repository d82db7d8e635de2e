"""Exports read back: ms-swift JSONL, Hugging Face datasets folder, verl parquet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buildbench.suites.scenerevis.generate.export import (
    DATA_SOURCE,
    ExportError,
    read_records,
    save_hf,
    write_verl_parquet,
)
from buildbench.suites.scenerevis.generate.pipeline import ReverseOptions, generate_chains
from buildbench.suites.scenerevis.generate.replay import replay
from buildbench.suites.scenerevis.generate.rooms import generate_rooms


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("chains") / "chains.jsonl"
    generate_chains(generate_rooms(3, seed=4), path, ReverseOptions(seed=4, candidates=2, keep=2))
    return path


def test_hf_dataset_round_trip(chains: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="the Hugging Face export needs the 'datasets' package")
    records = list(read_records(chains))
    assert save_hf(records, tmp_path / "hf") == len(records) == 6
    ds = datasets.load_from_disk(str(tmp_path / "hf"))
    assert ds.column_names == ["id", "images", "messages", "metadata"]
    for row, rec in zip(ds, records, strict=True):
        assert row["id"] == rec["id"] and row["messages"] == rec["messages"]
        back = {**rec, "metadata": json.loads(row["metadata"])}
        assert back == rec
        assert replay({"id": row["id"], "messages": row["messages"]}) == replay(rec)


def test_verl_parquet_round_trip(chains: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    records = list(read_records(chains))
    assert write_verl_parquet(records, tmp_path / "rl.parquet", split="train") == 6
    rows = pq.read_table(tmp_path / "rl.parquet").to_pylist()
    for i, (row, rec) in enumerate(zip(rows, records, strict=True)):
        assert row["data_source"] == DATA_SOURCE
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["prompt"][1]["content"] == rec["messages"][1]["content"]
        kwargs = row["extra_info"]["interaction_kwargs"]
        assert kwargs["user_requirement"] == rec["metadata"]["global_user_instruction"]
        assert json.loads(kwargs["target_scene"]) == rec["metadata"]["final_scene"]
        assert row["extra_info"]["index"] == i and row["reward_model"]["style"] == "rule"


def test_bad_chain_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "messages": []}\n{"id": "b"}\n')
    with pytest.raises(ExportError, match=r"c\.jsonl:2"):
        list(read_records(path))
